//! `map`: a variable looked up from another value: exact keys
//! (case-insensitive), `default`, regexes with captures (numbered and
//! named) used in the value, `hostnames` wildcards, values with
//! variables, maps of maps; used by `return`, `add_header` and `if`.
//! Each answer checked against nginx (`E2E_SERVER=nginx`).

use std::io::Write;

use crate::support::{Prefix, Server, conf_with, read_responses};

const MAPS: &str = r#"
    map $http_x_k $plain { default dflt; a A; B b_upper; "" empty; \default escaped; }
    map $uri $re {
        ~^/user/(?<id>\d+)$ "user $id";
        ~*^/CASE/(.*)$ "case $1";
        default "$uri-none";
    }
    map $http_host $host_kind {
        hostnames;
        .example.com ex;
        *.a.example.com deep;
        www.test.* tail;
        default other;
    }
    map $plain $chained { A from-a; default no-a; }
"#;

fn site() -> Server {
    let p = Prefix::new("map");
    p.write("html/f.txt", "file\n");
    Server::start(
        p,
        &conf_with(&format!(
            "{MAPS}    server {{\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location = /plain {{ return 200 \"[$plain]\\n\"; }}\n\
             location = /host {{ return 200 \"$host_kind\\n\"; }}\n\
             location = /chain {{ return 200 \"$chained\\n\"; }}\n\
             location = /f.txt {{ add_header X-Plain $plain; }}\n\
             location = /if {{ if ($chained = from-a) {{ return 200 \"yes\\n\"; }} return 200 \"no\\n\"; }}\n\
             location / {{ return 200 \"$re\\n\"; }}\n    }}\n"
        )),
    )
}

/// GET `path` with `headers`, one request per connection.
fn get(s: &Server, path: &str, headers: &str) -> (u16, String, Vec<(String, String)>) {
    let mut c = s.connect();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let r = read_responses(&mut c, 1, false).remove(0);
    (
        r.status,
        String::from_utf8_lossy(&r.body).into_owned(),
        r.headers.clone(),
    )
}

#[test]
fn exact_keys_default_and_escapes() {
    let s = site();
    for (header, want) in [
        ("X-K: a\r\n", "[A]\n"),
        ("X-K: b\r\n", "[b_upper]\n"),
        ("X-K: A\r\n", "[A]\n"),
        ("X-K: zzz\r\n", "[dflt]\n"),
        ("", "[empty]\n"),
        ("X-K: default\r\n", "[escaped]\n"),
    ] {
        assert_eq!(get(&s, "/plain", header).1, want, "{header:?}");
    }
}

#[test]
fn regexes_give_their_captures_to_the_value() {
    let s = site();
    assert_eq!(get(&s, "/user/42", "").1, "user 42\n");
    assert_eq!(get(&s, "/case/Abc", "").1, "case Abc\n");
    assert_eq!(get(&s, "/user/x", "").1, "/user/x-none\n");
}

#[test]
fn hostnames_wildcards_most_specific_first() {
    let s = site();
    for (host, want) in [
        ("example.com", "ex\n"),
        ("www.example.com", "ex\n"),
        ("b.a.example.com", "deep\n"),
        ("www.test.org", "tail\n"),
        ("example.com.", "ex\n"),
        ("elsewhere.net", "other\n"),
    ] {
        let mut c = s.connect();
        write!(
            c,
            "GET /host HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let r = read_responses(&mut c, 1, false).remove(0);
        assert_eq!(String::from_utf8_lossy(&r.body), want, "{host}");
    }
}

#[test]
fn maps_of_maps_in_if_and_add_header() {
    let s = site();
    assert_eq!(get(&s, "/chain", "X-K: a\r\n").1, "from-a\n");
    assert_eq!(get(&s, "/chain", "X-K: q\r\n").1, "no-a\n");
    assert_eq!(get(&s, "/if", "X-K: a\r\n").1, "yes\n");
    assert_eq!(get(&s, "/if", "").1, "no\n");
    // A static file: the header follows the request on every answer,
    // the memory cache's included.
    for (k, want) in [("a", "A"), ("b", "b_upper"), ("a", "A"), ("zz", "dflt")] {
        let (status, body, headers) = get(&s, "/f.txt", &format!("X-K: {k}\r\n"));
        assert_eq!((status, body.as_str()), (200, "file\n"));
        let got = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("x-plain"));
        assert_eq!(got.map(|(_, v)| v.as_str()), Some(want), "{k}");
    }
}

/// A map's value is looked up once per request and kept across internal
/// redirects, as nginx caches a variable; `volatile` looks it up again.
#[test]
fn values_are_kept_for_the_request_unless_volatile() {
    let p = Prefix::new("map-volatile");
    p.write("html/kept/.keep", "");
    p.write("html/fresh/.keep", "");
    let s = Server::start(
        p,
        &conf_with(
            "    map $uri $kept { /kept/ /kept/next; default later; }\n\
             map $uri $fresh { volatile; /fresh/ /fresh/next; default later; }\n\
             server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /kept/ { index $kept; }\n\
             location = /kept/next { return 200 \"$kept\\n\"; }\n\
             location /fresh/ { index $fresh; }\n\
             location = /fresh/next { return 200 \"$fresh\\n\"; }\n    }\n",
        ),
    );
    assert_eq!(get(&s, "/kept/", "").1, "/kept/next\n");
    assert_eq!(get(&s, "/fresh/", "").1, "later\n");
}
