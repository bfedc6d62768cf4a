//! Finer points of nginx's gzip and gzip_static behaviour (nginx 1.22.1),
//! beyond gzip.rs: when `Vary` is sent, what a precompressed file's
//! response looks like, ranges, error pages, `gzip_types *`, the
//! `gzip_disable msie6` edge cases and the `Accept-Encoding` quirks.
//! Every expectation here was checked with `E2E_SERVER=nginx`.

use crate::support::{Prefix, Response, Server};
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
    gzip_vary on;
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /st/ { gzip_static on; }
        location /al/ { gzip_static always; }
        location /any/ { gzip_types *; default_type ""; }
        location /ie/ { gzip_disable msie6; }
        location /novary/ { gzip_vary off; gzip_static on; }
    }
}
"#;

fn page(n: usize) -> String {
    "<p>Peregrine and nginx agree on compression.</p>\n".repeat(n / 49 + 1)[..n].to_string()
}

fn site() -> Server {
    let p = Prefix::new("compress-nginx");
    p.write("html/a.html", page(20_000));
    p.write("html/tiny.html", "tiny");
    p.write("html/pic.png", page(3000));
    for dir in ["st", "al", "novary"] {
        p.write(&format!("html/{dir}/a.html"), page(20_000));
        p.write(
            &format!("html/{dir}/a.html.gz"),
            b"precompressed-bytes".as_slice(),
        );
        p.write(&format!("html/{dir}/b.html"), page(20_000));
    }
    p.write("html/any/blob", page(3000));
    p.write("html/ie/a.html", page(3000));
    Server::start(p, CONF)
}

fn get(s: &Server, path: &str, headers: &str) -> Response {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n");
    Response::parse(&s.raw(raw.as_bytes())).unwrap()
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(b).read_to_end(&mut out).unwrap();
    out
}

const GZ: &str = "Accept-Encoding: gzip\r\n";

#[test]
fn vary_only_when_the_response_could_be_compressed() {
    let s = site();
    // Eligible type and size: Vary even without Accept-Encoding.
    assert_eq!(
        get(&s, "/a.html", "").header("Vary"),
        Some("Accept-Encoding")
    );
    // Below gzip_min_length (20) or a type not in gzip_types: no Vary.
    let tiny = get(&s, "/tiny.html", GZ);
    assert_eq!(tiny.header("Vary"), None);
    assert_eq!(tiny.header("Content-Encoding"), None);
    assert_eq!(tiny.header("Accept-Ranges"), Some("bytes"));
    assert_eq!(get(&s, "/pic.png", GZ).header("Vary"), None);
}

#[test]
fn accept_encoding_quirks() {
    let s = site();
    let ce = |ae: &str| {
        get(&s, "/a.html", &format!("Accept-Encoding: {ae}\r\n"))
            .header("Content-Encoding")
            .map(str::to_owned)
    };
    // nginx never treats `*` as gzip, nor x-gzip.
    assert_eq!(ce("*"), None);
    assert_eq!(ce("x-gzip"), None);
    assert_eq!(ce("identity, x-gzip"), None);
    assert_eq!(ce("gzip;q=0.0001"), None);
    assert_eq!(ce("gzip;q=1.5"), None);
    assert_eq!(ce("x-gzipgzip").as_deref(), Some("gzip"));
    assert_eq!(ce("deflate, gzip; q=0.5").as_deref(), Some("gzip"));
    assert_eq!(ce("GZIP").as_deref(), Some("gzip"));
}

#[test]
fn compressed_body_and_weak_etag() {
    let s = site();
    let plain = get(&s, "/a.html", "");
    let r = get(&s, "/a.html", GZ);
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.header("Accept-Ranges"), None);
    assert_eq!(r.header("Content-Length"), None);
    let etag = plain.header("ETag").unwrap();
    assert!(etag.starts_with('"'));
    assert_eq!(r.header("ETag").unwrap(), format!("W/{etag}"));
    assert_eq!(gunzip(&r.body), page(20_000).as_bytes());
}

