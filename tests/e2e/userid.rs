//! The userid filter: the cookie nginx sets (name, base64 identifier with
//! its mark, expires, domain, path, flags, P3P), kept when the client sends
//! it back, `$uid_got`/`$uid_set`; on memory-cache hits too.

use crate::support::{Prefix, Response, Server, conf_with};

const SERVERS: &str = r#"
server {
    listen 127.0.0.1:PORT;
    root html;
    userid on;
    userid_name test;
    userid_domain example.org;
    userid_path /p;
    userid_expires max;
    location / { userid_flags secure httponly samesite=lax; }
    location /marked { userid_mark X; userid_p3p 'CP="X"'; }
    location /vars { return 200 "got=$uid_got set=$uid_set"; }
    location /v1 { userid v1; userid_service 7; return 200 "$uid_set"; }
    location /log { userid log; return 200 "got=$uid_got set=$uid_set"; }
}
"#;

fn site() -> Server {
    let p = Prefix::new("userid");
    p.write("html/a.txt", "a\n");
    p.write("html/marked/m.txt", "m\n");
    Server::start(p, &conf_with(SERVERS))
}

fn with_cookie(s: &Server, path: &str, cookie: &str) -> Response {
    let r = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\nCookie: {cookie}\r\n\r\n");
    Response::parse(&s.raw(r.as_bytes())).unwrap()
}

/// The 22 characters of base64 and what follows, from `test=...;`.
fn uid_text(set_cookie: &str) -> &str {
    let v = set_cookie.strip_prefix("test=").expect("name");
    &v[..v.find(';').expect("attributes")]
}

#[test]
fn cookie_format_as_nginx() {
    let s = site();
    // Second and third identical GETs are memory-cache hits: the cookie
    // comes with each.
    for _ in 0..3 {
        let r = s.get("/a.txt");
        assert_eq!(r.status, 200);
        let c = r.header("set-cookie").expect("Set-Cookie");
        let uid = uid_text(c);
        assert_eq!(uid.len(), 24, "{c}");
        assert!(uid.ends_with("=="), "{c}");
        assert_eq!(
            &c[5 + 24..],
            "; expires=Thu, 31-Dec-37 23:55:55 GMT; domain=example.org; path=/p; secure; httponly; samesite=lax"
        );
        // Version 2: the first word is the server's address (127.0.0.1).
        assert!(uid.starts_with("fwAAA"), "{c}");
    }
    let m = s.get("/marked/m.txt");
    let c = m.header("set-cookie").expect("Set-Cookie");
    assert_eq!(&uid_text(c)[22..], "X=", "{c}");
    assert_eq!(m.header("p3p"), Some("CP=\"X\""));
}

#[test]
fn a_returned_cookie_is_kept_and_marked() {
    let s = site();
    let fresh = s.get("/a.txt");
    let uid = uid_text(fresh.header("set-cookie").unwrap()).to_string();
    let again = with_cookie(&s, "/a.txt", &format!("test={uid}"));
    assert_eq!(again.header("set-cookie"), None, "no mark: nothing to set");
    // Without the mark the cookie is set again, with it, as sent.
    let marked = with_cookie(&s, "/marked/m.txt", &format!("test={uid}"));
    let c = marked.header("set-cookie").expect("re-marked");
    assert_eq!(uid_text(c), format!("{}X=", &uid[..22]));
    let done = with_cookie(&s, "/marked/m.txt", &format!("test={}X=", &uid[..22]));
    assert_eq!(done.header("set-cookie"), None);
}

#[test]
fn variables() {
    let s = site();
    let r = s.get("/vars");
    let body = r.body_str().to_string();
    let set = body.strip_prefix("got= set=test=").expect(&body);
    assert_eq!(set.len(), 32);
    // The cookie sent carries the identifier the variable printed.
    let cookie = uid_text(r.header("set-cookie").unwrap()).to_string();
    let got = with_cookie(&s, "/vars", &format!("test={cookie}"));
    assert_eq!(got.body_str(), format!("got=test={set} set="));
    // v1: the service first, in host order (printed as the number).
    let v1 = s.get("/v1");
    assert!(
        v1.body_str().starts_with("test=00000007"),
        "{}",
        v1.body_str()
    );
    // log: the cookie is read, never set.
    let log = with_cookie(&s, "/log", &format!("test={cookie}"));
    assert_eq!(log.body_str(), format!("got=test={set} set="));
    assert_eq!(log.header("set-cookie"), None);
    // A cookie too short or not base64 is ignored (and a new one set).
    let bad = with_cookie(&s, "/vars", "test=short");
    assert!(bad.body_str().starts_with("got= set=test="));
}

#[test]
fn access_log_variables() {
    let p = Prefix::new("userid-log");
    p.write("html/a.txt", "a\n");
    p.write("html/ro/r.txt", "r\n");
    let s = Server::start(
        p,
        &conf_with(
            "log_format uid '$uri $uid_got $uid_set';\n\
             server { listen 127.0.0.1:PORT; root html; access_log logs/uid.log uid;\n\
             userid on; location /ro/ { userid log; } }",
        ),
    );
    let fresh = s.get("/a.txt");
    let c = fresh.header("set-cookie").expect("Set-Cookie");
    let cookie = &c[..c.find(';').unwrap()];
    with_cookie(&s, "/ro/r.txt", cookie);
    let lines = crate::support::wait_for_lines(&s.prefix.dir.join("logs/uid.log"), 2, |_| true);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let set = lines[0].strip_prefix("/a.txt - uid=").expect(&lines[0]);
    assert_eq!(set.len(), 32, "{lines:?}");
    assert_eq!(lines[1], format!("/ro/r.txt uid={set} -"));
}
