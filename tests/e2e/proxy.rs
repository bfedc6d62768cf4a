//! The reverse proxy against real backends on loopback: one that answers,
//! one that answers slowly, one that resets, one that sends an invalid
//! head, one that closes mid-body, and none at all. Each checked against
//! nginx (`E2E_SERVER=nginx cargo test --test e2e proxy::`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, free_port, wait_for_lines};

/// A request head as a backend reads it (`None`: the client went first).
fn read_head(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
    Some(buf)
}

/// A backend that answers each connection with `answer(request)` after
/// `delay`, then closes (`None`: reset instead).
fn backend(delay: Duration, answer: fn(&str) -> Option<Vec<u8>>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                let Some(buf) = read_head(&mut s) else { return };
                thread::sleep(delay);
                match answer(&String::from_utf8_lossy(&buf)) {
                    Some(a) => {
                        let _ = s.write_all(&a);
                    }
                    None => {
                        let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
                    }
                }
            });
        }
    });
    port
}

fn echo(req: &str) -> Option<Vec<u8>> {
    let line = req.lines().next().unwrap_or("").to_string();
    let host = req
        .lines()
        .find_map(|l| l.strip_prefix("Host: "))
        .unwrap_or("-")
        .to_string();
    let conn = req
        .lines()
        .find_map(|l| l.strip_prefix("Connection: "))
        .unwrap_or("-")
        .to_string();
    let body = format!("{line}|{host}|{conn}");
    Some(
        format!(
            "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nX-Backend: yes\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

fn proxy_to(tag: &str, locations: &str) -> Server {
    Server::start(
        Prefix::new(tag),
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n{locations}\n    }}\n"
        )),
    )
}

#[test]
fn request_line_host_and_connection_as_nginx_sends_them() {
    let b = backend(Duration::ZERO, echo);
    let s = proxy_to(
        "proxy-basic",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; }}\n\
             location /p/ {{ proxy_pass http://127.0.0.1:{b}/new/; }}\n"
        ),
    );
    let r = s.get("/a%20b?x=1");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-Backend"), Some("yes"));
    assert_eq!(
        r.body_str(),
        format!("GET /a%20b?x=1 HTTP/1.0|127.0.0.1:{b}|close")
    );
    // The URI part replaces the location's prefix.
    let r = s.get("/p/x/y");
    assert_eq!(
        r.body_str(),
        format!("GET /new/x/y HTTP/1.0|127.0.0.1:{b}|close")
    );
}

#[test]
fn refused_is_502_with_nginx_log_line() {
    let dead = free_port();
    let s = proxy_to(
        "proxy-refused",
        &format!("        location / {{ proxy_pass http://127.0.0.1:{dead}; }}\n"),
    );
    assert_eq!(s.get("/x").status, 502);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("connect() failed")
    });
    assert!(
        lines[0].contains(&format!(
            "connect() failed (111: Connection refused) while connecting to upstream, \
             client: 127.0.0.1, server: localhost, request: \"GET /x HTTP/1.1\", \
             upstream: \"http://127.0.0.1:{dead}/x\""
        )),
        "{}",
        lines[0]
    );
    // `host:` is the Host header as sent, port and case kept
    // (`ngx_http_log_error_handler` prints headers_in.host's value).
    s.raw(b"GET /y HTTP/1.1\r\nHost: LocalHost:8080\r\nConnection: close\r\n\r\n");
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 2, |l| {
        l.contains("connect() failed")
    });
    assert!(
        lines[1].ends_with("host: \"LocalHost:8080\""),
        "{}",
        lines[1]
    );
}

/// When every peer has failed, "no live upstreams" ends the request with
/// 502 even if `proxy_next_upstream` lists `http_502`: nginx's NOLIVE
/// failure is never a reason to try again (`ngx_http_upstream_next`). It
/// used to retry for ever, and the worker spun (realconf 035, a group whose
/// servers were all unreachable).
#[test]
fn no_live_upstreams_is_a_final_502() {
    let dead = free_port();
    let s = Server::start(
        Prefix::new("proxy-nolive"),
        &conf_with(&format!(
            "    upstream u {{ server 127.0.0.1:{dead} max_fails=1 fail_timeout=0; \
             server 127.0.0.1:{dead} backup; }}\n\
             server {{\n        listen 127.0.0.1:PORT;\n        \
             location / {{ proxy_pass http://u; \
             proxy_next_upstream error timeout http_502; proxy_next_upstream_tries 5; }}\n    }}\n"
        )),
    );
    for _ in 0..2 {
        assert_eq!(s.get("/n").status, 502);
    }
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("no live upstreams")
    });
    // One line per request that found no peer, not a line per spin.
    std::thread::sleep(Duration::from_millis(300));
    let text = std::fs::read_to_string(s.prefix.dir.join("logs/error.log")).unwrap();
    let n = text.matches("no live upstreams").count();
    assert!((1..=2).contains(&n), "{n} lines: {}", lines[0]);
}

