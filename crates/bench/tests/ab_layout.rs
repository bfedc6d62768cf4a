//! Our report against Debian's ab on the same server: the same lines, in
//! the same order, with the same labels (values differ run to run).
//! Skipped when `ab` is not installed.

mod support;

use std::process::Command;

use peregrine_bench::cli;
use peregrine_bench::config::Config;
use peregrine_bench::report;
use peregrine_bench::run::execute;
use support::{Mode, args, start};

/// A line with every number replaced by `N` and blanks collapsed.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    for ch in line
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
    {
        if ch.is_ascii_digit() || (in_num && ch == '.') {
            if !in_num {
                out.push('N');
            }
            in_num = true;
        } else {
            in_num = false;
            out.push(ch);
        }
    }
    out
}

fn report_shapes(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Server Software:"))
        .filter(|l| !l.starts_with("Server Software:"))
        .map(shape)
        .collect()
}

fn compare(ab_flags: &[&str], our_flags: &[&str], mode: Mode) {
    let s = start(mode);
    let url = s.url("/index.html");
    let Ok(out) = Command::new("ab").args(ab_flags).arg(&url).output() else {
        // CI installs apache2-utils (.ci/run): there, a missing ab is a failure.
        assert!(std::env::var_os("CI").is_none(), "ab is not installed");
        eprintln!("ab not installed: skipped");
        return;
    };
    let ab_text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut v: Vec<&str> = our_flags.to_vec();
    v.push(&url);
    let cfg = Config::from_args(&cli::parse(&args(&v)).expect("parse")).expect("config");
    let r = execute(&cfg, cfg.concurrency, cfg.spec.keepalive, false).expect("run");
    let ours = report::render(&r.stats, &r.info, cfg.report);
    let (a, b) = (report_shapes(&ab_text), report_shapes(&ours));
    assert!(a.len() > 10, "ab printed no report:\n{ab_text}");
    // ab's sanity warnings depend on the timings of the run: compare the
    // report without them.
    let strip = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .filter(|l| {
                !l.starts_with("WARNING")
                    && !l.starts_with("ERROR")
                    && !l.starts_with("deviation")
                    && !l.starts_with("These results")
            })
            .collect()
    };
    assert_eq!(strip(b), strip(a), "ab:\n{ab_text}\nours:\n{ours}");
    // Same requests, same server: the counts must agree exactly.
    for field in [
        "Server Software:",
        "Document Length:",
        "Complete requests:",
        "Failed requests:",
        "Non-2xx responses:",
        "Keep-Alive requests:",
        "Total transferred:",
        "HTML transferred:",
    ] {
        let value = |t: &str| t.lines().find(|l| l.starts_with(field)).map(str::to_string);
        assert_eq!(value(&ours), value(&ab_text), "{field}");
    }
}

#[test]
fn same_report_as_ab_keepalive() {
    compare(
        &["-n", "50", "-c", "5", "-k"],
        &["-n", "50", "-c", "5", "-k", "--http1.0"],
        Mode::Ok { body: "hello" },
    );
}

#[test]
fn same_report_as_ab_without_confidence() {
    compare(
        &["-n", "20", "-c", "2", "-S", "-l"],
        &["-n", "20", "-c", "2", "-S", "-l", "--http1.0"],
        Mode::Ok { body: "x" },
    );
}

#[test]
fn same_report_as_ab_non_2xx() {
    compare(
        &["-n", "10", "-d"],
        &["-n", "10", "-d", "--http1.0"],
        Mode::Status(404),
    );
}

#[test]
fn same_length_failures_as_ab() {
    compare(
        &["-n", "10"],
        &["-n", "10", "--http1.0", "--threads", "1"],
        Mode::Varying,
    );
}
