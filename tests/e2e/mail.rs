//! The mail proxy (`mail { }`): IMAP and SMTP clients on a real socket,
//! credentials checked by a real `auth_http` server (the server's own
//! http block, as nginx's test suite does it: `if` on `$http_auth_*`,
//! `add_header Auth-*`), and a backend that is a small IMAP or SMTP
//! responder in the test (no mail server is installed here), which
//! records what the proxy sent it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;

use crate::support::*;

/// The configuration: the auth server on PORT, a mail server on `mail`
/// speaking `protocol`, the backend on `backend`.
fn conf(protocol: &str, mail: u16, backend: u16, extra: &str) -> String {
    format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         mail {{\n  auth_http 127.0.0.1:PORT/auth;\n  proxy_pass_error_message on;\n  xclient off;\n\
           server {{ listen 127.0.0.1:{mail}; protocol {protocol}; {extra} }}\n}}\n\
         http {{\n  access_log off;\n  server {{\n    listen 127.0.0.1:PORT;\n\
           location = /auth {{\n      set $reply \"Invalid login\";\n\
             if ($http_auth_pass = secret) {{ set $reply OK; }}\n\
             add_header Auth-Status $reply;\n      add_header Auth-Server 127.0.0.1;\n\
             add_header Auth-Port {backend};\n      add_header Auth-Wait 0;\n\
             return 204;\n    }}\n  }}\n}}\n"
    )
}

/// A backend that greets with `greeting`, answers each line with what
/// `answer` gives, and sends every line it got to the test.
fn backend(
    greeting: &'static str,
    answer: fn(&str) -> Option<String>,
) -> (u16, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                s.write_all(greeting.as_bytes()).unwrap();
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 {
                    let got = line.trim_end().to_string();
                    if let Some(a) = answer(&got) {
                        let _ = s.write_all(a.as_bytes());
                    }
                    let _ = tx.send(got);
                    line.clear();
                }
            });
        }
    });
    (port, rx)
}

fn imap_backend(line: &str) -> Option<String> {
    let tag = line.split(' ').next().unwrap_or("");
    if line.ends_with('}') {
        return Some("+ go ahead\r\n".into());
    }
    // The password ends the login (the test's only login is tagged a3).
    if line == "secret" {
        return Some("a3 OK secret done\r\n".into());
    }
    Some(format!("{tag} OK {line} done\r\n"))
}

/// The first `n` lines the backend got.
fn lines(seen: &mpsc::Receiver<String>, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| seen.recv_timeout(IO_TIMEOUT).unwrap())
        .collect()
}

fn read_line(r: &mut BufReader<TcpStream>) -> String {
    let mut l = String::new();
    r.read_line(&mut l).unwrap();
    l
}

fn start(protocol: &str, backend_port: u16, extra: &str) -> (Server, u16) {
    let mail = free_port();
    let server = Server::start(
        Prefix::new("mail"),
        &conf(protocol, mail, backend_port, extra),
    );
    (server, mail)
}

fn client(port: u16) -> (TcpStream, BufReader<TcpStream>) {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let r = BufReader::new(s.try_clone().unwrap());
    (s, r)
}

#[test]
fn imap_login_is_checked_then_spliced_to_the_backend() {
    let (port, seen) = backend("* OK test backend\r\n", imap_backend);
    let (_server, mail) = start("imap", port, "");
    let (mut s, mut r) = client(mail);
    assert_eq!(read_line(&mut r), "* OK IMAP4 ready\r\n");
    s.write_all(b"a1 CAPABILITY\r\n").unwrap();
    assert_eq!(
        read_line(&mut r),
        "* CAPABILITY IMAP4 IMAP4rev1 UIDPLUS AUTH=PLAIN\r\n"
    );
    assert_eq!(read_line(&mut r), "a1 OK completed\r\n");
    s.write_all(b"a2 LOGIN user@example.com wrong\r\n").unwrap();
    assert_eq!(read_line(&mut r), "a2 NO Invalid login\r\n");
    // A quoted password split across two writes; a command pipelined
    // after the login goes to the backend.
    s.write_all(b"a3 LOGIN user@example.com \"sec").unwrap();
    s.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    s.write_all(b"ret\"\r\na4 SELECT INBOX\r\n").unwrap();
    assert_eq!(read_line(&mut r), "a3 OK secret done\r\n");
    assert_eq!(read_line(&mut r), "a4 OK a4 SELECT INBOX done\r\n");
    let got = lines(&seen, 4);
    assert_eq!(
        got,
        [
            "a3 LOGIN {16}",
            "user@example.com {6}",
            "secret",
            "a4 SELECT INBOX"
        ]
    );
}

fn smtp_backend(line: &str) -> Option<String> {
    Some(match line {
        l if l.starts_with("EHLO") => "250-backend\r\n250 PIPELINING\r\n".into(),
        l if l.starts_with("MAIL") => "250 2.1.0 sender ok\r\n".into(),
        _ => "500 what\r\n".into(),
    })
}

#[test]
fn smtp_auth_plain_logs_in_with_the_clients_ehlo() {
    let (port, seen) = backend("220 backend ESMTP\r\n", smtp_backend);
    let (_server, mail) = start("smtp", port, "server_name mx.test; smtp_auth plain;");
    let (mut s, mut r) = client(mail);
    assert_eq!(read_line(&mut r), "220 mx.test ESMTP ready\r\n");
    s.write_all(b"EHLO client.test\r\n").unwrap();
    assert_eq!(read_line(&mut r), "250-mx.test\r\n");
    assert_eq!(read_line(&mut r), "250 AUTH PLAIN\r\n");
    s.write_all(b"MAIL FROM:<a@b>\r\n").unwrap();
    assert!(read_line(&mut r).starts_with("530 "));
    // base64 of "\0user@example.com\0secret".
    s.write_all(b"AUTH PLAIN AHVzZXJAZXhhbXBsZS5jb20Ac2VjcmV0\r\n")
        .unwrap();
    assert_eq!(read_line(&mut r), "235 2.0.0 OK\r\n");
    s.write_all(b"MAIL FROM:<a@b>\r\n").unwrap();
    assert_eq!(read_line(&mut r), "250 2.1.0 sender ok\r\n");
    let got = lines(&seen, 2);
    assert_eq!(got, ["EHLO client.test", "MAIL FROM:<a@b>"]);
}

#[test]
fn an_unreachable_auth_server_is_an_internal_error() {
    let (port, _seen) = backend("* OK test backend\r\n", imap_backend);
    let (server, mail) = start("imap", port, "auth_http 127.0.0.1:1/none;");
    let (mut s, mut r) = client(mail);
    read_line(&mut r);
    s.write_all(b"a1 LOGIN u secret\r\n").unwrap();
    assert_eq!(read_line(&mut r), "* BAD internal server error\r\n");
    let mut rest = Vec::new();
    let _ = r.read_to_end(&mut rest);
    assert!(rest.is_empty());
    let log = wait_for_lines(&server.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("auth http server")
    });
    assert!(log[0].contains("[error]"), "{log:?}");
}

#[test]
fn a_server_without_auth_http_is_refused() {
    let p = Prefix::new("mail-conf");
    p.conf(
        "events {}\nmail {\n  server {\n    listen 127.0.0.1:1143;\n    protocol imap;\n  }\n}\n",
    );
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[emerg] no \"auth_http\" is defined for server in")
            && err.contains("nginx.conf:3"),
        "{err}"
    );
}
