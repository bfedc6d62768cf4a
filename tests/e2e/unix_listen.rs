//! `listen unix:PATH`: requests over a UNIX-domain socket, nginx's
//! variables for such a client (`$remote_addr` is `unix:`, `$server_addr`
//! `unix:PATH`, no ports), `allow`/`deny unix:`, the socket made writable
//! by all, removed when the server stops, and a path already taken refused
//! as nginx does. Checked against nginx (`E2E_SERVER=nginx`).

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::support::{Prefix, Response, Server, is_nginx};

fn site(p: Prefix) -> (Server, std::path::PathBuf) {
    // `return` answers before the access phase: static files are guarded.
    for f in ["only_unix", "not_unix", "v6_all"] {
        p.write(&format!("html/{f}"), "in\n");
    }
    let sock = p.dir.join("logs/s.sock");
    let conf = format!(
        "worker_processes 2;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{\n    access_log logs/access.log;\n\
         server {{\n        listen 127.0.0.1:PORT;\n        listen unix:{s};\n\
         location /vars {{ return 200 \"a=$remote_addr p=$remote_port s=$server_addr sp=$server_port\\n\"; }}\n\
         root html;\n\
         location /only_unix {{ allow unix:; deny all; }}\n\
         location /not_unix {{ deny unix:; allow all; }}\n\
         location /v6_all {{ allow ::/0; deny all; }}\n\
         }}\n}}\n",
        s = sock.display()
    );
    (Server::start(p, &conf), sock)
}

fn get_unix(sock: &std::path::Path, path: &str) -> Response {
    let mut c = UnixStream::connect(sock).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    c.read_to_end(&mut out).unwrap();
    Response::parse(&out).expect("a response")
}

#[test]
fn requests_over_a_unix_socket_see_nginx_variables_and_rules() {
    let (mut s, sock) = site(Prefix::new("unix-listen"));
    let meta = std::fs::metadata(&sock).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o666,
        "nginx chmods it 0666"
    );
    let r = get_unix(&sock, "/vars");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body_str(),
        format!("a=unix: p= s=unix:{} sp=\n", sock.display())
    );
    // The same server over TCP.
    let r = s.get("/vars");
    assert!(
        r.body_str().starts_with("a=127.0.0.1 p="),
        "{}",
        r.body_str()
    );
    assert_eq!(get_unix(&sock, "/only_unix").status, 200);
    assert_eq!(s.get("/only_unix").status, 403);
    assert_eq!(get_unix(&sock, "/not_unix").status, 403);
    assert_eq!(s.get("/not_unix").status, 200);
    // No address rule matches a UNIX-domain client.
    assert_eq!(get_unix(&sock, "/v6_all").status, 403);
    // Many requests over the shared socket: every worker serves.
    for _ in 0..20 {
        assert_eq!(get_unix(&sock, "/only_unix").status, 200);
    }
    s.stop(3); // QUIT
    assert!(!sock.exists(), "the socket file goes with the server");
}

#[test]
fn a_path_already_taken_is_refused_at_start() {
    let p = Prefix::new("unix-busy");
    let sock = p.dir.join("logs/s.sock");
    let _holder = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let conf = format!(
        "daemon off;\nerror_log logs/error.log;\npid logs/test.pid;\nevents {{}}\n\
         http {{ server {{ listen unix:{}; }} }}\n",
        sock.display()
    );
    p.conf(&conf);
    let out = if is_nginx() {
        std::process::Command::new("/usr/sbin/nginx")
            .arg("-p")
            .arg(&p.dir)
            .args(["-c", "conf/nginx.conf"])
            .output()
            .unwrap()
    } else {
        p.run(&[])
    };
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "bind() to unix:{} failed (98: Address already in use)",
            sock.display()
        )),
        "{err}"
    );
}
