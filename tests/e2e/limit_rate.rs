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
