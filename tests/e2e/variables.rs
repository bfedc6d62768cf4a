//! Unknown `$variables` are refused at load, as nginx refuses them:
//! `unknown "NAME" variable`, exit 1; known names and families pass.

use std::process::{Command, Stdio};

use crate::support::{BIN, Prefix, conf_with, is_nginx};

/// `-t` of `http_body` with the server under test: (exit code, stderr).
fn test_conf(http_body: &str) -> (Option<i32>, String) {
    let p = Prefix::new("variables");
    p.conf(&conf_with(http_body));
    let bin = if is_nginx() { "/usr/sbin/nginx" } else { BIN };
    let out = Command::new(bin)
        .arg("-p")
        .arg(&p.dir)
        .args(["-c", "conf/nginx.conf", "-t", "-q"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn unknown_names_are_refused_wherever_variables_go() {
    let server = |loc: &str| format!("    server {{ listen 127.0.0.1:1; location / {{ {loc} }} }}");
    for (body, name) in [
        (server("return 200 \"$foo\";"), "foo"),
        (server("root /srv/$nope;"), "nope"),
        (server("try_files $uri $bogus =404;"), "bogus"),
        (server("error_page 404 /e?$zzz;"), "zzz"),
        (server("index ${unknown1}.html;"), "unknown1"),
        ("    log_format m '$remote_addr $what';".to_string(), "what"),
        (server("access_log /tmp/x.log combined if=$maybe;"), "maybe"),
    ] {
        let (code, err) = test_conf(&body);
        assert_eq!(code, Some(1), "{body}: {err}");
        // nginx prefixes a time and pid after `[emerg]` on stderr.
        let want = format!("unknown \"{name}\" variable");
        assert!(
            err.lines()
                .any(|l| l.contains("[emerg] ") && l.ends_with(&want)),
            "{body}: {err}"
        );
    }
}

#[test]
fn known_names_families_and_captures_pass() {
    let body = "    log_format m '$remote_addr $http_x_y $cookie_c $arg_a $sent_http_etag $status';\n\
                server { listen 127.0.0.1:1;\n\
                location ~ ^/(a)$ { return 200 \"$1 $uri $args $host $request_uri $HTTP_HOST\"; }\n\
                location / { root /srv/$host; try_files $uri $uri/ =404; } }";
    let (code, err) = test_conf(body);
    assert_eq!(code, Some(0), "{err}");
}

/// `$realip_remote_addr` and `$realip_remote_port` are the client's own
/// address and port while no realip rule replaces them (nginx: without a
/// trusted `set_real_ip_from`), in `return` and in a log format.
#[test]
fn realip_remote_address_without_realip() {
    let p = Prefix::new("vars-realip");
    let conf = conf_with(
        "    server { listen 127.0.0.1:PORT;\n\
         location / { return 200 \"$realip_remote_addr $remote_addr\"; } }",
    );
    let s = crate::support::Server::start(p, &conf);
    assert_eq!(s.get("/").body_str(), "127.0.0.1 127.0.0.1");
}
