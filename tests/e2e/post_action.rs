//! `post_action`: once the client has its answer, the location's URI or
//! named location runs, and a proxied one makes its upstream request
//! (its answer read by nobody). Checked against nginx (`E2E_SERVER=nginx
//! cargo test --test e2e post_action::`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Response, Server, conf_with};

/// A backend that reports each request line it reads and answers it.
fn recording_backend() -> (u16, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let tx = tx.clone();
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&buf);
                let _ = tx.send(text.lines().next().unwrap_or("").to_string());
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nHIDDEN",
                );
            });
        }
    });
    (port, rx)
}

#[test]
fn a_proxied_post_action_goes_upstream_after_the_answer() {
    let (b, rx) = recording_backend();
    let p = Prefix::new("post-action");
    p.write("html/index.html", "SEE-THIS");
    p.write("html/named.html", "NAMED");
    let s = Server::start(
        p,
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n\
             location / {{ post_action /after; }}\n\
             location /named.html {{ post_action @after; }}\n\
             location /after {{ internal; proxy_pass http://127.0.0.1:{b}/hit; }}\n\
             location @after {{ proxy_pass http://127.0.0.1:{b}; }}\n\
             location /none {{ return 200 none; }}\n    }}\n"
        )),
    );
    let wait = Duration::from_secs(5);
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.body_str(), "SEE-THIS");
    assert_eq!(rx.recv_timeout(wait).unwrap(), "GET /hit HTTP/1.0");
    let r = s.get("/named.html");
    assert_eq!(r.body_str(), "NAMED");
    assert_eq!(rx.recv_timeout(wait).unwrap(), "GET /named.html HTTP/1.0");
    // A location without one: nothing goes upstream.
    assert_eq!(s.get("/none").body_str(), "none");
    assert!(rx.recv_timeout(Duration::from_millis(500)).is_err());
    // The connection serves on after the post action.
    let out = s.raw(
        b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\nGET /none HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    let first = Response::parse(&out).unwrap();
    assert_eq!(first.body_str(), "SEE-THIS");
    let second = Response::parse(&first.rest).unwrap();
    assert_eq!(second.body_str(), "none");
    assert_eq!(rx.recv_timeout(wait).unwrap(), "GET /hit HTTP/1.0");
}