#[test]
fn ranges_are_ignored_when_compressing_only() {
    let s = site();
    let r = get(
        &s,
        "/a.html",
        "Accept-Encoding: gzip\r\nRange: bytes=0-10\r\n",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Range"), None);
    assert_eq!(gunzip(&r.body), page(20_000).as_bytes());
    let r = get(&s, "/a.html", "Range: bytes=0-10\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &page(20_000).as_bytes()[..11]);
    assert_eq!(r.header("Vary"), Some("Accept-Encoding"));
    assert!(r.header("ETag").unwrap().starts_with('"'));
}

#[test]
fn error_pages_are_compressed() {
    let s = site();
    let r = get(&s, "/missing.html", GZ);
    assert_eq!(r.status, 404);
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.header("Vary"), Some("Accept-Encoding"));
    assert!(
        String::from_utf8(gunzip(&r.body))
            .unwrap()
            .contains("404 Not Found")
    );
}

#[test]
fn gzip_types_star_includes_untyped_responses() {
    let s = site();
    let r = get(&s, "/any/blob", GZ);
    assert_eq!(r.header("Content-Type"), None);
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
}

#[test]
fn msie6_edges() {
    let s = site();
    let ua = |u: &str| {
        get(
            &s,
            "/ie/a.html",
            &format!("Accept-Encoding: gzip\r\nUser-Agent: {u}\r\n"),
        )
        .header("Content-Encoding")
        .map(str::to_owned)
    };
    assert_eq!(
        ua("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0)"),
        None
    );
    assert_eq!(ua("X MSIE 5.5; SV1"), None);
    assert_eq!(ua("MSIE 6.0"), None);
    // Windows XP SP2's IE6, Opera pretending, too short after "MSIE ".
    assert_eq!(ua("MSIE 6.0; SV1").as_deref(), Some("gzip"));
    assert_eq!(ua("Opera MSIE 6.0;").as_deref(), Some("gzip"));
    assert_eq!(ua("MSIE 6.").as_deref(), Some("gzip"));
    assert_eq!(
        ua("Mozilla/4.0 (compatible; MSIE 7.0)").as_deref(),
        Some("gzip")
    );
}

#[test]
fn gzip_static_response() {
    let s = site();
    let plain = get(&s, "/st/a.html", "");
    let r = get(&s, "/st/a.html", GZ);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"precompressed-bytes");
    assert_eq!(r.header("Content-Length"), Some("19"));
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.header("Content-Type"), Some("text/html"));
    assert_eq!(r.header("Vary"), Some("Accept-Encoding"));
    assert_eq!(r.header("Accept-Ranges"), None);
    // The .gz file's own strong ETag (its size, 19 = 0x13).
    let etag = r.header("ETag").unwrap();
    assert!(etag.starts_with('"') && etag.ends_with("-13\""), "{etag}");
    assert_ne!(Some(etag), plain.header("ETag"));
    // The uncompressed file, with Vary because the .gz exists.
    assert_eq!(plain.body.len(), 20_000);
    assert_eq!(plain.header("Vary"), Some("Accept-Encoding"));
    assert_eq!(plain.header("Accept-Ranges"), Some("bytes"));
    // Range is ignored on the precompressed file.
    let r = get(
        &s,
        "/st/a.html",
        "Accept-Encoding: gzip\r\nRange: bytes=0-3\r\n",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"precompressed-bytes");
    // No .gz: compressed on the fly as usual.
    let r = get(&s, "/st/b.html", GZ);
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(gunzip(&r.body), page(20_000).as_bytes());
}

#[test]
fn gzip_static_through_a_proxy() {
    let s = site();
    // gzip_proxied off (the default) and Via: the .gz is not served, the
    // file goes out uncompressed, with Vary.
    let r = get(
        &s,
        "/st/a.html",
        "Accept-Encoding: gzip\r\nVia: 1.1 cache\r\n",
    );
    assert_eq!(r.header("Content-Encoding"), None);
    assert_eq!(r.body.len(), 20_000);
    assert_eq!(r.header("Vary"), Some("Accept-Encoding"));
}

#[test]
fn gzip_static_always_has_no_vary() {
    let s = site();
    let r = get(&s, "/al/a.html", "");
    assert_eq!(r.body, b"precompressed-bytes");
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.header("Vary"), None);
}

#[test]
fn gzip_vary_off() {
    let s = site();
    let r = get(&s, "/novary/a.html", GZ);
    assert_eq!(r.body, b"precompressed-bytes");
    assert_eq!(r.header("Vary"), None);
    let r = get(&s, "/novary/b.html", GZ);
    assert_eq!(r.header("Content-Encoding"), Some("gzip"));
    assert_eq!(r.header("Vary"), None);
}

/// A client revalidating with the weak ETag it got with a compressed body:
/// the not-modified check runs before compression and compares weakly, so
/// nginx answers 304 with the strong ETag and no Vary.
#[test]
fn weak_etag_revalidates() {
    let s = site();
    let r = get(&s, "/a.html", GZ);
    let weak = r.header("ETag").unwrap().to_owned();
    assert!(weak.starts_with("W/"));
    let r = get(
        &s,
        "/a.html",
        &format!("Accept-Encoding: gzip\r\nIf-None-Match: {weak}\r\n"),
    );
    assert_eq!(r.status, 304);
    assert_eq!(r.header("ETag"), Some(&weak[2..]));
    assert_eq!(r.header("Vary"), None);
    assert_eq!(r.header("Content-Encoding"), None);
}
