//! The Prometheus endpoint (`metrics on;`, a Peregrine extension: skipped
//! with `E2E_SERVER=nginx`): exact counter deltas across workers, status
//! classes by server block, the histogram's shape, reload outcomes, and the
//! text format itself.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::support::{Prefix, Response, Server, is_nginx};

const CONF: &str = r#"
worker_processes 2;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    access_log off;
    server {
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
        location = /metrics { metrics on; }
    }
    server {
        listen 127.0.0.1:PORT;
        server_name other.test;
        root html;
    }
}
"#;

/// One scrape: the response and its samples by `name{labels}`.
struct Scrape {
    resp: Response,
    raw_len: usize,
    samples: HashMap<String, f64>,
}

impl Scrape {
    fn get(&self, key: &str) -> f64 {
        *self
            .samples
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in\n{}", self.resp.body_str()))
    }

    fn or0(&self, key: &str) -> f64 {
        self.samples.get(key).copied().unwrap_or(0.0)
    }
}

/// Parses the text format strictly: comments are HELP/TYPE lines, every
/// other line is `name{labels} value` with a numeric value.
fn parse(text: &str) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("# ") {
            assert!(
                c.starts_with("HELP peregrine_") || c.starts_with("TYPE peregrine_"),
                "{line}"
            );
            continue;
        }
        let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {line}"));
        assert!(key.starts_with("peregrine_"), "{line}");
        if let Some(open) = key.find('{') {
            assert!(key.ends_with('}'), "{line}");
            let labels = &key[open + 1..key.len() - 1];
            for l in labels.split("\",") {
                let (name, v) = l.split_once("=\"").unwrap_or_else(|| panic!("{line}"));
                assert!(
                    name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{line}"
                );
                assert!(!v.contains('\n'), "{line}");
            }
        }
        assert!(
            out.insert(key.to_string(), value).is_none(),
            "duplicate {line}"
        );
    }
    out
}

fn scrape(s: &Server) -> Scrape {
    let raw = s.raw(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    let resp = Response::parse(&raw).expect("a response");
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.header("Content-Type"),
        Some("text/plain; version=0.0.4")
    );
    let samples = parse(resp.body_str());
    Scrape {
        raw_len: raw.len(),
        resp,
        samples,
    }
}

fn site() -> Server {
    let p = Prefix::new("metrics");
    p.write("html/a.txt", "aaa\n");
    Server::start(p, CONF)
}

const REQ_OK: &[u8] = b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
const REQ_404: &[u8] = b"GET /missing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
const REQ_OTHER: &[u8] = b"GET /a.txt HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n";
const REQ_SCRAPE: &[u8] = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// A scrape once the connections `Server::start` probed with are all
/// accepted: two scrapes in a row see only the second's own connection.
fn settled(s: &Server) -> Scrape {
    let deadline = Instant::now() + Duration::from_secs(10);
    let key = "peregrine_connections_accepted_total";
    let mut prev = scrape(s);
    loop {
        let next = scrape(s);
        if next.get(key) - prev.get(key) == 1.0 {
            return next;
        }
        assert!(Instant::now() < deadline, "accepts never settled");
        prev = next;
    }
}

#[test]
#[cfg_attr(e2e_nginx, ignore = "Peregrine's metrics endpoint")]
fn counters_increase_exactly() {
    if is_nginx() {
        return;
    }
    let s = site();
    let before = settled(&s);
    let mut sent = before.raw_len;
    let mut received = REQ_SCRAPE.len();
    for req in [REQ_OK, REQ_OK, REQ_OK, REQ_404, REQ_404, REQ_OTHER] {
        sent += s.raw(req).len();
        received += req.len();
    }
    let after = scrape(&s);
    let delta = |k: &str| after.or0(k) - before.or0(k);
    // The scrape before counts as a localhost 2xx once it finished.
    assert_eq!(
        delta("peregrine_requests_total{server=\"localhost\",status=\"2xx\"}"),
        4.0
    );
    assert_eq!(
        delta("peregrine_requests_total{server=\"localhost\",status=\"4xx\"}"),
        2.0
    );
    assert_eq!(
        delta("peregrine_requests_total{server=\"other.test\",status=\"2xx\"}"),
        1.0
    );
    assert_eq!(
        delta("peregrine_requests_total{server=\"localhost\",status=\"5xx\"}"),
        0.0
    );
    assert_eq!(delta("peregrine_bytes_sent_total"), sent as f64);
    assert_eq!(delta("peregrine_bytes_received_total"), received as f64);
    // Six request connections and the second scrape's own (the first
    // scrape's was accepted before it counted).
    assert_eq!(delta("peregrine_connections_accepted_total"), 7.0);
    assert_eq!(delta("peregrine_connections_handled_total"), 7.0);
    assert!(after.get("peregrine_connections{state=\"writing\"}") >= 1.0);
    assert!(after.get("peregrine_connections{state=\"active\"}") >= 1.0);
    assert_eq!(after.get("peregrine_workers"), 2.0);
    assert_eq!(after.get("peregrine_reloads_total{result=\"ok\"}"), 0.0);
    assert_eq!(after.get("peregrine_build_info{version=\"0.1.0\"}"), 1.0);

    let count = after.get("peregrine_request_duration_seconds_count");
    assert_eq!(
        count - before.get("peregrine_request_duration_seconds_count"),
        7.0
    );
    let mut buckets: Vec<(f64, f64)> = after
        .samples
        .iter()
        .filter_map(|(k, v)| {
            let le = k
                .strip_prefix("peregrine_request_duration_seconds_bucket{le=\"")?
                .strip_suffix("\"}")?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, *v))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(buckets.len() >= 10, "{buckets:?}");
    assert!(
        buckets.windows(2).all(|w| w[0].1 <= w[1].1),
        "monotone: {buckets:?}"
    );
    assert_eq!(
        buckets.last().map(|b| (b.0, b.1)),
        Some((f64::INFINITY, count))
    );
    assert!(after.get("peregrine_request_duration_seconds_sum") >= 0.0);
}

