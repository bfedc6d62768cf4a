//! `keepalive_time` and `keepalive_disable`: when a response closes its
//! connection although `keepalive_requests` and `keepalive_timeout` would
//! keep it, as nginx's `ngx_http_update_location_config` decides.

use std::io::Write;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, read_responses};

fn site() -> Server {
    let p = Prefix::new("keepalive-rules");
    for f in ["a", "safari/a", "none/a", "time/a"] {
        p.write(&format!("html/{f}"), "x");
    }
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /safari/ { keepalive_disable safari; }\n\
             location /none/ { keepalive_disable none; }\n\
             location /time/ { keepalive_time 1s; }\n    }\n",
        ),
    )
}

/// The `Connection` header of the answer to one request.
fn connection(s: &Server, method: &str, path: &str, ua: &str) -> String {
    let mut c = s.connect();
    let len = if method == "POST" {
        "Content-Length: 0\r\n"
    } else {
        ""
    };
    c.write_all(
        format!("{method} {path} HTTP/1.1\r\nHost: x\r\nUser-Agent: {ua}\r\n{len}\r\n").as_bytes(),
    )
    .unwrap();
    let r = read_responses(&mut c, 1, false);
    assert_eq!(r.len(), 1, "{method} {path} {ua}");
    r[0].header("connection").unwrap_or_default().to_string()
}

/// `msie6` (the default) closes after a POST from MSIE 4 to 6 only;
/// `safari` closes for Safari on Mac OS X; `none` keeps both.
#[test]
fn keepalive_disable_names_browsers() {
    let s = site();
    let cases = [
        ("POST", "/a", "MSIE 5.0", "close"),
        ("GET", "/a", "MSIE 5.0", "keep-alive"),
        (
            "POST",
            "/a",
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)",
            "close",
        ),
        (
            "POST",
            "/a",
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
            "keep-alive",
        ),
        ("POST", "/a", "MSIE 7.0", "keep-alive"),
        ("GET", "/a", "Mac OS X Safari/7534.48.3", "keep-alive"),
        ("GET", "/safari/a", "Mac OS X Safari/7534.48.3", "close"),
        (
            "GET",
            "/safari/a",
            "Mac OS X Chrome/90 Safari/7534.48.3",
            "keep-alive",
        ),
        ("POST", "/none/a", "MSIE 5.0", "keep-alive"),
    ];
    for (method, path, ua, want) in cases {
        assert_eq!(
            connection(&s, method, path, ua),
            want,
            "{method} {path} {ua}"
        );
    }
}

/// `keepalive_time 1s`: a request after the connection's first second gets
/// `Connection: close`.
#[test]
fn keepalive_time_ends_an_old_connection() {
    let s = site();
    let mut c = s.connect();
    let get = b"GET /time/a HTTP/1.1\r\nHost: x\r\n\r\n";
    c.write_all(get).unwrap();
    let r = read_responses(&mut c, 1, false);
    assert_eq!(r[0].header("connection"), Some("keep-alive"));
    std::thread::sleep(Duration::from_millis(1300));
    c.write_all(get).unwrap();
    let r = read_responses(&mut c, 1, false);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].header("connection"), Some("close"));
}
