//! HTTP/2 per-stream timers: a request `limit_req` delays waits its delay
//! (its answer is not sent before) while the connection serves others.
//! nginx runs it too (`E2E_SERVER=nginx`).

use std::io::{ErrorKind, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::h2::{Frame, frame, get_block, open, read_frame};
use crate::support::{Prefix, Server, conf_with};

fn start(tag: &str) -> Server {
    let p = Prefix::new(tag);
    p.write("html/t.html", "SEE-THIS");
    let conf = conf_with(
        "    limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/s;\n\
         server {\n\
             listen 127.0.0.1:PORT http2;\n\
             client_header_timeout 1s;\n\
             location / { }\n\
             location /slow/ { limit_req zone=slow burst=5; alias html/; }\n\
         }\n",
    );
    Server::start(p, &conf)
}

/// The next frame other than SETTINGS and WINDOW_UPDATE (SETTINGS is
/// acknowledged); `None` when the read timed out.
fn next(c: &mut TcpStream) -> Option<Frame> {
    loop {
        let f = read_frame(c)?;
        if f.0 == 4 && f.1 & 1 == 0 {
            c.write_all(&frame(4, 1, 0, &[])).unwrap();
        }
        if f.0 != 4 && f.0 != 8 {
            return Some(f);
        }
    }
}

/// Whether the socket has nothing to read for `d` (a read times out).
fn quiet_for(c: &mut TcpStream, d: Duration) -> bool {
    c.set_read_timeout(Some(d)).unwrap();
    let mut b = [0u8; 1];
    let quiet = matches!(c.peek(&mut b), Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut));
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    quiet
}

#[test]
fn limit_req_delay_holds_the_stream_not_the_connection() {
    let s = start("h2-delay");
    let mut c = open(&s);
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // Two at once: the first is served, the second waits 1s (1r/s).
    let mut out = frame(1, 0x05, 1, &get_block("/slow/t.html"));
    out.extend(frame(1, 0x05, 3, &get_block("/slow/t.html")));
    c.write_all(&out).unwrap();
    let mut seen = Vec::new();
    while !seen.iter().any(|f: &Frame| f.2 == 1 && f.1 & 1 != 0) {
        seen.push(next(&mut c).expect("stream 1's answer"));
    }
    assert!(seen.iter().all(|f| f.2 == 1), "only stream 1 so far");
    // Stream 3's answer is not sent before its delay...
    assert!(
        quiet_for(&mut c, Duration::from_millis(300)),
        "stream 3 waits"
    );
    // ...while the connection answers meanwhile.
    c.write_all(&frame(6, 0, 0, b"SEE-THIS")).unwrap();
    let ping = next(&mut c).expect("PING's ACK");
    assert_eq!(
        (ping.0, ping.1, ping.3.as_slice()),
        (6, 1, &b"SEE-THIS"[..])
    );
    // Then it comes, whole.
    let head = next(&mut c).expect("stream 3's HEADERS");
    assert_eq!((head.0, head.2), (1, 3));
    let data = next(&mut c).expect("stream 3's DATA");
    assert_eq!(
        (data.0, data.2, data.3.as_slice()),
        (0, 3, &b"SEE-THIS"[..])
    );
}
