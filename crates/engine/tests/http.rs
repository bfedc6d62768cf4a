//! Engine behaviour over real sockets: keep-alive, pipelining, bodies,
//! errors, timeouts, stub_status.

mod common;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn keepalive_serves_several_requests() {
    let srv = start(BASIC, &[("a.txt", b"hello\n")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    for _ in 0..3 {
        s.write_all(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let r = read_response(&mut s, &mut buf, false).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"hello\n");
        assert_eq!(r.header("connection").as_deref(), Some("keep-alive"));
        assert_eq!(
            r.header("server").as_deref(),
            Some(peregrine_codec::response::SERVER_VERSION)
        );
        assert!(r.header("date").is_some_and(|d| d.ends_with(" GMT")));
        assert_eq!(r.header("keep-alive"), None);
    }
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let srv = start(BASIC, &[("1", b"one"), ("2", b"two"), ("3", b"three")]);
    let mut s = srv.connect();
    s.write_all(
        b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .unwrap();
    let mut buf = Vec::new();
    for want in [&b"one"[..], b"two", b"three"] {
        let r = read_response(&mut s, &mut buf, false).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, want);
    }
}

#[test]
fn pipelined_request_split_across_writes() {
    let srv = start(BASIC, &[("1", b"one"), ("2", b"two")]);
    let mut s = srv.connect();
    let all = b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n";
    // Byte-wise trickle: every split position of the stream is exercised.
    for b in all {
        s.write_all(&[*b]).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut buf = Vec::new();
    assert_eq!(read_response(&mut s, &mut buf, false).unwrap().body, b"one");
    assert_eq!(read_response(&mut s, &mut buf, false).unwrap().body, b"two");
}

#[test]
fn http10_keepalive_only_when_asked() {
    let srv = start(BASIC, &[("a", b"A")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    s.write_all(b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.header("connection").as_deref(), Some("keep-alive"));
    assert!(r.head.starts_with("HTTP/1.1 200 OK"));
    s.write_all(b"GET /a HTTP/1.0\r\n\r\n").unwrap();
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    assert!(closes_within(&mut s, Duration::from_secs(2)));
}

#[test]
fn connection_close_closes_after_response() {
    let srv = start(BASIC, &[("a", b"A")]);
    let mut s = srv.connect();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, &mut Vec::new(), false).unwrap();
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    let t = Instant::now();
    assert!(closes_within(&mut s, Duration::from_secs(3)));
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "closed without lingering"
    );
}

#[test]
fn chunked_body_is_discarded_and_next_request_answered() {
    let srv = start(BASIC, &[("a", b"A"), ("b", b"B")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
        .unwrap();
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.body, b"A");
    std::thread::sleep(Duration::from_millis(50));
    s.write_all(b"cde\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.body, b"B");
}

#[test]
fn content_length_body_is_discarded() {
    let srv = start(BASIC, &[("a", b"A"), ("b", b"B")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut s, &mut buf, false).unwrap().body, b"A");
    assert_eq!(read_response(&mut s, &mut buf, false).unwrap().body, b"B");
}

#[test]
fn expect_continue_gets_100_before_the_response() {
    let srv = start(BASIC, &[("a", b"A")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.status, 100);
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.status, 200);
    s.write_all(b"xyzGET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    assert_eq!(read_response(&mut s, &mut buf, false).unwrap().status, 200);
}

#[test]
fn body_over_client_max_body_size_is_413_and_close() {
    let conf = BASIC.replace(
        "root {DIR}/html;",
        "root {DIR}/html; client_max_body_size 10;",
    );
    let srv = start(&conf, &[("a", b"A")]);
    let mut s = srv.connect();
    s.write_all(
        b"GET /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 50\r\n\r\n",
    )
    .unwrap();
    let r = read_response(&mut s, &mut Vec::new(), false).unwrap();
    assert_eq!(r.status, 413, "{}", r.head);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    s.write_all(&[b'x'; 50]).unwrap();
    assert!(closes_within(&mut s, Duration::from_secs(7)));
}

#[test]
fn malformed_request_is_400_and_close() {
    let srv = start(BASIC, &[]);
    let mut s = srv.connect();
    s.write_all(b"GARBAGE\r\n\r\n").unwrap();
    let r = read_response(&mut s, &mut Vec::new(), false).unwrap();
    assert_eq!(r.status, 400);
    assert_eq!(r.header("connection").as_deref(), Some("close"));
    assert!(closes_within(&mut s, Duration::from_secs(7)));
    assert!(srv.logged("client sent invalid"));
}

#[test]
fn header_timeout_closes_silently() {
    let conf = BASIC.replace(
        "root {DIR}/html;",
        "root {DIR}/html; client_header_timeout 1s;",
    );
    let srv = start(&conf, &[]);
    let mut s = srv.connect();
    s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let t = Instant::now();
    assert!(closes_within(&mut s, Duration::from_secs(4)));
    let e = t.elapsed();
    assert!(
        e >= Duration::from_millis(600) && e < Duration::from_secs(3),
        "{e:?}"
    );
    assert!(srv.logged(
        "client timed out (110: Connection timed out) while reading client request headers"
    ));
}

#[test]
fn keepalive_timeout_closes_idle_connection() {
    let conf = BASIC.replace(
        "root {DIR}/html;",
        "root {DIR}/html; keepalive_timeout 1s 9;",
    );
    let srv = start(&conf, &[("a", b"A")]);
    let mut s = srv.connect();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let r = read_response(&mut s, &mut Vec::new(), false).unwrap();
    assert_eq!(r.header("keep-alive").as_deref(), Some("timeout=9"));
    let t = Instant::now();
    assert!(closes_within(&mut s, Duration::from_secs(4)));
    assert!(t.elapsed() >= Duration::from_millis(600));
}

#[test]
fn keepalive_timeout_zero_disables_keepalive() {
    let conf = BASIC.replace("root {DIR}/html;", "root {DIR}/html; keepalive_timeout 0;");
    let srv = start(&conf, &[("a", b"A")]);
    let r = get(&srv, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(r.header("connection").as_deref(), Some("close"));
}

#[test]
fn keepalive_requests_limits_a_connection() {
    let conf = BASIC.replace("root {DIR}/html;", "root {DIR}/html; keepalive_requests 2;");
    let srv = start(&conf, &[("a", b"A")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let r1 = read_response(&mut s, &mut buf, false).unwrap();
    let r2 = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r1.header("connection").as_deref(), Some("keep-alive"));
    assert_eq!(r2.header("connection").as_deref(), Some("close"));
    assert!(closes_within(&mut s, Duration::from_secs(3)));
}

#[test]
fn head_request_sends_no_body() {
    let srv = start(BASIC, &[("a", b"hello")]);
    let mut s = srv.connect();
    let mut buf = Vec::new();
    s.write_all(b"HEAD /a HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let r = read_response(&mut s, &mut buf, true).unwrap();
    assert_eq!(r.header("content-length").as_deref(), Some("5"));
    let r = read_response(&mut s, &mut buf, false).unwrap();
    assert_eq!(r.body, b"hello");
}

#[test]
fn large_file_with_and_without_sendfile() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    for directives in ["sendfile on; tcp_nopush on;", "sendfile off;"] {
        let conf = BASIC.replace(
            "root {DIR}/html;",
            &format!("root {{DIR}}/html; {directives}"),
        );
        let srv = start(&conf, &[("big", &data)]);
        let mut s = srv.connect();
        let mut buf = Vec::new();
        s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        for _ in 0..2 {
            let r = read_response(&mut s, &mut buf, false).unwrap();
            assert!(r.body == data, "{directives}");
        }
    }
}

#[test]
fn stub_status_counts_like_nginx() {
    let srv = start(BASIC, &[("a", b"A")]);
    let mut idle = srv.connect();
    idle.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    read_response(&mut idle, &mut Vec::new(), false).unwrap();
    let mut reading = srv.connect();
    reading.write_all(b"GET /a HTTP/1.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let r = get(&srv, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n");
    let text = String::from_utf8(r.body).unwrap();
    // 3 connections, 3 requests (the partial one counts), this one writing.
    assert!(text.starts_with("Active connections: 3 \n"), "{text}");
    assert!(text.contains("\n 3 3 3 \n"), "{text}");
    assert!(
        text.ends_with("Reading: 1 Writing: 1 Waiting: 1 \n"),
        "{text}"
    );
}

#[test]
fn access_log_through_the_log_crate() {
    let conf = "
events { }
http {
    log_format t '$status \"$request\" $body_bytes_sent $pipe $connection_requests';
    server {
        listen 127.0.0.1:{PORT};
        root {DIR}/html;
        access_log {DIR}/logs/access.log t;
    }
}
";
    let elog = Arc::new(peregrine_log::ErrorLog::stderr(
        peregrine_conf::model::LogLevel::Error,
    ));
    let factory =
        peregrine_engine::logging::access_log_factory(elog, peregrine_log::ReopenSignal::new());
    let srv = start_custom(
        conf,
        &[("a", b"hello")],
        |_| None,
        move |o| o.access_log = Some(factory),
    );
    let mut s = srv.connect();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = Vec::new();
    read_response(&mut s, &mut buf, false).unwrap();
    read_response(&mut s, &mut buf, false).unwrap();
    let path = srv.dir.join("logs/access.log");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if text.lines().count() >= 2 {
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines[0], "200 \"GET /a HTTP/1.1\" 5 . 1");
            assert!(
                lines[1].starts_with("404 \"GET /nope HTTP/1.1\" "),
                "{text}"
            );
            assert!(lines[1].ends_with(" p 2"), "{text}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "access log not written: {text:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn send_timeout_drops_a_client_that_stops_reading() {
    let conf = BASIC.replace("root {DIR}/html;", "root {DIR}/html; send_timeout 1s;");
    let data = vec![b'z'; 32 * 1024 * 1024];
    let srv = start(&conf, &[("big", &data)]);
    let mut s = srv.connect();
    s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let mut total = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    while let Ok(n @ 1..) = std::io::Read::read(&mut s, &mut buf) {
        total += n;
    }
    assert!(total < data.len(), "all {total} bytes were sent");
    assert!(
        srv.logged("client timed out (110: Connection timed out) while sending response to client")
    );
}

#[test]
fn unfinished_body_is_dropped_after_lingering_timeout() {
    let srv = start(BASIC, &[("a", b"A")]);
    let mut s = srv.connect();
    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly-part")
        .unwrap();
    let r = read_response(&mut s, &mut Vec::new(), false).unwrap();
    assert_eq!(r.status, 200);
    let t = Instant::now();
    assert!(closes_within(&mut s, Duration::from_secs(8)));
    assert!(
        t.elapsed() >= Duration::from_secs(4),
        "closed after {:?}",
        t.elapsed()
    );
}

#[test]
fn vanishing_client_is_logged_and_serving_goes_on() {
    let data = vec![b'v'; 16 * 1024 * 1024];
    let srv = start(BASIC, &[("big", &data), ("a", b"A")]);
    for _ in 0..3 {
        let mut s = srv.connect();
        s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut first = [0u8; 1000];
        std::io::Read::read_exact(&mut s, &mut first).unwrap();
        // Close with unread data: the kernel answers further writes with RST.
        drop(s);
    }
    assert_eq!(get(&srv, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n").status, 200);
    // The resets reach the worker as errors on its next writes: wait for them.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = get(&srv, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n");
        let text = String::from_utf8(status.body).unwrap();
        if text.starts_with("Active connections: 1 \n") {
            break;
        }
        assert!(Instant::now() < deadline, "{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(srv.logged("while sending response to client"));
}

#[test]
fn timed_out_head_is_access_logged_as_408() {
    let conf = "
events { }
http {
    log_format t '$status $request_length';
    server {
        listen 127.0.0.1:{PORT};
        root {DIR}/html;
        client_header_timeout 1s;
        access_log {DIR}/logs/access.log t;
    }
}
";
    let elog = Arc::new(peregrine_log::ErrorLog::stderr(
        peregrine_conf::model::LogLevel::Error,
    ));
    let factory =
        peregrine_engine::logging::access_log_factory(elog, peregrine_log::ReopenSignal::new());
    let srv = start_custom(conf, &[], |_| None, move |o| o.access_log = Some(factory));
    let mut s = srv.connect();
    s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    assert!(closes_within(&mut s, Duration::from_secs(4)));
    let path = srv.dir.join("logs/access.log");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if !text.is_empty() {
            assert_eq!(text, "408 16\n");
            break;
        }
        assert!(Instant::now() < deadline, "408 not logged");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn reset_timedout_connection_sends_rst() {
    let conf = BASIC.replace(
        "root {DIR}/html;",
        "root {DIR}/html; client_header_timeout 1s; reset_timedout_connection on;",
    );
    let srv = start(&conf, &[]);
    let mut s = srv.connect();
    s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(4))).unwrap();
    let err = std::io::Read::read(&mut s, &mut [0u8; 16]).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset);
}
