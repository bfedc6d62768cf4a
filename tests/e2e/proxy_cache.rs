//! The proxy cache (`proxy_cache_path`, `proxy_cache`) against a real
//! backend that counts the requests it answers: a miss then hits from the
//! cache file, an answer expired by its `Cache-Control: max-age`, a
//! bypassed request, a POST that is not cached, an answer the backend
//! forbids caching, and a restarted server that finds the cache on disk.
//! Each checked against nginx (`E2E_SERVER=nginx cargo test --test e2e
//! proxy_cache::`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Response, Server, conf_with};

/// A backend answering each request with the number of requests it has
/// answered so far (`n=1`, `n=2`...) and `headers` (after the request's
/// path has chosen them: a path with `private` says `Cache-Control:
/// private`, one with `short` `max-age=1`).
fn counting_backend() -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let c = c.clone();
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let line = String::from_utf8_lossy(&buf)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let n = c.fetch_add(1, Ordering::SeqCst) + 1;
                let body = format!("n={n}");
                let extra = if line.contains("private") {
                    "Cache-Control: private\r\n"
                } else if line.contains("short") {
                    "Cache-Control: max-age=1\r\n"
                } else {
                    ""
                };
                let answer = format!(
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n{extra}Content-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(answer.as_bytes());
            });
        }
    });
    (port, count)
}

fn conf(cache_dir: &std::path::Path, backend: u16) -> String {
    conf_with(&format!(
        "    proxy_cache_path {} levels=1:2 keys_zone=one:1m;\n\
         server {{\n\
             listen 127.0.0.1:PORT;\n\
             location / {{\n\
                 proxy_pass http://127.0.0.1:{backend};\n\
                 proxy_cache one;\n\
                 proxy_cache_valid 200 10m;\n\
                 proxy_cache_bypass $arg_nocache;\n\
                 add_header X-Cache $upstream_cache_status;\n\
             }}\n\
         }}\n",
        cache_dir.display()
    ))
}

fn start(tag: &str) -> (Server, Arc<AtomicUsize>) {
    let (port, count) = counting_backend();
    let prefix = Prefix::new(tag);
    let dir = prefix.dir.join("cache");
    let c = conf(&dir, port);
    (Server::start(prefix, &c), count)
}

fn post(s: &Server, path: &str) -> Response {
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx"
    );
    Response::parse(&s.raw(req.as_bytes())).unwrap()
}

#[test]
fn a_miss_is_stored_and_then_hit_from_the_file() {
    let (s, count) = start("pcache-hit");
    let r = s.get("/a");
    assert_eq!((r.status, r.header("X-Cache")), (200, Some("MISS")));
    assert_eq!(r.body_str(), "n=1");
    for _ in 0..2 {
        let r = s.get("/a");
        assert_eq!((r.status, r.header("X-Cache")), (200, Some("HIT")));
        assert_eq!(r.body_str(), "n=1");
        assert_eq!(r.header("Content-Length"), Some("3"));
    }
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // Another URI is another key.
    assert_eq!(s.get("/b").header("X-Cache"), Some("MISS"));
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[test]
fn an_expired_answer_is_fetched_again() {
    let (s, count) = start("pcache-exp");
    assert_eq!(s.get("/short").header("X-Cache"), Some("MISS"));
    assert_eq!(s.get("/short").header("X-Cache"), Some("HIT"));
    // `max-age=1` has run out two seconds later.
    thread::sleep(Duration::from_millis(2100));
    let r = s.get("/short");
    assert_eq!(
        (r.header("X-Cache"), r.body_str()),
        (Some("EXPIRED"), "n=2")
    );
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[test]
fn bypass_post_and_private_answers_go_to_the_backend() {
    let (s, count) = start("pcache-bypass");
    assert_eq!(s.get("/c").header("X-Cache"), Some("MISS"));
    let r = s.get("/c?nocache=1");
    assert_eq!((r.header("X-Cache"), r.body_str()), (Some("BYPASS"), "n=2"));
    // The bypassed answer was stored under its own key (the arguments are
    // in it); the first is still hit.
    assert_eq!(s.get("/c").body_str(), "n=1");
    // A POST is not a cached method: no status at all.
    let r = post(&s, "/c");
    assert_eq!((r.header("X-Cache"), r.body_str()), (None, "n=3"));
    assert_eq!(post(&s, "/c").body_str(), "n=4");
    // `Cache-Control: private` is not stored.
    assert_eq!(s.get("/private").header("X-Cache"), Some("MISS"));
    assert_eq!(s.get("/private").header("X-Cache"), Some("MISS"));
    assert_eq!(count.load(Ordering::SeqCst), 6);
}

#[test]
fn a_restarted_server_finds_the_cache_on_disk() {
    let (port, count) = counting_backend();
    let keep = Prefix::new("pcache-dir");
    let dir = keep.dir.join("cache");
    let first = Server::start(Prefix::new("pcache-r1"), &conf(&dir, port));
    assert_eq!(first.get("/d").header("X-Cache"), Some("MISS"));
    drop(first);
    let second = Server::start(Prefix::new("pcache-r2"), &conf(&dir, port));
    let r = second.get("/d");
    assert_eq!((r.header("X-Cache"), r.body_str()), (Some("HIT"), "n=1"));
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // The file is where nginx's layout puts it: two levels of the key's md5.
    let files = walk(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    let l1 = &name[31..];
    let l2 = &name[29..31];
    assert_eq!(files[0], dir.join(l1).join(l2).join(&name));
}

fn walk(d: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
