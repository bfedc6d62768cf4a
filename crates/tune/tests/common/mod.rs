//! Fake /proc trees for the integration tests, built in temporary
//! directories, and helpers to run `peregrine tune` on them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use peregrine_tune::{Args, TuneInputs};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let p =
            std::env::temp_dir().join(format!("peregrine-tune-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The sysctls of an untuned modern kernel (6.1 on 8 CPUs, 32 GiB).
pub const MODERN: &[(&str, &str)] = &[
    ("net.ipv4.tcp_tw_reuse", "2"),
    ("net.ipv4.tcp_timestamps", "1"),
    ("net.ipv4.tcp_syncookies", "1"),
    ("net.ipv4.tcp_fin_timeout", "60"),
    ("net.ipv4.tcp_max_tw_buckets", "262144"),
    ("net.core.somaxconn", "4096"),
    ("net.ipv4.tcp_max_syn_backlog", "4096"),
    ("net.core.netdev_max_backlog", "1000"),
    ("net.ipv4.tcp_max_orphans", "262144"),
    ("net.ipv4.tcp_syn_retries", "6"),
    ("net.ipv4.tcp_synack_retries", "5"),
    ("net.ipv4.tcp_keepalive_time", "7200"),
    ("net.ipv4.ip_local_port_range", "32768\t60999"),
    ("net.core.rmem_default", "212992"),
    ("net.core.wmem_default", "212992"),
    ("net.core.rmem_max", "212992"),
    ("net.core.wmem_max", "212992"),
    ("net.ipv4.tcp_rmem", "4096\t131072\t6291456"),
    ("net.ipv4.tcp_wmem", "4096\t16384\t4194304"),
    ("net.ipv4.tcp_mem", "384000\t512000\t768000"),
    ("net.ipv4.tcp_window_scaling", "1"),
    ("net.ipv4.tcp_sack", "1"),
    ("net.ipv4.tcp_congestion_control", "cubic"),
    ("net.ipv4.tcp_available_congestion_control", "reno cubic"),
    ("fs.file-max", "3273516"),
    ("fs.nr_open", "1048576"),
    ("vm.swappiness", "60"),
    // Present on every kernel, judged "not relevant".
    ("net.ipv4.ip_forward", "0"),
    ("net.ipv4.conf.default.rp_filter", "1"),
    ("net.ipv4.conf.default.accept_source_route", "0"),
    ("kernel.sysrq", "0"),
    ("kernel.core_uses_pid", "1"),
    ("kernel.shmmni", "4096"),
    ("kernel.sem", "32000\t1024000000\t500\t32000"),
    ("kernel.msgmnb", "16384"),
    ("kernel.msgmax", "8192"),
    ("kernel.shmmax", "18446744073692774399"),
    ("kernel.shmall", "18446744073692774399"),
];

/// A fake proc root.
pub struct FakeProc {
    pub dir: TempDir,
}

impl FakeProc {
    /// An untuned 6.1 kernel, 8 CPUs, 32 GiB, RLIMIT_NOFILE 1024/524288,
    /// no evidence of drops.
    pub fn modern() -> FakeProc {
        let p = FakeProc {
            dir: TempDir::new("proc"),
        };
        p.write("sys/kernel/osrelease", "6.1.0-18-amd64\n");
        for (k, v) in MODERN {
            p.set(k, v);
        }
        p.cpus(8);
        p.write("meminfo", "MemTotal:       33554432 kB\nMemFree: 1 kB\n");
        p.nofile("1024", "524288");
        p.evidence(0, 0, 0);
        p
    }

    /// A 4.9 kernel that still has tcp_tw_recycle (and somaxconn 128).
    pub fn legacy() -> FakeProc {
        let p = FakeProc::modern();
        p.write("sys/kernel/osrelease", "4.9.0-19-amd64\n");
        p.set("net.ipv4.tcp_tw_recycle", "0");
        p.set("net.ipv4.tcp_tw_reuse", "0");
        p.set("net.core.somaxconn", "128");
        p
    }

    pub fn path(&self) -> &Path {
        &self.dir.0
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write fake proc file");
    }

    pub fn set(&self, key: &str, value: &str) {
        self.write(
            &format!("sys/{}", key.replace('.', "/")),
            &format!("{value}\n"),
        );
    }

    pub fn remove(&self, key: &str) {
        let _ = std::fs::remove_file(self.path().join(format!("sys/{}", key.replace('.', "/"))));
    }

    pub fn cpus(&self, n: usize) {
        let mut stat = String::from("cpu  1 2 3 4\n");
        for i in 0..n {
            stat.push_str(&format!("cpu{i} 1 2 3 4\n"));
        }
        stat.push_str("intr 1\n");
        self.write("stat", &stat);
        self.write(
            "self/status",
            &format!("Name:\ttune\nCpus_allowed_list:\t0-{}\n", n - 1),
        );
    }

    pub fn nofile(&self, soft: &str, hard: &str) {
        self.write(
            "self/limits",
            &format!(
                "Limit                     Soft Limit           Hard Limit           Units     \n\
                 Max processes             96365                96365                processes \n\
                 Max open files            {soft:<20} {hard:<20} files     \n"
            ),
        );
    }

    pub fn evidence(&self, overflows: u64, drops: u64, softnet_dropped: u64) {
        self.write(
            "net/netstat",
            &format!(
                "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPTimeouts\n\
                 TcpExt: 0 {overflows} {drops} 5\n\
                 IpExt: InNoRoutes\nIpExt: 0\n"
            ),
        );
        self.write(
            "net/softnet_stat",
            &format!("000000b1 {softnet_dropped:08x} 00000000 0\n00000c4a 00000000 00000000 0\n"),
        );
    }
}

/// Parses `peregrine tune` arguments.
pub fn args(words: &[&str]) -> Args {
    use clap::Parser;
    let argv = std::iter::once("peregrine tune").chain(words.iter().copied());
    Args::try_parse_from(argv).expect("valid arguments")
}

/// Runs on a proc root with optional configuration inputs; returns the exit
/// status and the JSON report.
pub fn run_json(
    proc: &FakeProc,
    extra: &[&str],
    inputs: Option<&TuneInputs>,
) -> (i32, serde_json::Value) {
    let root = proc.path().to_str().expect("utf-8 temp path").to_string();
    let mut words = vec!["--json", "--proc-root", root.as_str()];
    words.extend_from_slice(extra);
    let mut out = Vec::new();
    let code = peregrine_tune::run_with(&args(&words), inputs, &mut out, false).expect("run");
    let text = String::from_utf8(out).expect("utf-8 output");
    (code, serde_json::from_str(&text).expect("JSON report"))
}

/// The findings about `item` (several for audits naming a key twice).
pub fn findings<'a>(report: &'a serde_json::Value, item: &str) -> Vec<&'a serde_json::Value> {
    report["findings"]
        .as_array()
        .map(|a| a.iter().filter(|f| f["item"] == item).collect())
        .unwrap_or_default()
}

/// The verdict of the single finding about `item`.
pub fn verdict(report: &serde_json::Value, item: &str) -> String {
    let f = findings(report, item);
    assert_eq!(f.len(), 1, "expected one finding for {item}, got {f:?}");
    f[0]["verdict"].as_str().unwrap_or("").to_string()
}
