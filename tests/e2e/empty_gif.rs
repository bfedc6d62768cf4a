//! `empty_gif`: the 43-byte transparent GIF for GET and HEAD, 405 for other
//! methods, whatever files the root holds.

use crate::support::{Prefix, Response, Server, conf_with};

const GIF_HEX: &str =
    "47494638396101000100800100000000ffffff21f90401000001002c00000000010001000002024c01003b";

fn site() -> Server {
    let p = Prefix::new("empty-gif");
    p.write("html/pixel.gif", "not the gif");
    Server::start(
        p,
        &conf_with("server { listen 127.0.0.1:PORT; location / { empty_gif; } }"),
    )
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn get_and_head_send_the_gif() {
    let s = site();
    for path in ["/", "/pixel.gif", "/missing"] {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some("image/gif"));
        assert_eq!(r.header("content-length"), Some("43"));
        assert_eq!(
            r.header("last-modified"),
            Some("Mon, 28 Sep 1970 06:00:00 GMT")
        );
        assert_eq!(hex(&r.body), GIF_HEX, "{path}");
    }
    let head = s.raw(b"HEAD / HTTP/1.0\r\n\r\n");
    let r = Response::parse_head(&head).unwrap();
    assert_eq!(r.header("content-type"), Some("image/gif"));
    assert!(head.ends_with(b"\r\n\r\n"), "no body after a HEAD");
}

#[test]
fn other_methods_are_not_allowed() {
    let s = site();
    let r = Response::parse(&s.raw(b"PUT / HTTP/1.0\r\n\r\n")).unwrap();
    assert_eq!(r.status, 405);
    assert!(r.body_str().contains("405 Not Allowed"));
}
