//! `server_tokens`: the `Server` header and the error pages' footer. nginx
//! says `nginx/VERSION` (`on`, the default, and `build` without a build
//! name) or `nginx` (`off`); Peregrine is not nginx and says its own name
//! the same way: `peregrine/VERSION` or `peregrine`. (nginx's own
//! server_tokens.t matches the literal name `nginx` and so fails on
//! Peregrine by design.)

use crate::support::{Prefix, Server, conf_with, is_nginx, server_name};

/// The name alone, as `server_tokens off` sends it.
fn bare_name() -> &'static str {
    if is_nginx() { "nginx" } else { "peregrine" }
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
    for (dir, name) in [
        ("default", server_name()),
        ("on", server_name()),
        ("build", server_name()),
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
