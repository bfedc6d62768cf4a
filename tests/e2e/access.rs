//! `allow` and `deny`: the first rule matching the client's address
//! decides (403 and nginx's `access forbidden by rule` at error level); a
//! level without rules takes its parent's; internal redirects meet the
//! rules of the location they reach; a static file's memory-cache hits are
//! judged as the first answer was. Clients connect from several loopback
//! addresses (any 127/8 address is this machine's). Checked against
//! nginx (`E2E_SERVER=nginx`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, read_responses, wait_for_lines};

fn site() -> Server {
    let p = Prefix::new("access");
    p.write("html/open/f.txt", "open\n");
    p.write("html/lan/f.txt", "lan\n");
    p.write("html/lan/inner/f.txt", "inner\n");
    p.write("html/none/f.txt", "none\n");
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             allow 127.0.0.9;\n        deny 127.0.0.0/24;\n\
             location /open/ { }\n\
             location /lan/ { allow 127.0.0.2; deny all;\n\
                 location /lan/inner/ { allow all; } }\n\
             location /none/ { deny all; }\n\
             location = /to-none { try_files /nothing /none/f.txt; }\n    }\n",
        ),
    )
}

/// GET `path` from the loopback address `from`: the status.
fn get_from(s: &Server, from: [u8; 4], path: &str) -> u16 {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&s.addr.into()).unwrap();
    let mut c: TcpStream = sock.into();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    read_responses(&mut c, 1, false)[0].status
}

#[test]
fn the_first_matching_rule_decides_and_levels_replace_their_parents() {
    let s = site();
    // The server's rules: 127.0.0.9 allowed, the rest of 127.0.0.0/24 not,
    // 127.0.1.1 matched by no rule (allowed).
    assert_eq!(get_from(&s, [127, 0, 0, 9], "/open/f.txt"), 200);
    assert_eq!(get_from(&s, [127, 0, 0, 1], "/open/f.txt"), 403);
    assert_eq!(get_from(&s, [127, 0, 1, 1], "/open/f.txt"), 200);
    // /lan/ has its own rules, which replace the server's.
    assert_eq!(get_from(&s, [127, 0, 0, 2], "/lan/f.txt"), 200);
    assert_eq!(get_from(&s, [127, 0, 0, 9], "/lan/f.txt"), 403);
    assert_eq!(get_from(&s, [127, 0, 0, 1], "/lan/inner/f.txt"), 200);
    // try_files into a denied location: its rules apply there.
    assert_eq!(get_from(&s, [127, 0, 1, 1], "/to-none"), 403);
}

#[test]
fn a_denied_request_is_logged_and_cache_hits_are_judged_alike() {
    let s = site();
    // Allowed twice (the second a memory-cache hit), then denied.
    assert_eq!(get_from(&s, [127, 0, 0, 2], "/lan/f.txt"), 200);
    assert_eq!(get_from(&s, [127, 0, 0, 2], "/lan/f.txt"), 200);
    assert_eq!(get_from(&s, [127, 0, 0, 3], "/lan/f.txt"), 403);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("[error]") && l.contains("access forbidden by rule")
    });
    assert_eq!(lines.len(), 1);
    assert!(lines[0].contains("client: 127.0.0.3"), "{}", lines[0]);
}
