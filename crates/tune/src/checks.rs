//! Checks derived from the configuration: workers against CPUs, affinity
//! masks against existing CPUs, descriptors against the rlimits and
//! fs.nr_open, listen backlogs against somaxconn and tcp_max_syn_backlog,
//! limits.conf against systemd, and what the error log says (a full
//! upstream backlog, descriptors running out).
//!
//! Peregrine's workers are threads of one process: the process's
//! RLIMIT_NOFILE is shared by all of them (the server sets
//! `worker_rlimit_nofile` × workers, so that each has an nginx worker's
//! share), and without `worker_rlimit_nofile` a worker has its share of
//! the inherited limit.

use crate::facts::Facts;
use crate::inputs::{Affinity, TuneInputs};
use crate::procfs::ProcFs;
use crate::rules::{NGINX_DEFAULT_BACKLOG, Needs};
use crate::verdict::{Finding, Verdict};

/// Descriptors per connection: the socket, plus either the file being sent
/// or, when proxying, the upstream connection (which nginx also counts in
/// worker_connections, so clients are then at most half of them).
pub const FDS_PER_CONNECTION: u64 = 2;

/// Descriptors a worker holds besides connections and cached files: log
/// files, the epoll and event descriptors, inherited pipes (one per listen
/// socket is added on top).
pub const FD_SLACK: u64 = 32;

/// The RLIMIT_NOFILE suggested in generated files when no configuration
/// says what is needed (a common systemd service value).
pub const DEFAULT_NOFILE_SUGGESTION: u64 = 65536;

const AFFINITY_SRC: &str = "nginx docs (worker_cpu_affinity); sched_setaffinity(2)";
const NGINX_CORE: &str = "nginx docs (ngx_core_module, ngx_http_core_module listen)";

/// What the configuration needs from the kernel.
pub fn needs(inputs: Option<&TuneInputs>, facts: &Facts) -> Needs {
    let Some(i) = inputs else {
        return Needs::without_config();
    };
    let backlog = i
        .listens
        .iter()
        .map(|l| l.backlog)
        .max()
        .unwrap_or(NGINX_DEFAULT_BACKLOG);
    let per_worker = i
        .worker_connections
        .saturating_mul(FDS_PER_CONNECTION)
        .saturating_add(i.open_file_cache_max)
        .saturating_add(FD_SLACK + i.listens.len() as u64);
    let workers = workers(i, facts).unwrap_or(1) as u64;
    Needs {
        backlog,
        fds_per_worker: Some(per_worker),
        fds_total: Some(per_worker.saturating_mul(workers)),
        nofile_wanted: Some(i.worker_rlimit_nofile.unwrap_or(per_worker)),
    }
}

fn workers(i: &TuneInputs, facts: &Facts) -> Option<usize> {
    i.worker_processes.or_else(|| facts.cpu_count())
}

/// All configuration checks.
pub fn check(i: &TuneInputs, facts: &Facts, needs: &Needs, proc: &ProcFs) -> Vec<Finding> {
    let mut out = Vec::new();
    out.push(worker_processes(i, facts));
    out.extend(affinity(i, facts));
    out.extend(descriptors(i, facts, needs));
    out.extend(backlogs(i, facts, proc));
    out.extend(upstream_backlog(i, facts, proc));
    out
}

fn worker_processes(i: &TuneInputs, facts: &Facts) -> Finding {
    let item = "worker_processes";
    let Some(cpus) = facts.cpu_count() else {
        return Finding::new(item, Verdict::Unknown, "CPU count unreadable");
    };
    let f = match i.worker_processes {
        None => Finding::new(
            item,
            Verdict::Ok,
            format!("auto: one worker per CPU ({cpus})"),
        )
        .current("auto"),
        Some(n) if n > cpus => Finding::new(
            item,
            Verdict::Lower,
            format!(
                "{n} workers on {cpus} CPUs: workers compete for CPUs and switch context; \
                 an event-driven worker gains nothing from sharing a CPU"
            ),
        )
        .current(n.to_string())
        .recommended("auto"),
        Some(n) => {
            Finding::new(item, Verdict::Ok, format!("{n} of {cpus} CPUs")).current(n.to_string())
        }
    };
    f.source("nginx docs (worker_processes); sched_getaffinity(2)")
}

fn mask_cpus(mask: &[u64]) -> Vec<usize> {
    let mut v = Vec::new();
    for (w, word) in mask.iter().enumerate() {
        for b in 0..64 {
            if word >> b & 1 == 1 {
                v.push(w * 64 + b);
            }
        }
    }
    v
}

