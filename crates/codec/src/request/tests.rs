//! Request-head tests. Every expected status was checked against nginx 1.22
//! with raw sockets; every input is also fed as each of its prefixes.

use super::*;
use crate::{HttpError, HttpErrorKind};

fn limits() -> Limits {
    Limits::default()
}

/// Parses `input` whole and as every prefix: a prefix must give `Partial`
/// or the same outcome as the whole (never a different error or a shorter
/// complete head).
fn parse_all(input: &[u8], l: &Limits) -> Result<(Parsed, Request), HttpError> {
    let mut req = Request::new();
    let full = parse_request(input, l, &mut req);
    for cut in 0..input.len() {
        let mut r = Request::new();
        match parse_request(&input[..cut], l, &mut r) {
            Ok(Parsed::Partial) => {}
            Ok(Parsed::Complete(n)) => {
                assert_eq!(
                    full,
                    Ok(Parsed::Complete(n)),
                    "prefix {cut} completed early"
                );
            }
            Err(e) => assert_eq!(full, Err(e), "prefix {cut} of {input:?}"),
        }
    }
    full.map(|p| (p, req))
}

fn ok(input: &[u8]) -> Request {
    match parse_all(input, &limits()) {
        Ok((Parsed::Complete(n), req)) => {
            assert_eq!(n, req.head_len());
            req
        }
        other => panic!("{input:?}: {:?}", other.map(|p| p.0)),
    }
}

fn status(input: &[u8]) -> u16 {
    status_with(input, &limits())
}

fn status_with(input: &[u8], l: &Limits) -> u16 {
    match parse_all(input, l) {
        Err(e) => e.status,
        Ok((p, _)) => panic!("{input:?}: expected error, got {p:?}"),
    }
}

#[test]
fn simple_get() {
    let r =
        ok(b"GET /echo?a=1&b HTTP/1.1\r\nHost: Example.COM:8080\r\nAccept: */*\r\nX:  v  \r\n\r\n");
    assert_eq!(r.method(), Method::Get);
    assert_eq!(r.method_str(), "GET");
    assert_eq!(r.version(), Version::Http11);
    assert_eq!(r.target(), "/echo?a=1&b");
    assert_eq!(r.path(), "/echo");
    assert_eq!(r.query(), Some("a=1&b"));
    assert_eq!(r.request_line(), "GET /echo?a=1&b HTTP/1.1");
    assert_eq!(r.host(), Some("example.com"));
    assert_eq!(r.header("accept"), Some("*/*"));
    assert_eq!(r.header("x"), Some("v"));
    assert_eq!(r.header("missing"), None);
    assert!(r.keep_alive());
    assert_eq!(r.body_kind(), BodyKind::None);
    assert!(!r.expect_continue());
    let names: Vec<&str> = r.headers().map(|(n, _)| n).collect();
    assert_eq!(names, ["Host", "Accept", "X"]);
}

#[test]
fn complete_reports_head_length_with_body_after() {
    let input = b"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET";
    let mut req = Request::new();
    let head = input.len() - 6;
    assert_eq!(
        parse_request(input, &limits(), &mut req),
        Ok(Parsed::Complete(head))
    );
    assert_eq!(req.body_kind(), BodyKind::Length(3));
}

#[test]
fn bare_lf_and_leading_empty_lines() {
    let r = ok(b"\r\n\nGET /echo HTTP/1.1\nHost: a\n\n");
    assert_eq!(r.request_line(), "GET /echo HTTP/1.1");
    assert_eq!(r.head_len(), 31);
    assert_eq!(r.host(), Some("a"));
}

