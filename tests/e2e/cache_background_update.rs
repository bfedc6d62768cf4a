//! `proxy_cache_background_update on` with `proxy_cache_use_stale
//! updating`: an expired entry is answered from the cache at once
//! (STALE), its refresh goes upstream afterwards, and the next request
//! has the refreshed answer (HIT). Against a real backend on loopback
//! whose answers are numbered. Checked against nginx (`E2E_SERVER=nginx
//! cargo test --test e2e cache_background_update::`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with};

/// A backend answering `vN` (N counts its requests), valid for a second.
fn numbered_backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let n = Arc::new(AtomicU32::new(0));
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(k) => buf.extend_from_slice(&b[..k]),
                    }
                }
                let body = format!("v{}", n.fetch_add(1, Ordering::SeqCst) + 1);
                let a = format!(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=1\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(a.as_bytes());
            });
        }
    });
    port
}

#[test]
fn a_stale_entry_is_sent_at_once_and_refreshed_after() {
    let up = numbered_backend();
    let p = Prefix::new("cache_background_update");
    let conf = conf_with(&format!(
        r#"
    proxy_cache_path cache keys_zone=bg:1m;
    server {{
        listen 127.0.0.1:PORT;
        server_name localhost;
        location / {{
            proxy_pass http://127.0.0.1:{up};
            proxy_cache bg;
            proxy_cache_use_stale updating;
            proxy_cache_background_update on;
            add_header X-Cache $upstream_cache_status;
        }}
    }}"#
    ));
    let s = Server::start(p, &conf);
    let r = s.get("/a");
    assert_eq!(
        (r.header("X-Cache"), r.body.as_slice()),
        (Some("MISS"), &b"v1"[..])
    );
    // Past max-age=1: the entry is stale.
    thread::sleep(Duration::from_millis(2100));
    let r = s.get("/a");
    assert_eq!(
        (r.header("X-Cache"), r.body.as_slice()),
        (Some("STALE"), &b"v1"[..])
    );
    // The refresh ran before that connection closed.
    let r = s.get("/a");
    assert_eq!(
        (r.header("X-Cache"), r.body.as_slice()),
        (Some("HIT"), &b"v2"[..])
    );
}
