//! Accepting connections: `TCP_DEFER_ACCEPT` by default (a deliberate
//! difference from nginx, which defers only with `listen ... deferred`), and
//! `listen ... deferred=off` for nginx's behaviour.
//!
//! Why Peregrine defers by default (as Apache httpd does on Linux): in HTTP
//! the client speaks first, so a worker has nothing to do for a connection
//! until its request arrives. Deferred, `accept` hands over a socket with
//! the request in it and the worker reads and answers it at once: no
//! `recv` that finds nothing, no `epoll_ctl`, no wake-up to wait for the
//! request (docs/performance.md measures what it saves), and connections
//! that never send stay in the kernel instead of using `worker_connections`.

use crate::support::{Prefix, Response, Server, conf_with, is_nginx, read_to_close};
use std::io::Write;

const SERVER: &str = r#"
    server {
        listen 127.0.0.1:PORTLISTEN;
        root html;
        location = /status { stub_status; }
    }
"#;

fn site(listen: &str) -> Server {
    let p = Prefix::new("accept");
    p.write("html/a.txt", "aaa\n");
    Server::start(p, &conf_with(&SERVER.replace("LISTEN", listen)))
}

/// `Active connections` of stub_status, asked on a new connection.
fn active(s: &Server) -> u32 {
    let r = s.get("/status");
    assert_eq!(r.status, 200);
    let first = r.body_str().lines().next().unwrap_or_default().to_string();
    first
        .trim_start_matches("Active connections:")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{first:?}"))
}

/// A connection that has sent nothing, then its request: answered either way.
fn silent_then_served(s: &Server, silent: &mut std::net::TcpStream) {
    silent
        .write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = Response::parse(&read_to_close(silent)).unwrap();
    assert_eq!((r.status, r.body_str()), (200, "aaa\n"));
    // The worker is fine and counts only the status request again.
    assert_eq!(active(s), 1);
}

/// The kernel holds a silent connection until its first bytes: the worker
/// does not count it (nginx does, unless `deferred`), and it is served
/// normally once it speaks. The kernel accepts a connection that stays
/// silent after its first SYN-ACK retransmission (1 s), as for nginx's
/// `deferred`; this test speaks well before then.
#[test]
fn a_silent_connection_waits_in_the_kernel() {
    let s = site("");
    let mut silent = s.connect();
    // The silent connection came first: nginx has accepted it (accept
    // queues are FIFO) by the time it reads the status request.
    let want = if is_nginx() { 2 } else { 1 };
    assert_eq!(active(&s), want, "silent connection counted");
    silent_then_served(&s, &mut silent);
}

/// `deferred=off` (Peregrine's spelling; nginx knows only `deferred`) is
/// nginx's default: the connection is accepted at the handshake.
#[test]
#[cfg_attr(e2e_nginx, ignore = "deferred=off is Peregrine's spelling")]
fn deferred_off_accepts_at_the_handshake() {
    if is_nginx() {
        return;
    }
    let s = site(" deferred=off");
    let mut silent = s.connect();
    assert_eq!(active(&s), 2, "silent connection counted");
    silent_then_served(&s, &mut silent);
}
