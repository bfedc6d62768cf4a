//! `add_trailer`: where a trailer applies (the statuses of `add_header`,
//! or `always`), nginx sends an HTTP/1.1 body chunked, without its
//! Content-Length, and the trailer fields after the last chunk; not to
//! HEAD, nor to HTTP/1.0.

use crate::support::{Prefix, Server, conf_with};

const SERVERS: &str = r#"
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /t/ {
            add_trailer X-Uri "u $uri";
            add_trailer X-Empty "";
            autoindex on;
        }
        location /a/ { add_trailer X-Err e always; }
        location /s/ {
            add_trailer X-Sent-Http $sent_http_accept_ranges;
            add_trailer X-First one;
            add_trailer X-Sent-Trailer "saw $sent_trailer_x_first";
        }
        location /off/ {
            chunked_transfer_encoding off;
            add_trailer X-Off x always;
        }
    }
"#;

fn site() -> Server {
    let p = Prefix::new("trailers");
    p.write("html/t/f.txt", "hello trailers\n");
    p.write("html/a/f.txt", "x");
    p.write("html/s/f.txt", "x");
    p.write("html/off/f.txt", "x");
    Server::start(p, &conf_with(SERVERS))
}

/// (head, body after the head) of a raw request's answer.
fn exchange(s: &Server, req: &str) -> (String, String) {
    let out = String::from_utf8(s.raw(req.as_bytes())).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

fn get11(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
}

#[test]
fn a_file_is_sent_chunked_with_its_trailers() {
    let s = site();
    // The memory cache answers the second and third.
    for _ in 0..3 {
        let (head, body) = exchange(&s, &get11("/t/f.txt"));
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.contains("\r\nTransfer-Encoding: chunked\r\n"),
            "{head}"
        );
        assert!(!head.contains("Content-Length"), "{head}");
        assert_eq!(
            body,
            "f\r\nhello trailers\n\r\n0\r\nX-Uri: u /t/f.txt\r\n\r\n"
        );
    }
}

#[test]
fn an_autoindex_listing_ends_with_them() {
    let s = site();
    let (head, body) = exchange(&s, &get11("/t/"));
    assert!(head.contains("Transfer-Encoding: chunked"), "{head}");
    assert!(body.contains("f.txt"));
    assert!(body.ends_with("\r\n0\r\nX-Uri: u /t/\r\n\r\n"), "{body}");
}

#[test]
fn none_for_head_http10_or_other_statuses() {
    let s = site();
    let (head, body) = exchange(
        &s,
        "HEAD /t/f.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    assert!(head.contains("Content-Length: 15"), "{head}");
    assert!(body.is_empty());
    let (head, body) = exchange(&s, "GET /t/f.txt HTTP/1.0\r\n\r\n");
    assert!(head.contains("Content-Length: 15"), "{head}");
    assert_eq!(body, "hello trailers\n");
    // A 404 is not among the statuses: the page keeps its length.
    let (head, _) = exchange(&s, &get11("/t/missing"));
    assert!(head.starts_with("HTTP/1.1 404") && head.contains("Content-Length"));
    // With `always` it is chunked too.
    let (head, body) = exchange(&s, &get11("/a/missing"));
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    assert!(!head.contains("Content-Length"), "{head}");
    assert!(body.ends_with("\r\n0\r\nX-Err: e\r\n\r\n"), "{body}");
}

#[test]
fn trailers_see_the_sent_head_and_the_trailers_before_them() {
    let s = site();
    let (_, body) = exchange(&s, &get11("/s/f.txt"));
    assert_eq!(
        body,
        "1\r\nx\r\n0\r\nX-Sent-Http: bytes\r\nX-First: one\r\nX-Sent-Trailer: saw one\r\n\r\n"
    );
}

#[test]
fn none_without_chunked_transfer_encoding() {
    let s = site();
    let (head, body) = exchange(&s, &get11("/off/f.txt"));
    assert!(!head.contains("chunked"), "{head}");
    assert!(head.contains("Content-Length: 1"), "{head}");
    assert_eq!(body, "x");
}
