//! Property tests of the whole pipeline: no input panics.

use proptest::prelude::*;

use super::*;

/// Words that make the generator reach deep into the directive handlers.
const WORDS: &[&str] = &[
    "events",
    "http",
    "server",
    "location",
    "types",
    "include",
    "listen",
    "server_name",
    "root",
    "alias",
    "index",
    "return",
    "error_page",
    "try_files",
    "access_log",
    "log_format",
    "gzip",
    "gzip_types",
    "gzip_disable",
    "open_file_cache",
    "memory_cache",
    "keepalive_timeout",
    "worker_cpu_affinity",
    "worker_processes",
    "error_log",
    "stub_status",
    "metrics",
    "=",
    "~",
    "~*",
    "^~",
    "@n",
    "/",
    "/a",
    "/a/b",
    "on",
    "off",
    "auto",
    "1",
    "0",
    "404",
    "=404",
    "=",
    "80",
    "127.0.0.1:8080",
    "[::]:80",
    "*:81",
    "default_server",
    "backlog=1",
    "max=1",
    "inactive=1s",
    "size=1m",
    "1k",
    "10m",
    "1h30m",
    "500ms",
    "combined",
    "buffer=1k",
    "flush=1s",
    "gzip=3",
    "$uri",
    "\"\"",
    "(",
    "0101",
    "{",
    "}",
    ";",
    ";",
    ";",
    "}",
];

fn config_like() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(WORDS), 0..80).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn pipeline_never_panics(text in config_like()) {
        let _ = parse_str(&text, NAME).map_err(|e| e.to_string());
    }

    #[test]
    fn pipeline_never_panics_in_server_context(text in config_like()) {
        let _ = parse_str(&server(&text), NAME).map_err(|e| e.to_string());
        let _ = parse_str(&server(&format!("location /a {{ {text} }}")), NAME).map_err(|e| e.to_string());
    }

    #[test]
    fn pipeline_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_str(&String::from_utf8_lossy(&bytes), NAME);
    }
}

/// Every valid error has a position except the end-of-configuration ones.
#[test]
fn positions_are_present() {
    for text in [
        http("sendfile x;"),
        server("listen 0;"),
        "events {}\n}".to_string(),
    ] {
        let e = parse_str(&text, NAME).unwrap_err();
        assert!(e.span.is_some(), "{e}");
    }
}

/// The lexer reads whole files, so instead of feeding split input, every
/// truncation of a real configuration is read: each must end in a
/// configuration or an error positioned within the text read.
#[test]
fn every_truncation_of_a_real_configuration() {
    let text = include_str!("../../testdata/shared/seed-002.conf");
    let mut errors = 0;
    for cut in 0..=text.len() {
        let Some(part) = text.get(..cut) else {
            continue;
        };
        match parse_str(part, NAME) {
            Ok(_) => {}
            Err(e) => {
                errors += 1;
                let lines = part.matches('\n').count() as u32 + 1;
                if let Some(span) = &e.span {
                    assert!(span.line <= lines, "cut {cut}: {e}");
                }
            }
        }
    }
    // Only cuts after `events {}` and outside any block or directive load.
    assert!(errors > text.len() / 2, "{errors}");
    assert!(parse_str(text, NAME).is_ok());
}
