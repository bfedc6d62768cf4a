//! `resolver`: `proxy_pass` hosts built from variables, looked up at run
//! time over UDP against a real name server on loopback (a small one in
//! this file, answering from a table); checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e resolver::`).

use std::net::{TcpListener, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use crate::support::{Prefix, Server, conf_with, wait_for_lines};

/// What the name server answers for a name.
#[derive(Clone, Copy)]
enum Says {
    A([u8; 4], u32),
    NxDomain,
    Silence,
}

fn says(name: &str) -> Says {
    match name {
        "up.test" | "UP.test" => Says::A([127, 0, 0, 1], 60),
        "nx.test" => Says::NxDomain,
        _ => Says::Silence,
    }
}

/// A name server on a loopback UDP port answering A queries from
/// [`says`] (AAAA: no data), counting the A queries it answers.
fn name_server() -> (u16, Arc<AtomicUsize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            if let Some(reply) = answer(&buf[..n], &c) {
                let _ = sock.send_to(&reply, from);
            }
        }
    });
    (port, count)
}

/// The reply to one query (RFC 1035 4.1): its header and question echoed,
/// the answer pointing back at the question's name.
fn answer(q: &[u8], count: &AtomicUsize) -> Option<Vec<u8>> {
    let (name, end) = qname(q)?;
    let qtype = u16::from_be_bytes([*q.get(end)?, *q.get(end + 1)?]);
    let question = q.get(12..end + 4)?;
    let mut r = q.get(..2)?.to_vec();
    let (rcode, record) = match (says(&name), qtype) {
        (Says::Silence, _) => return None,
        (Says::NxDomain, _) => (3u8, None),
        (Says::A(ip, ttl), 1) => {
            count.fetch_add(1, Ordering::SeqCst);
            (0, Some((ip, ttl)))
        }
        (Says::A(..), _) => (0, None),
    };
    r.extend_from_slice(&[
        0x81,
        0x80 | rcode,
        0,
        1,
        0,
        u8::from(record.is_some()),
        0,
        0,
        0,
        0,
    ]);
    r.extend_from_slice(question);
    if let Some((ip, ttl)) = record {
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
        r.extend_from_slice(&ttl.to_be_bytes());
        r.extend_from_slice(&[0, 4]);
        r.extend_from_slice(&ip);
    }
    Some(r)
}

/// The question's name and where its type starts.
fn qname(q: &[u8]) -> Option<(String, usize)> {
    let mut i = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*q.get(i)?);
        if len == 0 {
            return Some((labels.join("."), i + 1));
        }
        labels.push(String::from_utf8_lossy(q.get(i + 1..i + 1 + len)?).into_owned());
        i += 1 + len;
    }
}

fn start(tag: &str, dns: u16) -> Server {
    // The backend is the server itself, on a second port (as nginx's own
    // resolver tests do).
    let back = TcpListener::bind("127.0.0.1:0").unwrap();
    let bport = back.local_addr().unwrap().port();
    drop(back);
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n\
             location / {{ resolver 127.0.0.1:{dns} ipv6=off; resolver_timeout 1s;\n\
                 proxy_pass http://$http_x_name:{bport}/backend; }}\n\
             location /v6 {{ resolver 127.0.0.1:{dns}; resolver_timeout 1s;\n\
                 proxy_pass http://$http_x_name:{bport}/backend; }}\n\
             location /none {{ proxy_pass http://$http_x_name:{bport}/backend; }}\n\
         }}\n\
         server {{ listen 127.0.0.1:{bport}; location /backend {{ return 200 \"backend\"; }} }}\n"
        )),
    )
}

fn get(s: &Server, path: &str, name: &str) -> (u16, String) {
    let raw = s.raw(
        format!("GET {path} HTTP/1.0\r\nHost: localhost\r\nX-Name: {name}\r\n\r\n").as_bytes(),
    );
    let r = crate::support::Response::parse(&raw).expect("a response");
    (r.status, r.body_str().to_string())
}

#[test]
fn a_name_is_resolved_then_cached_by_its_ttl() {
    let (dns, count) = name_server();
    let s = start("resolver-a", dns);
    assert_eq!(get(&s, "/", "up.test"), (200, "backend".into()));
    // Cached (TTL 60): the name server is not asked again, whatever the
    // name's case; A and AAAA both asked where ipv6 is on.
    assert_eq!(get(&s, "/", "UP.test").0, 200);
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_eq!(get(&s, "/v6", "up.test").0, 200);
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "another resolver, its own cache"
    );
}

#[test]
fn failures_are_502_with_nginx_log_lines() {
    let (dns, _) = name_server();
    let s = start("resolver-fail", dns);
    let log = s.prefix.dir.join("logs/error.log");
    assert_eq!(get(&s, "/", "nx.test").0, 502);
    let l = wait_for_lines(&log, 1, |l| l.contains("could not be resolved"));
    assert!(
        l[0].contains("[error]")
            && l[0].contains("nx.test could not be resolved (3: Host not found)"),
        "{}",
        l[0]
    );
    // No answer at all: the lookup ends at resolver_timeout.
    assert_eq!(get(&s, "/", "silent.test").0, 502);
    let l = wait_for_lines(&log, 2, |l| l.contains("could not be resolved"));
    assert!(
        l[1].contains("silent.test could not be resolved (110: Operation timed out)"),
        "{}",
        l[1]
    );
    // Without a resolver: nginx's words, at once.
    assert_eq!(get(&s, "/none", "up.test").0, 502);
    let l = wait_for_lines(&log, 1, |l| l.contains("no resolver defined"));
    assert!(
        l[0].contains("no resolver defined to resolve up.test"),
        "{}",
        l[0]
    );
    // The worker serves on.
    assert_eq!(get(&s, "/", "up.test").0, 200);
}
