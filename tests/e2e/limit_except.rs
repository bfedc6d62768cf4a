//! `limit_except`: the methods not listed meet the block's access rules
//! (`GET` brings `HEAD`), the listed ones the location's. Clients connect
//! from several loopback addresses. Checked against nginx
//! (`E2E_SERVER=nginx`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::{Prefix, Response, Server, conf_with, read_to_close};

fn request(s: &Server, from: [u8; 4], method: &str, path: &str) -> Response {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&s.addr.into()).unwrap();
    let mut c: TcpStream = sock.into();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(c, "{method} {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let bytes = read_to_close(&mut c);
    if method == "HEAD" {
        Response::parse_head(&bytes).unwrap()
    } else {
        Response::parse(&bytes).unwrap()
    }
}

#[test]
fn other_methods_meet_the_blocks_rules() {
    let p = Prefix::new("limit_except");
    p.write("html/ro/f.txt", "ro\n");
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /ro/ { limit_except GET { allow 127.0.0.2; deny all; } }\n    }\n",
        ),
    );
    for _ in 0..2 {
        // The second GET a memory-cache hit: still the location's rules.
        assert_eq!(request(&s, [127, 0, 0, 1], "GET", "/ro/f.txt").status, 200);
    }
    assert_eq!(request(&s, [127, 0, 0, 1], "HEAD", "/ro/f.txt").status, 200);
    assert_eq!(request(&s, [127, 0, 0, 1], "POST", "/ro/f.txt").status, 403);
    assert_eq!(
        request(&s, [127, 0, 0, 1], "DELETE", "/ro/f.txt").status,
        403
    );
    // Allowed by the block: the static handler's own answer to a POST.
    assert_eq!(request(&s, [127, 0, 0, 2], "POST", "/ro/f.txt").status, 405);
}
