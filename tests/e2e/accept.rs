//! Accepting connections as nginx does: at the handshake by default, and
//! with `TCP_DEFER_ACCEPT` only under `listen ... deferred` (then a worker
//! meets a connection only once its request has arrived: `accept` hands
//! over a socket with the request in it, no `recv` that finds nothing, no
//! `epoll_ctl`; docs/performance.md measures both).

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

/// By default (nginx's) a connection is accepted at the handshake: a
/// silent one is counted as active, and served once it speaks.
#[test]
fn a_silent_connection_is_accepted_at_the_handshake() {
    let s = site("");
    let mut silent = s.connect();
    // The silent connection came first: it is accepted (accept queues are
    // FIFO) by the time the status request is read.
    assert_eq!(active(&s), 2, "silent connection counted");
    silent_then_served(&s, &mut silent);
}

/// `listen ... deferred`: the kernel holds a silent connection until its
/// first bytes, so the worker does not count it, and it is served normally
/// once it speaks. The kernel accepts a connection that stays silent after
/// its first SYN-ACK retransmission (1 s); this test speaks well before.
#[test]
fn deferred_holds_a_silent_connection_in_the_kernel() {
    let s = site(" deferred");
    let mut silent = s.connect();
    assert_eq!(active(&s), 1, "silent connection counted");
    silent_then_served(&s, &mut silent);
}

/// `deferred=off` (Peregrine's spelling of the default; nginx knows only
/// `deferred`) accepts at the handshake too.
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
