//! `satisfy any`: an address allowed by `allow` passes without
//! credentials, another client must authenticate (401, its challenge
//! winning over the 403 of `deny`); `satisfy all` needs both; `auth_delay`
//! holds the 401 while the worker answers others. Clients connect from
//! several loopback addresses. Checked against nginx (`E2E_SERVER=nginx`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::support::{Prefix, Response, Server, conf_with, read_to_close};

/// `u:good` and `u:bad` in base64 (RFC 4648).
const GOOD: &str = "dTpnb29k";
const BAD: &str = "dTpiYWQ=";

fn site() -> Server {
    let p = Prefix::new("satisfy");
    p.write("html/any/f.txt", "any\n");
    p.write("html/all/f.txt", "all\n");
    p.write("html/slow/f.txt", "slow\n");
    p.write("conf/htpasswd", "u:{PLAIN}good\n");
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             auth_basic \"zone\";\n        auth_basic_user_file htpasswd;\n\
             allow 127.0.0.2;\n        deny all;\n\
             location /any/ { satisfy any; }\n\
             location /all/ { }\n\
             location /slow/ { satisfy any; auth_delay 1s; }\n    }\n",
        ),
    )
}

fn get(s: &Server, from: [u8; 4], path: &str, auth: Option<&str>) -> Response {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&SocketAddr::from((from, 0)).into()).unwrap();
    sock.connect(&s.addr.into()).unwrap();
    let mut c: TcpStream = sock.into();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let auth = auth.map_or(String::new(), |a| format!("Authorization: Basic {a}\r\n"));
    write!(c, "GET {path} HTTP/1.0\r\nHost: x\r\n{auth}\r\n").unwrap();
    Response::parse(&read_to_close(&mut c)).unwrap()
}

#[test]
fn satisfy_any_lets_either_module_allow() {
    let s = site();
    assert_eq!(get(&s, [127, 0, 0, 2], "/any/f.txt", None).status, 200);
    let denied = get(&s, [127, 0, 0, 3], "/any/f.txt", None);
    assert_eq!(denied.status, 401, "the challenge wins over the 403");
    assert_eq!(
        denied.header("WWW-Authenticate"),
        Some("Basic realm=\"zone\"")
    );
    assert_eq!(
        get(&s, [127, 0, 0, 3], "/any/f.txt", Some(GOOD)).status,
        200
    );
    assert_eq!(get(&s, [127, 0, 0, 3], "/any/f.txt", Some(BAD)).status, 401);
    // satisfy all: both.
    assert_eq!(get(&s, [127, 0, 0, 2], "/all/f.txt", None).status, 401);
    assert_eq!(
        get(&s, [127, 0, 0, 3], "/all/f.txt", Some(GOOD)).status,
        403
    );
    assert_eq!(
        get(&s, [127, 0, 0, 2], "/all/f.txt", Some(GOOD)).status,
        200
    );
}

#[test]
fn auth_delay_holds_the_401_only() {
    let s = site();
    let t = Instant::now();
    assert_eq!(
        get(&s, [127, 0, 0, 3], "/slow/f.txt", Some(BAD)).status,
        401
    );
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    let t = Instant::now();
    assert_eq!(
        get(&s, [127, 0, 0, 3], "/slow/f.txt", Some(GOOD)).status,
        200
    );
    assert_eq!(get(&s, [127, 0, 0, 2], "/slow/f.txt", None).status, 200);
    assert!(
        t.elapsed() < Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
}
