//! Timeouts with real slow clients: client_header_timeout, keepalive_timeout,
//! client_body_timeout and send_timeout close the connection as nginx does.

use crate::support::{Prefix, Response, Server, read_to_close};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    include mime.types;
    access_log off;
    client_header_timeout 1s;
    client_body_timeout 1s;
    keepalive_timeout 1s;
    send_timeout 1s;
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /upload { return 200 "ok"; }
    }
}
"#;

/// Longest a test waits for the server to act on a 1-second timeout; the
/// server's timers are coarse, so allow several seconds of slack.
const SLACK: Duration = Duration::from_secs(6);

fn site() -> Server {
    let p = Prefix::new("timeouts");
    p.write("html/a.txt", "aaa\n");
    p.write("html/big.bin", vec![b'z'; 64 * 1024 * 1024]);
    Server::start(p, CONF)
}

fn closed_within(c: &mut std::net::TcpStream, limit: Duration) -> (bool, Vec<u8>) {
    c.set_read_timeout(Some(limit)).unwrap();
    let start = Instant::now();
    let got = read_to_close(c);
    (start.elapsed() < limit, got)
}

#[test]
fn header_timeout_closes_a_slow_client() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n").unwrap();
    let (closed, got) = closed_within(&mut c, SLACK);
    assert!(closed, "the server closed the connection");
    // nginx closes without an answer when the head does not arrive in time.
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
}

#[test]
fn idle_keepalive_connection_is_closed() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (closed, got) = closed_within(&mut c, SLACK);
    assert!(closed);
    assert_eq!(Response::parse(&got).unwrap().body_str(), "aaa\n");
}

#[test]
fn body_timeout() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly-part")
        .unwrap();
    let (closed, _) = closed_within(&mut c, SLACK);
    assert!(closed, "a body that stops arriving ends the connection");
}

#[test]
fn send_timeout_drops_a_client_that_stops_reading() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    // Read nothing for longer than send_timeout, then drain what is left.
    std::thread::sleep(Duration::from_secs(4));
    c.set_read_timeout(Some(SLACK)).unwrap();
    let mut total = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    assert!(
        total < 64 * 1024 * 1024,
        "the server gave up before sending all {total} bytes"
    );
}

/// A kept-alive connection whose next head starts but stalls is closed by
/// `client_header_timeout`, counted from that head's first byte, not left
/// to the (here much longer) `keepalive_timeout`. Peregrine arms this timer
/// only once the head is found incomplete (a whole head never needs it).
#[test]
fn stalled_second_head_gets_the_header_timeout() {
    let p = Prefix::new("timeouts-second-head");
    p.write("html/a.txt", "aaa\n");
    let conf = CONF.replace("keepalive_timeout 1s;", "keepalive_timeout 60s;");
    let s = Server::start(p, &conf);
    let mut c = s.connect();
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = Vec::new();
    let mut buf = [0u8; 1024];
    while Response::parse(&first).is_none() {
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "closed before the first answer");
        first.extend_from_slice(&buf[..n]);
    }
    assert_eq!(Response::parse(&first).unwrap().body_str(), "aaa\n");
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHo").unwrap();
    let (closed, got) = closed_within(&mut c, SLACK);
    assert!(
        closed,
        "closed by client_header_timeout, not keepalive_timeout"
    );
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
}
