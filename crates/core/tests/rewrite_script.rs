//! The rewrite module's interpreter on configurations read by the real
//! parser: the lines `rewrite_log` and `uninitialized_variable_warn` leave
//! for the error log (the engine writes them), captures escaped as nginx
//! escapes them in arguments.

use peregrine_conf::model::LogLevel;
use std::sync::Arc;
use std::time::SystemTime;

use peregrine_core::fixtures::{body_bytes, conn};
use peregrine_core::{HttpCore, Method, RequestView};

fn core(conf: &str) -> HttpCore {
    let text = format!(
        "events {{}}\nhttp {{ access_log off; server {{ listen 127.0.0.1:8080; root /nonexistent; {conf} }} }}"
    );
    let cfg = peregrine_conf::parse_str(&text, "/tmp/rewrite-script.conf")
        .unwrap_or_else(|e| panic!("config: {e}"));
    HttpCore::new(Arc::new(cfg))
}

fn get(core: &mut HttpCore, target: &str) -> (u16, String) {
    let (path, args) = match target.split_once('?') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    // The codec hands core the decoded path (only `%20` here).
    let decoded = path.replace("%20", " ");
    let headers: Vec<(&str, &str)> = vec![("Host", "h")];
    let view = RequestView {
        method: Method::Get,
        method_name: "GET",
        version: (1, 1),
        path: &decoded,
        args,
        target,
        host: Some("h"),
        content_length: None,
        headers: &headers,
    };
    let r = core.handle_view(&conn("127.0.0.1:8080"), &view, SystemTime::now());
    (
        r.status,
        String::from_utf8_lossy(&body_bytes(&r.body)).into_owned(),
    )
}

#[test]
fn rewrite_log_lines_are_nginx_s() {
    let mut c = core(
        "rewrite_log on;\nlocation / { rewrite ^/a/(.*)$ /b/$1?x=1; rewrite ^/zzz /never; return 200 $uri; }",
    );
    assert_eq!(get(&mut c, "/a/p?q=2"), (200, "/b/p".into()));
    let lines: Vec<(LogLevel, String)> = c
        .take_log_lines()
        .into_iter()
        .map(|l| (l.level, l.text))
        .collect();
    assert_eq!(
        lines,
        vec![
            (
                LogLevel::Notice,
                "\"^/a/(.*)$\" matches \"/a/p\"".to_string()
            ),
            (
                LogLevel::Notice,
                "rewritten data: \"/b/p\", args: \"x=1&q=2\"".to_string()
            ),
            (
                LogLevel::Notice,
                "\"^/zzz\" does not match \"/b/p\"".to_string()
            ),
        ]
    );
    assert!(c.take_log_lines().is_empty());
}

#[test]
fn uninitialized_variables_warn_unless_told_not_to() {
    let mut c = core(
        "location /w { return 200 \"[$v]\"; }\nlocation /q { uninitialized_variable_warn off; return 200 \"[$v]\"; }\nlocation /s { set $v 1; }",
    );
    assert_eq!(get(&mut c, "/w"), (200, "[]".into()));
    let lines = c.take_log_lines();
    assert_eq!(lines.len(), 1);
    assert_eq!(
        (lines[0].level, lines[0].text.as_str()),
        (LogLevel::Warn, "using uninitialized \"v\" variable")
    );
    assert_eq!(get(&mut c, "/q"), (200, "[]".into()));
    assert!(c.take_log_lines().is_empty());
}

#[test]
fn captures_in_arguments_are_escaped_when_the_uri_was() {
    let mut c = core(
        "location /e/ { rewrite ^/e/(.*)$ /r?v=$1 last; }\nlocation = /r { return 200 \"$uri|$args\"; }",
    );
    // The decoded URI's capture, escaped again in the arguments.
    assert_eq!(get(&mut c, "/e/a%20b"), (200, "/r|v=a%20b".into()));
    assert_eq!(get(&mut c, "/e/plain"), (200, "/r|v=plain".into()));
}
