//! gzip with nginx's directives and side effects; brotli and zstd (Peregrine's
//! additions, skipped against nginx).

use crate::support::{Prefix, Response, Server, is_nginx};
use flate2::read::GzDecoder;
use std::io::Read;

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    include mime.types;
    access_log off;
    gzip on;
    gzip_min_length 100;
    gzip_comp_level 6;
    gzip_types text/plain text/css;
    gzip_vary on;
    gzip_proxied expired no-cache no-store private auth;
    gzip_disable "MSIE [1-6]\.";
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /static/ { gzip_static on; }
        location /always/ { gzip_static always; }
        location /off/ { gzip off; }
        location /proxied-off/ { gzip_proxied off; }
        location /nolm/ { gzip_proxied no_last_modified; }
        location /noetag/ { gzip_proxied no_etag; }
    }
}
"#;

fn text(n: usize) -> String {
    "Peregrine compresses what nginx compresses. ".repeat(n / 44 + 1)[..n].to_string()
}

fn site() -> Server {
    let p = Prefix::new("gzip");
    p.write("html/page.html", text(5000));
    p.write("html/small.html", text(50));
    p.write("html/style.css", text(3000));
    p.write("html/data.json", text(3000));
    p.write("html/off/page.html", text(3000));
    p.write("html/proxied-off/page.html", text(3000));
    p.write("html/nolm/page.html", text(3000));
    p.write("html/noetag/page.html", text(3000));
    p.write("html/static/s.html", text(4000));
    p.write("html/static/s.html.gz", b"pretend-gzip".as_slice());
    p.write("html/always/a.html", text(4000));
    p.write("html/always/a.html.gz", b"pretend-gzip-always".as_slice());
    Server::start(p, CONF)
}

fn get(s: &Server, path: &str, headers: &str) -> Response {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n");
    Response::parse(&s.raw(raw.as_bytes())).unwrap()
}

fn gunzip(b: &[u8]) -> String {
    let mut out = String::new();
    GzDecoder::new(b).read_to_string(&mut out).unwrap();
    out
}

#[test]
fn compresses_with_nginx_side_effects() {
    let s = site();
    let plain = get(&s, "/page.html", "");
    let r = get(&s, "/page.html", "Accept-Encoding: gzip, deflate\r\n");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.header("Content-Length"), None);
    assert_eq!(r.header("Transfer-Encoding"), Some("chunked"));
    assert_eq!(r.header("Vary"), Some("Accept-Encoding"));
    assert_eq!(
        r.header("ETag").unwrap(),
        format!("W/{}", plain.header("ETag").unwrap())
    );
    assert_eq!(gunzip(&r.body), text(5000));
    assert!(r.body.len() < 500, "compressed: {} bytes", r.body.len());
    // The uncompressed answer also says Vary (nginx adds it whenever gzip
    // could apply to the type).
    assert_eq!(plain.header("Vary"), Some("Accept-Encoding"));
}

#[test]
fn http10_gets_a_close_delimited_body() {
    let s = site();
    let r = Response::parse(&s.raw(b"GET /page.html HTTP/1.0\r\nAccept-Encoding: gzip\r\n\r\n"))
        .unwrap();
    // gzip_http_version 1.1 (the default): an HTTP/1.0 request is not compressed.
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(r.body.len(), 5000);
}

#[test]
fn what_is_not_compressed() {
    let s = site();
    let ae = "Accept-Encoding: gzip\r\n";
    assert_eq!(
        get(&s, "/small.html", ae).header("Content-Encoding"),
        None,
        "min_length"
    );
    assert_eq!(
        get(&s, "/data.json", ae).header("Content-Encoding"),
        None,
        "types"
    );
    assert_eq!(
        get(&s, "/off/page.html", ae).header("Content-Encoding"),
        None
    );
    assert_eq!(get(&s, "/page.html", "").header("Content-Encoding"), None);
    assert_eq!(
        get(&s, "/page.html", "Accept-Encoding: deflate\r\n").header("Content-Encoding"),
        None
    );
    assert_eq!(
        get(&s, "/style.css", ae).header("Content-Encoding"),
        Some("gzip"),
        "listed type"
    );
    let msie = "Accept-Encoding: gzip\r\nUser-Agent: Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)\r\n";
    assert_eq!(get(&s, "/page.html", msie).header("Content-Encoding"), None);
}

