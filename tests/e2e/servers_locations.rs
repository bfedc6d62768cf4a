//! Virtual servers chosen by Host in nginx's order, and locations chosen by
//! URI in nginx's order (`=`, longest prefix, `^~`, regexes in order, nested).

use crate::support::{Prefix, Response, Server, read_responses};
use std::io::Write;

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    access_log off;
    server {
        listen 127.0.0.1:PORT;
        return 200 "first";
    }
    server {
        listen 127.0.0.1:PORT default_server;
        server_name "";
        return 200 "default";
    }
    server {
        listen 127.0.0.1:PORT;
        server_name example.com www.example.com;
        return 200 "exact";
    }
    server {
        listen 127.0.0.1:PORT;
        server_name *.example.com;
        return 200 "star-suffix";
    }
    server {
        listen 127.0.0.1:PORT;
        server_name *.deep.example.com;
        return 200 "longer-star";
    }
    server {
        listen 127.0.0.1:PORT;
        server_name www.example.*;
        return 200 "star-prefix";
    }
    server {
        listen 127.0.0.1:PORT;
        server_name ~^(?<sub>[a-z]+)\.regex\.test$;
        return 200 "regex";
    }
    server {
        listen 127.0.0.1:PORT;
        server_name locations.test;
        location = / { return 200 "exact-root"; }
        location / { return 200 "prefix-root"; }
        location /docs/ { return 200 "docs"; }
        location /docs/api/ { return 200 "docs-api"; }
        location ^~ /static/ { return 200 "static-noregex"; }
        location ~ \.php$ { return 200 "php-regex"; }
        location ~* \.JPG$ { return 200 "jpg-regex-ci"; }
        location /nest/ {
            location ~ \.txt$ { return 200 "nested-regex"; }
            return 200 "nest";
        }
        location ~ ^/docs/.*\.php$ { return 200 "docs-php-second-regex"; }
    }
}
"#;

fn site() -> Server {
    Server::start(Prefix::new("vhosts"), CONF)
}

fn body(s: &Server, host: &str, path: &str) -> String {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    Response::parse(&s.raw(raw.as_bytes()))
        .unwrap()
        .body_str()
        .to_string()
}

#[test]
fn server_selection_order() {
    let s = site();
    assert_eq!(body(&s, "example.com", "/"), "exact");
    assert_eq!(body(&s, "WWW.Example.COM", "/"), "exact");
    assert_eq!(body(&s, "a.example.com", "/"), "star-suffix");
    assert_eq!(body(&s, "x.deep.example.com", "/"), "longer-star");
    assert_eq!(body(&s, "www.example.org", "/"), "star-prefix");
    assert_eq!(body(&s, "abc.regex.test", "/"), "regex");
    assert_eq!(body(&s, "unknown.test", "/"), "default");
    assert_eq!(body(&s, "example.com.", "/"), "exact", "trailing dot");
    assert_eq!(body(&s, "example.com:8080", "/"), "exact", "port stripped");
}

/// A request without Host is looked up by the empty name, which the first
/// server has implicitly (nginx's default `server_name ""`): the first server
/// answers, not the default_server.
#[test]
fn http10_without_host_matches_the_empty_name() {
    let s = site();
    let r = Response::parse(&s.raw(b"GET / HTTP/1.0\r\n\r\n")).unwrap();
    assert_eq!(r.body_str(), "first");
}

#[test]
fn location_order() {
    let s = site();
    let h = "locations.test";
    assert_eq!(body(&s, h, "/"), "exact-root");
    assert_eq!(body(&s, h, "/other"), "prefix-root");
    assert_eq!(body(&s, h, "/docs/x"), "docs");
    assert_eq!(body(&s, h, "/docs/api/x"), "docs-api");
    assert_eq!(body(&s, h, "/static/x.php"), "static-noregex");
    assert_eq!(body(&s, h, "/docs/x.php"), "php-regex", "first regex wins");
    assert_eq!(body(&s, h, "/a/b.jpg"), "jpg-regex-ci");
    assert_eq!(body(&s, h, "/nest/a.txt"), "nested-regex");
    assert_eq!(body(&s, h, "/nest/a.html"), "nest");
}

/// `listen ... deferred` (TCP_DEFER_ACCEPT): connections whose request
/// arrives with or right after the handshake are served as usual, one per
/// connection and several on a kept-alive one.
#[test]
fn deferred_listen_serves() {
    let p = Prefix::new("deferred-listen");
    p.write("html/a.txt", "deferred\n");
    let s = Server::start(
        p,
        r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 64; }
http {
    include mime.types;
    access_log off;
    server { listen 127.0.0.1:PORT deferred; root html; }
}
"#,
    );
    for _ in 0..3 {
        let r = s.get("/a.txt");
        assert_eq!(r.status_line, "HTTP/1.1 200 OK");
        assert_eq!(r.body, b"deferred\n");
    }
}

/// Static answers are memoised per worker by (server, URI) and the server
/// by (address, Host): on one kept-alive connection, the same URI asked
/// of two server blocks in turn, their Hosts spelt with a port, in
/// uppercase or with a trailing dot, and with no Host over HTTP/1.0,
/// always comes from the right block's root.
#[test]
fn the_same_uri_alternating_between_servers_keeps_its_root() {
    let p = Prefix::new("srv-routes");
    p.write("one/a.txt", "one");
    p.write("two/a.txt", "two");
    let conf = crate::support::conf_with(
        "    server { listen 127.0.0.1:PORT; server_name one.test; root one; }
    server { listen 127.0.0.1:PORT; server_name two.test; root two; }",
    );
    let s = Server::start(p, &conf);
    let mut c = s.connect();
    let hosts = [
        ("two.test", "two"),
        ("one.test", "one"),
        ("TWO.TEST", "two"),
        ("one.test.", "one"),
        ("two.test.:80", "two"),
        ("other.test", "one"),
        ("two.test", "two"),
        ("two.test", "two"),
    ];
    for _ in 0..2 {
        for (host, want) in hosts {
            c.write_all(format!("GET /a.txt HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
                .unwrap();
            let r = read_responses(&mut c, 1, false);
            assert_eq!(
                r.first().map(Response::body_str),
                Some(want),
                "Host: {host}"
            );
        }
    }
    c.write_all(b"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let r = read_responses(&mut c, 1, false);
    assert_eq!(r.first().map(Response::body_str), Some("one"), "no Host");
}
