//! `geo`: a variable by the client's network (the longest prefix), by a
//! range with `ranges`, by another value's address, or by the client a
//! trusted `proxy` names. Clients connect from several loopback
//! addresses. Checked against nginx (`E2E_SERVER=nginx`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crate::support::{Prefix, Response, Server, conf_with, read_to_close};

fn site() -> Server {
    let p = Prefix::new("geo");
    p.write("html/f.txt", "f\n");
    p.write("conf/nets.conf", "127.0.0.3 three;\n");
    Server::start(
        p,
        &conf_with(
            "    geo $net {\n        default world;\n        127.0.0.0/8 loopback;\n\
                 127.0.0.2/32 two;\n        include nets.conf;\n        ::1 six;\n\
                 delete 127.0.0.4;\n    }\n\
             geo $arg_ip $range {\n        ranges;\n        default none;\n\
                 10.0.0.0-10.0.0.255 ten;\n        10.0.0.5-10.0.0.5 five;\n    }\n\
             geo $proxied {\n        proxy 127.0.0.9;\n        default world;\n\
                 192.0.2.0/24 test;\n        127.0.0.0/8 loopback;\n    }\n\
             server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             add_header X-Net $net;\n        add_header X-Range $range;\n\
             add_header X-Proxied $proxied;\n\
             location /script { set $v \"net=$net\"; return 200 \"$v $range\\n\"; }\n    }\n",
        ),
    )
}

fn get(s: &Server, from: [u8; 4], path: &str, extra: &str) -> Response {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&s.addr.into()).unwrap();
    let mut c: TcpStream = sock.into();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(c, "GET {path} HTTP/1.0\r\nHost: x\r\n{extra}\r\n").unwrap();
    Response::parse(&read_to_close(&mut c)).unwrap()
}

#[test]
fn networks_by_longest_prefix_and_ranges_by_value() {
    let s = site();
    assert_eq!(
        get(&s, [127, 0, 0, 1], "/f.txt", "").header("X-Net"),
        Some("loopback")
    );
    assert_eq!(
        get(&s, [127, 0, 0, 2], "/f.txt", "").header("X-Net"),
        Some("two")
    );
    assert_eq!(
        get(&s, [127, 0, 0, 3], "/f.txt", "").header("X-Net"),
        Some("three")
    );
    let r = |ip: &str| {
        get(&s, [127, 0, 0, 1], &format!("/f.txt?ip={ip}"), "")
            .header("X-Range")
            .map(str::to_string)
    };
    assert_eq!(r("10.0.0.4").as_deref(), Some("ten"));
    assert_eq!(r("10.0.0.5").as_deref(), Some("five"));
    assert_eq!(r("10.0.0.6").as_deref(), Some("ten"));
    assert_eq!(r("10.0.1.0").as_deref(), Some("none"));
    assert_eq!(r("garbage").as_deref(), Some("none"));
}

/// A geo variable in values the configuration compiles (`set`,
/// `return`), not only in `add_header`.
#[test]
fn geo_values_in_set_and_return() {
    let s = site();
    let r = get(&s, [127, 0, 0, 2], "/script?ip=10.0.0.5", "");
    assert_eq!(r.status, 200);
    assert_eq!(String::from_utf8_lossy(&r.body), "net=two five\n");
}

#[test]
fn a_trusted_proxy_names_the_client() {
    let s = site();
    let via = |from, xff: &str| {
        get(&s, from, "/f.txt", &format!("X-Forwarded-For: {xff}\r\n"))
            .header("X-Proxied")
            .map(str::to_string)
    };
    assert_eq!(via([127, 0, 0, 9], "192.0.2.1").as_deref(), Some("test"));
    assert_eq!(via([127, 0, 0, 9], "10.0.0.1").as_deref(), Some("world"));
    // Not the proxy: its own address.
    assert_eq!(
        via([127, 0, 0, 8], "192.0.2.1").as_deref(),
        Some("loopback")
    );
}
