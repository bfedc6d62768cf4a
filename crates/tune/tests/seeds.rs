//! The sysctl blocks of the seed articles (copied verbatim into
//! tests/fixtures/) audited line by line: every line has its expected
//! verdict, on a modern kernel and on one that still has tcp_tw_recycle.

mod common;

use common::{FakeProc, run_json};
use peregrine_tune::{EXIT_HARMFUL, EXIT_OK};

/// (line, verdict, verdict if corrected) for lines that set nothing as written.
type Expect = &'static [(usize, &'static str, Option<&'static str>)];

const R: Option<&str> = None;

/// Seed 000, "TCP protocol stack tuning": typesetting damage everywhere.
const SEED_000_TCP_STACK: Expect = &[
    (3, "remove", Some("remove")), // `ip_local_po Rt_range`, and one number only
    (5, "ok", R),                  // `1 # Number of`: no inline comments
    (7, "remove", R),              // prose without `=`
    (9, "ok", R),                  // ignored while syncookies are on
    (13, "remove", Some("ok")),    // `Net.core.somaxconn`: case-sensitive
    (14, "ok", R),
    (18, "remove", Some("lower")), // rmem_default above rmem_max
    (19, "remove", Some("ok")),
    (20, "remove", Some("ok")),
    (21, "ok", R),     // trailing `net.ipv4.tcp_wmem` noted
    (22, "remove", R), // `= 4096 …` without a key
    (23, "remove", Some("ok")),
];

/// Seed 000, "About optimization of kernel parameters": all `Net.`.
const SEED_000_KERNEL_PARAMS: Expect = &[
    (1, "remove", Some("harmful")), // tw_buckets 6000
    (2, "remove", Some("ok")),
    (3, "remove", Some("remove")), // tw_recycle on a kernel without it
    (4, "remove", Some("ok")),
    (5, "remove", Some("ok")),
    (6, "remove", Some("ok")),
    (7, "remove", Some("ok")),
    (8, "remove", Some("ok")),
    (9, "remove", Some("ok")),
    (10, "remove", Some("harmful")), // timestamps 0
    (11, "remove", Some("raise")),
    (12, "remove", Some("raise")),
    (13, "remove", Some("raise")),
    (14, "remove", Some("ok")),
];

const SEED_001: Expect = &[
    (1, "raise", R),   // swappiness 0
    (3, "ok", R),      // syn backlog ≥ 511 with cookies off (line 21)
    (5, "harmful", R), // tw_buckets 8000
    (6, "ok", R),
    (7, "remove", R), // tw_recycle: no such key here
    (8, "remove", R), // fin_timeout overridden by line 12
    (10, "ok", R),
    (12, "raise", R), // fin_timeout 1
    (14, "ok", R),
    (16, "ok", R),
    (17, "ok", R),
    (18, "ok", R),
    (19, "ok", R),
    (20, "ok", R),
    (21, "harmful", R), // syncookies 0
    (22, "ok", R),
];

const SEED_002: Expect = &[
    (1, "ok", R),
    (3, "ok", R),
    (5, "ok", R),
    (7, "ok", R),
    (9, "ok", R),
    (11, "ok", R),
    (13, "ok", R),
    (15, "ok", R),
    (17, "remove", Some("ok")), // tcp_synCOOKIEs
    (19, "ok", R),
    (21, "ok", R),
    (23, "ok", R),
    (25, "ok", R),
    (27, "harmful", R), // tw_buckets 6000
    (29, "ok", R),
    (31, "ok", R),
    (33, "raise", R), // tcp_rmem max 4 MiB below the kernel's 6 MiB
    (35, "ok", R),
    (37, "ok", R),
    (39, "ok", R),
    (41, "ok", R),
    (43, "ok", R),
    (45, "ok", R),
    (47, "remove", Some("ok")), // somaxcOnn
    (49, "lower", R),           // 3276800 orphans × 64 KiB > 32 GiB
    (51, "ok", R),
    (53, "harmful", R), // timestamps 0
    (55, "raise", R),
    (57, "raise", R),
    (59, "remove", R),
    (61, "remove", R), // tw_reuse without timestamps does nothing
    (63, "lower", R),  // tcp_mem in pages: 3.5 TiB
    (65, "raise", R),
    (67, "ok", R),
    (69, "ok", R),
];

const SEED_003_ECHO: Expect = &[
    (1, "remove", Some("ok")), // `10000>` and `/proc/sys/ net`
    (2, "remove", Some("ok")), // `1>` is a redirection
    (3, "remove", Some("remove")),
    (4, "remove", Some("harmful")),
];