fn mask_text(mask: &[u64]) -> String {
    let cpus = mask_cpus(mask);
    let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
    format!(
        "CPU {}",
        if list.is_empty() {
            "none".into()
        } else {
            list.join(",")
        }
    )
}

fn affinity(i: &TuneInputs, facts: &Facts) -> Vec<Finding> {
    let item = "worker_cpu_affinity";
    let src = AFFINITY_SRC;
    let Some(online) = facts.cpus_online.as_ref() else {
        return Vec::new();
    };
    let masks = match &i.worker_cpu_affinity {
        Affinity::None => return Vec::new(),
        Affinity::Auto(None) => {
            return vec![
                Finding::new(item, Verdict::Ok, "auto: one CPU per worker")
                    .current("auto")
                    .source(src),
            ];
        }
        Affinity::Auto(Some(m)) => vec![m.clone()],
        Affinity::Masks(m) => m.clone(),
    };
    let mut out: Vec<Finding> = masks
        .iter()
        .enumerate()
        .filter_map(|(n, m)| missing_cpus(n, m, online))
        .collect();
    if let Affinity::Masks(_) = i.worker_cpu_affinity {
        let workers = workers(i, facts).unwrap_or(masks.len());
        out.extend(overlap(&masks, workers, online).map(|r| {
            Finding::new(item, Verdict::Remove, r)
                .recommended("auto")
                .source(src)
        }));
    }
    if out.is_empty() {
        out.push(Finding::new(item, Verdict::Ok, "every mask names existing CPUs").source(src));
    }
    out
}

/// A mask (the `n`th, from 0) naming CPUs that are not online.
fn missing_cpus(n: usize, mask: &[u64], online: &[usize]) -> Option<Finding> {
    let cpus = mask_cpus(mask);
    let missing: Vec<String> = cpus
        .iter()
        .filter(|c| !online.contains(c))
        .map(|c| c.to_string())
        .collect();
    if missing.is_empty() {
        return None;
    }
    let why = if missing.len() == cpus.len() {
        "no CPU of this mask exists: sched_setaffinity fails (EINVAL) and the worker runs unpinned"
    } else {
        "only the mask's other CPUs are used"
    };
    let reason = format!(
        "CPU {} does not exist ({} online); {why}",
        missing.join(","),
        online.len()
    );
    Some(
        Finding::new(
            format!("worker_cpu_affinity #{}", n + 1),
            Verdict::Remove,
            reason,
        )
        .current(mask_text(mask))
        .recommended("auto")
        .source(AFFINITY_SRC),
    )
}

/// Workers pinned to a shared CPU while an online CPU has no worker.
fn overlap(masks: &[Vec<u64>], workers: usize, online: &[usize]) -> Option<String> {
    let last = masks.last()?;
    // Past one worker per mask and per CPU, more workers only repeat the
    // last mask: checking them adds nothing.
    let workers = workers.min(masks.len().max(online.len()) + 1);
    let per_worker: Vec<Vec<usize>> = (0..workers)
        .map(|w| mask_cpus(masks.get(w).unwrap_or(last)))
        .collect();
    let used: Vec<usize> = per_worker.iter().flatten().copied().collect();
    let idle: Vec<String> = online
        .iter()
        .filter(|c| !used.contains(c))
        .map(|c| c.to_string())
        .collect();
    let shared = online
        .iter()
        .find(|c| per_worker.iter().filter(|w| w.contains(c)).count() > 1)?;
    (!idle.is_empty()).then(|| {
        format!(
            "CPU {shared} is shared by several workers while CPU {} has none: \
             write `worker_cpu_affinity auto`",
            idle.join(",")
        )
    })
}

