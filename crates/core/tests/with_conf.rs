//! HttpCore on configurations read by the real parser (`peregrine_conf::parse_str`):
//! checks that core reads the model as the conf crate builds it.

use std::sync::Arc;
use std::time::SystemTime;

use peregrine_core::fixtures::{body_bytes, conn};
use peregrine_core::{HttpCore, Method, RequestView};

struct Site {
    dir: std::path::PathBuf,
    core: HttpCore,
}

impl Site {
    fn new(name: &str, conf: &str) -> Site {
        let dir =
            std::env::temp_dir().join(format!("peregrine-core-conf-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www/sub")).unwrap();
        std::fs::create_dir_all(dir.join("data")).unwrap();
        std::fs::write(dir.join("www/index.html"), b"root index").unwrap();
        std::fs::write(dir.join("www/sub/page.html"), b"page").unwrap();
        std::fs::write(dir.join("www/404.html"), b"custom 404").unwrap();
        std::fs::write(dir.join("www/pic.JPG"), b"jpeg").unwrap();
        std::fs::write(dir.join("data/d.txt"), b"aliased").unwrap();
        std::fs::create_dir_all(dir.join("h.test")).unwrap();
        std::fs::write(dir.join("h.test/index.html"), b"by host").unwrap();
        let text = conf.replace("DIR", dir.to_str().unwrap());
        let cfg = peregrine_conf::parse_str(&text, &dir.join("nginx.conf").to_string_lossy())
            .unwrap_or_else(|e| panic!("config: {e}"));
        Site {
            core: HttpCore::new(Arc::new(cfg)),
            dir,
        }
    }

    fn get(&mut self, method: &str, host: &str, target: &str) -> (u16, String, Vec<u8>) {
        let (path, args) = match target.split_once('?') {
            Some((p, a)) => (p, Some(a)),
            None => (target, None),
        };
        let headers: Vec<(&str, &str)> = vec![("Host", host)];
        let view = RequestView {
            method: Method::from_name(method),
            method_name: method,
            version: (1, 1),
            path,
            args,
            target,
            host: Some(host),
            content_length: None,
            headers: &headers,
        };
        let r = self
            .core
            .handle_view(&conn("127.0.0.1:8080"), &view, SystemTime::now());
        let body = body_bytes(&r.body);
        (r.status, peregrine_core::fixtures::head_text(&r.head), body)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const CONF: &str = r#"
events {}
http {
    types { text/html html; image/jpeg jpg; text/plain txt; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:8080;
        server_name a.test;
        root DIR/www;
        error_page 404 /404.html;
        location = /exact { return 200 "exact"; }
        location ^~ /sub/ { }
        location ~* \.jpg$ { return 200 "regex $uri"; }
        location /data/ { alias DIR/data/; }
        location /old { return 301 /new$is_args$args; }
        location /try/ { try_files $uri @named; }
        location @named { return 200 "named $uri"; }
        location = /status { stub_status; }
        location ~ ^/cap/(\w+)/(.*)$ { alias DIR/data/$2; }
        location ~ ^/num/(\d+)$ { return 200 "n=$1 $12"; }
    }
    server {
        listen 127.0.0.1:8080;
        server_name h.test;
        root DIR/$host;
    }
    server {
        listen 127.0.0.1:8080;
        server_name .b.test;
        return 200 "server b $host";
    }
}
"#;

#[test]
fn parsed_configuration_serves_as_nginx() {
    let mut s = Site::new("basic", CONF);
    assert_eq!(s.get("GET", "a.test", "/").2, b"root index");
    assert_eq!(s.get("GET", "a.test", "/exact").2, b"exact");
    assert_eq!(s.get("GET", "a.test", "/pic.JPG").2, b"regex /pic.JPG");
    assert_eq!(s.get("GET", "a.test", "/sub/page.html").2, b"page");
    assert_eq!(s.get("GET", "a.test", "/data/d.txt").2, b"aliased");
    let (st, head, _) = s.get("GET", "a.test", "/old?x=1");
    assert_eq!(st, 301);
    assert!(
        head.contains("Location: http://a.test:8080/new?x=1\r\n"),
        "{head}"
    );
    assert_eq!(s.get("GET", "a.test", "/try/zz").2, b"named /try/zz");
    let (st, _, body) = s.get("GET", "a.test", "/missing");
    assert_eq!((st, body.as_slice()), (404, &b"custom 404"[..]));
    assert_eq!(s.get("GET", "a.test", "/status").0, 200);
    assert_eq!(
        s.get("GET", "www.b.test", "/anything").2,
        b"server b www.b.test"
    );
    assert_eq!(s.get("GET", "b.test", "/").2, b"server b b.test");
    // Regex captures in alias and return; variables in root.
    assert_eq!(s.get("GET", "a.test", "/cap/x/d.txt").2, b"aliased");
    assert_eq!(s.get("GET", "a.test", "/num/42").2, b"n=42 422");
    assert_eq!(s.get("GET", "h.test", "/").2, b"by host");
}
