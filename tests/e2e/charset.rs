//! `charset` with `source_charset`: static files recoded through a
//! `charset_map`, ranges on a recoding that keeps the length, and Debian's
//! maps (/etc/nginx/koi-utf, koi-win, win-utf) loading.

use crate::support::{Prefix, Response, Server, conf_with};

const DEBIAN_MAPS: [&str; 3] = [
    "/etc/nginx/koi-utf",
    "/etc/nginx/koi-win",
    "/etc/nginx/win-utf",
];

/// The site; `debian_maps` adds the includes of Debian's maps and the
/// locations that need them (nginx refuses a recoding without a map).
fn site(debian_maps: bool) -> Server {
    let p = Prefix::new("charset");
    p.write("html/one/t.html", "aXbX\u{7f}");
    p.write("html/koi/k.html", b"\xc1b");
    p.write("html/utf/u.html", "\u{430}b\u{2603}");
    let (includes, locations) = if debian_maps {
        let includes: String = DEBIAN_MAPS
            .iter()
            .map(|m| format!("    include {m};\n"))
            .collect();
        let locations = "location /koi/ { charset utf-8; source_charset koi8-r; }\n        \
                         location /utf/ { charset windows-1251; source_charset utf-8; }";
        (includes, locations)
    } else {
        (String::new(), "")
    };
    let conf = conf_with(&format!(
        r#"{includes}
    charset_map B A {{ 58 59; }}
    server {{
        listen 127.0.0.1:PORT;
        root html;
        location /one/ {{ charset A; source_charset B; }}
        {locations}
    }}"#
    ));
    Server::start(p, &conf)
}

fn get(s: &Server, path: &str, extra: &str) -> Response {
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n");
    Response::parse(&s.raw(req.as_bytes())).unwrap()
}

#[test]
fn single_byte_recoding_keeps_ranges() {
    let s = site(false);
    for _ in 0..3 {
        let r = s.get("/one/t.html");
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"aYbY\x7f");
        assert_eq!(r.header("Content-Type"), Some("text/html; charset=A"));
        assert_eq!(r.header("Accept-Ranges"), Some("bytes"));
    }
    let r = get(&s, "/one/t.html", "Range: bytes=1-3\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.body, b"YbY");
    assert_eq!(r.header("Content-Range"), Some("bytes 1-3/5"));
}

#[test]
fn debian_maps_load_and_recode_to_and_from_utf8() {
    if !DEBIAN_MAPS.iter().all(|m| std::path::Path::new(m).exists()) {
        eprintln!("skipped: Debian's charset maps are not installed");
        return;
    }
    let s = site(true);
    for _ in 0..3 {
        let r = s.get("/koi/k.html");
        assert_eq!(r.status, 200);
        // koi8-r 0xC1 is U+0430.
        assert_eq!(r.body, "\u{430}b".as_bytes());
        assert_eq!(r.header("Content-Type"), Some("text/html; charset=utf-8"));
        let r = s.get("/utf/u.html");
        // U+0430 is 0xE0 in windows-1251; the snowman has no byte there.
        assert_eq!(r.body, b"\xe0b&#9731;");
    }
}

#[test]
fn recoding_without_a_map_is_refused() {
    let p = Prefix::new("charset-nomap");
    p.conf(&conf_with(
        "    server { listen 127.0.0.1:1; location / { charset A; source_charset B; } }",
    ));
    let out = p.run(&["-t", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[emerg] no \"charset_map\" between the charsets \"B\" and \"A\""),
        "{err}"
    );
}
