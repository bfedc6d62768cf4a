//! `max_headers`, `underscores_in_headers`, `ignore_invalid_headers`: the
//! header-name rules of nginx's `ngx_http_process_request_headers`.

use crate::support::{Prefix, Response, Server, conf_with, is_nginx, wait_for_lines};

fn site(server_body: &str) -> Server {
    let p = Prefix::new("header-rules");
    p.write("html/a", "x");
    Server::start(
        p,
        &conf_with(&format!(
            "    log_format h \"$http_x_y|$http_x_z\";\n\
             server {{\n        listen 127.0.0.1:PORT;\n        root html;\n\
             access_log logs/h.log h;\n{server_body}\n    }}\n"
        )),
    )
}

fn get_with(s: &Server, headers: &str) -> Response {
    let req = format!("GET /a HTTP/1.0\r\nHost: x\r\n{headers}\r\n");
    Response::parse(&s.raw(req.as_bytes())).expect("a response")
}

/// `max_headers 3` (nginx 1.29's directive; Debian's 1.22 lacks it): three
/// header lines pass, a fourth is 400 and "client sent too many header
/// lines".
#[test]
fn max_headers_bounds_the_header_lines() {
    if is_nginx() {
        return;
    }
    let s = site("max_headers 3;");
    assert_eq!(get_with(&s, "A: 1\r\nB: 2\r\n").status, 200);
    assert_eq!(get_with(&s, "A: 1\r\nB: 2\r\nC: 3\r\n").status, 400);
    let log = s.prefix.dir.join("logs/error.log");
    let lines = wait_for_lines(&log, 1, |l| l.contains("client sent too many header lines"));
    assert_eq!(lines.len(), 1);
}

/// By default a name with `_` is invalid and skipped; `underscores_in_headers
/// on` keeps it.
#[test]
fn underscores_in_headers_keeps_such_names() {
    for (conf, want) in [("", "-|z"), ("underscores_in_headers on;", "y|z")] {
        let s = site(conf);
        assert_eq!(get_with(&s, "X_Y: y\r\nX-Z: z\r\n").status, 200);
        let log = s.prefix.dir.join("logs/h.log");
        let lines = wait_for_lines(&log, 1, |_| true);
        assert_eq!(lines, vec![want.to_string()], "{conf:?}");
    }
}

/// `ignore_invalid_headers off` keeps a name nginx calls invalid (here one
/// with `_` while underscores are off): `$http_x_y` sees it.
#[test]
fn ignore_invalid_headers_off_keeps_invalid_names() {
    let s = site("ignore_invalid_headers off;");
    assert_eq!(get_with(&s, "X_Y: y\r\nX-Z: z\r\n").status, 200);
    let log = s.prefix.dir.join("logs/h.log");
    assert_eq!(wait_for_lines(&log, 1, |_| true), vec!["y|z".to_string()]);
}
