//! Subrequests to proxied locations (SSI `include virtual`, with and
//! without `set`, and `add_after_body`) against a real backend on
//! loopback that answers chunked: each answer lands in the page in its
//! place and order, static includes between them. Checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e proxied_subrequest::`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;

use crate::support::{Prefix, Server, conf_with};

/// A backend answering `[PATH]` chunked (in two chunks), then closing.
fn backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let req = String::from_utf8_lossy(&buf);
                let path = req.split(' ').nth(1).unwrap_or("?").to_string();
                let a = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\
                     Connection: close\r\n\r\n1\r\n[\r\n{:x}\r\n{path}]\r\n0\r\n\r\n",
                    path.len() + 1
                );
                let _ = s.write_all(a.as_bytes());
            });
        }
    });
    port
}

fn site() -> Server {
    let up = backend();
    let p = Prefix::new("proxied_subrequest");
    p.write(
        "html/page.html",
        r#"A<!--#include virtual="/up/one" -->B<!--#include virtual="/static.txt" -->C<!--#include virtual="/up/two?x=1" set="v" -->D<!--#echo var="v" -->E"#,
    );
    p.write("html/static.txt", "S");
    p.write("html/added.html", "BODY");
    let conf = conf_with(&format!(
        r#"
    server {{
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
        ssi on;
        location /up/ {{
            proxy_pass http://127.0.0.1:{up};
        }}
        location = /added.html {{
            ssi off;
            add_after_body /up/after;
        }}
    }}"#
    ));
    Server::start(p, &conf)
}

#[test]
fn ssi_includes_of_a_proxied_location_land_in_order() {
    let s = site();
    let r = s.get("/page.html");
    assert_eq!(r.status, 200);
    assert_eq!(
        String::from_utf8_lossy(&r.body),
        "A[/up/one]BSCD[/up/two?x=1]E"
    );
}

#[test]
fn add_after_body_of_a_proxied_location() {
    let s = site();
    let r = s.get("/added.html");
    assert_eq!(r.status, 200);
    assert_eq!(String::from_utf8_lossy(&r.body), "BODY[/up/after]");
}
