//! `valid_referers` and `$invalid_referer`: none, blocked, server_names,
//! exact names with URI parts, wildcards and regexes.

use crate::support::{Prefix, Response, Server, conf_with};

const SERVERS: &str = r#"
server {
    listen 127.0.0.1:PORT;
    server_name localhost ~^re\d+$;
    location /simple { valid_referers www.example.org; return 200 "[$invalid_referer]"; }
    location /none { valid_referers none www.example.org/uri; return 200 "[$invalid_referer]"; }
    location /blocked { valid_referers blocked *.example.com; return 200 "[$invalid_referer]"; }
    location /sn { valid_referers server_names; return 200 "[$invalid_referer]"; }
    location /wc { valid_referers www.example.* ~\.net$; return 200 "[$invalid_referer]"; }
    location /unset { return 200 "[$invalid_referer]"; }
}
"#;

fn ask(s: &Server, path: &str, referer: Option<&str>) -> bool {
    let r = match referer {
        Some(r) => format!("GET {path} HTTP/1.0\r\nHost: localhost\r\nReferer: {r}\r\n\r\n"),
        None => format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n"),
    };
    let resp = Response::parse(&s.raw(r.as_bytes())).unwrap();
    assert_eq!(resp.status, 200);
    match resp.body_str() {
        "[]" => true,
        "[1]" => false,
        other => panic!("unexpected body {other:?}"),
    }
}

#[test]
fn referers_as_nginx_judges_them() {
    let s = Server::start(Prefix::new("referer"), &conf_with(SERVERS));
    let cases: &[(&str, Option<&str>, bool)] = &[
        ("/simple", Some("http://www.example.org"), true),
        ("/simple", Some("https://WWW.example.org:8080/x"), true),
        ("/simple", Some("www.example.org"), false),
        ("/simple", None, false),
        ("/simple", Some("http://www.example.org.evil"), false),
        ("/none", None, true),
        ("/none", Some(""), false),
        ("/none", Some("http://www.example.org/urix"), true),
        ("/none", Some("http://www.example.org/ur"), false),
        ("/blocked", Some("foobar"), true),
        ("/blocked", Some("http://a.b.example.com/"), true),
        ("/blocked", Some("http://example.com/"), false),
        ("/sn", Some("http://LOCALHOST/x"), true),
        ("/sn", Some("http://re42"), true),
        ("/sn", Some("http://re42x"), false),
        ("/wc", Some("http://www.example.co.uk"), true),
        ("/wc", Some("http://other.example.net"), true),
        ("/wc", Some("http://other.example.org"), false),
        ("/unset", Some("anything"), true),
    ];
    for &(path, referer, want) in cases {
        assert_eq!(ask(&s, path, referer), want, "{path} {referer:?}");
    }
    let long = format!("http://www.example.org/{}", "a".repeat(300));
    assert!(ask(&s, "/simple", Some(&long)), "a long URI is fine");
    let long_host = format!("http://{}.example.com", "a".repeat(300));
    assert!(
        !ask(&s, "/blocked", Some(&long_host)),
        "a host over 256 bytes is not"
    );
}
