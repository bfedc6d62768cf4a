//! h2spec's cases that Peregrine used to fail (docs/http2.md, "h2spec"),
//! on a real socket: a malformed request head gets nginx's 400 and then
//! RST_STREAM PROTOCOL_ERROR (RFC 9113 §8.1.1; nginx sends the 400 only),
//! and a TLS connection whose ALPN chose h2 refuses a bad preface with
//! GOAWAY PROTOCOL_ERROR (RFC 9113 §3.4) instead of answering HTTP/1.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::h2::{frame, open, read_frame};
use crate::support::{Prefix, Server, conf_with, is_nginx};

const PROTOCOL_ERROR: u32 = 0x1;

fn start(tag: &str) -> Server {
    let p = Prefix::new(tag);
    p.write("html/index.html", "index");
    let conf = conf_with(
        "    server {\n        listen 127.0.0.1:PORT http2;\n        location / { }\n    }\n",
    );
    Server::start(p, &conf)
}

/// A GET without `:path` (static-table `:method GET`, `:scheme http`).
fn no_path_block() -> Vec<u8> {
    let mut b = vec![0x82, 0x86, 0x01, 9];
    b.extend_from_slice(b"localhost");
    b
}

#[test]
fn a_malformed_head_gets_400_then_rst_stream_protocol_error() {
    let s = start("h2-malformed-head");
    let mut c = open(&s);
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(&frame(1, 0x05, 1, &no_path_block())).unwrap();
    let (mut status, mut ended, mut reset) = (None, false, None);
    while let Some((kind, flags, id, p)) = read_frame(&mut c) {
        if kind == 4 && flags & 1 == 0 {
            c.write_all(&frame(4, 1, 0, &[])).unwrap();
        }
        if id != 1 {
            continue;
        }
        match kind {
            // The static table's indexed 400 is 0x8c.
            1 => status = status.or(p.first().copied()),
            3 => {
                reset = Some(u32::from_be_bytes([p[0], p[1], p[2], p[3]]));
                break;
            }
            _ => {}
        }
        ended |= (kind == 0 || kind == 1) && flags & 1 != 0;
        if ended && is_nginx() {
            break;
        }
    }
    assert_eq!(status, Some(0x8c), "nginx's 400");
    assert!(ended, "the 400 is whole before the reset");
    if !is_nginx() {
        assert_eq!(reset, Some(PROTOCOL_ERROR));
    }
}

#[test]
fn alpn_h2_with_a_bad_preface_is_goaway_protocol_error() {
    let p = Prefix::new("h2-malformed-preface");
    p.write("html/index.html", "index");
    crate::tls::cert(&p, "localhost");
    let conf = conf_with(
        "    server {\n        listen 127.0.0.1:PORT ssl http2;\n        ssl_certificate localhost.crt; ssl_certificate_key localhost.key;\n        location / { }\n    }\n",
    );
    let s = Server::start(p, &conf);
    let mut child = Command::new("openssl")
        .args(["s_client", "-quiet", "-alpn", "h2", "-connect"])
        .arg(format!("127.0.0.1:{}", s.addr.port()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("openssl runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"INVALID CONNECTION PREFACE\r\n\r\n")
        .unwrap();
    // The server closes; openssl ends with it (stdin stays open until then).
    let out = child.wait_with_output().unwrap().stdout;
    drop(stdin);
    assert!(!out.starts_with(b"HTTP/1.1"), "not an HTTP/1 answer");
    let mut rest = &out[..];
    let mut goaway = None;
    while rest.len() >= 9 {
        let n = (usize::from(rest[0]) << 16) | (usize::from(rest[1]) << 8) | usize::from(rest[2]);
        let Some(p) = rest.get(9..9 + n) else { break };
        if rest[3] == 7 && p.len() >= 8 {
            goaway = Some(u32::from_be_bytes([p[4], p[5], p[6], p[7]]));
        }
        rest = &rest[9 + n..];
    }
    assert_eq!(goaway, Some(PROTOCOL_ERROR), "{out:?}");
}
