//! `server_tokens`: the `Server` header and the error pages' footer. nginx
//! says `nginx/VERSION` (`on`, the default), `nginx/VERSION (BUILD)`
//! (`build`, with `--build=BUILD`) or `nginx` (`off`). Peregrine answers as
//! the nginx it follows, with itself as the build name: `nginx/1.29.8`,
//! `nginx/1.29.8 (peregrine/0.1.0)`, `nginx` — a deliberate choice
//! (docs/nginx-tests.md): clients, monitors and nginx's own server_tokens.t
//! see what nginx sends; `server_tokens build` and `-V` name Peregrine.

use crate::support::{Prefix, Server, conf_with, is_nginx, server_name};

/// The name alone, as `server_tokens off` sends it.
fn bare_name() -> &'static str {
    "nginx"
}

/// What `server_tokens build` sends: Debian's nginx has no build name.
fn build_name() -> String {
    if is_nginx() {
        server_name().to_string()
    } else {
        format!(
            "{} (peregrine/{})",
            server_name(),
            env!("CARGO_PKG_VERSION")
        )
    }
}

const SERVERS: &str = r#"
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /off/ { server_tokens off; }
        location /on/ { server_tokens on; }
        location /build/ { server_tokens build; }
    }
"#;

fn site() -> Server {
    let p = Prefix::new("tokens");
    for d in ["off", "on", "build", "default"] {
        p.write(&format!("html/{d}/a.txt"), "x");
    }
    Server::start(p, &conf_with(SERVERS))
}

#[test]
fn header_and_footer_per_location() {
    let s = site();
    let build = build_name();
    for (dir, name) in [
        ("default", server_name()),
        ("on", server_name()),
        ("build", build.as_str()),
        ("off", bare_name()),
    ] {
        // The memory cache answers the second and third GET.
        for _ in 0..3 {
            let r = s.get(&format!("/{dir}/a.txt"));
            assert_eq!(r.status, 200);
            assert_eq!(r.header("Server"), Some(name), "{dir}");
        }
        let r = s.get(&format!("/{dir}/missing"));
        assert_eq!(r.status, 404);
        assert_eq!(r.header("Server"), Some(name), "{dir}");
        let footer = format!("<hr><center>{name}</center>\r\n</body>\r\n</html>\r\n");
        assert!(r.body_str().ends_with(&footer), "{dir}: {}", r.body_str());
        let len: usize = r.header("Content-Length").unwrap().parse().unwrap();
        assert_eq!(len, r.body.len());
    }
}

#[test]
fn http_level_off_reaches_every_answer() {
    let p = Prefix::new("tokens-http");
    p.write("html/a.txt", "x");
    let conf =
        conf_with("    server_tokens off;\n    server { listen 127.0.0.1:PORT; root html; }");
    let s = Server::start(p, &conf);
    for path in ["/a.txt", "/a.txt", "/a.txt", "/nothing"] {
        assert_eq!(s.get(path).header("Server"), Some(bare_name()), "{path}");
    }
    // A request that does not parse is answered with the server's settings.
    let r =
        crate::support::Response::parse(&s.raw(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n")).unwrap();
    assert_eq!((r.status, r.header("Server")), (400, Some(bare_name())));
}

#[test]
fn bad_value_is_refused() {
    let p = Prefix::new("tokens-bad");
    p.conf(&conf_with("    server_tokens maybe;"));
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[emerg] invalid value \"maybe\" in "), "{err}");
}
