//! `proxy_ignore_client_abort`: a client that closes while the upstream
//! works ends the upstream request (off, the default: 499, the upstream
//! connection closed, nginx's `client prematurely closed connection`), or
//! does not (on: the upstream answers and the request is logged with its
//! status). A real backend on loopback; checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e proxy_client_abort::`).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, free_port, wait_for_lines};

/// What the backend saw after the client went away.
#[derive(Debug, PartialEq)]
enum After {
    /// The upstream connection was closed before an answer.
    Closed,
    /// It stayed open; the answer was written.
    Answered,
}

/// A backend for one request: it reports the request's arrival, waits for
/// the go-ahead, then answers, unless the connection is closed first
/// (`answer`: false, it only watches for the close).
fn backend(
    answer: bool,
) -> (
    u16,
    mpsc::Receiver<()>,
    mpsc::Sender<()>,
    mpsc::Receiver<After>,
) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (arrived_tx, arrived) = mpsc::channel();
    let (go, go_rx) = mpsc::channel::<()>();
    let (done_tx, done) = mpsc::channel();
    thread::spawn(move || {
        let Ok((mut u, _)) = l.accept() else { return };
        u.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut req = Vec::new();
        let mut b = [0u8; 4096];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
            match u.read(&mut b) {
                Ok(0) | Err(_) => return,
                Ok(n) => req.extend_from_slice(&b[..n]),
            }
        }
        let _ = arrived_tx.send(());
        let _ = go_rx.recv();
        let after = if answer {
            let _ =
                u.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK");
            After::Answered
        } else {
            match u.read(&mut b) {
                Ok(0) => After::Closed,
                _ => After::Answered,
            }
        };
        let _ = done_tx.send(after);
    });
    (port, arrived, go, done)
}

fn server(tag: &str, port: u16, ignore: &str) -> Server {
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "    log_format st '$uri $status $upstream_status';\n\
             server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n\
             access_log logs/access.log st;\n\
             location /up {{ proxy_pass http://127.0.0.1:{port}; \
             proxy_ignore_client_abort {ignore}; }}\n\
             location /ping {{ return 200 pong; }}\n    }}\n"
        )),
    )
}

/// Sends a request to `/up`, waits for the backend to have it, closes.
fn abort(s: &Server, arrived: &mpsc::Receiver<()>) {
    let mut c = s.connect();
    c.write_all(b"GET /up HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    arrived.recv_timeout(Duration::from_secs(10)).unwrap();
    c.shutdown(Shutdown::Both).unwrap();
    drop(c);
}

/// A request answered after the close: the server (one worker) has seen
/// the close's event before it.
fn barrier(s: &Server) {
    let r = s.get("/ping");
    assert_eq!(r.status, 200);
}

#[test]
fn off_ends_the_upstream_request_with_499() {
    let (port, arrived, go, done) = backend(false);
    let s = server("abort-off", port, "off");
    abort(&s, &arrived);
    let _ = go.send(());
    assert_eq!(
        done.recv_timeout(Duration::from_secs(15)).unwrap(),
        After::Closed
    );
    let log = s.prefix.dir.join("logs/access.log");
    let lines = wait_for_lines(&log, 1, |l| l.starts_with("/up "));
    assert_eq!(lines, ["/up 499 -"], "{lines:?}");
    let err = s.prefix.dir.join("logs/error.log");
    let lines = wait_for_lines(&err, 1, |l| {
        l.contains("[info]") && l.contains("client prematurely closed connection")
    });
    assert_eq!(lines.len(), 1, "{lines:?}");
}

#[test]
fn on_lets_the_upstream_answer() {
    let (port, arrived, go, done) = backend(true);
    let s = server("abort-on", port, "on");
    abort(&s, &arrived);
    barrier(&s);
    let _ = go.send(());
    assert_eq!(
        done.recv_timeout(Duration::from_secs(15)).unwrap(),
        After::Answered
    );
    let log = s.prefix.dir.join("logs/access.log");
    let lines = wait_for_lines(&log, 1, |l| l.starts_with("/up "));
    assert_eq!(lines, ["/up 200 200"], "{lines:?}");
}

#[test]
fn the_gateways_take_the_directive() {
    let p = Prefix::new("abort-conf");
    p.conf(&conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:{};\n\
         fastcgi_ignore_client_abort on;\n        uwsgi_ignore_client_abort off;\n\
         scgi_ignore_client_abort on;\n        proxy_ignore_client_abort on;\n    }}\n",
        free_port()
    )));
    let out = p.run(&["-t"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = Prefix::new("abort-bad");
    p.conf(&conf_with(
        "    server {\n        proxy_ignore_client_abort maybe;\n    }\n",
    ));
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value \"maybe\" in \"proxy_ignore_client_abort\" directive, it must be \"on\" or \"off\""),
        "{err}"
    );
}
