//! A proxied answer that does not end as its head said: the upstream
//! closes before the length or the last chunk while the location's body
//! filters hold the answer, or it answers `101` to a request that asked
//! for no upgrade and then goes quiet. And `max_conns` of a group with
//! `zone`, counted across the workers. Checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e proxy_cut::`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, conf_with, read_to_close};

/// A backend that writes `answer` to each connection once it read the
/// request's head, then holds the connection `hold` before it closes.
fn backend(answer: &'static [u8], hold: Duration) -> u16 {
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
                thread::sleep(hold);
            });
        }
    });
    port
}

fn server(tag: &str, locations: &str) -> Server {
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n{locations}\n    }}\n"
        )),
    )
}

fn get11(s: &Server, path: &str) -> Vec<u8> {
    s.raw(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes())
}

/// The upstream closed before the Content-Length it sent while
/// `add_after_body` and `sub_filter` held the answer: what came goes out,
/// filtered, chunked with no last chunk, and `add_after_body` adds
/// nothing (proxy_extra_data.t, proxy_unfinished.t).
#[test]
fn a_held_answer_cut_short_goes_out_unended() {
    let short = backend(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\nSEE-THIS-foo\n",
        Duration::ZERO,
    );
    let chunked = backend(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n\
          ff\r\nunfinished-foo\r\n",
        Duration::ZERO,
    );
    let s = server(
        "proxy-cut-held",
        &format!(
            "        location /add {{ proxy_pass http://127.0.0.1:{short}; add_after_body /after; }}\n\
             location /sub {{ proxy_pass http://127.0.0.1:{chunked}; sub_filter foo bar; sub_filter_types *; }}\n\
             location /after {{ return 200 \":after\\n\"; }}\n"
        ),
    );
    for (path, want) in [("/add", "SEE-THIS-foo\n"), ("/sub", "unfinished-bar")] {
        let raw = get11(&s, path);
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 200 "), "{path}: {text}");
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains("Transfer-Encoding: chunked"),
            "{path}: {head}"
        );
        assert!(!head.contains("Content-Length"), "{path}: {head}");
        assert!(body.contains(want), "{path}: {body:?}");
        assert!(!body.contains(":after"), "{path}: {body:?}");
        assert!(
            !body.ends_with("0\r\n\r\n"),
            "{path}: a last chunk: {body:?}"
        );
    }
    // HTTP/1.0: until the close.
    let raw = s.raw(b"GET /add HTTP/1.0\r\nHost: localhost\r\n\r\n");
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert!(
        !head.contains("Transfer-Encoding") && !head.contains("Content-Length"),
        "{head}"
    );
    assert_eq!(body, "SEE-THIS-foo\n");
}

/// A `101` to a request without `Upgrade` is an answer like any other,
/// its body running to the close, buffered: the bytes after the head stay
/// in nginx's partial buffer, and when the upstream times out they never
/// go out (proxy_upgrade.t "handshake noupgrade", "log - bytes noupgrade").
#[test]
fn a_101_without_upgrade_is_not_tunneled_and_its_partial_body_is_held() {
    let b = backend(
        b"HTTP/1.1 101 Switching\r\nUpgrade: foo\r\nConnection: Upgrade\r\n\r\nhandshaked\r\n",
        Duration::from_secs(4),
    );
    let s = server(
        "proxy-cut-101",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; proxy_http_version 1.1;\n\
             proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection Upgrade;\n\
             proxy_read_timeout 1s; }}\n"
        ),
    );
    let started = Instant::now();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\n\r\n")
        .unwrap();
    let raw = read_to_close(&mut c);
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 101 "), "{text}");
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(!head.contains("Transfer-Encoding"), "{head}");
    assert_eq!(body, "", "the partial body went out");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "closed by the read timeout"
    );
}

/// `max_conns` of a group with `zone` holds across the workers: of many
/// requests at once to a slow peer with `max_conns=1`, one reaches it and
/// the others are 502 ("no live upstreams"), whichever worker took them
/// (upstream_random.t "max_conns"). Without the zone's count each worker
/// would let one through.
#[test]
fn zone_max_conns_counts_every_worker() {
    // The peer answers only after a while.
    let slow = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                thread::spawn(move || {
                    let mut b = [0u8; 4096];
                    let _ = s.read(&mut b);
                    thread::sleep(Duration::from_millis(1500));
                    let _ = s.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK",
                    );
                });
            }
        });
        port
    };
    let conf = format!(
        "worker_processes 2;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{\n    access_log off;\n\
         upstream u {{ zone u 64k; server 127.0.0.1:{slow} max_conns=1; }}\n\
         server {{ listen 127.0.0.1:PORT; server_name localhost;\n\
         location / {{ proxy_pass http://u; }} }}\n}}\n"
    );
    let s = Server::start(Prefix::new("proxy-zone-max-conns"), &conf);
    let n = 12;
    let conns: Vec<TcpStream> = (0..n)
        .map(|_| {
            let mut c = TcpStream::connect(s.addr).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            c.write_all(b"GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
                .unwrap();
            thread::sleep(Duration::from_millis(20));
            c
        })
        .collect();
    let statuses: Vec<String> = conns
        .into_iter()
        .map(|mut c| {
            let raw = read_to_close(&mut c);
            String::from_utf8_lossy(&raw)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let ok = statuses.iter().filter(|l| l.contains(" 200 ")).count();
    let busy = statuses.iter().filter(|l| l.contains(" 502 ")).count();
    assert_eq!((ok, busy), (1, n - 1), "{statuses:?}");
}
