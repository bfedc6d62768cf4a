//! The facts about the live system a report rests on, gathered once.
//!
//! Everything is read through the proc root; a missing or unreadable entry
//! becomes `None` plus an `unknown` finding, never an abort.

use crate::procfs::{self, KernelVersion, ProcFs, Rlimit};
use crate::verdict::{Finding, Verdict};

/// The facts, each `None` when it could not be read.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Facts {
    pub kernel: Option<KernelVersion>,
    /// Online CPU ids (`cpuN` rows of `/proc/stat`).
    pub cpus_online: Option<Vec<usize>>,
    /// CPUs this process may run on (`Cpus_allowed_list`): what nginx's
    /// `worker_processes auto` counts (it uses sched_getaffinity(2)).
    pub cpus_allowed: Option<Vec<usize>>,
    pub mem_total: Option<u64>,
    /// RLIMIT_NOFILE of the server when it runs, else of this process.
    pub nofile: Option<Rlimit>,
    /// Whose RLIMIT_NOFILE that is.
    pub nofile_of: String,
    pub listen_overflows: Option<u64>,
    pub listen_drops: Option<u64>,
    /// Packets dropped because netdev_max_backlog was full (all CPUs).
    pub softnet_dropped: Option<u64>,
    pub systemd: bool,
    /// The running server's pid, from the configured pid file.
    pub server_pid: Option<u32>,
    /// What the configuration's error logs say (filled in by the caller,
    /// which knows their paths).
    pub log: crate::errlog::LogEvidence,
}

impl Facts {
    /// The CPU count a `worker_processes auto` would use.
    pub fn cpu_count(&self) -> Option<usize> {
        match (&self.cpus_allowed, &self.cpus_online) {
            (Some(a), _) if !a.is_empty() => Some(a.len()),
            (_, Some(o)) if !o.is_empty() => Some(o.len()),
            _ => None,
        }
    }
}

/// Gathers the facts; `server_pid` comes from the configuration's pid file.
/// Problems are returned as `unknown` findings.
pub fn gather(proc: &ProcFs, server_pid: Option<u32>) -> (Facts, Vec<Finding>) {
    let mut problems = Vec::new();
    let mut facts = Facts {
        server_pid,
        ..Facts::default()
    };
    let mut note = |item: &str, e: String| {
        problems.push(Finding::new(item, Verdict::Unknown, e).source("proc(5)"));
    };
    read_system(proc, &mut facts, &mut note);
    // The running server's own limits and namespace are what count: a
    // systemd service does not get the shell's ulimit (systemd.exec(5)).
    let running = server_pid.filter(|p| proc.root().join(p.to_string()).is_dir());
    read_server(proc, running, &mut facts, &mut note);
    facts.systemd = proc.read("1/comm").is_ok_and(|c| c.trim() == "systemd");
    if let Some(p) = running {
        problems.extend(netns_mismatch(proc, p));
    }
    (facts, problems)
}

/// Kernel version, CPUs and memory.
fn read_system(proc: &ProcFs, facts: &mut Facts, note: &mut impl FnMut(&str, String)) {
    match proc.read("sys/kernel/osrelease") {
        Ok(t) => match procfs::parse_osrelease(&t) {
            Some(k) => facts.kernel = Some(k),
            None => note(
                "kernel version",
                format!("cannot parse kernel/osrelease `{}`", t.trim()),
            ),
        },
        Err(e) => note("kernel version", e.to_string()),
    }
    match proc.read("stat") {
        Ok(t) => facts.cpus_online = Some(procfs::parse_stat_cpus(&t)),
        Err(e) => note("CPU count", e.to_string()),
    }
    facts.cpus_allowed = proc
        .read("self/status")
        .ok()
        .and_then(|t| procfs::parse_status_cpus(&t));
    match proc.read("meminfo").map(|t| procfs::parse_memtotal(&t)) {
        Ok(Some(m)) => facts.mem_total = Some(m),
        Ok(None) => note("memory", "no MemTotal in meminfo".into()),
        Err(e) => note("memory", e.to_string()),
    }
}

/// RLIMIT_NOFILE and the evidence counters, of the running server when
/// there is one (its network namespace's counters), else of this process.
fn read_server(
    proc: &ProcFs,
    running: Option<u32>,
    facts: &mut Facts,
    note: &mut impl FnMut(&str, String),
) {
    let (who, limits_rel, net_rel) = match running {
        Some(p) => (
            format!("server (pid {p})"),
            format!("{p}/limits"),
            format!("{p}/net"),
        ),
        None => (
            "this shell (server not running)".to_string(),
            "self/limits".into(),
            "net".into(),
        ),
    };
    facts.nofile_of = who;
    match proc
        .read(&limits_rel)
        .map(|t| procfs::parse_limits_nofile(&t))
    {
        Ok(Some(l)) => facts.nofile = Some(l),
        Ok(None) => note(
            "RLIMIT_NOFILE",
            format!("no `Max open files` in {limits_rel}"),
        ),
        Err(e) => note("RLIMIT_NOFILE", e.to_string()),
    }
    match proc.read(&format!("{net_rel}/netstat")) {
        Ok(t) => {
            facts.listen_overflows = procfs::parse_netstat(&t, "TcpExt", "ListenOverflows");
            facts.listen_drops = procfs::parse_netstat(&t, "TcpExt", "ListenDrops");
        }
        Err(e) => note("ListenOverflows", e.to_string()),
    }
    match proc
        .read(&format!("{net_rel}/softnet_stat"))
        .map(|t| procfs::parse_softnet(&t))
    {
        Ok(Some((dropped, _))) => facts.softnet_dropped = Some(dropped),
        Ok(None) => note("softnet drops", "softnet_stat has no readable rows".into()),
        Err(e) => note("softnet drops", e.to_string()),
    }
}

/// /proc/sys/net shows the reader's network namespace: when the server runs
/// in another one, the net.* values read here are not the server's.
fn netns_mismatch(proc: &ProcFs, pid: u32) -> Option<Finding> {
    let ns = |rel: &str| std::fs::read_link(proc.root().join(rel)).ok();
    let (mine, theirs) = (ns("self/ns/net")?, ns(&format!("{pid}/ns/net"))?);
    (mine != theirs).then(|| {
        Finding::new(
            "network namespace",
            Verdict::Unknown,
            format!(
                "the server (pid {pid}) runs in another network namespace: net.* values \
                 read here are not its own; run `nsenter -t {pid} -n peregrine tune`"
            ),
        )
        .source("network_namespaces(7)")
    })
}
