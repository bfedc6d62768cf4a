//! Signals and `-s`: reload under load without a failed request, a broken
//! configuration keeps the old one serving, graceful stop completes a
//! download, the pid file exists only while serving.

use crate::support::{BIN, Prefix, Response, Server, is_nginx, read_to_close, send_signal};
use std::io::Write;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const CONF: &str = r#"
worker_processes 2;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 256; }
http {
    include mime.types;
    access_log off;
    server {
        listen 127.0.0.1:PORT;
        root html;
        location = /version { return 200 "VERSION"; }
    }
}
"#;

fn site(version: &str) -> Server {
    let p = Prefix::new("signals");
    p.write("html/big.bin", vec![b'q'; 32 * 1024 * 1024]);
    Server::start(p, &CONF.replace("VERSION", version))
}

fn version(s: &Server) -> String {
    s.get("/version").body_str().to_string()
}

fn rewrite_conf(s: &Server, from: &str, to: &str) {
    let path = s.prefix.dir.join("conf/nginx.conf");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace(from, to)).unwrap();
}

fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Also the deliberate difference on `daemon`: nginx's default is `daemon
/// on`; Peregrine stays in the foreground unless the configuration says
/// `daemon on` (systemd and containers want that), so the pid in the file is
/// the very process the test started. (Against nginx the suite passes
/// `-g "daemon off;"`.)
#[test]
fn pid_file_written_while_serving() {
    let s = site("v1");
    let pid_path = s.prefix.dir.join("logs/test.pid");
    let text = std::fs::read_to_string(&pid_path).unwrap();
    assert_eq!(text.trim().parse::<u32>().unwrap(), s.child.id());
    let mut s = s;
    let out = Command::new(if is_nginx() { "/usr/sbin/nginx" } else { BIN })
        .arg("-p")
        .arg(&s.prefix.dir)
        .args(["-c", "conf/nginx.conf", "-s", "stop"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = s.child.wait();
    assert!(!pid_path.exists(), "the pid file is removed on exit");
}

/// Ten reloads under a constant client loop: no failed request, and the new
/// configuration answers afterwards.
#[test]
fn reload_under_load_loses_nothing() {
    let s = site("v0");
    let addr = s.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let ok = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    for _ in 0..2 {
        let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
        clients.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let good = std::net::TcpStream::connect(addr).ok().and_then(|mut c| {
                    c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
                    c.write_all(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        .ok()?;
                    let r = Response::parse(&read_to_close(&mut c))?;
                    (r.status == 200).then_some(())
                });
                match good {
                    Some(()) => ok.fetch_add(1, Ordering::Relaxed),
                    None => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    for i in 1..=10 {
        rewrite_conf(&s, &format!("\"v{}\"", i - 1), &format!("\"v{i}\""));
        s.signal(1); // HUP
        let want = format!("v{i}");
        assert!(wait_for(|| version(&s) == want), "reload {i} took effect");
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(failed.load(Ordering::Relaxed), 0, "no failed request");
    assert!(ok.load(Ordering::Relaxed) > 10);
}

#[test]
fn broken_reload_keeps_the_old_configuration() {
    let s = site("old");
    rewrite_conf(
        &s,
        "worker_processes 2;",
        "worker_processes 2;\nbogus_directive;",
    );
    s.signal(1);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(version(&s), "old");
    let log = std::fs::read_to_string(s.prefix.dir.join("logs/error.log")).unwrap();
    assert!(
        log.contains("unknown directive \"bogus_directive\""),
        "{log}"
    );
}

/// QUIT during a large download: the download completes.
#[test]
fn graceful_stop_completes_a_download() {
    let s = site("v");
    let mut c = s.connect();
    c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut c, &mut first).unwrap();
    send_signal(s.child.id() as i32, 3);
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut all = first.to_vec();
    all.extend(read_to_close(&mut c));
    let r = Response::parse(&all).unwrap();
    assert_eq!(r.body.len(), 32 * 1024 * 1024);
}
