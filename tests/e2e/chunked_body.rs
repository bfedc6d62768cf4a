//! Chunked request bodies as nginx reads (and discards) them, in the manner
//! of HTTPWookiee's chunked cases: raw bytes on a socket, the status, the
//! connection's fate and the error log. An invalid body (a size nginx
//! refuses, a size that is not hex, more data than the size declared)
//! answers 400, closes, and logs `client sent invalid chunked body`
//! (`ngx_http_discard_request_body_filter`); a valid one is discarded in
//! step, so a pipelined request after it is answered.

use crate::support::{
    Prefix, Response, Server, conf_with, is_nginx, read_to_close, wait_for_lines,
};

fn site() -> Server {
    let p = Prefix::new("chunked-body");
    p.write("html/a.txt", "aaa\n");
    Server::start(
        p,
        &conf_with("    server {\n        listen 127.0.0.1:PORT;\n        root html;\n    }\n"),
    )
}

fn post(path: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!("GET {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .into_bytes();
    r.extend_from_slice(body);
    r
}

/// Sends `body` as a chunked body of a GET of a static file, then a
/// pipelined GET: the answers, read until the server closes.
fn exchange(s: &Server, path: &str, body: &[u8]) -> Vec<u8> {
    let mut req = post(path, body);
    req.extend_from_slice(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.raw(&req)
}

fn invalid_logged(s: &Server, n: usize) -> usize {
    let log = s.prefix.dir.join("logs/error.log");
    wait_for_lines(&log, n, |l| {
        l.contains("[error]") && l.contains("client sent invalid chunked body")
    })
    .len()
}

/// Each refused body: 400 with `Connection: close`, nothing answered
/// after it, and one error-log line for each.
#[test]
fn invalid_chunked_bodies_answer_400_and_close() {
    let s = site();
    let cases: &[&[u8]] = &[
        // 2^63: over nginx's off_t.
        b"8000000000000000\r\nab\r\n0\r\n\r\n",
        b"ffffffffffffffffffff\r\nab\r\n0\r\n\r\n",
        // Not a hex size.
        b"0x5\r\nhello\r\n0\r\n\r\n",
        b"-5\r\nhello\r\n0\r\n\r\n",
        b"+5\r\nhello\r\n0\r\n\r\n",
        b"\r\nhello\r\n0\r\n\r\n",
        // More data than the size declared.
        b"5\r\nhelloEXTRA\r\n0\r\n\r\n",
        // A size then junk before the line end.
        b"5x\r\nhello\r\n0\r\n\r\n",
    ];
    for (i, body) in cases.iter().enumerate() {
        let got = exchange(&s, "/a.txt", body);
        let r = Response::parse(&got).expect("a response");
        let what = String::from_utf8_lossy(body);
        assert_eq!(r.status, 400, "{what:?}");
        assert_eq!(r.header("connection"), Some("close"), "{what:?}");
        assert!(
            !String::from_utf8_lossy(&r.rest).contains("HTTP/1.1"),
            "answered after an invalid body: {what:?}"
        );
        assert_eq!(invalid_logged(&s, i + 1), i + 1, "{what:?}");
    }
}

/// An error page answers as it is, but closes after an invalid body.
#[test]
fn an_error_page_closes_after_an_invalid_body() {
    let s = site();
    let got = exchange(&s, "/missing", b"0x5\r\nhello\r\n0\r\n\r\n");
    let r = Response::parse(&got).expect("a response");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(!String::from_utf8_lossy(&r.rest).contains("HTTP/1.1"));
}

/// Valid bodies (extensions, trailers, the largest size nginx takes cut
/// short is not one of them: it would be discarded for minutes) are
/// discarded and the pipelined request after them answered.
#[test]
fn valid_chunked_bodies_are_discarded_in_step() {
    let s = site();
    let cases: &[&[u8]] = &[
        b"5\r\nhello\r\n0\r\n\r\n",
        b"5;name=value\r\nhello\r\n6 \r\n world\r\n0\r\n\r\n",
        b"0000000005\r\nhello\r\n0\r\nTrailer: x\r\nOther: y\r\n\r\n",
        b"A\r\n0123456789\r\n0;last\r\n\r\n",
    ];
    for body in cases {
        let got = exchange(&s, "/a.txt", body);
        let first = Response::parse(&got).expect("a response");
        let what = String::from_utf8_lossy(body);
        assert_eq!(first.status, 200, "{what:?}");
        let second = Response::parse(&first.rest).expect("the pipelined response");
        assert_eq!(
            (second.status, second.body_str()),
            (200, "aaa\n"),
            "{what:?}"
        );
    }
}

/// nginx 1.29.4 and later refuse a bare LF as a chunked line end (1.22,
/// which `E2E_SERVER=nginx` runs, still takes it).
#[test]
fn a_bare_lf_in_a_chunked_body_is_invalid() {
    if is_nginx() {
        return;
    }
    let s = site();
    for body in [
        &b"5\nhello\r\n0\r\n\r\n"[..],
        b"5\r\nhello\n0\r\n\r\n",
        b"5\r\nhello\r\n0\n\n",
    ] {
        let r = Response::parse(&exchange(&s, "/a.txt", body)).expect("a response");
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(body));
    }
}

/// A body that turns invalid only after the response went out (its bytes
/// arrive later): the connection closes, the error is logged, nothing more
/// is answered.
#[test]
fn an_invalid_body_arriving_later_closes() {
    let s = site();
    let mut c = s.connect();
    use std::io::Write;
    c.write_all(&post("/a.txt", b"5\r\nhel")).unwrap();
    let mut buf = [0u8; 4096];
    let n = std::io::Read::read(&mut c, &mut buf).unwrap();
    let r = Response::parse(&buf[..n]).expect("a response");
    assert_eq!(r.status, 200);
    c.write_all(b"loEXTRA\r\n0\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let rest = read_to_close(&mut c);
    assert!(
        !String::from_utf8_lossy(&rest).contains("HTTP/1.1"),
        "{:?}",
        String::from_utf8_lossy(&rest)
    );
    assert_eq!(invalid_logged(&s, 1), 1);
}
