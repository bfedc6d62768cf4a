//! log_format fidelity: escaping (default, json, none), "not found" values,
//! `$remote_user`, `if=`, pipelining, timing fields, gzip logs, and the
//! error log's line shape. Every expectation here was checked by running
//! the same test against nginx 1.22.1 (`E2E_SERVER=nginx`).

use crate::support::{Prefix, Server};
use std::io::{Read, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    include mime.types;
    log_format esc '$http_user_agent|$http_x_missing|$args|$remote_user|$request';
    log_format js escape=json '{"ua":"$http_user_agent","m":"$http_x_missing","s":$status}';
    log_format raw escape=none '$http_user_agent|$http_x_missing';
    log_format u '$uri';
    log_format nums '$status $body_bytes_sent $request_time $msec $time_iso8601 $pipe $connection_requests $server_protocol';
    access_log logs/esc.log esc;
    access_log logs/js.log js;
    access_log logs/raw.log raw;
    access_log logs/cond.log u if=$arg_log;
    access_log logs/nums.log nums;
    access_log logs/gz.log.gz u gzip flush=1h;
    server {
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
    }
}
"#;

fn site() -> Server {
    let p = Prefix::new("logfmt");
    p.write("html/a.txt", "aaa\n");
    Server::start(p, CONF)
}

/// The file's lines once it has at least `n` (logs are written just after
/// the response), or whatever it has after a few seconds.
fn lines(path: &std::path::Path, n: usize) -> Vec<String> {
    crate::support::wait_for_lines(path, n, |_| true)
}

#[test]
fn escaping_modes_and_missing_values() {
    let s = site();
    let req = b"GET /a.txt?q=1 HTTP/1.1\r\nHost: localhost\r\nUser-Agent: Moz \"q\" \\ \x01\x7f\xc3\xa9 end\r\nAuthorization: Basic dXNlcjpwYXNz\r\nConnection: close\r\n\r\n";
    s.raw(req);
    let dir = s.prefix.dir.join("logs");
    assert_eq!(
        lines(&dir.join("esc.log"), 1),
        [r"Moz \x22q\x22 \x5C \x01\x7F\xC3\xA9 end|-|q=1|user|GET /a.txt?q=1 HTTP/1.1"]
    );
    // json: quotes and backslashes escaped, controls as \u00XX, bytes
    // >= 0x7f copied; a missing value is empty.
    let js = std::fs::read(dir.join("js.log")).unwrap_or_default();
    assert_eq!(
        js,
        b"{\"ua\":\"Moz \\\"q\\\" \\\\ \\u0001\x7f\xc3\xa9 end\",\"m\":\"\",\"s\":200}\n"
    );
    let raw = std::fs::read(dir.join("raw.log")).unwrap_or_default();
    assert_eq!(raw, b"Moz \"q\" \\ \x01\x7f\xc3\xa9 end|\n");
}

#[test]
fn empty_args_and_no_user() {
    let s = site();
    // `/a.txt?` has empty arguments: nginx logs `-`, like no arguments.
    s.raw(b"GET /a.txt? HTTP/1.0\r\nUser-Agent: \r\nAuthorization: Basic bm9jb2xvbg==\r\n\r\n");
    let l = lines(&s.prefix.dir.join("logs/esc.log"), 1);
    assert_eq!(l, ["|-|-|-|GET /a.txt? HTTP/1.0"]);
}

#[test]
fn if_condition_skips_empty_and_zero() {
    let s = site();
    for q in ["?log=0", "", "?log=", "?log=1", "?x=1&log=yes"] {
        s.get(&format!("/a.txt{q}"));
    }
    // The unconditional log saw all five; the conditional one only two.
    assert_eq!(lines(&s.prefix.dir.join("logs/nums.log"), 5).len(), 5);
    assert_eq!(
        lines(&s.prefix.dir.join("logs/cond.log"), 2),
        ["/a.txt", "/a.txt"]
    );
}

