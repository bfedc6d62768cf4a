//! The master's signals (read from a signalfd) and worker supervision.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::*;
use peregrine_engine::{AccessEntry, AccessLog};

const CONF: &str = "
worker_processes 2;
error_log stderr info;
pid {DIR}/logs/test.pid;
events { }
http {
    server {
        listen 127.0.0.1:{PORT};
        root {DIR}/html;
        location = /v { return 200 \"VERSION\"; }
    }
}
";

fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn hup_usr1_quit_and_the_pid_file() {
    let reopened = Arc::new(AtomicBool::new(false));
    let flag = reopened.clone();
    let mut srv = start_custom(
        &CONF.replace("VERSION", "v0"),
        &[],
        |n| Some(CONF.replace("VERSION", &format!("v{n}"))),
        move |o| {
            o.handle_signals = true;
            o.write_pid = true;
            o.reopen_logs = Box::new(move || flag.store(true, Ordering::Relaxed));
        },
    );
    let pid_path = srv.dir.join("logs/test.pid");
    let pid = std::fs::read_to_string(&pid_path).unwrap();
    assert_eq!(pid.trim(), peregrine_sys::getpid().to_string());

    peregrine_sys::signal_thread(srv.master_tid, libc::SIGUSR1).unwrap();
    assert!(
        wait_for(|| reopened.load(Ordering::Relaxed)),
        "USR1 did not reopen"
    );

    peregrine_sys::signal_thread(srv.master_tid, libc::SIGHUP).unwrap();
    assert!(wait_for(|| get(&srv, "GET /v HTTP/1.1\r\nHost: x\r\n\r\n")
        .body
        == b"v1"));

    peregrine_sys::signal_thread(srv.master_tid, libc::SIGQUIT).unwrap();
    let t = srv.thread.take().unwrap();
    assert_eq!(t.join().unwrap(), Ok(()));
    assert!(!pid_path.exists(), "pid file removed on exit");
}

/// An access log that panics on `/boom`: a panic outside request
/// processing takes its worker down, and the master starts a new one.
struct Boom;

impl AccessLog for Boom {
    fn log(&mut self, e: &AccessEntry<'_>) {
        if e.request.is_some_and(|r| r.path() == "/boom") {
            panic!("boom requested");
        }
    }
}

#[test]
fn a_panicking_worker_is_restarted() {
    let conf = CONF
        .replace("VERSION", "v0")
        .replace("worker_processes 2;", "worker_processes 1;");
    let srv = start_custom(
        &conf,
        &[],
        |_| None,
        |o| {
            o.access_log = Some(Arc::new(|_| Box::new(Boom) as Box<dyn AccessLog>));
        },
    );
    let mut s = srv.connect();
    std::io::Write::write_all(&mut s, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(wait_for(
        || srv.logged("worker thread 0 panicked: boom requested")
    ));
    assert!(wait_for(|| srv.logged("restarting worker thread 0")));
    assert_eq!(get(&srv, "GET /v HTTP/1.1\r\nHost: x\r\n\r\n").body, b"v0");
}