fn descriptors(i: &TuneInputs, facts: &Facts, needs: &Needs) -> Vec<Finding> {
    let need = needs.fds_per_worker.unwrap_or(0);
    let workers = workers(i, facts).unwrap_or(1).max(1) as u64;
    let server = facts.server_pid.is_some() && facts.nofile_of.starts_with("server");
    let (limit, whose) = match (i.worker_rlimit_nofile, facts.nofile) {
        // The running server could not set what the directive asks for.
        (Some(n), Some(r)) if server && r.soft.is_some_and(|s| s < n.saturating_mul(workers)) => {
            let soft = r.soft.unwrap_or(0);
            (
                Some(soft / workers),
                format!(
                    "the server's RLIMIT_NOFILE {soft} shared by {workers} worker thread(s) \
                     (setrlimit to worker_rlimit_nofile × workers = {} failed above the hard \
                     limit {}: raise LimitNOFILE= or the hard limit)",
                    n.saturating_mul(workers),
                    r.hard.map_or("unlimited".into(), |h| h.to_string())
                ),
            )
        }
        (Some(n), _) => (Some(n), "worker_rlimit_nofile".to_string()),
        (None, Some(r)) => (
            Some(r.soft.map_or(u64::MAX, |s| s / workers)),
            format!(
                "RLIMIT_NOFILE of {} shared by {workers} worker thread(s)",
                facts.nofile_of
            ),
        ),
        (None, None) => (None, "RLIMIT_NOFILE".into()),
    };
    let mut out = vec![
        max_clients(i, facts),
        emfile_evidence(open_files(i, limit, &whose, need), facts, need),
    ];
    if facts.systemd {
        let short = i.worker_rlimit_nofile.is_none() && limit.is_some_and(|l| l < need);
        let reason = "limits.conf is applied by pam_limits to login sessions only: a systemd \
                      service ignores it and takes LimitNOFILE= (see --systemd-out)";
        out.push(
            Finding::new(
                "limits.conf under systemd",
                if short { Verdict::Raise } else { Verdict::Ok },
                reason,
            )
            .recommended(format!(
                "LimitNOFILE={}",
                need.max(DEFAULT_NOFILE_SUGGESTION)
            ))
            .source("limits.conf(5); systemd.exec(5)"),
        );
    }
    out
}

/// The error log's EMFILE failures overrule a limit that looks large
/// enough (another process's limit, a descriptor leak, a burst).
fn emfile_evidence(f: Finding, facts: &Facts, need: u64) -> Finding {
    let n = facts.log.emfile;
    if n == 0 || f.verdict != Verdict::Ok {
        return f;
    }
    Finding::new(
        f.item.clone(),
        Verdict::Raise,
        format!("the error log shows {n} call(s) failed with EMFILE (24: Too many open files)"),
    )
    .current(f.current.clone().unwrap_or_default())
    .recommended(need.to_string())
    .source("error log; getrlimit(2)")
}

/// The backend's accept queue: a unix-socket upstream (php-fpm) refuses a
/// connect with EAGAIN once its backlog is full, which nginx answers with
/// 502. Its backlog (php-fpm `listen.backlog`, default 511) is capped by
/// net.core.somaxconn; a burst of clients all passing to it at once needs
/// room for as many connects as there are clients.
fn upstream_backlog(i: &TuneInputs, facts: &Facts, proc: &ProcFs) -> Option<Finding> {
    let n = facts.log.upstream_eagain;
    if n == 0 {
        return None;
    }
    let workers = workers(i, facts).unwrap_or(1) as u64;
    let clients = i.worker_connections.saturating_mul(workers) / 2;
    let somaxconn = proc.sysctl_u64("net.core.somaxconn").ok();
    let mut rec = format!("the backend's listen backlog ≥ {clients} (php-fpm listen.backlog)");
    if somaxconn.is_some_and(|s| s < clients) {
        rec.push_str(&format!(", net.core.somaxconn = {clients}"));
    }
    Some(
        Finding::new(
            "upstream accept queue",
            Verdict::Raise,
            format!(
                "the error log shows {n} connect(s) to an upstream failed with EAGAIN (11: \
                 Resource temporarily unavailable): the backend's accept queue was full (Linux \
                 returns EAGAIN for a full unix socket queue) and each became a 502"
            ),
        )
        .current(somaxconn.map_or("?".into(), |s| format!("net.core.somaxconn {s}")))
        .recommended(rec)
        .source("ngx_event_connect_peer; listen(2); php-fpm listen.backlog"),
    )
}

/// worker_connections × workers, halved when proxying (nginx counts the
/// upstream connection in worker_connections too).
fn max_clients(i: &TuneInputs, facts: &Facts) -> Finding {
    let workers = workers(i, facts).unwrap_or(1) as u64;
    let clients = i.worker_connections.saturating_mul(workers) / if i.proxying { 2 } else { 1 };
    let halved = if i.proxying {
        " ÷ 2 (each proxied client also holds an upstream connection)"
    } else {
        ""
    };
    Finding::new(
        "max clients",
        Verdict::Ok,
        format!(
            "worker_connections {} × {workers} worker(s){halved}",
            i.worker_connections
        ),
    )
    .current(clients.to_string())
    .source(NGINX_CORE)
}

