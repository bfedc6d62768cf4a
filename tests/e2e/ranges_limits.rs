//! `max_ranges` and `merge_slashes`, as nginx applies them.

use crate::support::{Prefix, Response, Server, conf_with};

fn range(s: &Server, path: &str, value: &str) -> Response {
    let req =
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nRange: {value}\r\nConnection: close\r\n\r\n");
    Response::parse(&s.raw(req.as_bytes())).unwrap()
}

#[test]
fn max_ranges_limits_and_zero_turns_ranges_off() {
    let p = Prefix::new("maxranges");
    p.write("html/two/f.txt", "0123456789".repeat(10));
    p.write("html/zero/f.txt", "0123456789".repeat(10));
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        root html;
        location /two/ { max_ranges 2; }
        location /zero/ { max_ranges 0; }
    }"#,
    );
    let s = Server::start(p, &conf);
    assert_eq!(range(&s, "/two/f.txt", "bytes=0-1, 5-6").status, 206);
    assert_eq!(range(&s, "/two/f.txt", "bytes=0-1, 5-6, 900-").status, 206);
    let r = range(&s, "/two/f.txt", "bytes=0-1, 5-6, 8-9");
    assert_eq!((r.status, r.body.len()), (200, 100));
    for _ in 0..3 {
        let r = range(&s, "/zero/f.txt", "bytes=0-1");
        assert_eq!((r.status, r.body.len()), (200, 100));
        let r = s.get("/zero/f.txt");
        assert_eq!(r.header("Accept-Ranges"), None);
    }
    assert_eq!(s.get("/two/f.txt").header("Accept-Ranges"), Some("bytes"));
}

#[test]
fn merge_slashes_off_keeps_empty_segments() {
    let p = Prefix::new("mergeslashes");
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        merge_slashes off;
        location / { return 200 "uri=$uri"; }
    }"#,
    );
    let s = Server::start(p, &conf);
    assert_eq!(s.get("/foo//../bar").body_str(), "uri=/foo/bar");
    assert_eq!(s.get("/foo///../bar").body_str(), "uri=/foo//bar");
    assert_eq!(s.get("/a//b").body_str(), "uri=/a//b");
}

#[test]
fn merge_slashes_on_by_default() {
    let p = Prefix::new("mergeslashes-on");
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        location / { return 200 "uri=$uri"; }
    }"#,
    );
    let s = Server::start(p, &conf);
    assert_eq!(s.get("/a//b").body_str(), "uri=/a/b");
    assert_eq!(s.get("/foo///../bar").body_str(), "uri=/bar");
}
