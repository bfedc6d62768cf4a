//! The upstream keep-alive pool's idle connections: one the backend
//! closes while idle, or that gets bytes while idle, is dropped (nginx's
//! `ngx_http_upstream_keepalive_close_handler`), so the next request goes
//! on a new connection without an error. Each checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e upstream_pool::`).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with};

/// What the backend does on a connection a while after each answer.
#[derive(Clone, Copy)]
enum AfterAnswer {
    Close,
    /// A byte no request asked for, the connection left open.
    Stray,
}

/// A keep-alive backend answering each request with its connection's
/// number; `after` happens 100 ms after each answer.
fn backend(after: AfterAnswer) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for (n, s) in l.incoming().enumerate() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                loop {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(k) => buf.extend_from_slice(&b[..k]),
                    }
                    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    buf.drain(..end + 4);
                    let body = format!("conn {n}");
                    let a = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if s.write_all(a.as_bytes()).is_err() {
                        return;
                    }
                    thread::sleep(Duration::from_millis(100));
                    match after {
                        AfterAnswer::Close => return,
                        AfterAnswer::Stray => {
                            let _ = s.write_all(b"X");
                        }
                    }
                }
            });
        }
    });
    port
}

fn pooled_proxy(tag: &str, b: u16) -> Server {
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "    upstream u {{ server 127.0.0.1:{b}; keepalive 4; }}\n\
             server {{\n        listen 127.0.0.1:PORT;\n        \
             location / {{ proxy_pass http://u; proxy_http_version 1.1; \
             proxy_set_header Connection \"\"; }}\n    }}\n"
        )),
    )
}

fn errors(s: &Server) -> String {
    std::fs::read_to_string(s.prefix.dir.join("logs/error.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("[error]") || l.contains("[crit]"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn next_request_goes_on_a_new_connection(tag: &str, after: AfterAnswer) {
    let s = pooled_proxy(tag, backend(after));
    let first = s.get("/a");
    assert_eq!(first.status, 200);
    assert_eq!(first.body_str(), "conn 0");
    // The backend acts on the idle pooled connection meanwhile.
    thread::sleep(Duration::from_millis(400));
    let second = s.get("/a");
    assert_eq!(second.status, 200, "{}", errors(&s));
    assert_eq!(second.body_str(), "conn 1");
    assert_eq!(errors(&s), "", "no failed try on the dropped connection");
}

#[test]
fn an_idle_connection_the_backend_closed_is_not_used() {
    next_request_goes_on_a_new_connection("pool-closed", AfterAnswer::Close);
}

#[test]
fn an_idle_connection_with_stray_bytes_is_not_used() {
    next_request_goes_on_a_new_connection("pool-stray", AfterAnswer::Stray);
}
