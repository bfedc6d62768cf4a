//! `lingering_close`, `lingering_time`, `lingering_timeout`: after a
//! response that closes its connection while the client may still be
//! sending, nginx shuts the write side and keeps reading (so the client
//! gets the response before any RST), for at most `lingering_time`, each
//! wait at most `lingering_timeout`. Seen here through stub_status: a
//! lingering connection is still active.

use std::io::Write;
use std::time::{Duration, Instant};

use crate::support::{Prefix, Response, Server, conf_with};

fn site(mode: &str) -> Server {
    let p = Prefix::new("lingering");
    p.write("html/a.txt", "aaa\n");
    Server::start(
        p,
        &conf_with(&format!(
            "    lingering_close {mode};\n    lingering_timeout 1s;\n    lingering_time 30s;\n\
             server {{\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location = /status {{ stub_status; lingering_close off; }}\n    }}\n"
        )),
    )
}

fn active(s: &Server) -> u32 {
    let r = s.get("/status");
    let first = r.body_str().lines().next().unwrap_or_default().to_string();
    first
        .trim_start_matches("Active connections:")
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{first:?}"))
}

/// A `Connection: close` request with the client's next bytes already
/// there: the answer arrives (and with it the end of the server's side).
fn close_with_bytes_after(s: &Server) -> std::net::TcpStream {
    let mut c = s.connect();
    c.write_all(
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /a.txt HTTP/1.1\r\n",
    )
    .unwrap();
    let got = crate::support::read_to_close(&mut c);
    let r = Response::parse(&got).expect("a response");
    assert_eq!((r.status, r.body_str()), (200, "aaa\n"));
    c
}

/// `on` (the default) and `always` linger after such a close; `off` does
/// not. The lingering connection ends by itself once `lingering_timeout`
/// passes with nothing read.
#[test]
fn lingering_keeps_reading_after_the_close() {
    for (mode, lingers) in [("on", true), ("always", true), ("off", false)] {
        let s = site(mode);
        let _c = close_with_bytes_after(&s);
        let want = if lingers { 2 } else { 1 };
        assert_eq!(active(&s), want, "lingering_close {mode}");
        if lingers {
            let deadline = Instant::now() + Duration::from_secs(8);
            while active(&s) != 1 {
                assert!(Instant::now() < deadline, "{mode}: still lingering");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// `always` lingers even when the client sent nothing more.
#[test]
fn lingering_close_always_lingers_without_more_bytes() {
    for (mode, want) in [("always", 2), ("on", 1)] {
        let s = site(mode);
        let mut c = s.connect();
        c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let got = crate::support::read_to_close(&mut c);
        assert_eq!(Response::parse(&got).expect("a response").status, 200);
        assert_eq!(active(&s), want, "lingering_close {mode}");
    }
}
