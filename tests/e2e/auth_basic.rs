//! `auth_basic` and `auth_basic_user_file`: 401 with nginx's challenge
//! until the credentials match an htpasswd entry (`$apr1$`, `{PLAIN}`,
//! `{SHA}`, the system's crypt for the others), nginx's error lines for a
//! wrong password, an unknown user, a missing file (403); `auth_basic off`
//! below; a static file's memory-cache hits asked for credentials every
//! time. Checked against nginx (`E2E_SERVER=nginx`).

use std::io::Write;

use crate::support::{Prefix, Server, conf_with, read_responses, wait_for_lines};

/// `user:password` in base64 (the test's own encoder: the alphabet and
/// padding of RFC 4648).
fn basic(user: &str, password: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let raw = format!("{user}:{password}").into_bytes();
    let mut out = String::new();
    for chunk in raw.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn site() -> Server {
    let p = Prefix::new("auth-basic");
    p.write("html/f.txt", "secret\n");
    p.write("html/open/f.txt", "open\n");
    let apr1 = std::process::Command::new("openssl")
        .args(["passwd", "-apr1", "-salt", "NaCl", "apr1pw"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    p.write(
        "conf/htpasswd",
        format!(
            "# users\nplain:{{PLAIN}}plainpw\nsha:{{SHA}}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\napr1:{apr1}\n"
        ),
    );
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             auth_basic \"Closed Site\";\n        auth_basic_user_file htpasswd;\n\
             location /open/ { auth_basic off; }\n\
             location /gone/ { auth_basic_user_file nothere; }\n    }\n",
        ),
    )
}

fn get(s: &Server, path: &str, auth: Option<(&str, &str)>) -> crate::support::Response {
    let mut c = s.connect();
    let header = auth.map_or(String::new(), |(u, p)| {
        format!("Authorization: Basic {}\r\n", basic(u, p))
    });
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: x\r\n{header}Connection: close\r\n\r\n"
    )
    .unwrap();
    read_responses(&mut c, 1, false).remove(0)
}

fn header<'r>(r: &'r crate::support::Response, name: &str) -> Option<&'r str> {
    r.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn credentials_are_asked_for_and_checked() {
    let s = site();
    let r = get(&s, "/f.txt", None);
    assert_eq!(r.status, 401);
    assert_eq!(
        header(&r, "WWW-Authenticate"),
        Some("Basic realm=\"Closed Site\"")
    );
    for (user, pw) in [
        ("plain", "plainpw"),
        ("sha", "password"),
        ("apr1", "apr1pw"),
    ] {
        let r = get(&s, "/f.txt", Some((user, pw)));
        assert_eq!(
            (r.status, r.body.as_slice()),
            (200, &b"secret\n"[..]),
            "{user}"
        );
    }
    assert_eq!(get(&s, "/f.txt", Some(("apr1", "nope"))).status, 401);
    assert_eq!(get(&s, "/open/f.txt", None).status, 200, "auth_basic off");
    // The memory cache has the file now: still no answer without them.
    assert_eq!(get(&s, "/f.txt", None).status, 401);
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainpw"))).status, 200);
}

#[test]
fn failures_are_logged_as_nginx_logs_them() {
    let s = site();
    assert_eq!(get(&s, "/f.txt", Some(("plain", "bad"))).status, 401);
    assert_eq!(get(&s, "/f.txt", Some(("nobody", "x"))).status, 401);
    assert_eq!(get(&s, "/gone/x", Some(("plain", "plainpw"))).status, 403);
    let log = s.prefix.dir.join("logs/error.log");
    let lines = wait_for_lines(&log, 3, |l| l.contains("[error]") || l.contains("[crit]"));
    let all = lines.join("\n");
    assert!(all.contains("user \"plain\": password mismatch"), "{all}");
    assert!(all.contains("user \"nobody\" was not found in \""), "{all}");
    assert!(
        all.contains("/conf/nothere\" failed (2: No such file or directory)"),
        "{all}"
    );
}

/// A changed user file takes effect at the next request, as nginx reads it
/// at each one: whether just written, or settled (Peregrine then keeps it
/// and checks it by one `stat`: a deliberate difference in how, not in
/// what, see `core/src/auth_basic/user_file.rs`). A password of the same
/// length is the change a kept copy could miss.
#[test]
fn a_changed_user_file_takes_effect_at_once() {
    let s = site();
    let file = s.prefix.dir.join("conf/htpasswd");
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainpw"))).status, 200);
    std::fs::write(&file, "plain:{PLAIN}plainPW\n").unwrap();
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainpw"))).status, 401);
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainPW"))).status, 200);
    // Settled: kept by Peregrine from here on.
    std::thread::sleep(std::time::Duration::from_millis(3200));
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainPW"))).status, 200);
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainPW"))).status, 200);
    std::fs::write(&file, "plain:{PLAIN}plainpw\n").unwrap();
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainPW"))).status, 401);
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainpw"))).status, 200);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(get(&s, "/f.txt", Some(("plain", "plainpw"))).status, 403);
}
