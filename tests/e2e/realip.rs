//! realip: behind a trusted proxy the client is the address it reports;
//! `$remote_addr`, access rules and the access log see it, and
//! `$realip_remote_addr`/`$realip_remote_port` keep the connection's.
//! Checked against nginx (`E2E_SERVER=nginx`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::{Prefix, Response, Server, read_to_close, wait_for_lines};

fn site() -> Server {
    let p = Prefix::new("realip");
    p.write("html/f.txt", "f\n");
    p.write("html/guarded/f.txt", "g\n");
    let conf = "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events { worker_connections 128; }\n\
         http {\n    include mime.types;\n\
         log_format real \"$remote_addr $realip_remote_addr $status\";\n\
         access_log logs/access.log real;\n\
         set_real_ip_from 127.0.0.1;\n    set_real_ip_from 10.0.0.0/8;\n\
         real_ip_header X-Forwarded-For;\n    real_ip_recursive on;\n\
         server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
         add_header X-IP $remote_addr;\n        add_header X-Peer $realip_remote_addr;\n\
         add_header X-Port $remote_port;\n\
         location /guarded/ { deny 192.0.2.1; }\n    }\n}\n";
    Server::start(p, conf)
}

/// GET `path` with `xff` from the loopback address `from`.
fn get(s: &Server, from: [u8; 4], path: &str, xff: &str) -> Response {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&s.addr.into()).unwrap();
    let mut c: TcpStream = sock.into();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.0\r\nHost: x\r\nX-Forwarded-For: {xff}\r\n\r\n"
    )
    .unwrap();
    Response::parse(&read_to_close(&mut c)).unwrap()
}

#[test]
fn a_trusted_proxy_names_the_client_for_variables_rules_and_logs() {
    let s = site();
    // Recursive: past every trusted address from the end.
    let r = get(
        &s,
        [127, 0, 0, 1],
        "/f.txt",
        "192.0.2.1, 10.1.1.1:99, 127.0.0.1",
    );
    assert_eq!(r.header("X-IP"), Some("192.0.2.1"));
    assert_eq!(r.header("X-Peer"), Some("127.0.0.1"));
    // An address without a port gives no `$remote_port`.
    assert_eq!(r.header("X-Port"), None);
    assert_eq!(
        get(&s, [127, 0, 0, 1], "/guarded/f.txt", "192.0.2.1").status,
        403
    );
    assert_eq!(
        get(&s, [127, 0, 0, 1], "/guarded/f.txt", "192.0.2.2").status,
        200
    );
    // An untrusted peer is its own client, whatever it says.
    let u = get(&s, [127, 0, 0, 5], "/guarded/f.txt", "192.0.2.2");
    assert_eq!((u.status, u.header("X-IP")), (200, Some("127.0.0.5")));
    // With a port: `$remote_port` is the reported one.
    let p = get(&s, [127, 0, 0, 1], "/f.txt", "192.0.2.7:123");
    assert_eq!(p.header("X-Port"), Some("123"));
    // The error log's client is the real one too.
    let denied = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("access forbidden by rule")
    });
    assert!(denied[0].contains("client: 192.0.2.1,"), "{}", denied[0]);
    // And the next request on a connection is the connection's again.
    let lines = wait_for_lines(&s.prefix.dir.join("logs/access.log"), 5, |_| true);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("192.0.2.1 ") && l.ends_with(" 403")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l == "127.0.0.5 127.0.0.5 200"),
        "{lines:?}"
    );
}

#[test]
fn the_next_request_on_a_connection_is_the_connections_own_again() {
    let s = site();
    let mut c = s.connect();
    c.write_all(
        b"GET /f.txt HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.1\r\n\r\n\
          GET /f.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let rs = crate::support::read_responses(&mut c, 2, false);
    assert_eq!(rs[0].header("X-IP"), Some("192.0.2.1"));
    assert_eq!(rs[1].header("X-IP"), Some("127.0.0.1"));
    assert_eq!(rs[1].header("X-Peer"), Some("127.0.0.1"));
}
