//! `peregrine bench` through the real binary against a real server
//! (Peregrine, or nginx with E2E_SERVER=nginx): exact counts, keep-alive
//! across the server's keepalive_requests closes, ab's report fields,
//! JSON. Failure classes against fault servers are tested in
//! crates/bench/tests.

use crate::support::{BIN, Prefix, Server, server_name};
use std::process::{Command, Output, Stdio};

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 256; }
http {
    include mime.types;
    access_log off;
    keepalive_requests 100;
    server {
        listen 127.0.0.1:PORT;
        root html;
    }
}
"#;

const PAGE: &str = "<html><body>bench</body></html>\n";

fn site() -> Server {
    let p = Prefix::new("bench");
    p.write("html/index.html", PAGE);
    Server::start(p, CONF)
}

fn bench(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("bench")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn field<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {name} in:\n{report}"))
}

#[test]
fn keepalive_run_reports_exact_counts() {
    let s = site();
    let url = format!("http://{}/index.html", s.addr);
    let out = bench(&["-n", "500", "-c", "4", "-k", &url]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(field(&text, "Server Software:"), server_name());
    assert_eq!(
        field(&text, "Document Length:"),
        format!("{} bytes", PAGE.len())
    );
    assert_eq!(field(&text, "Complete requests:"), "500");
    // keepalive_requests 100 closes each connection after 100 answers:
    // the generator reconnects without counting a failure.
    assert_eq!(field(&text, "Failed requests:"), "0");
    let ka: u64 = field(&text, "Keep-Alive requests:").parse().unwrap();
    assert!((490..=500).contains(&ka), "{ka}");
    assert_eq!(
        field(&text, "HTML transferred:"),
        format!("{} bytes", 500 * PAGE.len())
    );
    assert!(text.ends_with("(longest request)\n"), "{text}");
}

#[test]
fn non_2xx_and_json() {
    let s = site();
    let url = format!("http://{}/missing", s.addr);
    let out = bench(&["-n", "20", "-c", "2", "--json", &url]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("\"schema\": \"peregrine-bench/1\""), "{text}");
    assert!(text.contains("\"complete\": 20"), "{text}");
    assert!(text.contains("\"non_2xx\": 20"), "{text}");
    assert!(text.contains("\"failed\": 0"), "{text}");
}

#[test]
fn bad_input_is_refused() {
    let out = bench(&["-n", "1", "-c", "2", "http://127.0.0.1:1/"]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Cannot use concurrency level greater than total number of requests"),
        "{err}"
    );
}