/// nginx decides by the Via header: without it, gzip_proxied plays no part.
#[test]
fn proxied_requests_follow_gzip_proxied() {
    let s = site();
    let via = "Accept-Encoding: gzip\r\nVia: 1.1 proxy\r\n";
    // A static file has no Expires and no Cache-Control, so with
    // "expired no-cache no-store private auth" nothing forbids compression.
    assert_eq!(
        get(&s, "/page.html", via).header("Content-Encoding"),
        Some("gzip")
    );
    // gzip_proxied off: never for a proxied request, always otherwise.
    assert_eq!(
        get(&s, "/proxied-off/page.html", via).header("Content-Encoding"),
        None
    );
    assert_eq!(
        get(&s, "/proxied-off/page.html", "Accept-Encoding: gzip\r\n").header("Content-Encoding"),
        Some("gzip")
    );
    // no_last_modified looks for a Last-Modified header set by a handler
    // before the filters (an upstream's); nginx's static module adds its
    // Last-Modified later, so a static file is compressed: as nginx does.
    assert_eq!(
        get(&s, "/nolm/page.html", via).header("Content-Encoding"),
        Some("gzip")
    );
    // The static module sets the ETag early: no_etag declines.
    assert_eq!(
        get(&s, "/noetag/page.html", via).header("Content-Encoding"),
        None
    );
}

#[test]
fn head_and_range() {
    let s = site();
    let raw = s.raw(b"HEAD /page.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n");
    let r = Response::parse_head(&raw).unwrap();
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert!(r.rest.is_empty());
    // With gzip applying, nginx ignores the Range and sends the whole
    // compressed body with 200.
    let r = get(
        &s,
        "/page.html",
        "Accept-Encoding: gzip\r\nRange: bytes=0-9\r\n",
    );
    assert_eq!(r.status, 200);
    assert_eq!(gunzip(&r.body), text(5000));
}

/// Without `Accept-Encoding` a Range is answered, and the answer still
/// varies on `Accept-Encoding` when gzip would have applied to the file:
/// nginx writes `Vary` on the 206 and on the 416 alike (not for a type
/// gzip skips, nor where gzip is off).
#[test]
fn ranges_of_compressible_files_vary() {
    let s = site();
    let vary = |path: &str, range: &str| {
        let r = get(&s, path, &format!("Range: {range}\r\n"));
        (r.status, r.header("Vary").map(str::to_string))
    };
    let accept = Some("Accept-Encoding".to_string());
    assert_eq!(vary("/page.html", "bytes=0-9"), (206, accept.clone()));
    assert_eq!(vary("/page.html", "bytes=99999-"), (416, accept));
    assert_eq!(vary("/data.json", "bytes=99999-"), (416, None));
    assert_eq!(vary("/off/page.html", "bytes=99999-"), (416, None));
}

#[test]
fn gzip_static_serves_the_gz_file() {
    let s = site();
    let r = get(&s, "/static/s.html", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.body, b"pretend-gzip");
    assert_eq!(r.header("Content-Length"), Some("12"));
    let r = get(&s, "/static/s.html", "");
    assert_eq!(r.body.len(), 4000);
    let r = get(&s, "/always/a.html", "");
    assert_eq!(r.body, b"pretend-gzip-always");
}

#[test]
fn q_values() {
    let s = site();
    assert_eq!(
        get(&s, "/page.html", "Accept-Encoding: gzip;q=0\r\n").header("Content-Encoding"),
        None
    );
    assert_eq!(
        get(&s, "/page.html", "Accept-Encoding: gzip;q=0.5\r\n").header("Content-Encoding"),
        Some("gzip")
    );
}

/// brotli and zstd: Peregrine's directives (those of ngx_brotli and
/// zstd-nginx-module); preferred by q-value, then br, zstd, gzip.
#[test]
#[cfg_attr(e2e_nginx, ignore = "brotli and zstd are not in Debian's nginx")]
fn brotli_and_zstd() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("br");
    p.write("html/page.html", text(5000));
    let conf = CONF.replace(
        "gzip on;",
        "gzip on;\n    brotli on;\n    brotli_types text/plain;\n    zstd on;\n    zstd_types text/plain;",
    );
    let s = Server::start(p, &conf);
    let r = get(&s, "/page.html", "Accept-Encoding: gzip, br, zstd\r\n");
    assert_eq!(r.header("Content-Encoding"), Some("br"));
    let mut out = Vec::new();
    brotli_decompress(&r.body, &mut out);
    assert_eq!(out, text(5000).as_bytes());
    let r = get(&s, "/page.html", "Accept-Encoding: gzip, zstd\r\n");
    assert_eq!(r.header("Content-Encoding"), Some("zstd"));
    let r = get(&s, "/page.html", "Accept-Encoding: gzip;q=1, br;q=0.5\r\n");
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
}

fn brotli_decompress(input: &[u8], out: &mut Vec<u8>) {
    let mut r = brotli::Decompressor::new(input, 4096);
    r.read_to_end(out).unwrap();
}
