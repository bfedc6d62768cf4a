//! On-the-fly gzip as nginx's filter applies it.

mod common;

use std::io::{Read, Write};

use common::*;

const CONF: &str = "
events { }
http {
    gzip on;
    gzip_vary on;
    server {
        listen 127.0.0.1:{PORT};
        root {DIR}/html;
    }
}
";

fn page() -> Vec<u8> {
    let mut p = b"<html>".to_vec();
    for i in 0..20_000 {
        p.extend_from_slice(format!("line {i} hello world\n").as_bytes());
    }
    p.extend_from_slice(b"</html>");
    p
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let i = find(b, b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..i]).unwrap(), 16).unwrap();
        if n == 0 {
            assert_eq!(
                &b[i..],
                b"\r\n\r\n",
                "chunked body ends with the last chunk"
            );
            return out;
        }
        out.extend_from_slice(&b[i + 2..i + 2 + n]);
        assert_eq!(&b[i + 2 + n..i + 4 + n], b"\r\n");
        b = &b[i + 4 + n..];
    }
}

fn read_all(srv: &Server, req: &[u8]) -> (String, Vec<u8>) {
    let mut s = srv.connect();
    s.write_all(req).unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let end = find(&all, b"\r\n\r\n").unwrap();
    (
        String::from_utf8_lossy(&all[..end + 2]).to_string(),
        all[end + 4..].to_vec(),
    )
}

#[test]
fn gzip_chunked_for_http11() {
    let page = page();
    let srv = start(CONF, &[("t.html", &page)]);
    let (head, body) = read_all(
        &srv,
        b"GET /t.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
    );
    let names: Vec<&str> = head
        .lines()
        .skip(1)
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Server",
            "Date",
            "Content-Type",
            "Last-Modified",
            "Transfer-Encoding",
            "Connection",
            "Vary",
            "ETag",
            "Content-Encoding"
        ],
        "{head}"
    );
    assert!(head.contains("ETag: W/\""), "{head}");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&dechunk(&body)[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert!(plain == page);
}

#[test]
fn head_and_http10_and_no_accept_encoding() {
    let page = page();
    let srv = start(CONF, &[("t.html", &page)]);
    let (head, body) = read_all(
        &srv,
        b"HEAD /t.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
    );
    assert!(head.contains("Content-Encoding: gzip") && !head.contains("Transfer-Encoding"));
    assert!(!head.contains("Content-Length"), "{head}");
    assert!(body.is_empty());
    // gzip_http_version 1.1 (default): not for HTTP/1.0, but Vary all the same.
    let (head, body) = read_all(
        &srv,
        b"GET /t.html HTTP/1.0\r\nAccept-Encoding: gzip\r\n\r\n",
    );
    assert!(head.contains("Vary: Accept-Encoding") && !head.contains("Content-Encoding"));
    assert!(body == page);
    let (head, body) = read_all(
        &srv,
        b"GET /t.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(head.contains("Vary: Accept-Encoding\r\nETag: \"") && head.contains("Accept-Ranges"));
    assert!(body == page);
}

#[test]
fn client_preference_picks_brotli_or_zstd() {
    let conf = CONF.replace(
        "gzip_vary on;",
        "gzip_vary on; brotli on; brotli_types text/html; zstd on;",
    );
    let page = page();
    let srv = start(&conf, &[("t.html", &page)]);
    for (accept, coding) in [
        ("br", "br"),
        ("zstd", "zstd"),
        ("gzip;q=0.5, br;q=0.1", "gzip"),
    ] {
        let req = format!(
            "GET /t.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: {accept}\r\nConnection: close\r\n\r\n"
        );
        let (head, body) = read_all(&srv, req.as_bytes());
        assert!(
            head.contains(&format!("Content-Encoding: {coding}\r\n")),
            "{accept}: {head}"
        );
        assert!(!dechunk(&body).is_empty());
    }
}
