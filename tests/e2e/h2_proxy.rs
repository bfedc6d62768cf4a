//! HTTP/2 streams that proxy (`proxy_pass` from an h2c stream) to a real
//! HTTP/1 backend on loopback: a GET, a POST whose body is larger than
//! the preread window (so WINDOW_UPDATEs must come), an upstream that
//! refuses (502), and a client that resets the stream mid-answer (the
//! connection keeps serving).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::thread;

use crate::h2::{frame, get_block, open, read_stream};
use crate::support::{Prefix, Server, conf_with, free_port};

/// The body of `/big` from the backend.
const BIG: usize = 1 << 20;

/// A backend answering `/big` with [`BIG`] bytes, anything else with
/// `got LEN` where LEN is the request body's length (by Content-Length or
/// by chunks, summed).
fn backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 65536];
                let head_end = loop {
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let body = if head.starts_with("get /big ") {
                    vec![b'b'; BIG]
                } else {
                    format!("got {len}").into_bytes()
                };
                let mut a = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\nKeep-Alive: timeout=5\r\nX-Up: 1\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                a.extend_from_slice(&body);
                let _ = s.write_all(&a);
            });
        }
    });
    port
}

fn start(tag: &str) -> Server {
    let up = backend();
    let dead = free_port();
    let p = Prefix::new(tag);
    let conf = conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:PORT http2;\n        location / {{ proxy_pass http://127.0.0.1:{up}; }}\n        location /dead {{ proxy_pass http://127.0.0.1:{dead}; }}\n    }}\n"
    ));
    Server::start(p, &conf)
}

/// curl over h2c with prior knowledge: `CODE VERSION` and the body.
fn curl(args: &[&str], url: &str) -> (String, String) {
    let out = Command::new("curl")
        .args([
            "-s",
            "--http2-prior-knowledge",
            "-w",
            "\n%{http_code} %{http_version}",
        ])
        .args(args)
        .arg(url)
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, tail) = text.rsplit_once('\n').unwrap();
    (tail.to_string(), body.to_string())
}

#[test]
fn a_stream_proxies_a_get_and_drops_hop_by_hop_fields() {
    let s = start("h2-proxy-get");
    let url = format!("http://{}/x", s.addr);
    let (w, body) = curl(&[], &url);
    assert_eq!(w, "200 2");
    assert_eq!(body, "got 0");
    let (w, head) = curl(&["-o", "/dev/null", "-D", "-"], &url);
    assert_eq!(w, "200 2");
    let head = head.to_lowercase();
    assert!(head.contains("x-up: 1"), "{head}");
    assert!(
        !head.contains("keep-alive") && !head.contains("connection:"),
        "{head}"
    );
    let (w, body) = curl(&[], &format!("http://{}/big", s.addr));
    assert_eq!(w, "200 2");
    assert_eq!(body.len(), BIG);
}

#[test]
fn a_post_body_larger_than_the_preread_window_reaches_the_upstream() {
    let s = start("h2-proxy-post");
    let p = Prefix::new("h2-proxy-post-body");
    let file = p.write("body.bin", vec![b'p'; 300_000]);
    let url = format!("http://{}/post", s.addr);
    let arg = format!("@{}", file.display());
    let (w, body) = curl(&["--data-binary", &arg], &url);
    assert_eq!((w.as_str(), body.as_str()), ("200 2", "got 300000"));
    // Without a `content-length`: DATA until END_STREAM; the proxy sends
    // the length it read.
    let (w, body) = curl(&["--data-binary", &arg, "-H", "Content-Length:"], &url);
    assert_eq!((w.as_str(), body.as_str()), ("200 2", "got 300000"));
}

#[test]
fn an_upstream_that_refuses_is_a_502() {
    let s = start("h2-proxy-502");
    let (w, body) = curl(&[], &format!("http://{}/dead", s.addr));
    assert_eq!(w, "502 2");
    assert!(body.contains("502 Bad Gateway"), "{body}");
}

#[test]
fn a_reset_mid_answer_leaves_the_connection_serving() {
    let s = start("h2-proxy-reset");
    let mut c = open(&s);
    // The large answer is asked for; once its first DATA came, the stream
    // is reset (RST_STREAM CANCEL) and another asked for.
    // The connection's window is opened wide: what the reset stream was
    // sent must not starve the next one.
    let mut first = frame(8, 0, 0, &(1u32 << 30).to_be_bytes());
    first.extend(frame(1, 0x05, 1, &get_block("/big")));
    c.write_all(&first).unwrap();
    loop {
        let (kind, flags, id, _) = crate::h2::read_frame(&mut c).expect("a frame");
        if kind == 4 && flags & 1 == 0 {
            c.write_all(&frame(4, 1, 0, &[])).unwrap();
        }
        if id == 1 && kind == 0 {
            break;
        }
    }
    let mut out = frame(3, 0, 1, &8u32.to_be_bytes());
    out.extend(frame(1, 0x05, 3, &get_block("/after")));
    c.write_all(&out).unwrap();
    assert_eq!(read_stream(&mut c, 3), "got 0".len());
}
