//! Binary upgrade as nginx's: USR2 starts the binary again with the
//! listening sockets inherited (`NGINX`), the pid file becomes
//! `.oldbin`, WINCH and QUIT retire the old master; a new binary that
//! fails leaves the old one serving. Peregrine only: nginx honours WINCH
//! only when daemonized (the upgrade module's doc says why Peregrine does
//! in the foreground too).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{IO_TIMEOUT, Prefix, Response, Server, is_nginx, read_to_close, send_signal};

const CONF: &str = "worker_processes 2;\nerror_log logs/error.log info;\npid logs/nginx.pid;\n\
     events { worker_connections 256; }\n\
     http {\n    access_log off;\n    server {\n        listen 127.0.0.1:PORT;\n\
     root html;\n        add_header X-Pid $pid;\n    }\n}\n";

fn pid_in(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn wait_until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One GET on a fresh connection: the answering master's pid, or `None`
/// for any failure (refused, reset, no full response).
fn probe(addr: SocketAddr) -> Option<i32> {
    let mut c = TcpStream::connect(addr).ok()?;
    c.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
    c.write_all(b"GET /t HTTP/1.0\r\nHost: x\r\n\r\n").ok()?;
    let r = Response::parse(&read_to_close(&mut c))?;
    (r.status == 200 && r.body_str() == "ok\n").then_some(())?;
    r.header("X-Pid")?.parse().ok()
}

/// Clients asking all the time on `threads` threads until `stop`.
struct Load {
    stop: Arc<AtomicBool>,
    ok: Arc<AtomicUsize>,
    failed: Arc<AtomicUsize>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(addr: SocketAddr, threads: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let ok = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(AtomicUsize::new(0));
        let threads = (0..threads)
            .map(|_| {
                let (stop, ok, failed) = (stop.clone(), ok.clone(), failed.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        match probe(addr) {
                            Some(_) => ok.fetch_add(1, Ordering::Relaxed),
                            None => failed.fetch_add(1, Ordering::Relaxed),
                        };
                    }
                })
            })
            .collect();
        Load {
            stop,
            ok,
            failed,
            threads,
        }
    }

    fn finish(self) -> (usize, usize) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        (
            self.ok.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }
}

#[test]
fn usr2_winch_quit_hand_over_without_a_failed_request() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("upgrade");
    p.write("html/t", "ok\n");
    let mut s = Server::start(p, CONF);
    let pidfile = s.prefix.dir.join("logs/nginx.pid");
    let oldbin = s.prefix.dir.join("logs/nginx.pid.oldbin");
    let old = s.child.id() as i32;
    assert_eq!(probe(s.addr), Some(old));
    let load = Load::start(s.addr, 4);
    std::thread::sleep(Duration::from_millis(200));
    s.signal(libc_sig::USR2);
    wait_until("the new master's pid file", || {
        oldbin.exists() && pid_in(&pidfile).is_some_and(|p| p != old)
    });
    let new = pid_in(&pidfile).unwrap();
    assert_eq!(pid_in(&oldbin), Some(old));
    // Both serve from the same sockets until the old one's workers go.
    wait_until("an answer from the new master", || {
        probe(s.addr) == Some(new)
    });
    s.signal(libc_sig::WINCH);
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..20 {
        assert_eq!(
            probe(s.addr),
            Some(new),
            "after WINCH only the new one answers"
        );
    }
    let status = s.stop(libc_sig::QUIT);
    assert!(status.success(), "{status}");
    assert!(!oldbin.exists(), "the old master removes its .oldbin");
    std::thread::sleep(Duration::from_millis(200));
    let (ok, failed) = load.finish();
    assert_eq!(probe(s.addr), Some(new));
    send_signal(new, libc_sig::TERM);
    wait_until("the new master's exit", || !pidfile.exists());
    assert_eq!(failed, 0, "{failed} failed of {}", ok + failed);
    assert!(ok > 100, "only {ok} requests");
    let log = std::fs::read_to_string(s.prefix.dir.join("logs/error.log")).unwrap();
    assert!(
        log.contains(&format!("start new binary process {new}")),
        "{log}"
    );
    assert!(log.contains("using inherited sockets from \""), "{log}");
}

#[test]
fn a_new_binary_that_fails_leaves_the_old_serving() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("upgrade-fail");
    p.write("html/t", "ok\n");
    let s = Server::start(p, CONF);
    let pidfile = s.prefix.dir.join("logs/nginx.pid");
    let old = s.child.id() as i32;
    // The new binary reads the configuration again: a broken one fails it.
    s.prefix.conf("events {}\nhttp { bogus; }\n");
    s.signal(libc_sig::USR2);
    let log = s.prefix.dir.join("logs/error.log");
    wait_until("the new binary's exit", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("exited with code 1"))
    });
    assert_eq!(pid_in(&pidfile), Some(old));
    assert!(!s.prefix.dir.join("logs/nginx.pid.oldbin").exists());
    assert_eq!(probe(s.addr), Some(old));
    // WINCH then the failed upgrade's way back: HUP restarts the workers.
    s.signal(libc_sig::WINCH);
    std::thread::sleep(Duration::from_millis(300));
    s.signal(libc_sig::HUP);
    wait_until("workers again", || probe(s.addr) == Some(old));
}

/// Signal numbers on Linux.
mod libc_sig {
    pub const HUP: i32 = 1;
    pub const QUIT: i32 = 3;
    pub const TERM: i32 = 15;
    pub const USR2: i32 = 12;
    pub const WINCH: i32 = 28;
}