#[test]
fn request_line_oddities_nginx_accepts() {
    let r = ok(b"GET  /echo  HTTP/1.1 \r\nHost: a\r\n\r\n");
    assert_eq!(r.request_line(), "GET  /echo  HTTP/1.1 ");
    assert_eq!(r.target(), "/echo");
    for m in ["G-T", "G_T", "FOO"] {
        let r = ok(format!("{m} /echo HTTP/1.1\r\nHost: a\r\n\r\n").as_bytes());
        assert_eq!(r.method(), Method::Other);
        assert_eq!(r.method_str(), m);
    }
    assert_eq!(
        ok(b"GET /e HTTP/1.2\r\nHost: a\r\n\r\n").version(),
        Version::Http11
    );
    assert_eq!(
        ok(b"GET /e HTTP/1.100\r\nHost: a\r\n\r\n").version(),
        Version::Http11
    );
}

#[test]
fn http10() {
    let r = ok(b"GET /echo HTTP/1.0\r\n\r\n");
    assert_eq!(r.version(), Version::Http10);
    assert_eq!(r.host(), None);
    assert!(!r.keep_alive());
    assert!(ok(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive());
}

#[test]
fn connection_header() {
    assert!(!ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").keep_alive());
    assert!(
        !ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Close\r\n\r\n").keep_alive()
    );
    assert!(ok(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\n\r\n").keep_alive());
}

#[test]
fn absolute_form_host_wins() {
    let r = ok(b"GET http://Foo.COM./echo?x HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.host(), Some("foo.com"));
    assert_eq!(r.path(), "/echo");
    assert_eq!(r.query(), Some("x"));
    assert_eq!(r.target(), "http://Foo.COM./echo?x");
    let r = ok(b"GET http://h:99 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.host(), r.path()), (Some("h"), "/"));
    let r = ok(b"GET http://h?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.path(), r.query()), ("/", Some("x=1")));
    let r = ok(b"GET ftp://[::1]:8/a HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.host(), Some("[::1]"));
    // The port is validated with the host (nginx 1.29.3+): 65535 at most.
    let r = ok(b"GET http://h.:65535/a HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.host(), r.path()), (Some("h"), "/a"));
    for bad in [
        &b"http://h:65536/"[..],
        b"http://h:123456",
        b"http://[::1]:99999/",
    ] {
        let mut raw = b"GET ".to_vec();
        raw.extend_from_slice(bad);
        raw.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
        assert_eq!(status(&raw), 400, "{bad:?}");
    }
}

#[test]
fn more_nginx_acceptances() {
    let r = ok(b"GET http://h:/echo HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.host(), r.path()), (Some("h"), "/echo"));
    let r = ok(b"GET HTTP://H/echo HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.host(), Some("h"));
    let r = ok(b"GET http://h.-a/echo HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.host(), Some("h.-a"));
    let r = ok(b"GET /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 0003\r\n\r\n");
    assert_eq!(r.body_kind(), BodyKind::Length(3));
    let r = ok(b"GET //echo HTTP/1.1\r\nHost: a\r\nX\xffY: 1\r\nV: \xff\x7f\r\n\r\n");
    assert_eq!(r.path(), "/echo");
    assert_eq!(r.headers().count(), 2);
    assert_eq!(r.header("v"), None);
    assert_eq!(r.header_bytes("v"), Some(&b"\xff\x7f"[..]));
}

#[test]
fn steady_state_reuses_buffers() {
    let head = b"GET /a/b/../c?x=1 HTTP/1.1\r\nHost: Example.com\r\nA: 1\r\nB: 2\r\n\r\n";
    let mut r = Request::new();
    parse_request(head, &limits(), &mut r).unwrap();
    let ptrs = |r: &Request| {
        (
            r.text.as_ptr(),
            r.headers.as_ptr(),
            r.path.as_ptr(),
            r.host.as_ptr(),
        )
    };
    let before = ptrs(&r);
    for _ in 0..3 {
        assert_eq!(
            parse_request(head, &limits(), &mut r),
            Ok(Parsed::Complete(head.len()))
        );
        assert_eq!(ptrs(&r), before);
    }
    assert_eq!((r.path(), r.host()), ("/a/c", Some("example.com")));
}

#[test]
fn fragments_and_query() {
    let r = ok(b"GET /echo/a#frag?x HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.path(), r.query()), ("/echo/a", None));
    // nginx (1.22 and current) ends `$args` at the `#`.
    let r = ok(b"GET /echo/a?x#frag HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.path(), r.query()), ("/echo/a", Some("x")));
    let r = ok(b"GET http://a?x#f#g HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.path(), r.query()), ("/", Some("x")));
    let r = ok(b"GET /a/%2e%2e/echo? HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((r.path(), r.query()), ("/echo", Some("")));
}

#[test]
fn header_lines_nginx_skips_or_keeps() {
    // Underscore and other non-token bytes: skipped (ignore_invalid_headers).
    let r = ok(b"GET / HTTP/1.1\r\nHost: a\r\nX_Y: 1\r\nX@Y: 2\r\nZ: 3\r\n\r\n");
    let names: Vec<&str> = r.headers().map(|(n, _)| n).collect();
    assert_eq!(names, ["Host", "Z"]);
    let l = Limits {
        underscores_in_headers: true,
        ..limits()
    };
    let (_, r) = parse_all(b"GET / HTTP/1.1\r\nHost: a\r\nX_Y: 1\r\n\r\n", &l).unwrap();
    assert_eq!(r.header("x_y"), Some("1"));
    let l = Limits {
        ignore_invalid_headers: false,
        ..limits()
    };
    let (_, r) = parse_all(b"GET / HTTP/1.1\r\nHost: a\r\nX@Y: 1\r\n\r\n", &l).unwrap();
    assert_eq!(r.header("X@Y"), Some("1"));
    // No colon: kept with an empty value. Control bytes and tabs in values kept.
    let r = ok(b"GET / HTTP/1.1\r\nHost: a\r\nXY\r\nV:\tv \t \r\nC: a\x01b\r\n\r\n");
    assert_eq!(r.header("xy"), Some(""));
    assert_eq!(r.header("v"), Some("\tv \t"));
    assert_eq!(r.header_bytes("c"), Some(&b"a\x01b"[..]));
    // A run of CRs may end a header line (not the request line, not the
    // final empty line).
    let r = ok(b"GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\r\nXY\r\r\r\n\r\n");
    assert_eq!(r.header("x-a"), Some("b"));
    assert_eq!(r.header("xy"), Some(""));
    // Repeatable headers are kept in order; `header` returns the first.
    let r = ok(b"GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: 1\r\nUser-Agent: 2\r\n\r\n");
    assert_eq!(r.header("user-agent"), Some("1"));
}

#[test]
fn bodies() {
    let r = ok(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3 \r\n\r\n");
    assert_eq!(r.body_kind(), BodyKind::Length(3));
    let r = ok(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n");
    assert_eq!(r.body_kind(), BodyKind::Chunked);
    let r = ok(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 0\r\n\r\n");
    assert!(r.expect_continue());
    assert_eq!(r.body_kind(), BodyKind::Length(0));
    let r = ok(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n");
    assert!(!r.expect_continue());
}

#[test]
fn errors_400() {
    let cases: &[&[u8]] = &[
        b"GET /echo HTTP/1.1\r\n\r\n",                               // no Host
        b"get /echo HTTP/1.1\r\nHost: a\r\n\r\n",                    // lowercase method
        b"GET /e cho HTTP/1.1\r\nHost: a\r\n\r\n",                   // space in target
        b"GET echo HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET * HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n",                   // authority-form only
        b"GET /echo/\x01 HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /echo/\x7f HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /echo?a\tb HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /echo http/1.1\r\nHost: a\r\n\r\n",
        b"GET /echo HTTP/01.1\r\nHost: a\r\n\r\n",
        b"GET /echo HTTP/0.9\r\nHost: a\r\n\r\n",
        b"GET /echo HTTP/1.1000\r\nHost: a\r\n\r\n",
        b"GET /echo HTTP/1.1\rHost: a\r\n\r\n",
        b"GET /echo\r\n\r\n",                                        // HTTP/0.9 (deviation)
        b"GET http://h_x/echo HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http:///echo HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://h/echo HTTP/1.1\r\n\r\n",                       // Host still required
        b"GET http://h/echo HTTP/1.1\r\nHost: a/b\r\n\r\n",          // and validated
        b"GET /../echo HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /ec%00ho HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /echo/%zz HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /echo/%ff HTTP/1.1\r\nHost: a\r\n\r\n",                // not UTF-8 (deviation)
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: \r\n\r\n",
        b"GET / HTTP/1.1\r\nHost:\ta\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: ..a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX Y: 1\r\n\r\n",               // space in name
        b"GET / HTTP/1.1\r\nHost: a\r\nXY : 1\r\n\r\n",               // space before colon
        b"GET / HTTP/1.1\r\nHost: a\r\n:x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n",           // obs-fold
        b"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\t2\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n",            // NUL
        b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",              // bare CR
        b"GET / HTTP/1.1\r\nHost: a\r\n\rX\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\r\n",
        b"GET / HTTP/1.1\r\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX: b\r\rc\r\n\r\n",
        b" GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /\tHTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: :80\r\n\r\n",
        b"GET / HTTP/1.1\r\nhost: a\r\nHOST: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nX-\x7f: 1\r\n\r\n",
        b"GET /echo/% HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://[::1]x/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://h..a/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET http://h:abc/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET 1http://h/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9223372036854775808\r\n\r\n",
        b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nIf-None-Match: a\r\nIf-None-Match: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nExpect: a\r\nExpect: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nIf-Range: a\r\nif-range: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nIf-Modified-Since: a\r\nIf-Modified-Since: b\r\n\r\n",
    ];
    for c in cases {
        assert_eq!(status(c), 400, "{}", String::from_utf8_lossy(c));
    }
}

#[test]
fn errors_other_statuses() {
    assert_eq!(status(b"GET /echo HTTP/2.0\r\nHost: a\r\n\r\n"), 505);
    assert_eq!(status(b"GET /echo HTTP/10.0\r\nHost: a\r\n\r\n"), 505);
    assert_eq!(
        status(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n"),
        501
    );
    assert_eq!(
        status(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
        501
    );
    // Whitespace around Transfer-Encoding: spaces are trimmed, tabs are not.
    for te in ["\tchunked", "chunked\t", "identity", ""] {
        let raw = format!("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: {te}\r\n\r\n");
        assert_eq!(status(raw.as_bytes()), 501, "{te:?}");
    }
    let r = ok(b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:   chunked   \r\n\r\n");
    assert_eq!(r.body_kind(), BodyKind::Chunked);
    assert_eq!(
        status(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\t3\r\n\r\n"),
        400
    );
    assert_eq!(status(b"TRACE / HTTP/1.1\r\nHost: a\r\n\r\n"), 405);
}

/// CONNECT as nginx 1.29.3+ parses it: an authority-form target with a
/// port, then refused with 405 once the head is read (Peregrine has no
/// `allow_connect`). nginx 1.22 read the target as absolute-form: 400 for
/// `host:port`.
#[test]
fn connect_authority_form() {
    for ok405 in [
        &b"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"CONNECT   [::1]:8080 HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT a:1 HTTP/1.0\r\n\r\n",
    ] {
        assert_eq!(status(ok405), 405, "{ok405:?}");
    }
    for bad in [
        &b"CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        b"CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT a: HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT [::1] HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT a:443/x HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT http://a:443/ HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT a:99999 HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT :443 HTTP/1.1\r\nHost: a\r\n\r\n",
        b"CONNECT a:443\r\n\r\n",
    ] {
        assert_eq!(status(bad), 400, "{bad:?}");
    }
}

fn small() -> Limits {
    Limits {
        header_buffer_size: 64,
        large_header_buffers: (2, 128),
        ..limits()
    }
}

#[test]
fn long_request_line_is_414() {
    let mut req = format!("GET /{} HTTP/1.1\r\n", "a".repeat(200)).into_bytes();
    req.extend_from_slice(b"Host: a\r\n\r\n");
    assert_eq!(status_with(&req, &small()), 414);
    let e = parse_request(&req, &small(), &mut Request::new()).unwrap_err();
    assert_eq!(e.kind, HttpErrorKind::UriTooLong);
    // 128 bytes through the LF still fit one large buffer.
    let mut req = format!("GET /{} HTTP/1.1\r\n", "a".repeat(128 - 16)).into_bytes();
    assert_eq!(req.len(), 128);
    req.extend_from_slice(b"Host: a\r\n\r\n");
    parse_all(&req, &small()).unwrap();
    let mut req = format!("GET /{} HTTP/1.1\r\n", "a".repeat(128 - 15)).into_bytes();
    req.extend_from_slice(b"Host: a\r\n\r\n");
    assert_eq!(status_with(&req, &small()), 414);
}

#[test]
fn long_header_is_494() {
    let req = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nCookie: {}\r\n\r\n",
        "c".repeat(200)
    );
    let e = parse_request(req.as_bytes(), &small(), &mut Request::new()).unwrap_err();
    assert_eq!(
        (e.status, e.wire_status(), e.kind),
        (494, 400, HttpErrorKind::HeaderTooLarge)
    );
    assert_eq!(status_with(req.as_bytes(), &small()), 494);
}

#[test]
fn too_many_header_bytes_is_494() {
    // Each line fits a large buffer, but the head needs more than 2 of them.
    let line = format!("X: {}\r\n", "v".repeat(100));
    let req = format!("GET / HTTP/1.1\r\nHost: a\r\n{}\r\n", line.repeat(4));
    assert_eq!(status_with(req.as_bytes(), &small()), 494);
    let req = format!("GET / HTTP/1.1\r\nHost: a\r\n{}\r\n", line.repeat(2));
    parse_all(req.as_bytes(), &small()).unwrap();
}

/// nginx 1.22 with `client_header_buffer_size 100; large_client_header_buffers
/// 2 512;` answered these (whole request sent at once).
#[test]
fn buffer_limits_match_nginx() {
    let l = Limits {
        header_buffer_size: 100,
        large_header_buffers: (2, 512),
        ..limits()
    };
    let rl = |n: usize| format!("GET /{} HTTP/1.1\r\n", "a".repeat(n - 16));
    let hl = |n: usize| format!("X: {}\r\n", "v".repeat(n - 5));
    let run = |s: String| match parse_request(s.as_bytes(), &l, &mut Request::new()) {
        Ok(Parsed::Complete(n)) if n == s.len() => 200,
        Ok(p) => panic!("{p:?}"),
        Err(e) => e.status,
    };
    assert_eq!(rl(512).len(), 512);
    assert_eq!(hl(512).len(), 512);
    for (n, want) in [(511, 200), (512, 200), (513, 414)] {
        assert_eq!(
            run(format!("{}Host: a\r\n\r\n", rl(n))),
            want,
            "request line {n}"
        );
        let h = format!("GET / HTTP/1.1\r\nHost: a\r\n{}\r\n", hl(n));
        assert_eq!(
            run(h),
            if want == 200 { 200 } else { 494 },
            "header line {n}"
        );
        let s = format!("{}{}Host: a\r\n\r\n", rl(90), hl(n));
        assert_eq!(
            run(s),
            if want == 200 { 200 } else { 494 },
            "straddling {n}"
        );
        let s = format!("{}{}Host: a\r\n\r\n", rl(100), hl(n));
        assert_eq!(
            run(s),
            if want == 200 { 200 } else { 494 },
            "after exact fill {n}"
        );
    }
    for (k, want) in [(1, 200), (2, 200), (3, 494), (6, 494)] {
        let s = format!("GET / HTTP/1.1\r\nHost: a\r\n{}\r\n", hl(400).repeat(k));
        assert_eq!(run(s), want, "{k} lines of 400");
    }
    // Leading empty lines are unlimited: nginx rewinds a buffer full of them.
    for k in [1000, 1124, 1200, 20_000] {
        assert_eq!(
            run(format!(
                "{}GET / HTTP/1.1\r\nHost: a\r\n\r\n",
                "\n".repeat(k)
            )),
            200
        );
    }
    for k in [95, 99, 100, 101, 250] {
        let s = |n| format!("{}{}Host: a\r\n\r\n", "\n".repeat(k), rl(n));
        assert_eq!((run(s(512)), run(s(513))), (200, 414), "{k} empty lines");
        // Dropping the discardable prefix changes no answer.
        let (a, b) = (s(512), s(513));
        let (da, db) = (
            discardable_prefix(a.as_bytes(), &l),
            discardable_prefix(b.as_bytes(), &l),
        );
        assert_eq!(da, k / 100 * 100);
        assert_eq!(
            (run(a[da..].to_string()), run(b[db..].to_string())),
            (200, 414)
        );
    }
}

#[test]
fn default_limits_accept_big_heads() {
    let req = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nCookie: {}\r\n\r\n",
        "c".repeat(8000)
    );
    let mut r = Request::new();
    assert!(matches!(
        parse_request(req.as_bytes(), &limits(), &mut r),
        Ok(Parsed::Complete(_))
    ));
    let req = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nCookie: {}\r\n\r\n",
        "c".repeat(8200)
    );
    assert_eq!(
        parse_request(req.as_bytes(), &limits(), &mut r)
            .unwrap_err()
            .status,
        494
    );
}

#[test]
fn reuse_clears_previous_request() {
    let mut r = Request::new();
    let a = b"POST /a?x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
    parse_request(a, &limits(), &mut r).unwrap();
    let b = b"GET /b HTTP/1.0\r\n\r\n";
    parse_request(b, &limits(), &mut r).unwrap();
    assert_eq!((r.path(), r.query(), r.host()), ("/b", None, None));
    assert_eq!(r.body_kind(), BodyKind::None);
    assert!(!r.expect_continue());
    assert_eq!(r.headers().count(), 0);
}

proptest::proptest! {
    #[test]
    fn never_panics(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        cut in 0usize..300,
    ) {
        let mut r = Request::new();
        let full = parse_request(&bytes, &small(), &mut r);
        // A prefix never disagrees with the whole.
        let part = parse_request(&bytes[..cut.min(bytes.len())], &small(), &mut r);
        proptest::prop_assert!(part == Ok(Parsed::Partial) || part == full);
    }

    #[test]
    fn never_panics_near_valid(
        head in "[A-Z]{1,5} /[a-z%./?#]{0,20} HTTP/1\\.[0-9]\r?\n(([A-Za-z_-]{1,8}): [ -~]{0,10}\r?\n){0,4}\r?\n",
        cut in 0usize..200,
    ) {
        let mut r = Request::new();
        let b = head.as_bytes();
        let full = parse_request(b, &limits(), &mut r);
        if let Ok(Parsed::Complete(n)) = full {
            proptest::prop_assert_eq!(n, b.len());
            proptest::prop_assert!(r.path().starts_with('/'));
        }
        let cut = cut.min(b.len());
        let part = parse_request(&b[..cut], &limits(), &mut r);
        proptest::prop_assert!(part == Ok(Parsed::Partial) || part == full || cut == b.len());
    }
}

/// The name bits only ever answer "absent" for names the request lacks:
/// every present name is found in any case, and a lookup whose bit
/// collides with a present name still compares the names.
#[test]
fn header_lookup_by_name_bit() {
    let r = ok(b"GET / HTTP/1.1\r\nHost: a\r\nX-Long-Name: 1\r\nRange: bytes=0-1\r\nA: 2\r\n\r\n");
    for (name, value) in [
        ("host", "a"),
        ("HOST", "a"),
        ("x-long-name", "1"),
        ("X-LONG-NAME", "1"),
        ("range", "bytes=0-1"),
        ("a", "2"),
    ] {
        assert_eq!(r.header(name), Some(value), "{name}");
    }
    for absent in [
        "If-None-Match",
        "Accept-Encoding",
        "Via",
        "b",
        "Hosts",
        "X-Long-Namf",
    ] {
        assert_eq!(r.header(absent), None, "{absent}");
    }
    // Same length, first and last byte as a present name: same bit, and
    // still absent.
    assert_eq!(name_bit(b"X-Lang-Name"), name_bit(b"x-long-name"));
    assert_eq!(r.header("X-Lang-Name"), None);
}

/// The ASCII fast paths (no UTF-8 check of the target or Host, the head
/// kept as text) and their slow paths give the answers the single-path
/// parser gave.
#[test]
fn non_ascii_target_host_and_values() {
    let r = ok("GET /caf%C3%A9/Thé?q=é HTTP/1.1\r\nHost: Uni.Example:80\r\n\r\n".as_bytes());
    assert_eq!(r.target(), "/caf%C3%A9/Thé?q=é");
    assert_eq!((r.path(), r.query()), ("/café/Thé", Some("q=é")));
    assert_eq!(r.request_line(), "GET /caf%C3%A9/Thé?q=é HTTP/1.1");
    assert_eq!(r.host(), Some("uni.example"));
    // A non-ASCII Host is refused, as nginx 1.29.4+ (RFC 3986 reg-name;
    // nginx 1.22 passed it through).
    assert_eq!(
        status("GET / HTTP/1.1\r\nHost: Ünï.Example\r\n\r\n".as_bytes()),
        400
    );
    let r = ok("GET /é HTTP/1.1\r\nHost: a\r\n\r\n".as_bytes());
    assert_eq!(r.path(), "/é");
    assert_eq!(status(b"GET /\xff HTTP/1.1\r\nHost: a\r\n\r\n"), 400);
    assert_eq!(status(b"GET /a\xc3 HTTP/1.1\r\nHost: a\r\n\r\n"), 400);
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: a\xff\r\n\r\n"), 400);
    assert_eq!(
        status(b"GET http://a\xff/ HTTP/1.1\r\nHost: a\r\n\r\n"),
        400
    );
    // A port of anything but digits is refused, as nginx 1.29.4+ (1.22
    // passed over what followed the colon).
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: a:\xff\r\n\r\n"), 400);
}

#[test]
fn header_mask_says_absent_only_when_all_are() {
    const MASK: u64 = crate::request::header_mask(&["If-None-Match", "Range", "If-Match"]);
    let plain = ok(b"GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n");
    assert!(!plain.may_have_any(MASK));
    for head in [
        &b"GET / HTTP/1.1\r\nHost: a\r\nrange: bytes=0-1\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nIF-MATCH: *\r\nHost: a\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\n\r\n",
    ] {
        assert!(
            ok(head).may_have_any(MASK),
            "{}",
            String::from_utf8_lossy(head)
        );
    }
    // One-byte and empty names take a bit too.
    assert_eq!(name_bit(b"a"), name_bit(b"A"));
    assert_ne!(crate::request::header_mask(&["a"]), 0);
}

/// A head with a non-UTF-8 header line keeps its bytes; every accessor
/// still answers, headers before and after the bad line included.
#[test]
fn head_that_is_not_utf8() {
    let head = b"GET /P?x HTTP/1.1\r\nA: 1\r\nV: \xe9t\xe9\r\nHost: Mixed.Case:8\r\nB: 2\r\n\r\n";
    let r = ok(head);
    assert!(!r.raw.is_empty());
    assert_eq!((r.target(), r.path(), r.query()), ("/P?x", "/P", Some("x")));
    assert_eq!(r.request_line(), "GET /P?x HTTP/1.1");
    assert_eq!(r.host(), Some("mixed.case"));
    assert_eq!((r.header("a"), r.header("b")), (Some("1"), Some("2")));
    assert_eq!(r.header("v"), None);
    assert_eq!(r.header_bytes("v"), Some(&b"\xe9t\xe9"[..]));
    let names: Vec<&str> = r.headers().map(|(n, _)| n).collect();
    assert_eq!(names, ["A", "V", "Host", "B"]);
    // The same request as UTF-8 is held as text only; the host needs no
    // copy when it is lowercase.
    let r = ok("GET /P?x HTTP/1.1\r\nA: 1\r\nV: été\r\nHost: lower:8\r\n\r\n".as_bytes());
    assert!(r.raw.is_empty() && r.host_span.is_some() && r.path_span.is_some());
    assert_eq!((r.header("v"), r.host()), (Some("été"), Some("lower")));
}

/// Lines are first scanned inside the buffer they start in; a line that
/// crosses into a large buffer is scanned again with its full reach. Errors
/// past the first buffer, and lines too long for a large buffer, get the
/// answers they got when every line was scanned with its full reach.
#[test]
fn heads_over_several_buffers() {
    let l = Limits {
        header_buffer_size: 32,
        large_header_buffers: (3, 48),
        ..limits()
    };
    let pad = |n: usize| format!("X: {}\r\n", "v".repeat(n));
    // Every split of the first-buffer boundary across a header line.
    for n in 0..40 {
        let head = format!("GET / HTTP/1.1\r\n{}Host: a\r\nY: 2\r\n\r\n", pad(n));
        let r = match parse_all(head.as_bytes(), &l) {
            Ok((Parsed::Complete(k), r)) if k == head.len() => r,
            other => panic!("{n}: {:?}", other.map(|p| p.0)),
        };
        assert_eq!((r.host(), r.header("y")), (Some("a"), Some("2")), "{n}");
        let bad = format!("GET / HTTP/1.1\r\n{}Host: a\r\nY: \0\r\n\r\n", pad(n));
        assert_eq!(status_with(bad.as_bytes(), &l), 400, "{n}");
        let dup = format!("GET / HTTP/1.1\r\n{}Host: a\r\nHost: b\r\n\r\n", pad(n));
        assert_eq!(status_with(dup.as_bytes(), &l), 400, "{n}");
    }
    // A line of 49 bytes fits no large buffer: 494, wherever it starts.
    for n in 0..20 {
        let head = format!("GET / HTTP/1.1\r\n{}{}Host: a\r\n\r\n", pad(n), pad(44));
        assert_eq!(status_with(head.as_bytes(), &l), 494, "{n}");
    }
    let long_line = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(40));
    assert_eq!(status_with(long_line.as_bytes(), &l), 414);
}

/// The request line's pass decides when a path is its own normal form and
/// is used as it stands; on every path of up to six bytes after the `/`
/// over the bytes that matter to that decision, with and without
/// `merge_slashes`, the parser's path is what the full normaliser makes of
/// it, and a path the normaliser refuses is a 400.
#[test]
fn plain_path_shortcut_agrees_with_the_normaliser() {
    const ALPHABET: &[u8] = b"/.%a2e";
    let mut path = Vec::new();
    let mut req = Request::new();
    for len in 0..=5u32 {
        for mut code in 0..ALPHABET.len().pow(len) {
            path.clear();
            path.push(b'/');
            for _ in 0..len {
                path.push(ALPHABET[code % ALPHABET.len()]);
                code /= ALPHABET.len();
            }
            for merge_slashes in [true, false] {
                let l = Limits {
                    merge_slashes,
                    ..limits()
                };
                let mut head = b"GET ".to_vec();
                head.extend_from_slice(&path);
                head.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
                let mut want = String::new();
                let normal = crate::uri::normalize_with(&path, &mut want, merge_slashes);
                let got = parse_request(&head, &l, &mut req);
                let shown = String::from_utf8_lossy(&path);
                match normal {
                    Ok(()) => {
                        assert_eq!(got, Ok(Parsed::Complete(head.len())), "{shown}");
                        assert_eq!(req.path(), want, "{shown} merge={merge_slashes}");
                    }
                    Err(_) => assert_eq!(got.map_err(|e| e.status), Err(400), "{shown}"),
                }
            }
        }
    }
}
