//! `peregrine tune`: the subcommand through the real binary, on the live
//! machine's /proc (detailed rule tests with fake /proc trees live in
//! crates/tune/tests).

use crate::support::{BIN, Prefix};
use std::process::{Command, Output, Stdio};

const SEED_SYSCTL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/tune/tests/fixtures/seed-002.conf"
);

fn tune(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("tune")
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn live_report_with_a_seed_configuration() {
    let prefix = Prefix::new("tune");
    prefix.conf(
        "worker_processes 6;\nworker_cpu_affinity 0001 0010 0100 1000 1001 10010;\n\
         events { worker_connections 1024; }\n\
         http { include mime.types; server { listen 127.0.0.1:8080; } }\n",
    );
    let dir = prefix.dir.to_str().unwrap();
    let out = tune(&["-p", dir, "-c", "conf/nginx.conf"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let code = out.status.code();
    assert!(code == Some(0) || code == Some(3), "{code:?}: {text}");
    for item in [
        "net.core.somaxconn",
        "fs.nr_open",
        "worker_processes",
        "open files per worker",
        "listen 127.0.0.1:8080 backlog",
        "summary: ",
    ] {
        assert!(text.contains(item), "{item} missing: {text}");
    }
    assert!(!text.contains('\x1b'), "no colour with NO_COLOR or a pipe");
}

#[test]
fn audit_of_a_seed_sysctl_block_finds_harm() {
    let out = tune(&["--audit-sysctl", SEED_SYSCTL, "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"harmful\": true"), "{text}");
    assert!(text.contains("net.core.somaxcOnn"), "{text}");
}

#[test]
fn bad_arguments_and_missing_configuration() {
    assert_eq!(tune(&["--bogus"]).status.code(), Some(2));
    let out = tune(&["-c", "/nonexistent/peregrine.conf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("configuration"));
}
