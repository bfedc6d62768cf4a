//! systemd socket activation (`LISTEN_FDS`/`LISTEN_PID`, sd_listen_fds(3)):
//! the listening socket systemd made is used as is, not bound again; driven
//! by systemd's own `systemd-socket-activate`, which passes it as systemd
//! does. Peregrine only (nginx has no socket activation).

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{BIN, IO_TIMEOUT, Prefix, Response, free_port, is_nginx, read_to_close};

const ACTIVATE: &str = "/usr/bin/systemd-socket-activate";

#[test]
fn the_socket_systemd_passes_is_served_by_every_worker() {
    if is_nginx() || !std::path::Path::new(ACTIVATE).exists() {
        return;
    }
    let p = Prefix::new("sockact");
    p.write("html/t", "activated\n");
    let port = free_port();
    p.conf(&format!(
        "worker_processes 2;\nerror_log logs/error.log info;\npid logs/nginx.pid;\n\
         events {{ worker_connections 64; }}\nhttp {{\n    access_log off;\n\
         server {{\n        listen 127.0.0.1:{port};\n        root html;\n    }}\n}}\n"
    ));
    let mut child = Command::new(ACTIVATE)
        .args(["-l", &format!("127.0.0.1:{port}"), BIN, "-p"])
        .arg(&p.dir)
        .args(["-c", "conf/nginx.conf"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut c = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(c) => break c,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("no socket: {e}"),
        }
    };
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    // The first connection starts the server; it is then in the queue.
    c.write_all(b"GET /t HTTP/1.0\r\n\r\n").unwrap();
    let r = Response::parse(&read_to_close(&mut c)).expect("a response");
    assert_eq!((r.status, r.body_str()), (200, "activated\n"));
    for _ in 0..20 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        c.write_all(b"GET /t HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(Response::parse(&read_to_close(&mut c)).unwrap().status, 200);
    }
    let log = std::fs::read_to_string(p.dir.join("logs/error.log")).unwrap_or_default();
    assert!(!log.contains("bind()"), "bound again: {log}");
    crate::support::send_signal(child.id() as i32, 15);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}
