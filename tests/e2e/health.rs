//! `health_status;` and `shutdown_delay` (Peregrine's, beyond nginx): 200
//! while the server takes work, 503 from the moment QUIT begins a graceful
//! shutdown; with `shutdown_delay` the server keeps accepting (and serving)
//! that long first, so a balancer's check or a Kubernetes readiness probe
//! sees the 503 before any connection is refused.

use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, is_nginx};

#[test]
fn health_turns_503_at_quit_while_requests_are_still_served() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("health");
    p.write("html/t", "ok\n");
    let conf = "worker_processes 2;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         shutdown_delay 1500ms;\n\
         events { worker_connections 128; }\n\
         http {\n    access_log off;\n    server {\n        listen 127.0.0.1:PORT;\n\
         root html;\n        location = /healthz { health_status; }\n    }\n}\n";
    let mut s = Server::start(p, conf);
    let r = s.get("/healthz");
    assert_eq!((r.status, r.body_str()), (200, "ok\n"));
    assert_eq!(r.header("Content-Type"), Some("text/plain"));
    let quit = Instant::now();
    s.signal(3);
    std::thread::sleep(Duration::from_millis(200));
    let r = s.get("/healthz");
    assert_eq!((r.status, r.body_str()), (503, "draining\n"));
    // Still accepting and serving during the delay.
    assert_eq!(s.get("/t").status, 200);
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let took = quit.elapsed();
    assert!(took >= Duration::from_millis(1400), "{took:?}");
    let log = std::fs::read_to_string(s.prefix.dir.join("logs/error.log")).unwrap();
    assert!(log.contains("shutting down in 1500 ms"), "{log}");
    assert!(log.contains("gracefully shutting down"), "{log}");
}

#[test]
fn health_status_takes_no_arguments_and_get_only() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("health-args");
    p.conf("events {}\nhttp { server { location / { health_status on; } } }\n");
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid number of arguments in \"health_status\" directive"),
        "{err}"
    );
    let p = Prefix::new("health-post");
    let conf = "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events { worker_connections 16; }\nhttp {\n    access_log off;\n\
         server {\n        listen 127.0.0.1:PORT;\n        location / { health_status; }\n    }\n}\n";
    let s = Server::start(p, conf);
    let r = crate::support::Response::parse(
        &s.raw(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    )
    .unwrap();
    assert_eq!(r.status, 405);
}
