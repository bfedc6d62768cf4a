//! `chunked_transfer_encoding off`: a response of unknown length (here an
//! autoindex listing) goes to an HTTP/1.1 client without chunks, ended by
//! the close, as for HTTP/1.0.

use crate::support::{Prefix, Response, Server, conf_with};

#[test]
fn chunked_transfer_encoding_off_closes_instead() {
    let p = Prefix::new("chunked-response");
    p.write("html/d/x.txt", "x");
    p.write("html/e/x.txt", "x");
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n        autoindex on;\n\
             location /e/ { chunked_transfer_encoding off; }\n    }\n",
        ),
    );
    let req = |path: &str| {
        let r = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        Response::parse(&s.raw(r.as_bytes())).expect("a response")
    };
    let on = req("/d/");
    assert_eq!(on.header("transfer-encoding"), Some("chunked"));
    assert_eq!(on.header("connection"), Some("keep-alive"));
    let off = req("/e/");
    assert_eq!(off.status, 200);
    assert_eq!(off.header("transfer-encoding"), None);
    assert_eq!(off.header("content-length"), None);
    assert_eq!(off.header("connection"), Some("close"));
    assert!(off.body_str().contains("<a href=\"x.txt\">x.txt</a>"));
}
