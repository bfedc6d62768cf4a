//! Requests that end abnormally are access-logged as nginx logs them: a
//! send timeout, a client that goes away mid-response, a body discard cut
//! short, a shutdown. Each line has the status and the bytes actually sent.

use std::io::{Read, Write};
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, wait_for_lines};

const BIG: usize = 32 * 1024 * 1024;

fn site() -> Server {
    let p = Prefix::new("abnormal-end");
    p.write("html/big.bin", vec![b'z'; BIG]);
    p.write("html/a.txt", "aaa\n");
    Server::start(
        p,
        &conf_with(
            "    log_format t \"$request|$status|$bytes_sent|$body_bytes_sent\";\n\
             send_timeout 1s;\n    lingering_timeout 1s;\n\
             server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             access_log logs/t.log t;\n    }\n",
        ),
    )
}

/// The fields of the access-log line of `request`, once it is written.
fn logged(s: &Server, request: &str) -> (u16, u64, u64) {
    let log = s.prefix.dir.join("logs/t.log");
    let lines = wait_for_lines(&log, 1, |l| l.starts_with(request));
    assert_eq!(lines.len(), 1, "{request}: {lines:?}");
    let f: Vec<&str> = lines[0].split('|').collect();
    (
        f[1].parse().unwrap(),
        f[2].parse().unwrap(),
        f[3].parse().unwrap(),
    )
}

/// A client that stops reading: `send_timeout` ends the response, and the
/// line says 200 with the bytes that did go out (fewer than the file).
#[test]
fn a_send_timeout_is_logged_with_the_bytes_sent() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (status, sent, body) = logged(&s, "GET /big.bin HTTP/1.1");
    assert_eq!(status, 200);
    assert!(body > 0 && (body as usize) < BIG, "body bytes {body}");
    assert!(sent > body, "the head counts in $bytes_sent");
    drop(c);
}

/// A client that closes mid-response: the send fails, the request is
/// logged with what was sent.
#[test]
fn a_client_gone_mid_response_is_logged() {
    let s = site();
    let mut c = s.connect();
    c.write_all(b"GET /big.bin HTTP/1.0\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 4096];
    let _ = c.read(&mut buf).unwrap();
    // Closing with unread data sends RST: the server's next send fails.
    drop(c);
    let (status, _, body) = logged(&s, "GET /big.bin HTTP/1.0");
    assert_eq!(status, 200);
    assert!((body as usize) < BIG, "body bytes {body}");
}

/// A body still to discard after the response, cut short by the client:
/// the response was sent whole and the request is logged.
#[test]
fn a_body_discard_cut_short_is_logged() {
    let s = site();
    let mut c = s.connect();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\npart")
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = c.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let (status, sent, body) = logged(&s, "GET /a.txt HTTP/1.1");
    assert_eq!((status, body), (200, 4));
    assert!(sent > 4);
}