/// The per-worker descriptor limit against what a worker may need.
fn open_files(i: &TuneInputs, limit: Option<u64>, whose: &str, need: u64) -> Finding {
    let item = "open files per worker";
    let src = "getrlimit(2); nginx docs (worker_rlimit_nofile, worker_connections)";
    let f = match limit {
        None => Finding::new(item, Verdict::Unknown, "RLIMIT_NOFILE unreadable"),
        Some(l) if l < i.worker_connections => Finding::new(
            item,
            Verdict::Raise,
            format!(
                "{whose} ({l}) < worker_connections ({}): accept() fails with EMFILE before the \
                 connection limit (nginx warns \"worker_connections exceed open file resource limit\")",
                i.worker_connections
            ),
        )
        .current(l.to_string())
        .recommended(need.to_string()),
        Some(l) if l < need => Finding::new(
            item,
            Verdict::Raise,
            format!(
                "{whose} ({l}) < {need} = worker_connections × {FDS_PER_CONNECTION} (a file or \
                 upstream per client) + open_file_cache max + {FD_SLACK} + listens"
            ),
        )
        .current(l.to_string())
        .recommended(need.to_string()),
        Some(l) => Finding::new(
            item,
            Verdict::Ok,
            format!("{whose} covers the {need} a worker may need"),
        )
        .current(if l == u64::MAX {
            "unlimited".into()
        } else {
            l.to_string()
        }),
    };
    f.source(src)
}

fn backlogs(i: &TuneInputs, facts: &Facts, proc: &ProcFs) -> Vec<Finding> {
    let somaxconn = proc.sysctl_u64("net.core.somaxconn").ok();
    let syn = proc.sysctl_u64("net.ipv4.tcp_max_syn_backlog").ok();
    let cookies = proc
        .sysctl_u64("net.ipv4.tcp_syncookies")
        .map(|c| c != 0)
        .unwrap_or(true);
    let overflows = facts.listen_overflows.unwrap_or(0);
    let src = "listen(2); nginx docs (listen backlog=)";
    let mut seen: Vec<(&str, u64)> = Vec::new();
    let mut out = Vec::new();
    for l in &i.listens {
        if seen.contains(&(l.addr.as_str(), l.backlog)) {
            continue;
        }
        seen.push((l.addr.as_str(), l.backlog));
        let item = format!("listen {} backlog", l.addr);
        let f = match somaxconn {
            None => Finding::new(item, Verdict::Unknown, "net.core.somaxconn unreadable"),
            Some(s) if l.backlog > s => Finding::new(
                item,
                Verdict::Raise,
                format!("backlog={} is silently truncated to net.core.somaxconn ({s})", l.backlog),
            )
            .recommended(format!("net.core.somaxconn = {}", l.backlog)),
            Some(_) if !cookies && syn.is_some_and(|m| l.backlog > m) => Finding::new(
                item,
                Verdict::Raise,
                "tcp_syncookies is 0 and tcp_max_syn_backlog is below the backlog: SYNs are dropped first",
            )
            .recommended(format!("net.ipv4.tcp_max_syn_backlog = {}", l.backlog)),
            Some(_) if overflows > 0 => Finding::new(
                item,
                Verdict::Raise,
                format!("ListenOverflows = {overflows}: the accept queue overflowed; raise backlog="),
            )
            .recommended(format!("backlog={}", l.backlog.saturating_mul(2))),
            Some(s) => Finding::new(item, Verdict::Ok, format!("within net.core.somaxconn ({s})")),
        };
        out.push(f.current(l.backlog.to_string()).source(src));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_overlap() {
        assert_eq!(mask_cpus(&[0b1001]), vec![0, 3]);
        assert_eq!(mask_cpus(&[0, 1]), vec![64]);
        // The seed's six-core masks: 0001 0010 0100 1000 1001 10010.
        let m: Vec<Vec<u64>> = [0b1, 0b10, 0b100, 0b1000, 0b1001, 0b10010]
            .iter()
            .map(|x| vec![*x])
            .collect();
        let r = overlap(&m, 6, &[0, 1, 2, 3, 4, 5]);
        assert!(r.is_some_and(|r| r.contains("CPU 5 has none")));
        let good: Vec<Vec<u64>> = (0..4).map(|b| vec![1u64 << b]).collect();
        assert_eq!(overlap(&good, 4, &[0, 1, 2, 3]), None);
    }
}
