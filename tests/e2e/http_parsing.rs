//! Strict parsing with nginx's answers, URI safety, and no request smuggling.

use crate::support::{Prefix, Response, Server};
use std::io::Write;

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    include mime.types;
    access_log off;
    client_header_buffer_size 1k;
    large_client_header_buffers 4 8k;
    client_max_body_size 10;
    server {
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
    }
    server {
        listen 127.0.0.1:PORT;
        server_name other.test;
        root other;
    }
}
"#;

fn site() -> Server {
    let p = Prefix::new("parse");
    p.write("html/index.html", "index\n");
    p.write("html/a.txt", "a\n");
    p.write("other/index.html", "other\n");
    p.write("secret.txt", "outside the root\n");
    Server::start(p, CONF)
}

fn status_of(s: &Server, raw: &[u8]) -> (u16, bool) {
    let mut c = s.connect();
    c.write_all(raw).unwrap();
    let bytes = crate::support::read_to_close(&mut c);
    let r = Response::parse(&bytes).unwrap_or_else(|| panic!("no response to {raw:?}"));
    (r.status, r.header("Connection") == Some("close"))
}

#[test]
fn malformed_requests_get_400_and_close() {
    let s = site();
    for raw in [
        &b"GARBAGE\r\n\r\n"[..],
        b"get / HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: bad/host\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n",
        b"GET /a%00b HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /../secret.txt HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /%2e%2e/secret.txt HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /x/../../secret.txt HTTP/1.1\r\nHost: localhost\r\n\r\n",
    ] {
        let (status, closed) = status_of(&s, raw);
        assert_eq!(status, 400, "{}", String::from_utf8_lossy(raw));
        assert!(closed, "400 closes: {}", String::from_utf8_lossy(raw));
    }
}

#[test]
fn version_and_coding_errors() {
    let s = site();
    assert_eq!(
        status_of(&s, b"GET / HTTP/2.0\r\nHost: localhost\r\n\r\n").0,
        505
    );
    assert_eq!(
        status_of(
            &s,
            b"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n"
        ),
        (501, true)
    );
    assert_eq!(
        status_of(
            &s,
            b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
        ),
        (400, true)
    );
    assert_eq!(
        status_of(
            &s,
            b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n"
        ),
        (400, true)
    );
}

/// Content-Length with Transfer-Encoding: nginx 1.22 refuses the request
/// with 400 and closes, so the bytes after it are never read as a request.
#[test]
fn length_with_chunked_cannot_smuggle() {
    let s = site();
    let raw = b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut c = s.connect();
    c.write_all(raw).unwrap();
    let bytes = crate::support::read_to_close(&mut c);
    let r = Response::parse(&bytes).unwrap();
    assert_eq!(r.status, 400);
    assert!(
        Response::parse(&r.rest).is_none(),
        "nothing after the 400: {:?}",
        String::from_utf8_lossy(&r.rest)
    );
}

#[test]
fn long_lines_and_headers() {
    let s = site();
    let long_uri = format!(
        "GET /{} HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "a".repeat(9000)
    );
    assert_eq!(status_of(&s, long_uri.as_bytes()), (414, true));
    let long_header = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\n\r\n",
        "b".repeat(9000)
    );
    let mut c = s.connect();
    c.write_all(long_header.as_bytes()).unwrap();
    let bytes = crate::support::read_to_close(&mut c);
    let r = Response::parse(&bytes).unwrap();
    assert_eq!(r.status, 400);
    assert!(r.body_str().contains("Request Header Or Cookie Too Large"));
    // A head that fits the large buffers is fine.
    let fits = format!(
        "GET /a.txt HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "b".repeat(6000)
    );
    assert_eq!(status_of(&s, fits.as_bytes()).0, 200);
}

#[test]
fn absolute_form_selects_the_server() {
    let s = site();
    let r = Response::parse(
        &s.raw(b"GET http://other.test/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
    )
    .unwrap();
    assert_eq!((r.status, r.body_str()), (200, "other\n"));
}

#[test]
fn body_over_the_limit_is_413() {
    let s = site();
    let raw = b"POST /a.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\n\r\n01234567890";
    assert_eq!(status_of(&s, raw).0, 413);
}

#[test]
fn encoded_paths_are_decoded_and_merged() {
    let s = site();
    assert_eq!(s.get("/%61.txt").body_str(), "a\n");
    assert_eq!(s.get("//a.txt").body_str(), "a\n");
    assert_eq!(s.get("/x/./../a.txt").body_str(), "a\n");
}

/// A chunked body announces no length, and a static file never reads its
/// body: nginx discards it whatever its size (no 413) and answers the next
/// request on the connection. client_max_body_size is 10 here.
#[test]
fn chunked_body_over_the_limit_is_discarded_like_nginx() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"POST /a.txt HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n01234567890123456789\r\n0\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let rs = crate::support::read_responses(&mut c, 2, false);
    let got: Vec<u16> = rs.iter().map(|r| r.status).collect();
    assert_eq!(got, [405, 200]);
}
