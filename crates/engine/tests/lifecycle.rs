//! Master behaviour: reload without refused connections, graceful and fast
//! stop, connection limits.

mod common;

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use peregrine_engine::Command;

const VERSIONED: &str = "
worker_processes 2;
error_log stderr info;
events { worker_connections 64; }
http {
    server {
        listen 127.0.0.1:{PORT};
        root {DIR}/html;
        location = /v { return 200 \"VERSION\"; }
    }
}
";

#[test]
fn reload_keeps_serving_and_applies_new_config() {
    let srv = start_with_reload(&VERSIONED.replace("VERSION", "v0"), &[("a", b"A")], |n| {
        Some(VERSIONED.replace("VERSION", &format!("v{n}")).replace(
            "worker_processes 2",
            &format!("worker_processes {}", 1 + n % 3),
        ))
    });
    let addr = srv.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let (ok, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let client = {
        let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let r = (|| {
                    let mut s = std::net::TcpStream::connect(addr).ok()?;
                    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
                    s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        .ok()?;
                    let mut out = Vec::new();
                    s.read_to_end(&mut out).ok()?;
                    out.ends_with(b"\r\n\r\nA").then_some(())
                })();
                match r {
                    Some(()) => ok.fetch_add(1, Ordering::Relaxed),
                    None => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        })
    };
    for n in 1..=4 {
        std::thread::sleep(Duration::from_millis(150));
        srv.control.send(Command::Reload).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let r = get(&srv, "GET /v HTTP/1.1\r\nHost: x\r\n\r\n");
            if r.body == format!("v{n}").as_bytes() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "reload {n} not applied: {:?}",
                r.body
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    std::thread::sleep(Duration::from_millis(150));
    stop.store(true, Ordering::Relaxed);
    client.join().unwrap();
    assert!(
        ok.load(Ordering::Relaxed) > 20,
        "client made too few requests"
    );
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "some connections failed across reloads"
    );
}

#[test]
fn failed_reload_keeps_old_config() {
    let srv = start_with_reload(&VERSIONED.replace("VERSION", "v0"), &[], |_| None);
    srv.control.send(Command::Reload).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(srv.logged("reload refused by test"));
    assert_eq!(get(&srv, "GET /v HTTP/1.1\r\nHost: x\r\n\r\n").body, b"v0");
}

#[test]
fn reload_moves_listeners() {
    let second = free_port();
    let conf2 = VERSIONED.replace("VERSION", "v1").replace(
        "listen 127.0.0.1:{PORT};",
        &format!("listen 127.0.0.1:{second};"),
    );
    let srv = start_with_reload(&VERSIONED.replace("VERSION", "v0"), &[], move |_| {
        Some(conf2.clone())
    });
    srv.control.send(Command::Reload).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let new_addr: std::net::SocketAddr = format!("127.0.0.1:{second}").parse().unwrap();
    loop {
        if let Ok(mut s) = std::net::TcpStream::connect(new_addr) {
            s.write_all(b"GET /v HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let r = read_response(&mut s, &mut Vec::new(), false).unwrap();
            assert_eq!(r.body, b"v1");
            break;
        }
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    // The old workers drain; then nothing listens on the old port.
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(srv.addr).is_ok() {
        assert!(Instant::now() < deadline, "old address still accepts");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn graceful_stop_finishes_a_large_download() {
    let data: Vec<u8> = (0..20_000_000u32).map(|i| (i % 249) as u8).collect();
    let srv = start(BASIC, &[("big", &data)]);
    let mut s = srv.connect();
    let mut idle = srv.connect();
    idle.write_all(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    read_response(&mut idle, &mut Vec::new(), false).unwrap();
    s.write_all(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 1024];
    s.read_exact(&mut first).unwrap();
    let control = srv.control.clone();
    let addr = srv.addr;
    let stopper = std::thread::spawn(move || srv.stop_with(Command::Quit));
    // The idle keep-alive connection is closed at once.
    assert!(closes_within(&mut idle, Duration::from_secs(3)));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "listener closed on quit"
    );
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    let mut all = first.to_vec();
    all.extend_from_slice(&rest);
    let body_start = find(&all, b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&all[..body_start]).to_string();
    assert!(head.contains("Connection: keep-alive"), "{head}");
    assert!(
        all[body_start..] == data[..],
        "download incomplete: {} bytes",
        all.len() - body_start
    );
    assert_eq!(stopper.join().unwrap(), Ok(()));
    drop(control);
}

#[test]
fn fast_stop_returns_with_open_connections() {
    let srv = start(BASIC, &[]);
    let mut s = srv.connect();
    s.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let t = Instant::now();
    assert_eq!(srv.stop_with(Command::Stop), Ok(()));
    assert!(t.elapsed() < Duration::from_secs(2));
    assert!(closes_within(&mut s, Duration::from_secs(2)));
}

#[test]
fn worker_connections_limit_reuses_idle_connections() {
    // One worker, 2 listeners' worth of slack: limit 4 = 1 listener + 3 connections.
    let conf = BASIC
        .replace("worker_processes 2;", "worker_processes 1;")
        .replace("worker_connections 64;", "worker_connections 4;");
    let srv = start(&conf, &[("a", b"A")]);
    let mut idle: Vec<_> = (0..3)
        .map(|_| {
            let mut s = srv.connect();
            s.write_all(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            read_response(&mut s, &mut Vec::new(), false).unwrap();
            s
        })
        .collect();
    let r = get(&srv, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(r.status, 200);
    assert!(srv.logged("worker_connections are not enough, reusing connections"));
    assert!(
        idle.iter_mut()
            .any(|s| closes_within(s, Duration::from_millis(500)))
    );
}