#[test]
fn numbers_times_and_pipelining() {
    let s = site();
    let before = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut c = s.connect();
    c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut sink = Vec::new();
    let _ = c.read_to_end(&mut sink);
    // nginx closes a pipelined connection lingering (it logs the last
    // request once the client closes too): close our side.
    drop(c);
    let l = lines(&s.prefix.dir.join("logs/nums.log"), 2);
    assert_eq!(l.len(), 2, "{l:?}");
    for (i, line) in l.iter().enumerate() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 8, "{line}");
        assert_eq!((f[0], f[1]), ("200", "4"));
        let (secs, ms) = f[3].split_once('.').unwrap_or(("", ""));
        assert_eq!(ms.len(), 3, "{line}");
        let secs: u64 = secs.parse().unwrap_or(0);
        assert!(secs >= before && secs <= before + 10, "{line}");
        assert!(
            f[2].len() >= 5 && f[2].as_bytes()[f[2].len() - 4] == b'.',
            "{line}"
        );
        // 2026-11-30T08:14:14+00:00
        let iso = f[4].as_bytes();
        assert_eq!(iso.len(), 25, "{line}");
        assert_eq!((iso[4], iso[10], iso[22]), (b'-', b'T', b':'), "{line}");
        assert!(iso[19] == b'+' || iso[19] == b'-', "{line}");
        // The second request was read behind the first: `$pipe` is `p`.
        assert_eq!(f[5], if i == 0 { "." } else { "p" }, "{line}");
        assert_eq!(f[6], (i + 1).to_string(), "{line}");
        assert_eq!(f[7], "HTTP/1.1");
    }
}

#[test]
fn gzip_log_is_valid_gzip_after_graceful_stop() {
    let mut s = site();
    for _ in 0..3 {
        s.get("/a.txt");
    }
    s.stop(3); // QUIT: buffers are flushed on exit
    let bytes = std::fs::read(s.prefix.dir.join("logs/gz.log.gz")).unwrap_or_default();
    assert!(bytes.starts_with(&[0x1f, 0x8b]), "{} bytes", bytes.len());
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(bytes.as_slice())
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "/a.txt\n/a.txt\n/a.txt\n");
}

#[test]
fn error_log_line_shape() {
    let s = site();
    s.raw(b"GET /missing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    let path = s.prefix.dir.join("logs/error.log");
    let deadline = Instant::now() + Duration::from_secs(5);
    let line = loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(l) = text.lines().find(|l| l.contains("open()")) {
            break l.to_string();
        }
        assert!(Instant::now() < deadline, "no open() error in {text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    // 2026/11/30 08:14:14 [error] 123#123: *1 open() "..." failed ...
    let b = line.as_bytes();
    assert_eq!(
        (b[4], b[7], b[10], b[13], b[16]),
        (b'/', b'/', b' ', b':', b':'),
        "{line}"
    );
    let rest = line[19..]
        .strip_prefix(" [error] ")
        .unwrap_or_else(|| panic!("{line}"));
    let (ids, msg) = rest.split_once(": ").unwrap_or_else(|| panic!("{line}"));
    let (pid, tid) = ids.split_once('#').unwrap_or_else(|| panic!("{line}"));
    assert!(
        pid.parse::<u32>().is_ok() && tid.parse::<u32>().is_ok(),
        "{line}"
    );
    let (conn, msg) = msg.split_once(' ').unwrap_or_else(|| panic!("{line}"));
    assert!(
        conn.starts_with('*') && conn[1..].parse::<u64>().is_ok(),
        "{line}"
    );
    let missing = s.prefix.dir.join("html/missing");
    assert_eq!(
        msg,
        format!(
            "open() \"{}\" failed (2: No such file or directory), client: 127.0.0.1, server: localhost, request: \"GET /missing HTTP/1.1\", host: \"localhost\"",
            missing.display()
        )
    );
}
