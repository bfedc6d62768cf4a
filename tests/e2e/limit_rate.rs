//! `limit_rate` and `limit_rate_after`: a response's bytes are paced by the
//! connection's own timer (nginx's arithmetic: by second `t` of the request
//! at most `rate * (t + 1)` bytes past `limit_rate_after`). The timing
//! assertions are lower bounds only (a paced transfer cannot be faster than
//! its pace), so a loaded machine cannot fail them.

use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, conf_with, read_responses};

/// 6,000 bytes of a recognisable body.
fn body() -> Vec<u8> {
    (0..6000u32).map(|i| b'a' + (i % 26) as u8).collect()
}

fn site() -> Server {
    let p = Prefix::new("limit-rate");
    p.write("html/slow/f.txt", body());
    p.write("html/after/f.txt", body());
    p.write("html/fast/f.txt", body());
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /slow/ { limit_rate 2k; }\n\
             location /after/ { limit_rate 1k; limit_rate_after 4000; }\n    }\n",
        ),
    )
}

/// Three identical GETs on one connection (the second and third are memory
/// cache hits, the static fast path): each arrives whole, and none faster
/// than its pace allows.
fn three_gets(s: &Server, path: &str) -> Vec<Duration> {
    let mut c = s.connect();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut took = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        use std::io::Write;
        c.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        let r = read_responses(&mut c, 1, false);
        assert_eq!(r.len(), 1, "{path}: no whole response");
        assert_eq!(r[0].status, 200);
        assert!(r[0].body == body(), "{path}: body differs");
        took.push(t.elapsed());
    }
    took
}

/// 2k a second: the ~6.2 KB response (head and body, as nginx counts)
/// needs the budget of seconds 0, 1, 2 and 3, so it takes at least 2 s.
#[test]
fn limit_rate_paces_every_response() {
    let s = site();
    for d in three_gets(&s, "/slow/f.txt") {
        assert!(
            d >= Duration::from_millis(1900),
            "paced response took {d:?}"
        );
    }
}

/// The first 4,000 bytes are free; the rest (about 2,200 with the head) at
/// 1k a second needs the budget of seconds 0, 1 and 2: at least 1.9 s
/// (without `limit_rate_after` it would need six seconds).
#[test]
fn limit_rate_after_frees_the_first_bytes() {
    let s = site();
    for d in three_gets(&s, "/after/f.txt") {
        assert!(
            d >= Duration::from_millis(1900),
            "paced response took {d:?}"
        );
    }
}

