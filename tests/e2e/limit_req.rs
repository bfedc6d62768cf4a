//! `limit_req`: nginx's leaky bucket per client over a zone shared by the
//! workers. A burst passes, the next request is rejected (503, nginx's
//! `limiting requests` line) though the file is a memory-cache hit; a
//! dry run only counts; a delayed request waits on the worker's timer
//! while the worker answers others. Checked against nginx
//! (`E2E_SERVER=nginx`).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, conf_with, read_responses, wait_for_lines};

fn site() -> Server {
    let p = Prefix::new("limit_req");
    for f in ["lim/f.txt", "dry/f.txt", "slow/f.txt", "f.txt"] {
        p.write(&format!("html/{f}"), "body\n");
    }
    Server::start(
        p,
        &conf_with(
            "    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;\n\
             limit_req_zone $arg_k zone=bykey:1m rate=1r/m;\n\
             limit_req_zone $binary_remote_addr zone=slow:1m rate=2r/s;\n\
             server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /lim/ { limit_req zone=one burst=1 nodelay;\n\
                 add_header X-Status $limit_req_status always; }\n\
             location /dry/ { limit_req zone=bykey; limit_req_dry_run on;\n\
                 add_header X-Status $limit_req_status always; }\n\
             location /slow/ { limit_req zone=slow burst=5; }\n\
             location / { add_header X-Status $limit_req_status; }\n    }\n",
        ),
    )
}

#[test]
fn a_burst_passes_then_requests_are_rejected_even_from_the_memory_cache() {
    let s = site();
    // The first, then a burst of one (a memory-cache hit), then over it.
    let statuses: Vec<(u16, Option<String>)> = (0..3)
        .map(|_| {
            let r = s.get("/lim/f.txt");
            (r.status, r.header("X-Status").map(str::to_string))
        })
        .collect();
    assert_eq!(statuses[0], (200, Some("PASSED".into())));
    assert_eq!(statuses[1], (200, Some("PASSED".into())));
    assert_eq!(statuses[2], (503, Some("REJECTED".into())));
    // A location without a rule: no status, no limit.
    for _ in 0..3 {
        let r = s.get("/f.txt");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("X-Status"), None);
    }
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("limiting requests, excess: ")
    });
    assert!(lines[0].contains("[error]"), "{}", lines[0]);
    assert!(
        lines[0].contains(" by zone \"one\", client: 127.0.0.1, server: "),
        "{}",
        lines[0]
    );
}

#[test]
fn a_dry_run_counts_and_rejects_nothing() {
    let s = site();
    let a = s.get("/dry/f.txt?k=a");
    let b = s.get("/dry/f.txt?k=a");
    let other = s.get("/dry/f.txt?k=b");
    assert_eq!((a.status, a.header("X-Status")), (200, Some("PASSED")));
    assert_eq!(
        (b.status, b.header("X-Status")),
        (200, Some("REJECTED_DRY_RUN"))
    );
    assert_eq!(other.header("X-Status"), Some("PASSED"), "another key");
    // No key: no limit.
    assert_eq!(s.get("/dry/f.txt").header("X-Status"), None);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("limiting requests, dry run, excess: ")
    });
    assert!(lines[0].contains("by zone \"bykey\""), "{}", lines[0]);
}

#[test]
fn a_delayed_request_waits_while_the_worker_answers_others() {
    let s = site();
    assert_eq!(s.get("/slow/f.txt").status, 200);
    // 2 r/s: the next one at once has 1.000 in excess, 500 ms to drain.
    let started = Instant::now();
    let mut delayed = s.connect();
    delayed
        .write_all(b"GET /slow/f.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    // The worker is not blocked: another request is answered meanwhile.
    let other = s.get("/f.txt");
    assert_eq!(other.status, 200);
    delayed
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(
        delayed.read(&mut byte).is_err(),
        "the delayed request is not answered yet"
    );
    delayed
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut rest = Vec::new();
    delayed.read_to_end(&mut rest).unwrap();
    assert!(
        rest.starts_with(b"HTTP/1.1 200 "),
        "{:?}",
        String::from_utf8_lossy(&rest)
    );
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("delaying request, excess: ")
    });
    assert!(lines[0].contains("[warn]"), "{}", lines[0]);
    assert!(
        lines[0].contains(", by zone \"slow\", client: 127.0.0.1"),
        "{}",
        lines[0]
    );
}

#[test]
fn pipelined_requests_behind_a_delayed_one_wait_their_turn() {
    let s = site();
    assert_eq!(s.get("/slow/f.txt").status, 200);
    let mut c = s.connect();
    c.write_all(
        b"GET /slow/f.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /f.txt HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .unwrap();
    let rs = read_responses(&mut c, 2, false);
    assert_eq!((rs[0].status, rs[1].status), (200, 200));
    assert_eq!(rs[1].body_str(), "body\n");
}
