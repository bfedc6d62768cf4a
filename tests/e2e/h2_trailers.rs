//! `add_trailer` over HTTP/2: the trailer fields go in a HEADERS frame
//! with END_STREAM after the body's DATA (RFC 9113 §8.1, nginx's
//! `ngx_http_v2_create_trailers`), never in the response head, also for
//! an empty body; nghttp (nghttp2's client) shows the frames as they came.

use std::process::Command;

use crate::support::{Prefix, Server, conf_with};

fn start(tag: &str) -> Server {
    let p = Prefix::new(tag);
    p.write("html/t.html", "SEE-THIS");
    p.write("html/empty", "");
    let conf = conf_with(
        "    server {\n        listen 127.0.0.1:PORT http2;\n        location / { add_trailer X-Var $host; }\n    }\n",
    );
    Server::start(p, &conf)
}

/// nghttp's verbose trace of one GET over h2c by prior knowledge.
fn nghttp(s: &Server, path: &str) -> String {
    let out = Command::new("nghttp")
        .args(["-nv", &format!("http://localhost:{}{path}", s.addr.port())])
        .output()
        .expect("nghttp runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The frames received, in order, as `HEADERS 0x04` or `DATA 0x00 8`.
fn frames(trace: &str) -> Vec<String> {
    trace
        .lines()
        .filter_map(|l| {
            let l = l.split_once("] recv ")?.1;
            let (kind, rest) = l.split_once(" frame <length=")?;
            let (len, rest) = rest.split_once(", flags=")?;
            let flags = &rest[..4];
            Some(match kind {
                "DATA" => format!("DATA {flags} {len}"),
                _ => format!("{kind} {flags}"),
            })
        })
        .filter(|f| f.starts_with("HEADERS") || f.starts_with("DATA"))
        .collect()
}

#[test]
fn trailers_follow_the_body_in_their_own_headers_frame() {
    let s = start("h2-trailers");
    let t = nghttp(&s, "/t.html");
    assert_eq!(
        frames(&t),
        ["HEADERS 0x04", "DATA 0x00 8", "HEADERS 0x05"],
        "{t}"
    );
    // The field is after the DATA, not in the head.
    let data = t.find("recv DATA frame").expect("DATA");
    let field = t.find("x-var: localhost").expect("the trailer");
    assert!(field > data, "{t}");
    assert_eq!(t.matches("x-var:").count(), 1, "{t}");
}

#[test]
fn an_empty_body_still_gets_its_trailers() {
    let s = start("h2-trailers-empty");
    let t = nghttp(&s, "/empty");
    assert_eq!(frames(&t), ["HEADERS 0x04", "HEADERS 0x05"], "{t}");
    assert!(t.contains("x-var: localhost"), "{t}");
}
