//! access_log and log_format with nginx's variables and escaping; buffered
//! logs flushed on exit; USR1 reopens logs after rotation, losing no line;
//! the error log names the call that failed when a client goes mid-response.

use crate::support::{Prefix, Response, Server};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    include mime.types;
    log_format fields '$remote_addr|$request_method|$request_uri|$uri|$args|'
                      '$server_protocol|$status|$body_bytes_sent|$http_x_test|'
                      '$host|$server_port|$connection_requests|$request_length|$pipe|$scheme';
    access_log logs/access.log;
    access_log logs/fields.log fields;
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /quiet/ { access_log off; }
        location /buffered/ { access_log logs/buffered.log combined buffer=64k flush=1h; }
    }
}
"#;

fn site() -> Server {
    let p = Prefix::new("logs");
    p.write("html/a.txt", "aaa\n");
    p.write("html/quiet/q.txt", "q\n");
    p.write("html/buffered/b.txt", "b\n");
    Server::start(p, CONF)
}

/// Waits until the file has at least `n` lines (logs may be written a moment
/// after the response).
fn lines(path: &std::path::Path, n: usize) -> Vec<String> {
    crate::support::wait_for_lines(path, n, |_| true)
}

#[test]
fn combined_and_custom_formats() {
    let s = site();
    let raw = b"GET /a.txt?x=1&y=%41 HTTP/1.1\r\nHost: example.test\r\nX-Test: say \"hi\"\\\r\nUser-Agent: curl/8\r\nReferer: http://r/\r\nConnection: close\r\n\r\n";
    let r = Response::parse(&s.raw(raw)).unwrap();
    assert_eq!(r.status, 200);
    let combined = lines(&s.prefix.dir.join("logs/access.log"), 1);
    assert_eq!(combined.len(), 1);
    let line = &combined[0];
    assert!(line.starts_with("127.0.0.1 - - ["), "{line}");
    assert!(
        line.ends_with("] \"GET /a.txt?x=1&y=%41 HTTP/1.1\" 200 4 \"http://r/\" \"curl/8\""),
        "{line}"
    );
    let fields = lines(&s.prefix.dir.join("logs/fields.log"), 1);
    let expected = format!(
        "127.0.0.1|GET|/a.txt?x=1&y=%41|/a.txt|x=1&y=%41|HTTP/1.1|200|4|say \\x22hi\\x22\\x5C|example.test|{}|1|{}|.|http",
        s.addr.port(),
        raw.len()
    );
    assert_eq!(fields[0], expected);
}

#[test]
fn access_log_off_in_a_location() {
    let s = site();
    s.get("/quiet/q.txt");
    s.get("/a.txt");
    let l = lines(&s.prefix.dir.join("logs/access.log"), 1);
    assert_eq!(l.len(), 1);
    assert!(l[0].contains("GET /a.txt "), "{}", l[0]);
}

/// A buffered log loses nothing: the lines are written at exit.
#[test]
fn buffered_lines_flush_on_exit() {
    let s = site();
    for _ in 0..3 {
        s.get("/buffered/b.txt");
    }
    let mut s = s;
    s.stop(3); // QUIT: graceful stop
    let text = std::fs::read_to_string(s.prefix.dir.join("logs/buffered.log")).unwrap_or_default();
    assert_eq!(text.lines().count(), 3, "{text}");
}

/// USR1 after moving the log: earlier lines stay in the moved file, later
/// lines land in a new file, none lost.
#[test]
fn usr1_reopens_after_rotation() {
    let s = site();
    s.get("/a.txt");
    let log = s.prefix.dir.join("logs/access.log");
    let rotated = s.prefix.dir.join("logs/access.log.1");
    assert_eq!(lines(&log, 1).len(), 1);
    std::fs::rename(&log, &rotated).unwrap();
    s.get("/a.txt"); // written to the moved file: the fd is still open
    s.signal(10); // USR1
    let deadline = Instant::now() + Duration::from_secs(5);
    while !log.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(log.exists(), "the log was reopened");
    s.get("/a.txt");
    s.get("/a.txt");
    assert_eq!(lines(&rotated, 2).len(), 2);
    assert_eq!(lines(&log, 2).len(), 2);
}

/// A client that vanishes in the middle of a large `sendfile` response
/// (it closes with unread bytes, so its kernel answers with a reset) is
/// logged as nginx logs it, naming the call that failed, at `info`: the
/// client's doing, not the server's. The worker goes on serving.
#[test]
fn a_client_gone_mid_sendfile_is_logged_and_the_worker_serves_on() {
    let p = Prefix::new("logs-vanish");
    // Larger than loopback's socket buffers together (a few MB), so the
    // response is still being sent when the client goes.
    p.write("html/big.bin", vec![b'v'; 32 << 20]);
    p.write("html/a.txt", "aaa\n");
    let conf = crate::support::conf_with(
        "    sendfile on;
    server { listen 127.0.0.1:PORT; root html; }",
    );
    let s = Server::start(p, &conf);
    let mut c = s.connect();
    c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut some = [0u8; 4096];
    c.read_exact(&mut some).unwrap();
    assert!(some.starts_with(b"HTTP/1.1 200 OK\r\n"));
    // Unread bytes in the receive queue: close sends RST (RFC 2525, 2.17).
    drop(c);
    let log = s.prefix.dir.join("logs/error.log");
    let found = crate::support::wait_for_lines(&log, 1, |l| {
        l.contains("[info]")
            && l.contains("sendfile() failed (")
            && l.contains("while sending response to client")
    });
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(s.get("/a.txt").body_str(), "aaa\n");
}
