//! A request body whose DATA disagrees with its `content-length` on an
//! HTTP/2 stream: nginx answers 400 (not RST_STREAM) whether the body is
//! shorter (END_STREAM too early) or longer, drops the rest of the body,
//! and the connection keeps serving. Raw frames on a real socket, to a
//! location that proxies to a real backend (so the body is read).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;

use crate::h2::{frame, get_block, open, read_frame};
use crate::support::{Prefix, Server, conf_with};

/// A backend that answers any request with 200 and closes.
fn backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut b = [0u8; 4096];
            let _ = s.read(&mut b);
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    port
}

fn start(tag: &str) -> Server {
    let up = backend();
    let p = Prefix::new(tag);
    p.write("html/index.html", "index");
    let conf = conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:PORT http2;\n        location /p {{ proxy_pass http://127.0.0.1:{up}; }}\n    }}\n"
    ));
    Server::start(p, &conf)
}

/// A POST to `/p` with `content-length: 5` (literal fields, RFC 7541
/// §6.2.2: `:method POST` and `:scheme http` from the static table).
fn post_block() -> Vec<u8> {
    let mut b = vec![0x83, 0x86, 0x04, 2];
    b.extend_from_slice(b"/p");
    b.extend_from_slice(&[0x01, 9]);
    b.extend_from_slice(b"localhost");
    b.extend_from_slice(&[0x00, 14]);
    b.extend_from_slice(b"content-length");
    b.extend_from_slice(&[1, b'5']);
    b
}

/// The `:status` of the first HEADERS on `stream` (the static table's
/// indexed 200 is 0x88, 400 is 0x8c: both servers send those), and
/// whether a RST_STREAM other than NO_ERROR came for it.
fn status(c: &mut std::net::TcpStream, stream: u32) -> (u8, bool) {
    let mut status = None;
    let mut reset = false;
    while let Some((kind, flags, id, p)) = read_frame(c) {
        if kind == 4 && flags & 1 == 0 {
            c.write_all(&frame(4, 1, 0, &[])).unwrap();
        }
        if id != stream {
            continue;
        }
        match kind {
            1 => status = status.or(p.first().copied()),
            3 => {
                reset |= p != [0, 0, 0, 0];
                break;
            }
            _ => {}
        }
        if (kind == 0 || kind == 1) && flags & 1 != 0 {
            break;
        }
    }
    (status.expect("a HEADERS frame"), reset)
}

#[test]
fn a_shorter_body_is_a_400() {
    let s = start("h2-body-short");
    let mut c = open(&s);
    let mut out = frame(1, 0x04, 1, &post_block());
    out.extend(frame(0, 0x01, 1, b"abc"));
    c.write_all(&out).unwrap();
    assert_eq!(status(&mut c, 1), (0x8c, false));
    // The connection still serves.
    c.write_all(&frame(1, 0x05, 3, &get_block("/"))).unwrap();
    assert_eq!(status(&mut c, 3), (0x88, false));
}

#[test]
fn a_longer_body_is_a_400_and_the_rest_is_dropped() {
    let s = start("h2-body-long");
    let mut c = open(&s);
    let mut out = frame(1, 0x04, 1, &post_block());
    out.extend(frame(0, 0x00, 1, b"abcdef"));
    out.extend(frame(0, 0x01, 1, &[b'x'; 1000]));
    c.write_all(&out).unwrap();
    assert_eq!(status(&mut c, 1), (0x8c, false));
    c.write_all(&frame(1, 0x05, 3, &get_block("/"))).unwrap();
    assert_eq!(status(&mut c, 3), (0x88, false));
}
