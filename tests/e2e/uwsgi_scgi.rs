//! uwsgi and SCGI against backends on loopback that speak them (a uwsgi
//! packet or an SCGI netstring read whole, the body after it, an answer
//! written back): what the server sends (the packet's header, the vars,
//! `CONTENT_LENGTH` first in SCGI, the body) and how the answer comes back
//! (a status line for uwsgi, a CGI `Status:` head for SCGI). Checked
//! against nginx (`E2E_SERVER=nginx cargo test --test e2e uwsgi_scgi::`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;

use crate::support::{Prefix, Response, Server, conf_with};

/// The request as the backend parsed it: its vars in order and its body.
struct Seen {
    head: Vec<u8>,
    vars: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    s.read_exact(&mut b).unwrap();
    b
}

fn var(seen: &Seen, name: &str) -> Option<String> {
    seen.vars
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

/// One uwsgi request: the 4-byte header, 16-bit little-endian sizes.
fn read_uwsgi(s: &mut TcpStream) -> Seen {
    let head = read_n(s, 4);
    let size = usize::from(u16::from_le_bytes([head[1], head[2]]));
    let block = read_n(s, size);
    let mut vars = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let mut part = || {
            let n = usize::from(u16::from_le_bytes([block[i], block[i + 1]]));
            let v = String::from_utf8_lossy(&block[i + 2..i + 2 + n]).into_owned();
            i += 2 + n;
            v
        };
        let k = part();
        let v = part();
        vars.push((k, v));
    }
    let len = vars
        .iter()
        .find(|(k, _)| k == "CONTENT_LENGTH")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body = read_n(s, len);
    Seen { head, vars, body }
}

/// One SCGI request: "LEN:" NUL-separated pairs ",", then the body.
fn read_scgi(s: &mut TcpStream) -> Seen {
    let mut digits = Vec::new();
    loop {
        let b = read_n(s, 1)[0];
        if b == b':' {
            break;
        }
        digits.push(b);
    }
    let len: usize = String::from_utf8_lossy(&digits).parse().unwrap();
    let block = read_n(s, len + 1);
    assert_eq!(block[len], b',', "the netstring ends with a comma");
    let parts: Vec<String> = block[..len]
        .split(|&b| b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let vars: Vec<(String, String)> = parts
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect();
    let n = vars[0].1.parse().unwrap();
    let body = read_n(s, n);
    Seen {
        head: digits,
        vars,
        body,
    }
}

/// A backend answering one request with `answer`, reporting what it saw.
fn backend(read: fn(&mut TcpStream) -> Seen, answer: &'static [u8]) -> (u16, mpsc::Receiver<Seen>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let seen = read(&mut s);
            let _ = s.write_all(answer);
            let _ = tx.send(seen);
        }
    });
    (port, rx)
}

fn post(s: &Server, path: &str, body: &str) -> Response {
    let mut c = s.connect();
    let req = format!(
        "POST {path}?q=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         X-Extra: a-b\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    c.write_all(req.as_bytes()).unwrap();
    Response::parse(&crate::support::read_to_close(&mut c)).expect("a response")
}

#[test]
fn uwsgi_packet_vars_body_and_status_line() {
    let (port, seen) = backend(
        read_uwsgi,
        b"HTTP/1.1 201 Created\r\nX-App: uwsgi\r\nContent-Length: 3\r\n\r\nyes",
    );
    let conf = conf_with(&format!(
        "server {{ listen 127.0.0.1:PORT;\n location / {{ uwsgi_pass uwsgi://127.0.0.1:{port};\n \
         uwsgi_modifier1 5; uwsgi_modifier2 9;\n uwsgi_param REQUEST_METHOD $request_method;\n \
         uwsgi_param QUERY_STRING $query_string;\n uwsgi_param CONTENT_LENGTH $content_length;\n \
         uwsgi_param EMPTY \"\" if_not_empty;\n }}\n}}"
    ));
    let s = Server::start(Prefix::new("uwsgi"), &conf);
    let r = post(&s, "/app", "hello");
    assert_eq!(r.status, 201);
    assert_eq!(r.header("X-App"), Some("uwsgi"));
    assert_eq!(r.body_str(), "yes");
    let seen = seen.recv().unwrap();
    assert_eq!((seen.head[0], seen.head[3]), (5, 9), "modifier1, modifier2");
    assert_eq!(var(&seen, "REQUEST_METHOD").as_deref(), Some("POST"));
    assert_eq!(var(&seen, "QUERY_STRING").as_deref(), Some("q=1"));
    assert_eq!(var(&seen, "HTTP_X_EXTRA").as_deref(), Some("a-b"));
    assert_eq!(var(&seen, "EMPTY"), None);
    assert_eq!(seen.body, b"hello");
}

#[test]
fn scgi_netstring_content_length_first_and_cgi_status() {
    let (port, seen) = backend(
        read_scgi,
        b"Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nno such thing",
    );
    let conf = conf_with(&format!(
        "server {{ listen 127.0.0.1:PORT;\n location / {{ scgi_pass 127.0.0.1:{port};\n \
         scgi_param REQUEST_URI $request_uri;\n scgi_param SCGI 1;\n }}\n}}"
    ));
    let s = Server::start(Prefix::new("scgi"), &conf);
    let r = post(&s, "/x", "abc");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("Content-Type"), Some("text/plain"));
    assert_eq!(r.header("Status"), None);
    assert_eq!(r.body_str(), "no such thing");
    let seen = seen.recv().unwrap();
    assert_eq!(seen.vars[0], ("CONTENT_LENGTH".into(), "3".into()));
    assert_eq!(var(&seen, "REQUEST_URI").as_deref(), Some("/x?q=1"));
    assert_eq!(var(&seen, "SCGI").as_deref(), Some("1"));
    assert_eq!(seen.body, b"abc");
}

/// A chunked body is read whole before the packet is made, and the
/// parameters are evaluated then (as nginx creates the request after
/// reading the body): `$content_length` is the bytes received, an empty
/// chunked body's is 0, even after `set` read `$content_length` early;
/// a `set` variable keeps its value.
#[test]
fn uwsgi_content_length_of_a_chunked_body() {
    let (port, seen) = backend(
        read_uwsgi,
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    let conf = conf_with(&format!(
        "server {{ listen 127.0.0.1:PORT;\n set $early $content_length;\n set $mine kept;\n \
         location / {{ uwsgi_pass 127.0.0.1:{port};\n \
         uwsgi_param CONTENT_LENGTH $content_length if_not_empty;\n \
         uwsgi_param MINE $mine;\n uwsgi_param LEN_TOO len=$content_length;\n }}\n}}"
    ));
    let s = Server::start(Prefix::new("uwsgi-chunked"), &conf);
    for (chunks, len, body) in [
        ("3\r\nfoo\r\n4\r\nbarr\r\n0\r\n\r\n", "7", &b"foobarr"[..]),
        ("0\r\n\r\n", "0", &b""[..]),
    ] {
        let mut c = s.connect();
        let req = format!(
            "POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Transfer-Encoding: chunked\r\n\r\n{chunks}"
        );
        c.write_all(req.as_bytes()).unwrap();
        let r = Response::parse(&crate::support::read_to_close(&mut c)).expect("a response");
        assert_eq!(r.status, 200);
        let seen = seen.recv().unwrap();
        assert_eq!(var(&seen, "CONTENT_LENGTH").as_deref(), Some(len));
        assert_eq!(var(&seen, "LEN_TOO"), Some(format!("len={len}")));
        assert_eq!(var(&seen, "MINE").as_deref(), Some("kept"));
        assert_eq!(seen.body, body);
    }
}