/// A unix-socket upstream whose file is missing fails at once, and nginx
/// logs that as `connect() to unix:PATH failed` at crit
/// (`ngx_event_connect_peer`), not as an asynchronous connect error.
#[test]
fn a_missing_unix_socket_is_logged_as_nginx_does() {
    let sock = std::env::temp_dir().join(format!("peregrine-none-{}.sock", std::process::id()));
    let s = proxy_to(
        "proxy-unix-missing",
        &format!(
            "        location / {{ proxy_pass http://unix:{}; }}\n",
            sock.display()
        ),
    );
    assert_eq!(s.get("/x").status, 502);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("peregrine-none-")
    });
    assert!(
        lines[0].contains("[crit] ")
            && lines[0].contains(&format!(
            "connect() to unix:{} failed (2: No such file or directory) while connecting to upstream",
            sock.display()
        )),
        "{}",
        lines[0]
    );
}

#[test]
fn slow_backend_is_504_after_read_timeout() {
    let b = backend(Duration::from_secs(3), echo);
    let s = proxy_to(
        "proxy-slow",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; proxy_read_timeout 1s; }}\n"
        ),
    );
    assert_eq!(s.get("/").status, 504);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("timed out")
    });
    assert!(
        lines[0].contains(
            "upstream timed out (110: Connection timed out) while reading response header from upstream"
        ),
        "{}",
        lines[0]
    );
}

#[test]
fn reset_and_invalid_head_are_502() {
    let reset = backend(Duration::ZERO, |_| None);
    let bad = backend(Duration::ZERO, |_| {
        Some(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab".to_vec())
    });
    let s = proxy_to(
        "proxy-bad",
        &format!(
            "        location /r {{ proxy_pass http://127.0.0.1:{reset}; }}\n\
             location /b {{ proxy_pass http://127.0.0.1:{bad}; }}\n"
        ),
    );
    assert_eq!(s.get("/r").status, 502);
    // Two lengths: current nginx refuses the answer (1.23's duplicate
    // check); Debian's 1.22 passes it on.
    if !crate::support::is_nginx() {
        assert_eq!(s.get("/b").status, 502);
    }
    // The worker serves on.
    assert_eq!(s.get("/r").status, 502);
}

#[test]
fn next_upstream_tries_the_other_server() {
    let dead = free_port();
    let b = backend(Duration::ZERO, echo);
    let s = Server::start(
        Prefix::new("proxy-next"),
        &conf_with(&format!(
            "    upstream u {{ server 127.0.0.1:{dead}; server 127.0.0.1:{b}; }}\n\
             server {{\n        listen 127.0.0.1:PORT;\n        \
             add_header X-Status $upstream_status;\n        \
             location / {{ proxy_pass http://u; }}\n    }}\n"
        )),
    );
    for _ in 0..2 {
        let r = s.get("/n");
        assert_eq!(r.status, 200);
        assert!(
            r.body_str().starts_with("GET /n HTTP/1.0|u|"),
            "{}",
            r.body_str()
        );
    }
}

#[test]
fn close_delimited_body_is_chunked_to_http11_clients() {
    let b = backend(Duration::ZERO, |_| {
        Some(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil-close".to_vec())
    });
    let s = proxy_to(
        "proxy-chunk",
        &format!("        location / {{ proxy_pass http://127.0.0.1:{b}; }}\n"),
    );
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Transfer-Encoding"), Some("chunked"));
    assert_eq!(r.body_str(), "until-close");
    // HTTP/1.0: the body ends with the connection.
    let mut c: TcpStream = s.connect();
    c.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    let all = crate::support::read_to_close(&mut c);
    let text = String::from_utf8_lossy(&all);
    assert!(text.ends_with("\r\n\r\nuntil-close"), "{text}");
    assert!(!text.contains("chunked"), "{text}");
}

/// A backend that keeps its connections open (HTTP/1.1) and answers
/// each request with the number of the connection it came on.
fn keepalive_backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for (n, s) in l.incoming().enumerate() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                loop {
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let close =
                            String::from_utf8_lossy(&buf[..end]).contains("Connection: close");
                        buf.drain(..end + 4);
                        let body = format!("conn {n}");
                        let a = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if s.write_all(a.as_bytes()).is_err() || close {
                            // Closed while idle in the proxy's pool: it
                            // must not be used again.
                            return;
                        }
                    }
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(k) => buf.extend_from_slice(&b[..k]),
                    }
                }
            });
        }
    });
    port
}

