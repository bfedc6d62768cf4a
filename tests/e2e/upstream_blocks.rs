//! `upstream { }` groups load (their servers resolved, their parameters
//! checked) and leave the rest of the server as it was; a bad group stops
//! the server with nginx's one line. (Nothing proxies to a group yet:
//! `proxy_pass` uses them: tests/e2e/proxy.rs.)

use std::process::{Command, Stdio};

use crate::support::{BIN, Prefix, Server, conf_with, is_nginx};

const GROUPS: &str = "    upstream app {\n        least_conn;\n        \
    server 127.0.0.1:9 weight=2 max_fails=3 fail_timeout=5s;\n        \
    server localhost:10 backup;\n        keepalive 8;\n    }\n    \
    upstream cache { hash $request_uri consistent; server 127.0.0.1:11; server [::1]:12; }\n";

#[test]
fn a_configuration_with_groups_starts_and_serves() {
    let p = Prefix::new("upstream-groups");
    p.write("html/index.html", "static\n");
    let s = Server::start(
        p,
        &conf_with(&format!(
            "{GROUPS}    server {{\n        listen 127.0.0.1:PORT;\n        root html;\n    }}\n"
        )),
    );
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"static\n");
}

/// `-t` of the server under test (Peregrine, or nginx with `E2E_SERVER=nginx`).
fn test_config(p: &Prefix) -> (bool, String) {
    let bin = if is_nginx() { "/usr/sbin/nginx" } else { BIN };
    let out = Command::new(bin)
        .arg("-p")
        .arg(&p.dir)
        .args(["-c", "conf/nginx.conf", "-t"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_group_is_one_emerg_line_at_nginx_position() {
    for (group, line, what) in [
        ("upstream u {\n    }\n", 9, "no servers are inside upstream"),
        (
            "upstream u {\n        server nonexistent.invalid;\n    }\n",
            9,
            "host not found in upstream \"nonexistent.invalid\"",
        ),
        (
            "upstream u {\n        ip_hash;\n        server 127.0.0.1 backup;\n    }\n",
            10,
            "balancing method does not support parameter \"backup\"",
        ),
    ] {
        let p = Prefix::new("upstream-bad");
        // conf_with puts `http {` on line 5 and the body from line 8.
        p.conf(&conf_with(&format!("    {group}")));
        let (ok, err) = test_config(&p);
        assert!(!ok, "{group}: {err}");
        let conf = p.dir.join("conf/nginx.conf");
        // nginx's line has its pid after the level, Peregrine's its name
        // before: the message and position are what must agree.
        let want = format!("{what} in {}:{line}", conf.display());
        assert!(err.contains("[emerg] "), "{err}");
        assert!(err.contains(&want), "{group}: want {want:?} in {err}");
    }
}
