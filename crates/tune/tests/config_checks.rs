//! Checks derived from the configuration, on fake /proc trees.

mod common;

use common::{FakeProc, TempDir, findings, run_json, verdict};
use peregrine_tune::inputs::{Affinity, ListenInput, TuneInputs};
use peregrine_tune::{EXIT_OK, TuneError};

fn inputs() -> TuneInputs {
    TuneInputs {
        conf_file: "/etc/peregrine/peregrine.conf".into(),
        worker_processes: None,
        worker_cpu_affinity: Affinity::None,
        worker_rlimit_nofile: Some(65536),
        worker_connections: 1024,
        listens: vec![ListenInput {
            addr: "0.0.0.0:80".into(),
            backlog: 511,
        }],
        proxying: false,
        open_file_cache_max: 0,
        pid_file: None,
        error_logs: Vec::new(),
    }
}

#[test]
fn a_sane_configuration_is_all_ok() {
    let p = FakeProc::modern();
    let (code, r) = run_json(&p, &[], Some(&inputs()));
    assert_eq!(code, EXIT_OK);
    for f in r["findings"].as_array().expect("findings") {
        assert_eq!(f["verdict"], "ok", "{f}");
    }
    assert_eq!(r["config"], "/etc/peregrine/peregrine.conf");
    assert_eq!(r["needs"]["fds_per_worker"], 1024 * 2 + 32 + 1);
}

#[test]
fn workers_against_cpus() {
    let p = FakeProc::modern();
    for (n, want) in [
        (Some(24), "lower"),
        (Some(8), "ok"),
        (Some(4), "ok"),
        (None, "ok"),
    ] {
        let i = TuneInputs {
            worker_processes: n,
            ..inputs()
        };
        let (_, r) = run_json(&p, &[], Some(&i));
        assert_eq!(verdict(&r, "worker_processes"), want, "{n:?}");
    }
}

#[test]
fn affinity_masks_against_existing_cpus() {
    let p = FakeProc::modern(); // CPUs 0-7
    let i = TuneInputs {
        worker_processes: Some(2),
        worker_cpu_affinity: Affinity::Masks(vec![vec![1], vec![1 << 9]]),
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "worker_cpu_affinity #2"), "remove");
    assert!(findings(&r, "worker_cpu_affinity #1").is_empty());

    // The seed's six-core masks: workers 5 and 6 share CPUs, CPU 5 idles.
    p.cpus(6);
    let seed: Vec<Vec<u64>> = [0b1, 0b10, 0b100, 0b1000, 0b1001, 0b10010]
        .iter()
        .map(|m| vec![*m])
        .collect();
    let i = TuneInputs {
        worker_processes: Some(6),
        worker_cpu_affinity: Affinity::Masks(seed),
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    let f = findings(&r, "worker_cpu_affinity");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["verdict"], "remove");
    assert!(
        f[0]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("CPU 5 has none")
    );

    let one_each: Vec<Vec<u64>> = (0..6).map(|b| vec![1u64 << b]).collect();
    let i = TuneInputs {
        worker_processes: Some(6),
        worker_cpu_affinity: Affinity::Masks(one_each),
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "worker_cpu_affinity"), "ok");
}

#[test]
fn descriptors_against_rlimits_nr_open_and_file_max() {
    let p = FakeProc::modern();
    // The seed's 20000 connections with worker_rlimit_nofile 20000.
    let i = TuneInputs {
        worker_connections: 20000,
        worker_rlimit_nofile: Some(20000),
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "open files per worker"), "raise");

    // No worker_rlimit_nofile: the inherited soft limit 1024 < 4000.
    let i = TuneInputs {
        worker_connections: 4000,
        worker_rlimit_nofile: None,
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    let f = findings(&r, "open files per worker");
    assert_eq!(f[0]["verdict"], "raise");
    assert!(f[0]["reason"].as_str().unwrap_or("").contains("EMFILE"));

    // Beyond fs.nr_open, setrlimit fails.
    let i = TuneInputs {
        worker_rlimit_nofile: Some(2_000_000),
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "fs.nr_open"), "raise");
    assert_eq!(findings(&r, "fs.nr_open")[0]["recommended"], "2000000");

    // 8 workers × (2 × 204800 + cache) exceeds fs.file-max.
    p.set("fs.file-max", "1000000");
    let i = TuneInputs {
        worker_connections: 204_800,
        worker_rlimit_nofile: Some(1_000_000),
        open_file_cache_max: 102_400,
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "fs.file-max"), "raise");
    assert_eq!(verdict(&r, "open files per worker"), "ok");
}

