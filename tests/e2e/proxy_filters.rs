//! What nginx's filters do to a proxied answer, against a real backend on
//! loopback: gzip compresses it (whether the backend gave a length or
//! closed; HTTP/1.1 clients only, `gzip_http_version`'s default), `override_charset` recodes it, `add_trailer` reads its
//! `$upstream_response_length` at its end, `expires` replaces its
//! `Cache-Control`. Each checked against nginx (`E2E_SERVER=nginx cargo
//! test --test e2e proxy_filters::`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;

use flate2::read::GzDecoder;

use crate::support::{Prefix, Response, Server, conf_with};

/// A backend answering every connection with `answer`, then closing.
fn backend(answer: &'static [u8]) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let _ = s.write_all(answer);
            });
        }
    });
    port
}

const TEXT: &str = "Peregrine compresses a proxied answer as nginx does. ";

fn page() -> String {
    TEXT.repeat(40)
}

fn proxy(tag: &str, http: &str, locations: &str) -> Server {
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "{http}\n    server {{\n        listen 127.0.0.1:PORT;\n        \
             server_name localhost;\n{locations}\n    }}\n"
        )),
    )
}

fn raw(s: &Server, path: &str, headers: &str) -> Vec<u8> {
    let req =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Connection: close\r\n\r\n");
    s.raw(req.as_bytes())
}

fn gunzip(b: &[u8]) -> String {
    let mut out = String::new();
    GzDecoder::new(b).read_to_string(&mut out).unwrap();
    out
}

#[test]
fn gzip_compresses_proxied_answers() {
    let body = page();
    let with_length: &'static [u8] = Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
             Accept-Ranges: bytes\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
        .into_boxed_slice(),
    );
    let until_close: &'static [u8] = Box::leak(
        format!("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n{body}")
            .into_bytes()
            .into_boxed_slice(),
    );
    let (a, b) = (backend(with_length), backend(until_close));
    let s = proxy(
        "proxy-gzip",
        "    gzip on;",
        &format!(
            "        location /len {{ proxy_pass http://127.0.0.1:{a}; }}\n\
             location /close {{ proxy_pass http://127.0.0.1:{b}; }}\n\
             location /off {{ gzip off; proxy_pass http://127.0.0.1:{a}; }}"
        ),
    );
    for path in ["/len", "/close"] {
        let r = Response::parse(&raw(&s, path, "Accept-Encoding: gzip\r\n")).unwrap();
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("Content-Encoding"), Some("gzip"), "{path}");
        assert_eq!(r.header("Transfer-Encoding"), Some("chunked"), "{path}");
        assert_eq!(r.header("Content-Length"), None, "{path}");
        // The gzip filter clears Accept-Ranges (nginx's gzip.t).
        assert_eq!(r.header("Accept-Ranges"), None, "{path}");
        assert_eq!(gunzip(&r.body), body, "{path}");
    }
    // Not accepted, or off: the answer as the backend sent it.
    let r = Response::parse(&raw(&s, "/len", "")).unwrap();
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(
        r.header("Content-Length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(r.body_str(), body);
    let r = Response::parse(&raw(&s, "/off", "Accept-Encoding: gzip\r\n")).unwrap();
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(r.body_str(), body);
    // HTTP/1.0: below `gzip_http_version`'s 1.1, sent as it is.
    let r = s.raw(b"GET /len HTTP/1.0\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n");
    let r = Response::parse(&r).unwrap();
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(r.body_str(), body);
}

#[test]
fn override_charset_recodes_a_proxied_answer() {
    let b = backend(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=A\r\n\
        Content-Length: 6\r\nConnection: close\r\n\r\nYYaYYb",
    );
    let s = proxy(
        "proxy-charset",
        "    charset_map B A { 58 59; }",
        &format!(
            "        location /on {{ charset B; override_charset on; \
             proxy_pass http://127.0.0.1:{b}; }}\n\
             location /off {{ charset B; proxy_pass http://127.0.0.1:{b}; }}"
        ),
    );
    let r = Response::parse(&raw(&s, "/on", "")).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body_str(), "XXaXXb");
    assert_eq!(r.header("Content-Type"), Some("text/html; charset=B"));
    let r = Response::parse(&raw(&s, "/off", "")).unwrap();
    assert_eq!(r.body_str(), "YYaYYb");
    assert_eq!(r.header("Content-Type"), Some("text/html; charset=A"));
}

#[test]
fn add_trailer_reads_the_upstream_length_at_the_end() {
    let b = backend(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
        Content-Length: 8\r\nConnection: close\r\n\r\nSEE-THIS",
    );
    let s = proxy(
        "proxy-trailers",
        "",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; \
             add_trailer X-Length $upstream_response_length; }}"
        ),
    );
    let out = raw(&s, "/", "");
    let text = String::from_utf8_lossy(&out);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.contains("Transfer-Encoding: chunked"), "{head}");
    assert!(!head.contains("Content-Length"), "{head}");
    assert_eq!(body, "8\r\nSEE-THIS\r\n0\r\nX-Length: 8\r\n\r\n");
    // HTTP/1.0: no trailers, the body as it is.
    let out = s.raw(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let r = Response::parse(&out).unwrap();
    assert_eq!(r.body_str(), "SEE-THIS");
    assert_eq!(r.header("Content-Length"), Some("8"));
}

#[test]
fn expires_replaces_the_upstream_cache_control() {
    let b = backend(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
        Cache-Control: max-age=3600\r\nCache-Control: private\r\n\
        Expires: Thu, 01 Jan 2037 00:00:00 GMT\r\n\
        Content-Length: 2\r\nConnection: close\r\n\r\nOK",
    );
    let s = proxy(
        "proxy-expires",
        "",
        &format!("        location / {{ expires epoch; proxy_pass http://127.0.0.1:{b}; }}"),
    );
    let r = Response::parse(&raw(&s, "/", "")).unwrap();
    let cc: Vec<&str> = r
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Cache-Control"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(cc, ["no-cache"]);
    let ex: Vec<&str> = r
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("Expires"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(ex, ["Thu, 01 Jan 1970 00:00:01 GMT"]);
}
