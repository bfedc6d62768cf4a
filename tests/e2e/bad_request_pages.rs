//! `error_page` for requests the parser refuses (400, 414, 494): the
//! default server's page, with the error's status, and the connection
//! closed, as nginx's special response handler does.

use crate::support::{Prefix, Response, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("badpages");
    p.write("html/400.html", "custom bad request\n");
    p.write("html/414.html", "custom too long\n");
    p.write("html/other/400.html", "other server's page\n");
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        root html;
        large_client_header_buffers 2 1k;
        error_page 400 494 /400.html;
        error_page 414 /414.html;
    }
    server {
        listen 127.0.0.1:PORT;
        server_name other.test;
        root html/other;
        error_page 400 /400.html;
    }"#,
    );
    Server::start(p, &conf)
}

fn send(s: &Server, raw: &[u8]) -> Response {
    Response::parse(&s.raw(raw)).unwrap()
}

#[test]
fn refused_requests_get_the_default_servers_error_page() {
    let s = site();
    for _ in 0..2 {
        let r = send(&s, b"GET /a%zz HTTP/1.1\r\nHost: other.test\r\n\r\n");
        assert_eq!(r.status, 400);
        assert_eq!(r.body_str(), "custom bad request\n");
        assert_eq!(r.header("Connection"), Some("close"));
        assert_eq!(r.header("Content-Type"), Some("text/html"));
    }
    let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(2000));
    let r = send(&s, long.as_bytes());
    assert_eq!((r.status, r.body_str()), (414, "custom too long\n"));
    let big = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "b".repeat(2000)
    );
    let r = send(&s, big.as_bytes());
    assert_eq!((r.status, r.body_str()), (400, "custom bad request\n"));
}
