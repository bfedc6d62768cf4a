//! Request bodies through the client-body layer to a real backend on
//! loopback: a body over `client_body_buffer_size` goes to a temporary
//! file and reaches the upstream whole, a chunked body over
//! `client_max_body_size` is 413 with nginx's log line, and
//! `proxy_request_buffering off` passes the body on as it arrives
//! (re-chunked to an HTTP/1.1 upstream). Each checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e request_body::`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Response, Server, conf_with, read_to_close, wait_for_lines};

/// What a backend saw of one request: its head, and its body as sent
/// (still chunked when it came chunked).
struct Seen {
    head: String,
    body: Vec<u8>,
}

/// Reads one request: the head, then a `Content-Length` body or a chunked
/// one up to its last chunk.
fn read_request(s: &mut TcpStream, early: Option<&mpsc::Sender<String>>) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut b = [0u8; 16384];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    if let Some(tx) = early {
        let _ = tx.send(head.clone());
    }
    let mut body = buf[end..].to_vec();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let chunked = head.contains("Transfer-Encoding: chunked");
    loop {
        let complete = match len {
            Some(n) => body.len() >= n,
            None if chunked => body.ends_with(b"0\r\n\r\n"),
            None => true,
        };
        if complete {
            break;
        }
        match s.read(&mut b) {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&b[..n]),
        }
    }
    Some(Seen { head, body })
}

/// A backend answering each request with `BODY-LENGTH:FNV` of the body it
/// read; what it saw goes to the channel.
fn backend(early: Option<mpsc::Sender<String>>) -> (u16, mpsc::Receiver<Seen>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let Some(seen) = read_request(&mut s, early.as_ref()) else {
                continue;
            };
            let answer = format!("{}:{:x}", seen.body.len(), fnv(&seen.body));
            let _ = s.write_all(
                format!(
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{answer}",
                    answer.len()
                )
                .as_bytes(),
            );
            let _ = tx.send(seen);
        }
    });
    (port, rx)
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &c| {
        (h ^ u64::from(c)).wrapping_mul(0x100000001b3)
    })
}

fn server(tag: &str, locations: &str) -> Server {
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n{locations}\n    }}\n"
        )),
    )
}

fn post(s: &Server, path: &str, extra: &str, body: &[u8]) -> Response {
    let mut req =
        format!("POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n")
            .into_bytes();
    req.extend_from_slice(body);
    Response::parse(&s.raw(&req)).expect("a response")
}

#[test]
fn body_over_the_buffer_goes_to_a_temp_file_and_upstream_whole() {
    let (b, rx) = backend(None);
    let s = server(
        "body-file",
        &format!(
            "        client_body_buffer_size 1k;\n\
             client_body_temp_path body_temp;\n\
             location / {{ proxy_pass http://127.0.0.1:{b}; }}\n"
        ),
    );
    let body: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let r = post(
        &s,
        "/up",
        &format!("Content-Length: {}\r\n", body.len()),
        &body,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body_str(), format!("{}:{:x}", body.len(), fnv(&body)));
    let seen = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        seen.head.contains("Content-Length: 200000"),
        "{}",
        seen.head
    );
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("a client request body is buffered to a temporary file")
    });
    assert!(lines[0].contains("[warn]"), "{}", lines[0]);
    // The worker's first file, nginx's name and line.
    assert!(
        lines[0].ends_with(&format!(
            "a client request body is buffered to a temporary file {}/body_temp/0000000001, \
             client: 127.0.0.1, server: localhost, request: \"POST /up HTTP/1.1\", \
             host: \"localhost\"",
            s.prefix.dir.display()
        )),
        "{}",
        lines[0]
    );
    // The file is removed with the request.
    let left = std::fs::read_dir(s.prefix.dir.join("body_temp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0);
}

#[test]
fn chunked_body_too_large_is_413() {
    let (b, _rx) = backend(None);
    let s = server(
        "body-413",
        &format!(
            "        client_max_body_size 1k;\n\
             location / {{ proxy_pass http://127.0.0.1:{b}; }}\n"
        ),
    );
    let chunk = vec![b'x'; 800];
    let mut body = Vec::new();
    for _ in 0..3 {
        body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        body.extend_from_slice(&chunk);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let r = post(&s, "/", "Transfer-Encoding: chunked\r\n", &body);
    assert_eq!(r.status, 413);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("client intended to send too large chunked body")
    });
    assert!(lines[0].contains("[error]"), "{}", lines[0]);
}

#[test]
fn request_buffering_off_streams_the_body() {
    let (tx, early) = mpsc::channel();
    let (b, rx) = backend(Some(tx));
    let s = server(
        "body-stream",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; \
             proxy_request_buffering off; proxy_http_version 1.1; }}\n"
        ),
    );
    let mut c = s.connect();
    c.write_all(
        b"POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
          Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
    )
    .unwrap();
    // The upstream has the request before the client sent the rest.
    let head = early.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(head.contains("Transfer-Encoding: chunked"), "{head}");
    c.write_all(b"6\r\n world\r\n0\r\n\r\n").unwrap();
    let r = Response::parse(&read_to_close(&mut c)).unwrap();
    assert_eq!(r.status, 200);
    let seen = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let (plain, _) = crate::support::dechunk(&seen.body).expect("chunked upstream body");
    assert_eq!(plain, b"hello world");
}

/// With `proxy_request_buffering off`, the body bytes that came in the
/// same read as the request's head go to the upstream with its head, not
/// after the client's next bytes (nginx's preread buffer is in the first
/// chain it sends): two chunks read at once are one chunk upstream.
#[test]
fn request_buffering_off_sends_the_preread_body_with_the_head() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let b = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let Ok((mut u, _)) = l.accept() else { return };
        u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // What the upstream has before the client sends anything more.
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.ends_with(b"many\r\n") {
            match u.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tx.send(seen);
        let mut rest = Vec::new();
        while !rest.ends_with(b"0\r\n\r\n") {
            match u.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => rest.extend_from_slice(&buf[..n]),
            }
        }
        let _ = u.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK");
        let _ = tx.send(rest);
    });
    let s = server(
        "body-preread",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; \
             proxy_request_buffering off; proxy_http_version 1.1; }}\n"
        ),
    );
    let mut c = s.connect();
    c.write_all(
        b"POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
          Transfer-Encoding: chunked\r\n\r\n5\r\n01234\r\n4\r\nmany\r\n",
    )
    .unwrap();
    let early = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let early = String::from_utf8_lossy(&early).into_owned();
    let body = early.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    assert_eq!(body, "9\r\n01234many\r\n", "{early}");
    c.write_all(b"0\r\n\r\n").unwrap();
    let rest = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(rest, b"0\r\n\r\n");
    let r = Response::parse(&read_to_close(&mut c)).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body_str(), "OK");
}