#[test]
fn keepalive_pool_reuses_the_upstream_connection() {
    let b = keepalive_backend();
    let s = Server::start(
        Prefix::new("proxy-keepalive"),
        &conf_with(&format!(
            "    upstream u {{ server 127.0.0.1:{b}; keepalive 2; }}\n\
             server {{\n        listen 127.0.0.1:PORT;\n        \
             location / {{ proxy_pass http://u; proxy_http_version 1.1; \
             proxy_set_header Connection \"\"; }}\n        \
             location /close {{ proxy_pass http://u; }}\n    }}\n"
        )),
    );
    let first = s.get("/a").body_str().to_string();
    assert!(first.starts_with("conn "), "{first}");
    for _ in 0..3 {
        assert_eq!(s.get("/a").body_str(), first);
    }
    // `Connection: close` upstream (the default headers): the backend
    // closes, the pooled connection is dropped, a new one each time.
    let c1 = s.get("/close").body_str().to_string();
    let c2 = s.get("/close").body_str().to_string();
    assert_ne!(c1, c2);
}

/// A backend that switches protocols and then echoes every byte.
fn upgrade_echo_backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            thread::spawn(move || {
                if read_head(&mut s).is_none() {
                    return;
                }
                let mut b = [0u8; 4096];
                let head = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n";
                if s.write_all(head).is_err() {
                    return;
                }
                loop {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if s.write_all(&b[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    port
}

#[test]
fn upgrade_becomes_a_byte_tunnel() {
    let b = upgrade_echo_backend();
    let s = proxy_to(
        "proxy-upgrade",
        &format!(
            "        location / {{ proxy_pass http://127.0.0.1:{b}; proxy_http_version 1.1; \
             proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; }}\n"
        ),
    );
    let mut c = s.connect();
    c.write_all(
        b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n",
    )
    .unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = c.read(&mut b).unwrap();
        assert!(n > 0, "closed early");
        got.extend_from_slice(&b[..n]);
    }
    let head = String::from_utf8_lossy(&got).to_string();
    assert!(
        head.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{head}"
    );
    assert!(head.contains("\r\nUpgrade: echo\r\n"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("\r\nconnection: upgrade\r\n"),
        "{head}"
    );
    for msg in [&b"ping"[..], b"second message"] {
        c.write_all(msg).unwrap();
        let mut echoed = Vec::new();
        while echoed.len() < msg.len() {
            let n = c.read(&mut b).unwrap();
            assert!(n > 0, "tunnel closed");
            echoed.extend_from_slice(&b[..n]);
        }
        assert_eq!(echoed, msg);
    }
}

/// An upgraded connection's access-log line: `$bytes_sent` is the head
/// and every tunnelled byte to the client, `$body_bytes_sent` the
/// tunnelled bytes only (as nginx counts them), `$sent_http_connection`
/// `upgrade`.
#[test]
fn upgrade_bytes_in_the_access_log() {
    let b = upgrade_echo_backend();
    let s = Server::start(
        Prefix::new("proxy-upgrade-log"),
        &conf_with(&format!(
            "    log_format b '$bytes_sent $body_bytes_sent $sent_http_connection';\n    server {{\n        \
             listen 127.0.0.1:PORT;\n        server_name localhost;\n        \
             location / {{ proxy_pass http://127.0.0.1:{b}; proxy_http_version 1.1; \
             proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection upgrade; \
             access_log logs/up.log b; }}\n    }}\n"
        )),
    );
    let mut c = s.connect();
    c.write_all(
        b"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n",
    )
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "closed early");
        got.extend_from_slice(&buf[..n]);
    }
    let head = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    c.write_all(b"twelve bytes").unwrap();
    while got.len() < head + 12 {
        let n = c.read(&mut buf).unwrap();
        assert!(n > 0, "tunnel closed");
        got.extend_from_slice(&buf[..n]);
    }
    drop(c);
    let log = s.prefix.dir.join("logs/up.log");
    let lines = wait_for_lines(&log, 1, |_| true);
    assert_eq!(lines, [format!("{} 12 upgrade", head + 12)]);
}

/// A proxied answer's filters see what the request's own phases found:
/// `$limit_conn_status` is the one its preaccess phase set.
#[test]
fn a_proxied_answer_sees_the_limit_status() {
    let b = backend(Duration::ZERO, echo);
    let s = Server::start(
        Prefix::new("proxy-limits"),
        &conf_with(&format!(
            "    limit_conn_zone $binary_remote_addr zone=pz:1m;\n    server {{\n        \
             listen 127.0.0.1:PORT;\n        server_name localhost;\n        \
             add_header X-Status $limit_conn_status always;\n        \
             location / {{ limit_conn pz 10; proxy_pass http://127.0.0.1:{b}; }}\n    }}\n"
        )),
    );
    let r = s.get("/x");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-Backend"), Some("yes"));
    assert_eq!(r.header("X-Status"), Some("PASSED"));
}

/// A backend that answers with `X-Accel-Redirect:` the request's `xar`
/// argument.
fn xar(req: &str) -> Option<Vec<u8>> {
    let line = req.lines().next().unwrap_or("");
    let target = line
        .split_once("xar=")
        .and_then(|(_, r)| r.split(' ').next())
        .unwrap_or("/");
    Some(
        format!("HTTP/1.0 200 OK\r\nX-Accel-Redirect: {target}\r\nContent-Length: 0\r\n\r\n")
            .into_bytes(),
    )
}

/// `X-Accel-Redirect`: an internal redirect as GET (`$request_method` says
/// so), its URI unescaped, and one naming a parent directory refused with
/// 404 (nginx's `ngx_http_parse_unsafe_uri`).
#[test]
fn accel_redirect_is_a_get_to_a_safe_unescaped_uri() {
    let port = backend(Duration::ZERO, xar);
    let s = proxy_to(
        "xar",
        &format!(
            "        location /p {{ proxy_pass http://127.0.0.1:{port}; }}\n\
             location /t/ {{ return 200 \"$request_method $uri\"; }}"
        ),
    );
    let post = "POST /p?xar=/t/a%20b HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    let r = crate::support::Response::parse(&s.raw(post.as_bytes())).unwrap();
    assert_eq!(r.body_str(), "GET /t/a b");
    for unsafe_uri in ["/t/..", "../t/a", "/t/.%2e"] {
        assert_eq!(
            s.get(&format!("/p?xar={unsafe_uri}")).status,
            404,
            "{unsafe_uri}"
        );
    }
}

/// A backend whose answer sets three cookies.
fn cookies(_: &str) -> Option<Vec<u8>> {
    Some(
        b"HTTP/1.0 200 OK\r\n\
          Set-Cookie: a=1; Domain=.Example.COM; Path=/app/x\r\n\
          Set-Cookie: b=2;path=/keep;secure\r\n\
          Set-Cookie: c=3;  Domain=other.org\r\n\
          Content-Length: 0\r\n\r\n"
            .to_vec(),
    )
}

/// `proxy_cookie_domain`, `_path` and `_flags` rewrite each `Set-Cookie`
/// as nginx's `ngx_http_proxy_rewrite_cookie`: the cookie's own dot kept,
/// the domain compared caselessly, a path prefix replaced, flags removed
/// and added; a value no rule changes passes byte for byte; `off` in a
/// location undoes the server's rules.
#[test]
fn set_cookie_domain_path_and_flags_rewritten() {
    let b = backend(Duration::ZERO, cookies);
    let s = proxy_to(
        "proxy-cookie",
        &format!(
            "        proxy_cookie_domain .example.com $server_name.test;\n\
             proxy_cookie_path /app/ /;\n\
             proxy_cookie_flags ~^B$ nosecure httponly samesite=lax;\n\
             location / {{ proxy_pass http://127.0.0.1:{b}; }}\n\
             location /off/ {{\n\
                 proxy_pass http://127.0.0.1:{b};\n\
                 proxy_cookie_domain off;\n\
                 proxy_cookie_path off;\n\
                 proxy_cookie_flags off;\n\
             }}\n"
        ),
    );
    let set_cookies = |path: &str| -> Vec<String> {
        let r = s.get(path);
        assert_eq!(r.status, 200);
        r.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
            .map(|(_, v)| v.clone())
            .collect()
    };
    assert_eq!(
        set_cookies("/"),
        [
            "a=1; Domain=.localhost.test; Path=/x",
            "b=2; path=/keep; HttpOnly; SameSite=Lax",
            "c=3;  Domain=other.org",
        ]
    );
    assert_eq!(
        set_cookies("/off/"),
        [
            "a=1; Domain=.Example.COM; Path=/app/x",
            "b=2;path=/keep;secure",
            "c=3;  Domain=other.org",
        ]
    );
}

/// A proxied answer's header filters see the values `set` gave the
/// request (`add_header` with a `set` variable).
#[test]
fn a_proxied_answer_sees_set_variables() {
    let b = backend(Duration::ZERO, echo);
    let s = proxy_to(
        "proxy-set-vars",
        &format!(
            "        location / {{ set $foo bar; add_header X-Foo \"[$foo]\"; \
             proxy_pass http://127.0.0.1:{b}; }}\n"
        ),
    );
    let r = s.get("/x");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-Foo"), Some("[bar]"));
}
