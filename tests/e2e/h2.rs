//! HTTP/2 served by the engine: h2c by prior knowledge and TLS with ALPN
//! `h2`, with real clients (curl, nghttp2's h2load) and raw frames over a
//! real socket where a client must misbehave (a reset) or watch the
//! connection end (GOAWAY on QUIT). `listen ... http2` is the form both
//! nginx 1.22 and Peregrine take, so `E2E_SERVER=nginx` runs these too.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use crate::support::{Prefix, Server, conf_with, is_nginx};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Past the protocol's initial 65,535-byte window: the client's
/// WINDOW_UPDATEs must be honoured for it to arrive whole.
pub(crate) const BIG: usize = 300_000;

fn big_body() -> Vec<u8> {
    (0..BIG).map(|i| (i * 7 % 251) as u8).collect()
}

fn start(tag: &str, extra: &str) -> Server {
    let p = Prefix::new(tag);
    p.write("html/small.html", "x".repeat(612));
    p.write("html/big.bin", big_body());
    let tls = if extra.contains("ssl") {
        crate::tls::cert(&p, "localhost");
        "ssl_certificate localhost.crt; ssl_certificate_key localhost.key;"
    } else {
        ""
    };
    let conf = conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:PORT {extra} http2;\n        {tls}\n        location / {{ }}\n        location = /gone {{ return 404; }}\n    }}\n"
    ));
    Server::start(p, &conf)
}

/// curl's answer: `CODE VERSION SIZE` and the body.
pub(crate) fn curl(args: &[&str], url: &str) -> (String, Vec<u8>) {
    let out = Command::new("curl")
        .args([
            "-s",
            "-k",
            "-w",
            "\n%{http_code} %{http_version} %{size_download}",
        ])
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs");
    let text = out.stdout;
    let cut = text.iter().rposition(|&b| b == b'\n').unwrap();
    (
        String::from_utf8_lossy(&text[cut + 1..]).into_owned(),
        text[..cut].to_vec(),
    )
}

#[test]
fn h2c_serves_files_heads_and_error_pages() {
    let s = start("h2c", "");
    let base = format!("http://{}", s.addr);
    let (w, body) = curl(&["--http2-prior-knowledge"], &format!("{base}/small.html"));
    assert_eq!(w, "200 2 612");
    assert_eq!(body, "x".repeat(612).as_bytes());
    let (w, head) = curl(
        &["--http2-prior-knowledge", "-I"],
        &format!("{base}/small.html"),
    );
    assert_eq!(w, "200 2 0");
    let head = String::from_utf8_lossy(&head).to_lowercase();
    assert!(head.starts_with("http/2 200"), "{head}");
    assert!(head.contains("content-length: 612"), "{head}");
    assert!(!head.contains("connection:"), "{head}");
    let (w, page) = curl(&["--http2-prior-knowledge"], &format!("{base}/nope"));
    assert!(w.starts_with("404 2 "), "{w}");
    assert!(String::from_utf8_lossy(&page).contains("<title>404 Not Found</title>"));
    let (w, _) = curl(&["--http2-prior-knowledge"], &format!("{base}/gone"));
    assert!(w.starts_with("404 2 "), "{w}");
    let (w, body) = curl(&["--http2-prior-knowledge"], &format!("{base}/big.bin"));
    assert_eq!(w, format!("200 2 {BIG}"));
    assert_eq!(
        body,
        big_body(),
        "the large file arrives whole past the window"
    );
}

#[test]
fn tls_offers_h2_by_alpn() {
    let s = start("h2-tls", "ssl");
    let url = format!("https://localhost:{}/big.bin", s.addr.port());
    let resolve = format!("localhost:{}:127.0.0.1", s.addr.port());
    let (w, body) = curl(&["--http2", "--resolve", &resolve], &url);
    assert_eq!(w, format!("200 2 {BIG}"));
    assert_eq!(body, big_body());
    // A client without h2 in its ALPN still gets HTTP/1.1.
    let (w, _) = curl(&["--http1.1", "--resolve", &resolve], &url);
    assert_eq!(w, format!("200 1.1 {BIG}"));
}

