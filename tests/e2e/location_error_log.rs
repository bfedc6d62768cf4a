//! `error_log` at http/server/location level: a request's error-log lines
//! (here `open() ... failed`) go to the error log of the location in
//! effect, inherited from the enclosing level, with that log's own level
//! filter; requests elsewhere keep the main one.

use std::path::Path;

use crate::support::{Prefix, Server, conf_with, wait_for_lines};

fn site() -> Server {
    let p = Prefix::new("loc-error-log");
    p.write("html/a/x", "x");
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /a/ {\n            error_log logs/a.log;\n\
             location /a/q/ { error_log logs/q.log crit; }\n\
             location /a/in/ { }\n\
             location /a/off/ { log_not_found off; }\n        }\n    }\n",
        ),
    )
}

/// The `open()` failures logged in `log` (waiting for `n` of them).
fn failures(dir: &Path, log: &str, n: usize) -> Vec<String> {
    wait_for_lines(&dir.join("logs").join(log), n, |l| {
        l.contains("[error]") && l.contains("open() \"")
    })
}

#[test]
fn request_lines_go_to_the_location_error_log() {
    let s = site();
    let dir = s.prefix.dir.clone();
    // Opened at start, as nginx creates it, though nothing goes there.
    assert!(dir.join("logs/q.log").exists());
    for path in ["/a/q/none", "/a/off/none", "/a/none", "/a/in/none", "/none"] {
        assert_eq!(s.get(path).status, 404, "{path}");
    }
    let a = failures(&dir, "a.log", 2);
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(a[0].contains("/html/a/none\" failed (2: No such file or directory)"));
    assert!(
        a[0].contains("request: \"GET /a/none HTTP/1.1\""),
        "{}",
        a[0]
    );
    assert!(a[1].contains("/html/a/in/none\" failed"), "{}", a[1]);
    let main = failures(&dir, "error.log", 1);
    assert_eq!(main.len(), 1, "{main:?}");
    assert!(main[0].contains("/html/none\" failed"), "{}", main[0]);
    // `crit` filters out the error; `log_not_found off` logs nothing.
    let q = std::fs::read_to_string(dir.join("logs/q.log")).unwrap();
    assert!(!q.contains("[error]"), "{q}");
}
