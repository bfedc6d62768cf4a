//! The configurations of the seed articles (../shared/conf, copied into
//! tests/fixtures/shared-conf) load and serve a docroot with nginx's answers,
//! including seed-001's /status, seed-002's /NginxStatus and its 50x page.

use crate::support::{Prefix, Response, Server};
use std::io::Write;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shared-conf");

fn start(name: &str) -> Server {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap();
    let p = Prefix::new("seed");
    p.write("html/index.html", "<html>seed index</html>\n");
    p.write("html/50x.html", "<html>50x page</html>\n");
    p.write("html/big.html", "x".repeat(20_000));
    if name == "seed-000-common.conf" || name == "seed-000.conf" {
        p.write("conf/seed-000-common.conf", &text);
    }
    Server::start(p, &text.replace("127.0.0.1:8080", "127.0.0.1:PORT"))
}

#[test]
fn every_seed_configuration_serves() {
    for name in [
        "seed-000.conf",
        "seed-000-common.conf",
        "seed-001.conf",
        "seed-002.conf",
        "seed-003.conf",
    ] {
        let s = start(name);
        let r = s.get("/");
        assert_eq!(r.status, 200, "{name}");
        assert_eq!(r.body_str(), "<html>seed index</html>\n", "{name}");
        assert_eq!(s.get("/missing").status, 404, "{name}");
        assert_eq!(s.get("/big.html").body.len(), 20_000, "{name}");
    }
}

/// stub_status, exactly nginx's text: this connection is the only active one,
/// reading 0, writing 1 (the one being answered), waiting 0.
fn check_stub_status(s: &Server, path: &str, content_type: &str) {
    let r = s.get(path);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some(content_type));
    let text = r.body_str();
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines[0], "Active connections: 1 ");
    assert_eq!(lines[1], "server accepts handled requests");
    let counts: Vec<u64> = lines[2]
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 3);
    assert_eq!(counts[0], counts[1], "accepts == handled");
    // The start-up probe connected without a request, so requests may trail.
    assert!(counts[2] >= 1);
    assert_eq!(lines[3], "Reading: 0 Writing: 1 Waiting: 0 ");
    assert_eq!(lines[4], "");
}

#[test]
fn seed_001_status_page() {
    let s = start("seed-001.conf");
    check_stub_status(&s, "/status", "text/plain");
}

#[test]
fn seed_002_status_page_and_50x() {
    let s = start("seed-002.conf");
    // seed-002 sets `charset GBK`, and text/plain is one of charset_types.
    check_stub_status(&s, "/NginxStatus", "text/plain; charset=GBK");
    let r = s.get("/50x.html");
    assert_eq!((r.status, r.body_str()), (200, "<html>50x page</html>\n"));
}

/// stub_status counts requests across connections.
#[test]
fn stub_status_counts() {
    let s = start("seed-001.conf");
    let before = counts(&s);
    for _ in 0..5 {
        s.get("/");
    }
    let mut keep = s.connect();
    keep.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    crate::support::read_responses(&mut keep, 1, false);
    let after = counts(&s);
    assert_eq!(
        after[0] - before[0],
        7,
        "5 + keep-alive + this status request"
    );
    assert_eq!(after[2] - before[2], 7);
    // The closed connections leave the counts when the worker has read
    // their FIN, which may be a moment after the client saw its answer
    // (nginx likewise): wait for the counts to settle, up to a bound.
    let deadline = std::time::Instant::now() + crate::support::IO_TIMEOUT;
    let mut r = s.get("/status");
    while !r.body_str().contains("Active connections: 2 ") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        r = s.get("/status");
    }
    assert!(
        r.body_str().contains("Active connections: 2 "),
        "{}",
        r.body_str()
    );
    assert!(r.body_str().contains("Waiting: 1 "), "{}", r.body_str());
    drop(keep);
}

fn counts(s: &Server) -> Vec<u64> {
    let r: Response = s.get("/status");
    r.body_str()
        .split('\n')
        .nth(2)
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// seed-000 (gzip_min_length 10240, gzip_types text/plain text/css text/xml
/// text/javascript application/x-javascript): exactly the responses nginx
/// compresses are compressed. text/html always is; `.js` is
/// application/javascript in mime.types, which the list does not name.
#[test]
fn seed_000_compresses_what_nginx_compresses() {
    let text = std::fs::read_to_string(format!("{FIXTURES}/seed-000.conf")).unwrap();
    let p = Prefix::new("seed-gzip");
    let big = "seed article text, compressible. ".repeat(400);
    for name in [
        "big.html", "big.css", "big.xml", "big.txt", "big.js", "big.json",
    ] {
        p.write(&format!("html/{name}"), &big);
    }
    p.write("html/small.css", &big[..5000]);
    let s = Server::start(p, &text.replace("127.0.0.1:8080", "127.0.0.1:PORT"));
    let encoding = |path: &str| {
        let raw = format!(
            "GET {path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n"
        );
        Response::parse(&s.raw(raw.as_bytes()))
            .unwrap()
            .header("Content-Encoding")
            .map(str::to_string)
    };
    let gz = Some("gzip".to_string());
    assert_eq!(encoding("/big.html"), gz);
    assert_eq!(encoding("/big.css"), gz);
    assert_eq!(encoding("/big.xml"), gz);
    assert_eq!(encoding("/big.txt"), gz);
    assert_eq!(encoding("/big.js"), None);
    assert_eq!(encoding("/big.json"), None);
    assert_eq!(encoding("/small.css"), None, "below gzip_min_length");
}