/// A client that closes while its response waits out `limit_rate` is seen
/// at once, as nginx's `ngx_http_test_reading` sees it: the request ends
/// with `client prematurely closed connection` at `info`, its access-log
/// line is written and stub_status no longer counts it, long before the
/// pause would have ended (6,000 bytes at 15 a second: about 400 s).
#[test]
fn a_client_closing_during_the_pause_ends_the_request() {
    use std::io::{Read, Write};
    let p = Prefix::new("limit-rate-close");
    p.write("html/slow/f.txt", body());
    let s = Server::start(
        p,
        &conf_with(
            "    log_format st \"$request $status\";\n    server {\n        \
             listen 127.0.0.1:PORT;\n        root html;\n        \
             access_log logs/st.log st;\n\
             location /slow/ { limit_rate 15; }\n\
             location = /stub { stub_status; }\n    }\n",
        ),
    );
    let mut c = s.connect();
    c.write_all(b"GET /slow/f.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 8];
    c.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1");
    let closed = Instant::now();
    drop(c);
    let errlog = s.prefix.dir.join("logs/error.log");
    let lines = crate::support::wait_for_lines(&errlog, 1, |l| {
        l.contains("[info]") && l.contains("client prematurely closed connection")
    });
    assert_eq!(lines.len(), 1, "no info line for the closed client");
    let logged = crate::support::wait_for_lines(&s.prefix.dir.join("logs/st.log"), 1, |l| {
        l.starts_with("GET /slow/f.txt")
    });
    assert_eq!(logged, ["GET /slow/f.txt HTTP/1.1 200"]);
    assert!(closed.elapsed() < Duration::from_secs(60));
    let stub = s.get("/stub");
    let text = String::from_utf8_lossy(&stub.body).to_string();
    assert!(
        text.starts_with("Active connections: 1 "),
        "the closed client is still counted: {text}"
    );
}

/// A server whose `/var/` paces by the request's arguments (nginx 1.27:
/// variables in `limit_rate` and `limit_rate_after`), `/set` sets
/// `$limit_rate`, `/up` takes an upstream's `X-Accel-Limit-Rate`; each
/// shows the request's `$limit_rate` in `X-Rate`.
fn site_with_variables() -> (Server, std::net::TcpListener) {
    let backend = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = backend.local_addr().unwrap().port();
    let p = Prefix::new("limit-rate-vars");
    p.write("html/var/f.txt", body());
    let s = Server::start(
        p,
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n        root html;\n\
             add_header X-Rate $limit_rate;\n\
             location /var/ {{ limit_rate $arg_l; limit_rate_after $arg_a; }}\n\
             location /set {{ set $limit_rate $arg_l; add_header X-Rate $limit_rate; \
             return 200 ok; }}\n\
             location /up {{ proxy_pass http://127.0.0.1:{b}; }}\n    }}\n"
        )),
    );
    (s, backend)
}

/// `limit_rate $arg_l` at 2k: paced as `limit_rate 2k` (at least 1.9 s,
/// a lower bound); `$limit_rate` is the request's rate, and a value that
/// is no size is 0 with nginx's `invalid size` line.
#[test]
fn variables_in_limit_rate_are_evaluated_per_request() {
    if crate::support::is_nginx() {
        return; // Debian's nginx 1.22 predates variables here.
    }
    let (s, _b) = site_with_variables();
    let mut c = s.connect();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let t = Instant::now();
    use std::io::Write;
    c.write_all(b"GET /var/f.txt?l=2k&a=0 HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let r = read_responses(&mut c, 1, false);
    assert!(r.len() == 1 && r[0].body == body());
    assert_eq!(r[0].header("X-Rate"), Some("2048"));
    let d = t.elapsed();
    assert!(
        d >= Duration::from_millis(1900),
        "paced response took {d:?}"
    );
    let r = s.get("/var/f.txt?l=fast");
    assert_eq!((r.status, r.header("X-Rate")), (200, Some("0")));
    let r = s.get("/var/f.txt?l=4k&a=1m");
    assert_eq!((r.status, r.header("X-Rate")), (200, Some("4096")));
    let err = s.prefix.dir.join("logs/error.log");
    let lines = crate::support::wait_for_lines(&err, 1, |l| l.contains("invalid size"));
    assert!(
        lines.len() == 1
            && lines[0].contains("[error]")
            && lines[0].contains("invalid size \"fast\""),
        "{lines:?}"
    );
}

/// `set $limit_rate` sets the request's rate; `$limit_rate` reads it back
/// as bytes (an invalid size leaves 0). An upstream's
/// `X-Accel-Limit-Rate` is the request's rate (and not passed on).
#[test]
fn set_limit_rate_and_x_accel_limit_rate() {
    let (s, backend) = site_with_variables();
    std::thread::spawn(move || {
        if let Ok((mut u, _)) = backend.accept() {
            use std::io::{Read, Write};
            let mut buf = [0u8; 4096];
            let _ = u.read(&mut buf);
            let _ = u.write_all(
                b"HTTP/1.1 200 OK\r\nX-Accel-Limit-Rate: 13000\r\nContent-Length: 2\r\n\
                  Connection: close\r\n\r\nup",
            );
        }
    });
    let r = s.get("/set?l=40k");
    assert_eq!(r.header("X-Rate"), Some("40960"));
    let r = s.get("/set?l=many");
    assert_eq!(r.header("X-Rate"), Some("0"));
    let r = s.get("/up");
    assert_eq!((r.status, r.body_str()), (200, "up"));
    assert_eq!(r.header("X-Accel-Limit-Rate"), None);
    assert_eq!(r.header("X-Rate"), Some("13000"));
}
