//! `error_log syslog:server=...`: each message is one UDP datagram in
//! nginx's RFC 3164 form, `<PRI>Mmm dd hh:mm:ss HOST TAG: ` and the error
//! line; `memory:SIZE` is accepted.

use std::net::UdpSocket;
use std::time::Duration;

use crate::support::{Prefix, Server};

fn conf(target: &str) -> String {
    format!(
        "worker_processes 1;\nerror_log {target} info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{ access_log off; server {{ listen 127.0.0.1:PORT; root html; }} }}\n"
    )
}

/// Datagrams until one mentions `needle` (startup notices come first).
fn datagram_with(sock: &UdpSocket, needle: &str) -> String {
    let mut buf = [0u8; 4096];
    for _ in 0..50 {
        let n = sock.recv(&mut buf).expect("a datagram within the timeout");
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        if text.contains(needle) {
            return text;
        }
    }
    panic!("no datagram with {needle}");
}

fn listener() -> UdpSocket {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock
}

/// `Mmm dd hh:mm:ss ` at the start of `s`, as nginx's cached syslog time.
fn strip_time(s: &str) -> &str {
    let (month, rest) = s.split_at(4);
    assert!(
        month.ends_with(' ') && month.as_bytes()[0].is_ascii_uppercase(),
        "{s}"
    );
    let (day, rest) = rest.split_at(3);
    assert!(
        day.trim().parse::<u32>().is_ok() && day.ends_with(' '),
        "{s}"
    );
    let (clock, rest) = rest.split_at(9);
    assert_eq!(clock.as_bytes()[2], b':', "{s}");
    assert!(clock.ends_with(' '), "{s}");
    rest
}

#[test]
fn errors_arrive_as_rfc3164_datagrams() {
    let sock = listener();
    let port = sock.local_addr().unwrap().port();
    let s = Server::start(
        Prefix::new("syslog"),
        &conf(&format!("syslog:server=127.0.0.1:{port}")),
    );
    assert_eq!(s.get("/missing.txt").status, 404);
    let d = datagram_with(&sock, "missing.txt");
    // local7 (23) × 8 + error (3).
    let rest = d.strip_prefix("<187>").expect(&d);
    let rest = strip_time(rest);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let rest = rest
        .strip_prefix(&format!("{} nginx: ", host.trim().to_ascii_lowercase()))
        .expect(&d);
    assert!(rest.contains(" [error] "), "{d}");
    assert!(rest.contains("open() \""), "{d}");
    assert!(
        rest.contains("missing.txt\" failed (2: No such file or directory)"),
        "{d}"
    );
    assert!(!d.ends_with('\n'), "no newline in the datagram");
}

#[test]
fn facility_tag_and_nohostname() {
    let sock = listener();
    let port = sock.local_addr().unwrap().port();
    let s = Server::start(
        Prefix::new("syslog-tag"),
        &conf(&format!(
            "syslog:server=127.0.0.1:{port},facility=local0,tag=web_1,nohostname"
        )),
    );
    assert_eq!(s.get("/gone").status, 404);
    let d = datagram_with(&sock, "gone");
    let rest = d.strip_prefix("<131>").expect(&d);
    assert!(strip_time(rest).starts_with("web_1: "), "{d}");
}

#[test]
fn memory_buffers_are_accepted() {
    let p = Prefix::new("memory-log");
    p.conf(&conf("memory:64k").replace("PORT", "1"));
    let out = p.run(&["-t"]);
    // (nginx takes it only when built with --with-debug; Debian's refuses
    // it: "nginx was built without debug support".)
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("test is successful"), "{err}");
}

#[test]
fn access_log_lines_go_to_syslog_at_their_severity() {
    let sock = listener();
    let port = sock.local_addr().unwrap().port();
    let s = Server::start(
        Prefix::new("syslog-access"),
        &format!(
            "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
             events {{ worker_connections 128; }}\n\
             http {{ log_format u 'got $uri';\n\
             access_log syslog:server=127.0.0.1:{port},severity=notice,tag=acc u;\n\
             server {{ listen 127.0.0.1:PORT; location / {{ return 204; }} }} }}\n"
        ),
    );
    assert_eq!(s.get("/hello").status, 204);
    let d = datagram_with(&sock, "/hello");
    // local7 × 8 + notice (5).
    let rest = d.strip_prefix("<189>").expect(&d);
    let rest = strip_time(rest);
    assert!(rest.ends_with(" acc: got /hello"), "{d}");
}