#[test]
fn proxying_halves_the_clients() {
    let p = FakeProc::modern();
    let (_, r) = run_json(&p, &[], Some(&inputs()));
    assert_eq!(findings(&r, "max clients")[0]["current"], "8192");
    let i = TuneInputs {
        proxying: true,
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(findings(&r, "max clients")[0]["current"], "4096");
}

#[test]
fn listen_backlogs_against_somaxconn_and_syn_backlog() {
    let p = FakeProc::modern();
    let big = TuneInputs {
        listens: vec![ListenInput {
            addr: "0.0.0.0:80".into(),
            backlog: 8192,
        }],
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&big));
    assert_eq!(verdict(&r, "listen 0.0.0.0:80 backlog"), "raise");
    assert_eq!(verdict(&r, "net.core.somaxconn"), "raise");
    assert_eq!(findings(&r, "net.core.somaxconn")[0]["recommended"], "8192");

    p.set("net.ipv4.tcp_syncookies", "0");
    p.set("net.ipv4.tcp_max_syn_backlog", "256");
    let (_, r) = run_json(&p, &[], Some(&inputs()));
    assert_eq!(verdict(&r, "listen 0.0.0.0:80 backlog"), "raise");
    assert_eq!(verdict(&r, "net.ipv4.tcp_max_syn_backlog"), "raise");

    let p = FakeProc::modern();
    p.evidence(12, 12, 0);
    let (_, r) = run_json(&p, &[], Some(&inputs()));
    let f = findings(&r, "listen 0.0.0.0:80 backlog");
    assert_eq!(f[0]["verdict"], "raise");
    assert_eq!(f[0]["recommended"], "backlog=1022");
}