#[test]
#[cfg_attr(e2e_nginx, ignore = "Peregrine's metrics endpoint")]
fn head_and_other_methods() {
    if is_nginx() {
        return;
    }
    let s = site();
    let raw = s.raw(b"HEAD /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    let head = Response::parse_head(&raw).expect("a response");
    assert_eq!(head.status, 200);
    assert!(head.header("Content-Length").is_some_and(|n| n != "0"));
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("head end");
    assert_eq!(raw.len(), end + 4, "HEAD has no body");
    let raw = s.raw(b"POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert_eq!(Response::parse(&raw).expect("a response").status, 405);
}

fn wait_for(s: &Server, key: &str, want: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = scrape(s).or0(key);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{key} is {got}, want {want}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[cfg_attr(e2e_nginx, ignore = "Peregrine's metrics endpoint")]
fn reloads_by_outcome() {
    if is_nginx() {
        return;
    }
    let s = site();
    s.signal(1); // HUP
    wait_for(&s, "peregrine_reloads_total{result=\"ok\"}", 1.0);
    let conf = s.prefix.dir.join("conf/nginx.conf");
    let text = std::fs::read_to_string(&conf).unwrap();
    std::fs::write(
        &conf,
        text.replace("events {", "bogus_directive;\nevents {"),
    )
    .unwrap();
    s.signal(1);
    wait_for(&s, "peregrine_reloads_total{result=\"failed\"}", 1.0);
    let last = scrape(&s);
    assert_eq!(last.get("peregrine_reloads_total{result=\"ok\"}"), 1.0);
}

/// nginx's error-log lines for request errors (also checked against nginx:
/// this configuration has no `metrics`).
const LOG_CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    access_log off;
    server {
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
        location = /gone { return 404; }
        location /tf/ { try_files $uri =404; }
        location /small/ { client_max_body_size 10; }
    }
}
"#;

#[test]
fn error_log_lines_for_request_errors() {
    let p = Prefix::new("reqerr");
    p.write("html/a.txt", "aaa\n");
    p.write("html/dir/x.txt", "x\n");
    let s = Server::start(p, LOG_CONF);
    let cases = [
        ("/missing", 404),
        ("/dir/", 403),
        ("/nodir/", 404),
        ("/a.txt/x", 404),
        ("/gone", 404),
        ("/tf/nothing", 404),
    ];
    for (uri, status) in cases {
        assert_eq!(s.get(uri).status, status, "{uri}");
    }
    let mut post =
        b"POST /small/x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000\r\n\r\n".to_vec();
    post.resize(post.len() + 2000, b'x');
    let raw = s.raw(&post);
    assert_eq!(Response::parse(&raw).map(|r| r.status), Some(413));
    let root = s.prefix.dir.join("html");
    let root = root.display();
    let want = [
        format!("open() \"{root}/missing\" failed (2: No such file or directory)"),
        format!("directory index of \"{root}/dir/\" is forbidden"),
        format!("\"{root}/nodir/index.html\" is not found (2: No such file or directory)"),
        format!("open() \"{root}/a.txt/x\" failed (20: Not a directory)"),
        "client intended to send too large body: 2000 bytes".to_string(),
    ];
    let requests = [
        "GET /missing",
        "GET /dir/",
        "GET /nodir/",
        "GET /a.txt/x",
        "POST /small/x",
    ];
    let path = s.prefix.dir.join("logs/error.log");
    let errors = crate::support::wait_for_lines(&path, want.len(), |l| l.contains(" [error] "));
    assert_eq!(
        errors.len(),
        want.len(),
        "one line per failure: {errors:#?}"
    );
    for ((line, text), request) in errors.iter().zip(&want).zip(requests) {
        let tail = format!(
            " {text}, client: 127.0.0.1, server: localhost, request: \"{request} HTTP/1.1\", host: \"localhost\""
        );
        assert!(line.ends_with(&tail), "{line}\nwant the end: {tail}");
    }
}

/// Cache lookups: with one worker, once a small file is in the memory
/// cache every request for it is a hit. A scrape makes no lookup of its
/// own: `metrics` is its location's content handler, as stub_status (the
/// URI is not looked for as a file first).
#[test]
#[cfg_attr(e2e_nginx, ignore = "Peregrine's metrics endpoint")]
fn cache_hits_and_misses() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("metrics-cache");
    p.write("html/a.txt", "aaa\n");
    let s = Server::start(
        p,
        &CONF.replace("worker_processes 2;", "worker_processes 1;"),
    );
    let get = || {
        let r = Response::parse(&s.raw(REQ_OK)).unwrap();
        assert_eq!(r.status, 200);
    };
    get();
    let before = settled(&s);
    for _ in 0..3 {
        get();
    }
    let after = scrape(&s);
    let delta = |k: &str| after.get(k) - before.get(k);
    assert_eq!(delta("peregrine_memory_cache_hits_total"), 3.0);
    assert_eq!(delta("peregrine_memory_cache_misses_total"), 0.0);
}