const SEED_003: Expect = &[
    (1, "ok", R),
    (2, "ok", R),
    (3, "ok", R),
    (4, "ok", R),
    (5, "ok", R),
    (6, "raise", R),  // initial receive buffer 4096
    (7, "raise", R),  // initial send buffer 4096
    (8, "ok", R),     // 12 GiB of 32
    (9, "remove", R), // overridden by line 12
    (10, "ok", R),
    (11, "ok", R),
    (12, "ok", R),
    (13, "ok", R),
    (14, "remove", R),
    (15, "harmful", R), // lowers tcp_max_orphans from 262144
    (16, "harmful", R),
];

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Audits a fixture and checks every non-blank, non-comment line.
fn check(proc: &FakeProc, name: &str, expect: Expect, tw_recycle: &str) -> i32 {
    let path = fixture(name);
    let (code, r) = run_json(proc, &["--audit-sysctl", &path], None);
    let findings = r["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), expect.len(), "{name}: {findings:#?}");
    for (f, (line, want, corrected)) in findings.iter().zip(expect) {
        assert_eq!(f["line"], *line, "{name}: {f}");
        let is_recycle = f["item"]
            .as_str()
            .is_some_and(|i| i.to_lowercase().contains("tw_recycle"));
        let (want, corrected) = match (is_recycle, corrected) {
            (true, Some(_)) => (*want, Some(tw_recycle)),
            (true, None) => (tw_recycle, None),
            _ => (*want, *corrected),
        };
        assert_eq!(f["verdict"], want, "{name}:{line}: {f}");
        assert_eq!(f["if_corrected"].as_str(), corrected, "{name}:{line}: {f}");
        assert!(
            !f["reason"].as_str().unwrap_or("").is_empty(),
            "{name}:{line}"
        );
    }
    code
}

const ALL: &[(&str, Expect, bool)] = &[
    ("seed-000-tcp-stack.conf", SEED_000_TCP_STACK, false),
    ("seed-000-kernel-params.conf", SEED_000_KERNEL_PARAMS, false),
    ("seed-001.conf", SEED_001, true),
    ("seed-002.conf", SEED_002, true),
    ("seed-003-echo.sh", SEED_003_ECHO, false),
    ("seed-003.conf", SEED_003, true),
];

#[test]
fn seeds_on_a_kernel_without_tw_recycle() {
    let p = FakeProc::modern();
    for (name, expect, harmful) in ALL {
        let code = check(&p, name, expect, "remove");
        assert_eq!(
            code,
            if *harmful { EXIT_HARMFUL } else { EXIT_OK },
            "{name}"
        );
    }
}

#[test]
fn seeds_on_a_kernel_with_tw_recycle() {
    let p = FakeProc::legacy();
    for (name, expect, _) in ALL {
        let code = check(&p, name, expect, "harmful");
        let sets_recycle = matches!(*name, "seed-001.conf" | "seed-002.conf" | "seed-003.conf");
        if sets_recycle {
            assert_eq!(code, EXIT_HARMFUL, "{name}");
        }
    }
}

#[test]
fn misspelled_keys_say_they_set_nothing() {
    let p = FakeProc::modern();
    let (_, r) = run_json(&p, &["--audit-sysctl", &fixture("seed-002.conf")], None);
    let f = common::findings(&r, "net.core.somaxcOnn");
    assert_eq!(f.len(), 1);
    let reason = f[0]["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("case-sensitive") && reason.contains("sets nothing"),
        "{reason}"
    );
    assert_eq!(f[0]["recommended"], "net.core.somaxconn = 262144");
}

#[test]
fn echo_redirection_is_explained() {
    let p = FakeProc::modern();
    let (_, r) = run_json(&p, &["--audit-sysctl", &fixture("seed-003-echo.sh")], None);
    let reason = r["findings"][1]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("redirects standard output"), "{reason}");
    assert_eq!(r["findings"][2]["recommended"], "(delete the line)");
    assert_eq!(
        r["findings"][3]["recommended"],
        "net.ipv4.tcp_syncookies = 1"
    );
}

#[test]
fn unreadable_audit_file_is_an_error() {
    let p = FakeProc::modern();
    let root = p.path().to_str().expect("utf-8").to_string();
    let args = common::args(&[
        "--proc-root",
        &root,
        "--audit-sysctl",
        "/nonexistent/sysctl.conf",
    ]);
    let mut out = Vec::new();
    let e = peregrine_tune::run_with(&args, None, &mut out, false);
    assert!(matches!(e, Err(peregrine_tune::TuneError::Read { .. })));
}

#[test]
fn binary_garbage_is_judged_not_fatal() {
    let p = FakeProc::modern();
    let dir = common::TempDir::new("garbage");
    let path = dir.0.join("bad.conf");
    std::fs::write(
        &path,
        b"\xff\xfe=\x00\nnet.core.somaxconn = \xff\n= =\n../../etc = 1\n",
    )
    .expect("write");
    let (code, r) = run_json(&p, &["--audit-sysctl", path.to_str().expect("utf-8")], None);
    assert_eq!(code, EXIT_OK);
    let all = r["findings"].as_array().expect("findings");
    assert_eq!(all.len(), 4);
    assert!(all.iter().all(|f| f["verdict"] == "remove"), "{all:#?}");
}

#[test]
fn audit_writes_the_corrected_settings() {
    let p = FakeProc::modern();
    let dir = common::TempDir::new("auditout");
    let out = dir.0.join("90-peregrine.conf");
    let out_s = out.to_str().expect("utf-8").to_string();
    let (code, _) = run_json(
        &p,
        &[
            "--audit-sysctl",
            &fixture("seed-001.conf"),
            "--sysctl-out",
            &out_s,
        ],
        None,
    );
    assert_eq!(code, EXIT_HARMFUL);
    let text = std::fs::read_to_string(&out).expect("snippet");
    for line in [
        "\nnet.ipv4.tcp_syncookies = 1\n",
        "\nnet.ipv4.tcp_max_tw_buckets = 262144\n",
        "\nvm.swappiness = 10\n",
        "\nnet.ipv4.tcp_fin_timeout = 10\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    assert!(!text.contains("tcp_tw_recycle ="), "{text}");
}