#[test]
fn limits_conf_has_no_effect_under_systemd() {
    let p = FakeProc::modern();
    let (_, r) = run_json(&p, &[], Some(&inputs()));
    assert!(findings(&r, "limits.conf under systemd").is_empty());
    p.write("1/comm", "systemd\n");
    let (_, r) = run_json(&p, &[], Some(&inputs()));
    assert_eq!(verdict(&r, "limits.conf under systemd"), "ok");
    let i = TuneInputs {
        worker_rlimit_nofile: None,
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    let f = findings(&r, "limits.conf under systemd");
    assert_eq!(f[0]["verdict"], "raise");
    assert_eq!(f[0]["recommended"], "LimitNOFILE=65536");
    assert!(
        f[0]["source"]
            .as_str()
            .unwrap_or("")
            .contains("systemd.exec(5)")
    );
}

#[test]
fn the_running_server_is_read_in_its_own_namespace() {
    let p = FakeProc::modern();
    let dir = TempDir::new("pid");
    let pid_file = dir.0.join("peregrine.pid");
    std::fs::write(&pid_file, "4242\n").expect("pid file");
    p.write(
        "4242/limits",
        "Limit  Soft Limit  Hard Limit  Units\nMax open files            65536                65536                files\n",
    );
    p.write(
        "4242/net/netstat",
        "TcpExt: ListenOverflows ListenDrops\nTcpExt: 3 4\n",
    );
    p.write("4242/net/softnet_stat", "00000001 00000000 00000000\n");
    std::fs::create_dir_all(p.path().join("self/ns")).expect("mkdir");
    std::fs::create_dir_all(p.path().join("4242/ns")).expect("mkdir");
    std::os::unix::fs::symlink("net:[1]", p.path().join("self/ns/net")).expect("symlink");
    std::os::unix::fs::symlink("net:[2]", p.path().join("4242/ns/net")).expect("symlink");
    let i = TuneInputs {
        pid_file: Some(pid_file),
        worker_rlimit_nofile: None,
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(r["facts"]["nofile"]["soft"], 65536);
    assert_eq!(r["facts"]["listen_overflows"], 3);
    assert_eq!(r["facts"]["nofile_of"], "server (pid 4242)");
    assert_eq!(verdict(&r, "network namespace"), "unknown");
}

#[test]
fn configuration_is_loaded_from_prefix_and_file() {
    let p = FakeProc::modern();
    let prefix = TempDir::new("prefix");
    std::fs::create_dir_all(prefix.0.join("conf")).expect("mkdir");
    std::fs::write(
        prefix.0.join("conf/nginx.conf"),
        "worker_processes 16;\nevents { worker_connections 100; }\n\
         http { server { listen 127.0.0.1:8080 backlog=8192; } }\n",
    )
    .expect("write conf");
    let root = p.path().to_str().expect("utf-8").to_string();
    let pre = prefix.0.to_str().expect("utf-8").to_string();
    let mut out = Vec::new();
    let words: Vec<String> = [
        "-p",
        &pre,
        "-c",
        "conf/nginx.conf",
        "--proc-root",
        &root,
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let code = peregrine_tune::run_to(&words, &mut out, false).expect("run");
    assert_eq!(code, EXIT_OK);
    let r: serde_json::Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(verdict(&r, "worker_processes"), "lower");
    assert_eq!(verdict(&r, "listen 127.0.0.1:8080 backlog"), "raise");

    let words: Vec<String> = ["-p", &pre, "-c", "conf/missing.conf"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let e = peregrine_tune::run_to(&words, &mut Vec::new(), false);
    assert!(matches!(e, Err(TuneError::Config(_))), "{e:?}");
}

#[test]
fn generated_files_are_written_but_never_under_etc() {
    let p = FakeProc::modern();
    p.set("net.ipv4.tcp_syncookies", "0");
    let dir = TempDir::new("out");
    let s = dir.0.join("sysctl.conf");
    let l = dir.0.join("limits.conf");
    let d = dir.0.join("dropin.conf");
    let (code, _) = run_json(
        &p,
        &[
            "--sysctl-out",
            s.to_str().expect("utf-8"),
            "--limits-out",
            l.to_str().expect("utf-8"),
            "--systemd-out",
            d.to_str().expect("utf-8"),
        ],
        Some(&inputs()),
    );
    assert_eq!(code, peregrine_tune::EXIT_HARMFUL);
    let sysctl = std::fs::read_to_string(&s).expect("sysctl out");
    assert!(
        sysctl.contains("\nnet.ipv4.tcp_syncookies = 1\n"),
        "{sysctl}"
    );
    assert!(
        sysctl.contains("# harmful: removes SYN-flood protection"),
        "{sysctl}"
    );
    assert!(
        std::fs::read_to_string(&l)
            .expect("limits")
            .contains("root soft nofile 65536")
    );
    assert!(
        std::fs::read_to_string(&d)
            .expect("dropin")
            .contains("LimitNOFILE=65536")
    );

    let root = p.path().to_str().expect("utf-8").to_string();
    let args = common::args(&[
        "--proc-root",
        &root,
        "--sysctl-out",
        "/etc/sysctl.d/99-peregrine.conf",
    ]);
    let e = peregrine_tune::run_with(&args, None, &mut Vec::new(), false);
    assert!(matches!(e, Err(TuneError::Protected(_))), "{e:?}");
}

#[test]
fn the_inherited_limit_is_shared_by_the_worker_threads() {
    let p = FakeProc::modern(); // 8 CPUs
    p.nofile("8192", "8192");
    // 8192 descriptors for 4 workers of 1000 connections: 2048 each, ok;
    // for 8 workers (auto): 1024 each, below the 2033 a worker needs.
    let i = TuneInputs {
        worker_processes: Some(4),
        worker_connections: 1000,
        worker_rlimit_nofile: None,
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "open files per worker"), "ok");
    let i = TuneInputs {
        worker_processes: None,
        ..i
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    let f = findings(&r, "open files per worker");
    assert_eq!(f[0]["verdict"], "raise");
    let reason = f[0]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("shared by 8 worker thread(s)"), "{reason}");
}

#[test]
fn the_error_log_shows_a_full_upstream_backlog_and_emfile() {
    let p = FakeProc::modern();
    let dir = TempDir::new("tune-errlog");
    let log = dir.0.join("error.log");
    std::fs::write(
        &log,
        "2026/12/05 09:10:04 [error] 9#10: *3 connect() to unix:/run/php/php-fpm.sock failed \
         (11: Resource temporarily unavailable) while connecting to upstream, client: 127.0.0.1\n",
    )
    .unwrap();
    let i = TuneInputs {
        proxying: true,
        worker_processes: Some(1),
        worker_connections: 20000,
        worker_rlimit_nofile: Some(65536),
        error_logs: vec![log.clone()],
        ..inputs()
    };
    let (_, r) = run_json(&p, &[], Some(&i));
    let f = findings(&r, "upstream accept queue");
    assert_eq!(f[0]["verdict"], "raise", "{f:?}");
    let rec = f[0]["recommended"].as_str().unwrap_or("");
    assert!(
        rec.contains("listen.backlog") && rec.contains("10000"),
        "{rec}"
    );
    assert_eq!(verdict(&r, "open files per worker"), "ok");

    // Descriptors ran out although the configured limit looks enough.
    std::fs::write(
        &log,
        "2026/12/05 09:11:43 [alert] 9#10: accept4() failed (24: Too many open files)\n",
    )
    .unwrap();
    let (_, r) = run_json(&p, &[], Some(&i));
    assert_eq!(verdict(&r, "open files per worker"), "raise");
    assert!(findings(&r, "upstream accept queue").is_empty());
}
