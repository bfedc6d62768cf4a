//! Each rule against fake /proc trees (live mode).

mod common;

use common::{FakeProc, run_json, verdict};
use peregrine_tune::{EXIT_HARMFUL, EXIT_OK};

#[test]
fn untuned_modern_kernel_is_all_ok() {
    let p = FakeProc::modern();
    let (code, r) = run_json(&p, &[], None);
    assert_eq!(code, EXIT_OK);
    for f in r["findings"].as_array().expect("findings") {
        assert_eq!(f["verdict"], "ok", "{f}");
    }
    assert_eq!(r["facts"]["kernel"], "6.1.0");
}

#[test]
fn tw_recycle_absent_and_present() {
    let modern = FakeProc::modern();
    let (_, r) = run_json(&modern, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_tw_recycle"), "ok");

    let legacy = FakeProc::legacy();
    let (code, r) = run_json(&legacy, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_tw_recycle"), "ok");
    assert_eq!(code, EXIT_OK);
    legacy.set("net.ipv4.tcp_tw_recycle", "1");
    let (code, r) = run_json(&legacy, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_tw_recycle"), "harmful");
    assert_eq!(code, EXIT_HARMFUL);
    // somaxconn 128 on that kernel caps nginx's default backlog of 511.
    assert_eq!(verdict(&r, "net.core.somaxconn"), "raise");
}

/// (key, live value, expected verdict)
const CASES: &[(&str, &str, &str)] = &[
    ("net.ipv4.tcp_timestamps", "0", "harmful"),
    ("net.ipv4.tcp_syncookies", "0", "harmful"),
    ("net.ipv4.tcp_syncookies", "2", "lower"),
    ("net.ipv4.tcp_fin_timeout", "1", "raise"),
    ("net.ipv4.tcp_fin_timeout", "15", "ok"),
    ("net.ipv4.tcp_max_tw_buckets", "6000", "harmful"),
    ("net.ipv4.tcp_max_tw_buckets", "1440000", "ok"),
    ("net.core.somaxconn", "128", "raise"),
    ("net.core.somaxconn", "65535", "ok"),
    ("net.ipv4.tcp_max_orphans", "3276800", "lower"),
    ("net.ipv4.tcp_syn_retries", "1", "raise"),
    ("net.ipv4.tcp_synack_retries", "1", "raise"),
    ("net.ipv4.tcp_keepalive_time", "30", "ok"),
    ("net.ipv4.ip_local_port_range", "1024\t65000", "ok"),
    ("net.ipv4.ip_local_port_range", "80\t65000", "raise"),
    ("net.core.rmem_default", "8388608", "lower"),
    ("net.core.rmem_max", "16777216", "ok"),
    ("net.core.wmem_max", "4096", "raise"),
    ("net.ipv4.tcp_rmem", "4096\t4096\t16777216", "raise"),
    ("net.ipv4.tcp_rmem", "4096\t87380\t4194304", "raise"),
    ("net.ipv4.tcp_wmem", "4096\t65536\t16777216", "ok"),
    (
        "net.ipv4.tcp_mem",
        "94500000\t915000000\t927000000",
        "lower",
    ),
    ("net.ipv4.tcp_mem", "786432\t2097152\t3145728", "ok"),
    ("net.ipv4.tcp_window_scaling", "0", "raise"),
    ("net.ipv4.tcp_sack", "0", "raise"),
    ("net.ipv4.tcp_congestion_control", "bbr", "remove"),
    ("vm.swappiness", "0", "raise"),
    ("vm.swappiness", "10", "ok"),
    ("net.core.netdev_max_backlog", "262144", "ok"),
];

#[test]
fn each_rule_judges_the_live_value() {
    for (key, value, want) in CASES {
        let p = FakeProc::modern();
        p.set(key, value);
        let (code, r) = run_json(&p, &[], None);
        assert_eq!(verdict(&r, key), *want, "{key} = {value}");
        assert_eq!(
            code == EXIT_HARMFUL,
            *want == "harmful",
            "{key} = {value}: exit {code}"
        );
    }
}

#[test]
fn tw_reuse_without_timestamps_does_nothing() {
    let p = FakeProc::modern();
    p.set("net.ipv4.tcp_tw_reuse", "1");
    let (_, r) = run_json(&p, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_tw_reuse"), "ok");
    p.set("net.ipv4.tcp_timestamps", "0");
    let (_, r) = run_json(&p, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_tw_reuse"), "remove");
}

#[test]
fn syn_backlog_matters_only_without_cookies() {
    let p = FakeProc::modern();
    p.set("net.ipv4.tcp_max_syn_backlog", "128");
    let (_, r) = run_json(&p, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_max_syn_backlog"), "ok");
    p.set("net.ipv4.tcp_syncookies", "0");
    let (_, r) = run_json(&p, &[], None);
    assert_eq!(verdict(&r, "net.ipv4.tcp_max_syn_backlog"), "raise");
}

#[test]
fn netdev_backlog_raised_only_on_evidence() {
    let p = FakeProc::modern();
    let (_, r) = run_json(&p, &[], None);
    assert_eq!(verdict(&r, "net.core.netdev_max_backlog"), "ok");
    p.evidence(0, 0, 0x40);
    let (_, r) = run_json(&p, &[], None);
    assert_eq!(verdict(&r, "net.core.netdev_max_backlog"), "raise");
    assert_eq!(r["facts"]["softnet_dropped"], 64);
}

#[test]
fn unreadable_and_missing_entries_are_reported_not_fatal() {
    let p = FakeProc::modern();
    p.remove("net.core.somaxconn");
    p.set("net.ipv4.tcp_fin_timeout", "sixty");
    let _ = std::fs::remove_file(p.path().join("meminfo"));
    let _ = std::fs::remove_file(p.path().join("net/netstat"));
    p.write("self/limits", "garbage\n");
    p.write("sys/kernel/osrelease", "???\n");
    let (code, r) = run_json(&p, &[], None);
    assert_eq!(code, EXIT_OK);
    assert_eq!(verdict(&r, "net.core.somaxconn"), "unknown");
    assert_eq!(verdict(&r, "net.ipv4.tcp_fin_timeout"), "unknown");
    for item in [
        "memory",
        "ListenOverflows",
        "RLIMIT_NOFILE",
        "kernel version",
    ] {
        assert_eq!(verdict(&r, item), "unknown", "{item}");
    }
}

#[test]
fn an_empty_proc_root_gives_a_report_of_unknowns() {
    let empty = common::TempDir::new("empty");
    let p = FakeProc { dir: empty };
    let (code, r) = run_json(&p, &[], None);
    assert_eq!(code, EXIT_OK);
    let all = r["findings"].as_array().expect("findings");
    assert!(
        all.iter()
            .all(|f| f["verdict"] == "unknown" || f["item"] == "net.ipv4.tcp_tw_recycle")
    );
}

#[test]
fn text_report_is_plain_without_colour() {
    let p = FakeProc::modern();
    p.set("net.ipv4.tcp_syncookies", "0");
    let root = p.path().to_str().expect("utf-8").to_string();
    let mut out = Vec::new();
    let code = peregrine_tune::run_to(&["--proc-root".into(), root], &mut out, false).expect("run");
    let text = String::from_utf8(out).expect("utf-8");
    assert_eq!(code, EXIT_HARMFUL);
    assert!(!text.contains('\x1b'));
    assert!(text.contains("harmful  net.ipv4.tcp_syncookies"), "{text}");
    assert!(
        text.contains("kernel 6.1.0, 8 CPUs, 32768 MiB RAM"),
        "{text}"
    );
    let mut out = Vec::new();
    let root = p.path().to_str().expect("utf-8").to_string();
    peregrine_tune::run_to(&["--proc-root".into(), root], &mut out, true).expect("run");
    assert!(String::from_utf8_lossy(&out).contains("\x1b[1;31mharmful"));
}

#[test]
fn bad_arguments_are_a_usage_error() {
    let mut out = Vec::new();
    let e = peregrine_tune::run_to(&["--bogus".into()], &mut out, false);
    assert!(matches!(e, Err(peregrine_tune::TuneError::Usage(_))));
    let code = peregrine_tune::run_to(&["--help".into()], &mut out, false).expect("help");
    assert_eq!(code, EXIT_OK);
    assert!(String::from_utf8_lossy(&out).contains("--audit-sysctl"));
}
