//! The connection variables in `add_header`: stub_status's
//! `$connections_active`/`_reading`/`_writing`/`_waiting` (in any location,
//! not only where `stub_status` is on) and `$connection_time` with
//! `$connection_requests` (nginx 1.19.10+; `ngx_http_variable_connection_time`).

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, read_responses};

fn site() -> Server {
    let p = Prefix::new("conn-vars");
    p.write("html/a", "x");
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             add_header X-C \"$connections_active $connections_reading $connections_writing $connections_waiting\";\n\
             add_header X-T $connection_requests:$connection_time;\n\
             location /stub { stub_status; }\n    }\n",
        ),
    )
}

fn get(c: &mut TcpStream, path: &str) -> crate::support::Response {
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .unwrap();
    let mut r = read_responses(c, 1, false);
    assert_eq!(r.len(), 1, "{path}");
    r.remove(0)
}

/// One connection answered, one idle (waiting), one with half a request
/// (reading): the answer being written counts as writing, in a plain
/// location as in the stub_status one.
#[test]
fn connection_counters_in_any_location() {
    let s = site();
    let mut c = s.connect();
    assert_eq!(get(&mut c, "/a").header("x-c"), Some("1 0 1 0"));
    let idle = s.connect();
    let mut half = s.connect();
    half.write_all(b"GET /a HTTP/1.1\r\n").unwrap();
    // Let the server accept both and read the partial head.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(get(&mut c, "/a").header("x-c"), Some("3 1 1 1"));
    let r = get(&mut c, "/stub");
    assert_eq!(r.header("x-c"), Some("3 1 1 1"));
    assert!(
        r.body_str().contains("Reading: 1 Writing: 1 Waiting: 1"),
        "{}",
        r.body_str()
    );
    drop((idle, half));
}

/// `$connection_time` is seconds with milliseconds since the accept, and
/// grows across the requests of one connection.
#[test]
fn connection_time_counts_from_the_accept() {
    let s = site();
    let mut c = s.connect();
    let first = get(&mut c, "/a").header("x-t").unwrap().to_string();
    assert!(first.starts_with("1:0."), "{first}");
    std::thread::sleep(Duration::from_millis(1_100));
    let second = get(&mut c, "/a").header("x-t").unwrap().to_string();
    let (n, t) = second.split_once(':').unwrap();
    assert_eq!(n, "2");
    let (secs, ms) = t.split_once('.').unwrap();
    assert_eq!(ms.len(), 3, "{second}");
    assert!(secs.parse::<u64>().unwrap() >= 1, "{second}");
}