#[test]
fn many_concurrent_streams() {
    let s = start("h2-many", "");
    let out = Command::new("h2load")
        .args(["-n", "400", "-c", "2", "-m", "100"])
        .arg(format!("http://{}/small.html", s.addr))
        .output()
        .expect("h2load runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("400 succeeded, 0 failed"), "h2load: {text}");
    assert!(text.contains("status codes: 400 2xx"), "h2load: {text}");
}

/// One frame: (type, flags, stream, payload).
pub(crate) type Frame = (u8, u8, u32, Vec<u8>);

pub(crate) fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let n = payload.len();
    let mut f = vec![(n >> 16) as u8, (n >> 8) as u8, n as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A GET's header block: static-table `:method GET` and `:scheme http`,
/// `:path` and `:authority` as literals without indexing (RFC 7541 §6.2.2).
pub(crate) fn get_block(path: &str) -> Vec<u8> {
    let mut b = vec![0x82, 0x86, 0x04, path.len() as u8];
    b.extend_from_slice(path.as_bytes());
    b.extend_from_slice(&[0x01, 9]);
    b.extend_from_slice(b"localhost");
    b
}

pub(crate) fn read_frame(s: &mut TcpStream) -> Option<Frame> {
    let mut h = [0u8; 9];
    s.read_exact(&mut h).ok()?;
    let n = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
    let mut p = vec![0; n];
    s.read_exact(&mut p).ok()?;
    let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
    Some((h[3], h[4], stream, p))
}

/// Opens an h2c connection: preface, empty SETTINGS, and a connection
/// window large enough that only the stream windows matter.
pub(crate) fn open(s: &Server) -> TcpStream {
    let mut c = s.connect();
    let mut out = PREFACE.to_vec();
    out.extend(frame(4, 0, 0, &[]));
    c.write_all(&out).unwrap();
    c
}

/// Reads until `stream` ends (END_STREAM on DATA or HEADERS), answering
/// SETTINGS; returns the DATA bytes seen for it.
pub(crate) fn read_stream(c: &mut TcpStream, stream: u32) -> usize {
    let mut data = 0;
    while let Some((kind, flags, id, p)) = read_frame(c) {
        if kind == 4 && flags & 1 == 0 {
            c.write_all(&frame(4, 1, 0, &[])).unwrap();
        }
        if id == stream && kind == 0 {
            data += p.len();
            // Give the credit back, stream and connection.
            let inc = (p.len() as u32).to_be_bytes();
            if !p.is_empty() {
                c.write_all(&frame(8, 0, 0, &inc)).unwrap();
                c.write_all(&frame(8, 0, stream, &inc)).unwrap();
            }
        }
        if id == stream && (kind == 0 || kind == 1) && flags & 1 != 0 {
            return data;
        }
        assert!(kind != 7, "GOAWAY before stream {stream} ended");
    }
    panic!("connection ended before stream {stream} did");
}

#[test]
fn a_reset_stream_leaves_the_connection_serving() {
    let s = start("h2-reset", "");
    let mut c = open(&s);
    // The large file is asked for and cancelled at once (RST_STREAM CANCEL).
    let mut out = frame(1, 0x05, 1, &get_block("/big.bin"));
    out.extend(frame(3, 0, 1, &8u32.to_be_bytes()));
    out.extend(frame(1, 0x05, 3, &get_block("/small.html")));
    c.write_all(&out).unwrap();
    assert_eq!(read_stream(&mut c, 3), 612);
    // And once more on the same connection, after the reset.
    c.write_all(&frame(1, 0x05, 5, &get_block("/big.bin")))
        .unwrap();
    assert_eq!(read_stream(&mut c, 5), BIG);
}

#[test]
fn quit_sends_goaway() {
    let mut s = start("h2-quit", "");
    let mut c = open(&s);
    c.write_all(&frame(1, 0x05, 1, &get_block("/small.html")))
        .unwrap();
    assert_eq!(read_stream(&mut c, 1), 612);
    s.signal(libc::SIGQUIT);
    let mut goaway = None;
    while let Some((kind, flags, _, p)) = read_frame(&mut c) {
        if kind == 6 && flags & 1 == 0 {
            // nginx 1.22 and Peregrine send one GOAWAY; a server that
            // sends RFC 9113 §6.8's PING first gets its answer.
            c.write_all(&frame(6, 1, 0, &p)).unwrap();
        }
        if kind == 7 {
            goaway = Some(p);
        }
    }
    let p = goaway.expect("a GOAWAY before the close");
    let last = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & 0x7fff_ffff;
    let code = u32::from_be_bytes([p[4], p[5], p[6], p[7]]);
    assert_eq!(code, 0, "NO_ERROR");
    if !is_nginx() {
        // The final GOAWAY names the last stream processed.
        assert_eq!(last, 1);
    }
    assert!(s.stop(libc::SIGQUIT).success() || is_nginx());
}
