//! Variables the configuration defines (`map`, `geo`, `split_clients`)
//! in a `log_format` and in `access_log ... if=`: nginx resolves them once
//! every module has registered its variables, so a format may name a map
//! defined after it, and evaluates them on the finished request, `$status`
//! included (the `map $status $loggable` idiom of nginx's documentation).
//! Checked against nginx 1.22.1 (`E2E_SERVER=nginx`).

use crate::support::{Prefix, Server};

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    log_format anon '$remote_addr_anon $status $bucket $client_kind [$blank]';
    access_log logs/anon.log anon;
    access_log logs/errors.log anon if=$loggable;
    map $remote_addr $ip3 {
        ~^(?P<ip>\d+\.\d+\.\d+)\.  $ip;
        default                    0.0.0;
    }
    map $ip3 $remote_addr_anon {
        default      0.0.0.0;
        "~(?P<ip>.*)" $ip.0;
    }
    map $uri $blank {
        default "";
    }
    map $status $loggable {
        ~^[23]  0;
        default 1;
    }
    geo $client_kind {
        default     remote;
        127.0.0.0/8 local;
    }
    split_clients "${remote_addr}x" $bucket {
        100% all;
    }
    server {
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
    }
}
"#;

#[test]
fn map_geo_and_split_clients_values_are_logged_and_select_lines() {
    let p = Prefix::new("logvars");
    p.write("html/a.txt", "aaa\n");
    let s = Server::start(p, CONF);
    let ok = s.get("/a.txt");
    assert_eq!(ok.status, 200);
    let missing = s.get("/missing");
    assert_eq!(missing.status, 404);
    let dir = s.prefix.dir.join("logs");
    let all = crate::support::wait_for_lines(&dir.join("anon.log"), 2, |_| true);
    assert_eq!(
        all,
        ["127.0.0.0 200 all local []", "127.0.0.0 404 all local []"],
        "the map of a map, geo and split_clients, in order of requests; a \
         map's empty value is a value (nothing logged, not `-`)"
    );
    // `if=$loggable`: only the 404 (a map of `$status`).
    let errors = crate::support::wait_for_lines(&dir.join("errors.log"), 1, |_| true);
    assert_eq!(errors, ["127.0.0.0 404 all local []"]);
}

#[test]
fn an_undefined_variable_in_a_format_is_refused() {
    let p = Prefix::new("logvars-bad");
    p.conf(
        &CONF
            .replace("[$blank]'", "[$blank] $no_such_var'")
            .replace("PORT", "1"),
    );
    let out = p.run(&["-t"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown \"no_such_var\" variable"), "{err}");
}

/// A URI refused while normalised (`/../x`): nginx logs an empty, found
/// `$uri` (nothing, not `-`).
#[test]
fn a_refused_uri_logs_its_request_and_an_empty_uri() {
    let conf = "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
        events { worker_connections 128; }\n\
        http {\n    log_format u '[$uri] $status';\n\
        access_log logs/u.log u;\n    server { listen 127.0.0.1:PORT; server_name localhost; }\n}\n";
    let s = Server::start(Prefix::new("log-bad-uri"), conf);
    let out = s.raw(b"GET /../bad_uri HTTP/1.0\r\n\r\n");
    assert!(
        out.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let lines = crate::support::wait_for_lines(&s.prefix.dir.join("logs/u.log"), 1, |_| true);
    assert_eq!(lines, ["[] 400"]);
}
