//! A run on the live machine prints a complete report.

use peregrine_tune::rules::RULES;
use peregrine_tune::{EXIT_HARMFUL, EXIT_OK};

#[test]
fn live_machine_report_is_complete() {
    if !std::path::Path::new("/proc/sys/kernel/osrelease").exists() {
        return; // not Linux: nothing to read
    }
    let mut out = Vec::new();
    let code = peregrine_tune::run_to(&[], &mut out, false).expect("live run");
    let text = String::from_utf8(out).expect("utf-8");
    println!("{text}");
    assert!(code == EXIT_OK || code == EXIT_HARMFUL, "exit {code}");
    for rule in RULES {
        assert!(
            text.contains(rule.key),
            "{} missing from the live report",
            rule.key
        );
    }
    assert!(text.contains("summary: "));

    let mut out = Vec::new();
    peregrine_tune::run_to(&["--json".into()], &mut out, false).expect("live json");
    let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(v["mode"], "live");
    assert!(
        v["facts"]["kernel"].is_string(),
        "kernel version read: {}",
        v["facts"]
    );
    assert!(
        v["facts"]["cpus_online"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
}
