//! Tests of `log_format` compilation and rendering.
//!
//! The expected lines were produced by Debian's nginx 1.22.1 with
//! `log_format all '<every variable, separated by |>'` and raw requests sent
//! over a socket (see the request in each test); only `$pid`, which differs
//! per run, is substituted.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;
use crate::record::{Headers, NoHeaders};

const ALL: &str = "$remote_addr|$remote_port|$remote_user|$time_local|$time_iso8601|$msec|\
    $request|$request_method|$request_uri|$uri|$args|$query_string|$server_protocol|$status|\
    $body_bytes_sent|$bytes_sent|$request_length|$request_time|$http_user_agent|$http_x_foo|\
    $sent_http_content_type|$sent_http_x_none|$connection|$connection_requests|$server_name|\
    $server_addr|$server_port|$host|$scheme|$pipe|$pid|$http_cookie|$http_x_forwarded_for|${uri}x";

fn at(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn addr(s: &str) -> SocketAddr {
    s.parse()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
}

/// The defaults of the requests below; each test overrides what differs.
fn base<'a>(req: &'a dyn Headers, resp: &'a dyn Headers) -> RequestLog<'a> {
    RequestLog {
        remote: addr("127.0.0.1:36932"),
        conn_remote: None,
        local: addr("127.0.0.1:27431"),
        request_line: Some(b"GET /missing HTTP/1.1"),
        method: Some(b"GET"),
        request_uri: Some(b"/missing"),
        uri: Some(b"/missing"),
        args: None,
        protocol: Some(b"HTTP/1.1"),
        request_headers: req,
        response_headers: resp,
        status: 404,
        bytes_sent: 303,
        body_bytes_sent: 153,
        request_length: 61,
        start: at(1_796_037_017_380),
        end: at(1_796_037_017_380),
        connection: 2,
        connection_requests: 1,
        server_name: b"localhost",
        host: Some(b"localhost"),
        https: false,
        pipelined: false,
        request_id: None,
        userid: None,
        upstream: None,
        ssl: None,
        modules: None,
        proxy_protocol: None,
    }
}

fn render(fmt: &str, escape: LogEscape, rec: &RequestLog<'_>) -> String {
    let f = LogFormat::compile(fmt, escape).expect("format compiles");
    let mut out = Vec::new();
    f.render(rec, &mut TimeCache::utc(), &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn pid_line(line: &str) -> String {
    line.replace("|8069|", &format!("|{}|", std::process::id()))
}

#[test]
fn every_variable_like_nginx() {
    // GET /index.html?a=1&b=%22x HTTP/1.1, Host: LocalHost:27431, the
    // User-Agent below, X-Foo: one, X-Foo: two, Cookie: a=1, Cookie: b=2,
    // X-Forwarded-For twice, Authorization: Basic dXNlcjpwYXNz.
    let req = vec![
        ("Host", b"LocalHost:27431".as_slice()),
        ("User-Agent", b"Moz \"q\" \\ \x01\x7f\xc3\xa9 end"),
        ("X-Foo", b"one"),
        ("X-Foo", b"two"),
        ("Cookie", b"a=1"),
        ("Cookie", b"b=2"),
        ("X-Forwarded-For", b"1.1.1.1"),
        ("X-Forwarded-For", b"2.2.2.2"),
        ("Authorization", b"Basic dXNlcjpwYXNz"),
        ("Connection", b"close"),
    ];
    let resp = vec![("Content-Type", "text/html"), ("Content-Length", "6")];
    let rec = RequestLog {
        remote: addr("127.0.0.1:36926"),
        conn_remote: None,
        request_line: Some(b"GET /index.html?a=1&b=%22x HTTP/1.1"),
        request_uri: Some(b"/index.html?a=1&b=%22x"),
        uri: Some(b"/index.html"),
        args: Some(b"a=1&b=%22x"),
        status: 200,
        bytes_sent: 235,
        body_bytes_sent: 6,
        request_length: 250,
        start: at(1_796_037_017_379),
        end: at(1_796_037_017_379),
        connection: 1,
        ..base(&req, &resp)
    };
    let nginx = r#"127.0.0.1|36926|user|30/Nov/2026:11:10:17 +0000|2026-11-30T11:10:17+00:00|1796037017.379|GET /index.html?a=1&b=%22x HTTP/1.1|GET|/index.html?a=1&b=%22x|/index.html|a=1&b=%22x|a=1&b=%22x|HTTP/1.1|200|6|235|250|0.000|Moz \x22q\x22 \x5C \x01\x7F\xC3\xA9 end|one|text/html|-|1|1|localhost|127.0.0.1|27431|localhost|http|.|8069|a=1; b=2|1.1.1.1, 2.2.2.2|/index.htmlx"#;
    assert_eq!(render(ALL, LogEscape::Default, &rec), pid_line(nginx));

    // The same request in nginx's `combined`.
    let combined = r#"127.0.0.1 - user [30/Nov/2026:11:10:17 +0000] "GET /index.html?a=1&b=%22x HTTP/1.1" 200 6 "-" "Moz \x22q\x22 \x5C \x01\x7F\xC3\xA9 end""#;
    assert_eq!(render(COMBINED, LogEscape::Default, &rec), combined);
    let mut out = Vec::new();
    LogFormat::combined().render(&rec, &mut TimeCache::utc(), &mut out);
    assert_eq!(out, combined.as_bytes());
}

#[test]
fn missing_values_like_nginx() {
    let resp = vec![("Content-Type", "text/html")];
    let rec = base(&NoHeaders, &resp);
    let nginx = "127.0.0.1|36932|-|30/Nov/2026:11:10:17 +0000|2026-11-30T11:10:17+00:00|1796037017.380|GET /missing HTTP/1.1|GET|/missing|/missing|-|-|HTTP/1.1|404|153|303|61|0.000|-|-|text/html|-|2|1|localhost|127.0.0.1|27431|localhost|http|.|8069|-|-|/missingx";
    assert_eq!(render(ALL, LogEscape::Default, &rec), pid_line(nginx));
    // `garbage\r\n\r\n`: nginx logs the line it read and nothing else.
    let bad = RequestLog {
        request_line: Some(b"garbage"),
        method: None,
        request_uri: None,
        uri: None,
        protocol: None,
        status: 400,
        ..rec
    };
    let c = r#"127.0.0.1 - - [30/Nov/2026:11:10:17 +0000] "garbage" 400 153 "-" "-""#;
    assert_eq!(render(COMBINED, LogEscape::Default, &bad), c);
}

#[test]
fn json_and_none_like_nginx() {
    let js = r#"{"u":"$http_user_agent","r":"$remote_user","a":"$args","s":$status}"#;
    let req = vec![(
        "User-Agent",
        b"Moz \"q\" \\ \x01\x7f\xc3\xa9 end".as_slice(),
    )];
    let rec = RequestLog {
        args: Some(b"a=1&b=%22x"),
        status: 200,
        ..base(&req, &NoHeaders)
    };
    let got = render(js, LogEscape::Json, &rec);
    assert_eq!(
        got,
        "{\"u\":\"Moz \\\"q\\\" \\\\ \\u0001\x7f\u{e9} end\",\"r\":\"\",\"a\":\"a=1&b=%22x\",\"s\":200}"
    );
    assert_eq!(
        render(js, LogEscape::Json, &base(&NoHeaders, &NoHeaders)),
        r#"{"u":"","r":"","a":"","s":404}"#
    );
    let none = render("$http_user_agent|$args", LogEscape::None, &rec);
    assert_eq!(none, "Moz \"q\" \\ \x01\x7f\u{e9} end|a=1&b=%22x");
    assert_eq!(
        render(
            "$http_user_agent|$args",
            LogEscape::None,
            &base(&NoHeaders, &NoHeaders)
        ),
        "|"
    );
}

#[test]
fn present_but_empty_header_is_empty() {
    let req = vec![("User-Agent", "")];
    assert_eq!(
        render(
            "[$http_user_agent]",
            LogEscape::Default,
            &base(&req, &NoHeaders)
        ),
        "[]"
    );
}

#[test]
fn times_and_counters() {
    let rec = RequestLog {
        start: at(1_000_999),
        end: at(1_003_123),
        status: 0,
        pipelined: true,
        https: true,
        host: None,
        server_name: b"",
        remote: addr("[::1]:5"),
        local: addr("[2001:db8::1]:443"),
        ..base(&NoHeaders, &NoHeaders)
    };
    let got = render(
        "$request_time $msec $status $pipe $scheme $https [$host] $remote_addr $server_addr $server_port $time_iso8601",
        LogEscape::Default,
        &rec,
    );
    assert_eq!(
        got,
        "2.124 1003.123 000 p https on [] ::1 2001:db8::1 443 1970-01-01T00:16:43+00:00"
    );
    // A clock that went backwards logs 0.000, as nginx clamps.
    let back = RequestLog {
        start: at(5_000),
        end: at(4_000),
        ..rec
    };
    assert_eq!(render("$request_time", LogEscape::Default, &back), "0.000");
}

#[test]
fn sent_headers_and_joins() {
    let resp = vec![
        ("Cache-Control", "a"),
        ("Cache-Control", "b"),
        ("X-One", "1"),
        ("X-One", "2"),
    ];
    let got = render(
        "$sent_http_cache_control|$sent_http_x_one|$sent_http_",
        LogEscape::Default,
        &base(&NoHeaders, &resp),
    );
    assert_eq!(got, "a, b|1|-");
}

#[test]
fn args_cookies_and_is_args() {
    let req = vec![("Cookie", "sid=abc; x=\"q\"")];
    let rec = RequestLog {
        args: Some(b"log=1&x=%20"),
        ..base(&req, &NoHeaders)
    };
    let got = render(
        "$arg_log|$arg_x|$arg_y|$cookie_sid|$cookie_x|$cookie_z|$is_args",
        LogEscape::Default,
        &rec,
    );
    assert_eq!(got, r"1|%20|-|abc|\x22q\x22|-|?");
}

#[test]
fn compile_errors_like_nginx() {
    // Each message is what `nginx -t` printed for the same format.
    let err = |f: &str| LogFormat::compile(f, LogEscape::Default).err();
    assert_eq!(
        err("$foo"),
        Some(FormatError::UnknownVariable("foo".into()))
    );
    assert_eq!(err("a$"), Some(FormatError::InvalidParameter("$".into())));
    assert_eq!(
        err("${uri"),
        Some(FormatError::MissingBracket("uri".into()))
    );
    assert_eq!(
        err("${}"),
        Some(FormatError::InvalidParameter("${}".into()))
    );
    assert_eq!(err("$1x"), Some(FormatError::UnknownVariable("1x".into())));
    assert_eq!(
        err("$uri$"),
        Some(FormatError::InvalidParameter("$".into()))
    );
    assert_eq!(
        err("a$-b"),
        Some(FormatError::InvalidParameter("$-b".into()))
    );
    assert_eq!(err("${a-b}"), Some(FormatError::MissingBracket("a".into())));
    assert_eq!(err("${"), Some(FormatError::InvalidParameter("${".into())));
    assert_eq!(err("$http_"), None);
    assert_eq!(err(""), None);
    assert_eq!(err("${status}é$Status"), None);
}

#[test]
fn parts_compile_separately() {
    // nginx: `log_format x '$uri' 'x';` is `$uri` then `x`, not `$urix`.
    let f = LogFormat::compile_parts(&["$uri", "x"], LogEscape::Default).expect("compiles");
    let mut out = Vec::new();
    f.render(
        &base(&NoHeaders, &NoHeaders),
        &mut TimeCache::utc(),
        &mut out,
    );
    assert_eq!(out, b"/missingx");
}

#[test]
fn compile_never_panics_at_any_split() {
    // Every prefix and suffix of a tricky format either compiles or errs.
    let s = "a${uri}b$status${x_y$-$http_X-Y\"}é$";
    for i in 0..=s.len() {
        if s.is_char_boundary(i) {
            let _ = LogFormat::compile(&s[..i], LogEscape::Json);
            let _ = LogFormat::compile_parts(&[&s[..i], &s[i..]], LogEscape::None);
        }
    }
}

#[test]
fn literal_text_is_not_escaped() {
    let got = render(
        "\"\\\x01 $status",
        LogEscape::Default,
        &base(&NoHeaders, &NoHeaders),
    );
    assert_eq!(got, "\"\\\x01 404");
}

#[test]
fn render_reuses_the_buffer() {
    let f = LogFormat::combined();
    let mut out = Vec::with_capacity(1024);
    let ptr = out.as_ptr();
    let mut t = TimeCache::utc();
    for _ in 0..100 {
        out.clear();
        f.render(&base(&NoHeaders, &NoHeaders), &mut t, &mut out);
    }
    assert_eq!(out.as_ptr(), ptr);
}

#[test]
fn accepted_variables_without_values() {
    let rec = base(&NoHeaders, &NoHeaders);
    let f =
        "$upstream_response_time|$upstream_http_x|$gzip_ratio|$content_type|$binary_remote_addr";
    assert_eq!(
        render(f, LogEscape::Default, &rec),
        r"-|-|-|-|\x7F\x00\x00\x01"
    );
    assert_eq!(
        render(f, LogEscape::Json, &rec),
        "||||\x7f\\u0000\\u0000\\u0001"
    );
    assert!(LogFormat::compile("$upstream_nope", LogEscape::Default).is_err());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    assert_eq!(render("$hostname", LogEscape::None, &rec), host.trim_end());
}

/// Reverses the default escaping: `\xHH` → byte.
fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && s.get(i + 1) == Some(&b'x') && i + 3 < s.len() {
            let hex = std::str::from_utf8(&s[i + 2..i + 4]).unwrap_or("");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 4;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

proptest::proptest! {
    #[test]
    fn default_escape_is_printable_and_reversible(v in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
        let req = vec![(b"X-V".as_slice(), v.as_slice())];
        let f = LogFormat::compile("$http_x_v", LogEscape::Default).expect("compiles");
        let mut out = Vec::new();
        f.render(&base(&req, &NoHeaders), &mut TimeCache::utc(), &mut out);
        proptest::prop_assert!(out.iter().all(|&b| (0x20..0x7f).contains(&b) && b != b'"'));
        proptest::prop_assert_eq!(unescape(&out), v);
    }

    #[test]
    fn literal_formats_render_verbatim(s in "[^$]{0,40}") {
        let f = LogFormat::compile(&s, LogEscape::Default).expect("no variables");
        let mut out = Vec::new();
        f.render(&base(&NoHeaders, &NoHeaders), &mut TimeCache::utc(), &mut out);
        proptest::prop_assert_eq!(out, s.as_bytes());
    }

    #[test]
    fn any_format_compiles_or_errs_without_panic(s in "(\\$|\\{|\\}|[a-z_]|[^a-z])*") {
        if let Ok(f) = LogFormat::compile(&s, LogEscape::Json) {
            let mut out = Vec::new();
            f.render(&base(&NoHeaders, &NoHeaders), &mut TimeCache::utc(), &mut out);
        } else {
            proptest::prop_assert!(s.contains('$'));
        }
    }
}

#[test]
fn realip_remote_addr_is_the_connections_address() {
    let f = "$remote_addr:$remote_port $realip_remote_addr:$realip_remote_port";
    // Without realip both are the connection's.
    let rec = base(&NoHeaders, &NoHeaders);
    assert_eq!(
        render(f, LogEscape::Default, &rec),
        "127.0.0.1:36932 127.0.0.1:36932"
    );
    // realip (PROXY protocol, X-Real-IP...) replaced `$remote_addr`.
    let rec = RequestLog {
        remote: addr("192.0.2.1:5000"),
        conn_remote: Some(addr("127.0.0.5:41000")),
        ..base(&NoHeaders, &NoHeaders)
    };
    assert_eq!(
        render(f, LogEscape::Default, &rec),
        "192.0.2.1:5000 127.0.0.5:41000"
    );
}

/// Variables the configuration defines compile where declared, and are
/// rendered by the request's `ModuleVars`; without one, as not found.
#[test]
fn declared_variables_are_asked_of_the_request() {
    struct Vars;
    impl crate::record::ModuleVars for Vars {
        fn value(&self, name: &str, out: &mut String) -> bool {
            out.push_str(name);
            name != "empty"
        }
    }
    let declared = ["anon".to_string(), "empty".to_string()];
    assert_eq!(
        LogFormat::compile_declared(&["$anon"], LogEscape::Default, &[]).err(),
        Some(FormatError::UnknownVariable("anon".into()))
    );
    let f = LogFormat::compile_declared(&["$Anon|$empty"], LogEscape::Default, &declared).unwrap();
    let mut out = Vec::new();
    let mut time = TimeCache::utc();
    f.render(&base(&NoHeaders, &NoHeaders), &mut time, &mut out);
    assert_eq!(out, b"-|-");
    let vars = Vars;
    let with = RequestLog {
        modules: Some(&vars),
        ..base(&NoHeaders, &NoHeaders)
    };
    out.clear();
    f.render(&with, &mut time, &mut out);
    assert_eq!(out, b"anon|-");
    // The configuration's table is in index order, not sorted.
    let table = ["zz".to_string(), "yy".to_string(), "aa".to_string()];
    assert!(LogFormat::compile_declared(&["$zz $aa $yy"], LogEscape::Default, &table).is_ok());
}
