//! The judgement of the connection-level rules (TIME-WAIT, SYN handling,
//! queues, retries, ports); buffers, memory and limits are in `buffers.rs`.
//! Each function takes the value as sysctl(8)
//! prints it and the context, and returns the verdict with its reason.
//! Thresholds are named constants with the reasoning beside them.

use super::{Assessed, Ctx, fixed};
use crate::procfs::KernelVersion;
use crate::verdict::Verdict::{Harmful, Lower, Raise, Remove};

/// The release whose commit 4396e46187ca removed `tcp_tw_recycle`.
pub const TW_RECYCLE_REMOVED: KernelVersion = KernelVersion(4, 12, 0);

/// Below this many TIME-WAIT buckets, a server closing more than
/// 32768 / 60 s ≈ 550 connections per second (TIME-WAIT lasts a fixed 60 s,
/// TCP_TIMEWAIT_LEN) has its TIME-WAIT sockets destroyed early — the very
/// thing the kernel docs forbid lowering the limit for.
pub const LOW_TW_BUCKETS: i64 = 32768;

/// Memory one orphaned socket may pin ("up to ~64K of unswappable memory",
/// ip-sysctl.rst, tcp_max_orphans).
pub const ORPHAN_BYTES: i64 = 64 * 1024;

/// Fewer SYN / SYN-ACK retransmissions than this turn one lost packet into a
/// failed connection.
pub const MIN_RETRIES: i64 = 2;

/// FIN-WAIT-2 timeouts shorter than this cut off peers on lossy links (a few
/// retransmission timeouts) for no gain: an orphan in FIN-WAIT-2 costs ~1.5 KB.
pub const MIN_FIN_TIMEOUT: i64 = 10;

/// The kernel's netdev_max_backlog default.
pub const NETDEV_BACKLOG_DEFAULT: i64 = 1000;

pub(super) fn malformed(e: String) -> Assessed {
    Assessed {
        malformed: true,
        ..Assessed::bare(
            Remove,
            format!("malformed: {e}; the kernel rejects it and nothing is set"),
        )
    }
}

pub fn tw_recycle(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let removed = !c.proc.has_sysctl("net.ipv4.tcp_tw_recycle")
        || c.facts.kernel.is_some_and(|k| k >= TW_RECYCLE_REMOVED);
    if removed {
        return Assessed::bare(
            Remove,
            "removed in Linux 4.12: this kernel has no such key, `sysctl -p` reports an error \
             and the line sets nothing",
        );
    }
    if n == 0 {
        return Assessed::ok("off, as it must be");
    }
    Assessed::change(
        Harmful,
        "0",
        "drops SYNs from clients behind NAT (their TCP timestamps are not monotonic across \
         hosts): users behind carrier NAT or office routers cannot connect; removed from the \
         kernel in 4.12 for that reason",
    )
}

pub fn tw_reuse(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let ts_off = c
        .value("net.ipv4.tcp_timestamps")
        .is_some_and(|t| t.trim() == "0");
    if n != 0 && ts_off {
        return Assessed::bare(
            Remove,
            "has no effect: tw_reuse only reuses a TIME-WAIT port when TCP timestamps prove the \
             new segments newer, and tcp_timestamps is 0",
        );
    }
    Assessed::ok(
        "affects outgoing connections only (to upstreams, from load generators): a server's \
         accepted connections never reuse TIME-WAIT ports; harmless",
    )
}

pub fn timestamps(v: &str, _: &Ctx) -> Assessed {
    match int_or_malformed!(v) {
        0 => Assessed::change(
            Harmful,
            "1",
            "disables PAWS (RFC 7323 §5), the protection against old duplicate segments once \
             sequence numbers wrap (seconds at 10 Gbit/s), RTT measurement, and tcp_tw_reuse",
        ),
        _ => Assessed::ok("timestamps on (default): PAWS and RTT measurement work"),
    }
}

pub fn syncookies(v: &str, _: &Ctx) -> Assessed {
    match int_or_malformed!(v) {
        0 => Assessed::change(
            Harmful,
            "1",
            "removes SYN-flood protection: a few thousand spoofed SYNs fill the SYN queue and \
             every real client is refused; cookies are only sent when the queue overflows",
        ),
        1 => Assessed::ok("SYN cookies when the SYN queue overflows (default)"),
        _ => Assessed::change(
            Lower,
            "1",
            "2 sends cookies for every connection, losing TCP options (window scaling, SACK) \
             even without an attack; meant for testing",
        ),
    }
}

pub fn fin_timeout(v: &str, _: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let what = "it bounds FIN-WAIT-2 of orphaned sockets; it does not shorten TIME-WAIT, \
                which is fixed at 60 s (TCP_TIMEWAIT_LEN)";
    if n < MIN_FIN_TIMEOUT {
        return Assessed::change(
            Raise,
            MIN_FIN_TIMEOUT.to_string(),
            format!("{what}; under {MIN_FIN_TIMEOUT} s cuts off slow peers for no gain"),
        );
    }
    Assessed::ok(what)
}

pub fn max_tw_buckets(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let live = c
        .live_u64("net.ipv4.tcp_max_tw_buckets")
        .and_then(|l| i64::try_from(l).ok());
    let lowers = c.audit && live.is_some_and(|l| n < l);
    if n < LOW_TW_BUCKETS || lowers {
        let to = live
            .filter(|l| *l > n)
            .unwrap_or(LOW_TW_BUCKETS)
            .max(LOW_TW_BUCKETS);
        return Assessed::change(
            Harmful,
            to.to_string(),
            "the kernel docs say you must not lower it: overflowing TIME-WAIT sockets are \
             destroyed early, exposing new connections to old duplicates; it limits a DoS only",
        );
    }
    Assessed::ok("TIME-WAIT limit at or above a safe size")
}

pub fn somaxconn(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let need = c.needs.backlog;
    if u64::try_from(n).unwrap_or(0) < need {
        return Assessed::change(
            Raise,
            need.to_string(),
            format!(
                "caps every listen backlog: the largest configured ({need}) is silently truncated"
            ),
        );
    }
    if c.facts.listen_overflows.is_some_and(|o| o > 0) && !c.audit {
        return Assessed::ok(format!(
            "not the cap ({need} ≤ {n}), but ListenOverflows = {}: raise `listen … backlog=`",
            c.facts.listen_overflows.unwrap_or(0)
        ));
    }
    Assessed::ok(format!(
        "≥ the largest listen backlog ({need}); a cap only: values above it do nothing"
    ))
}

pub fn max_syn_backlog(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let cookies = c
        .value("net.ipv4.tcp_syncookies")
        .is_some_and(|s| s.trim() != "0");
    if cookies {
        return Assessed::ok("ignored while tcp_syncookies is on (listen(2)): harmless");
    }
    let need = c.needs.backlog;
    if u64::try_from(n).unwrap_or(0) < need {
        return Assessed::change(
            Raise,
            need.to_string(),
            format!(
                "without SYN cookies, half-open connections beyond it are dropped; listen backlog is {need}"
            ),
        );
    }
    Assessed::ok("holds the configured backlog")
}

pub fn netdev_max_backlog(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    match c.facts.softnet_dropped {
        Some(d) if d > 0 => Assessed::change(
            Raise,
            n.saturating_mul(2)
                .max(NETDEV_BACKLOG_DEFAULT * 2)
                .to_string(),
            format!("softnet_stat shows {d} packets dropped for a full input queue"),
        ),
        Some(_) if n > NETDEV_BACKLOG_DEFAULT => Assessed::ok(
            "raised without evidence: softnet_stat shows no drops, so it changes nothing",
        ),
        Some(_) => Assessed::ok("no drops in softnet_stat: raise only on evidence"),
        None => {
            Assessed::ok("raise only when /proc/net/softnet_stat shows drops (unreadable here)")
        }
    }
}

pub fn max_orphans(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    let live = c
        .live_u64("net.ipv4.tcp_max_orphans")
        .and_then(|l| i64::try_from(l).ok());
    if c.audit && live.is_some_and(|l| n < l) {
        return Assessed::change(
            Harmful,
            live.unwrap_or(n).to_string(),
            "lowers the kernel's value: the docs say never lower it; orphans beyond it are reset",
        );
    }
    let mem = c.facts.mem_total.and_then(|m| i64::try_from(m).ok());
    if let Some(mem) = mem
        && n.saturating_mul(ORPHAN_BYTES) > mem
    {
        return Assessed::change(
            Lower,
            (mem / ORPHAN_BYTES).to_string(),
            format!(
                "{n} orphans × 64 KiB exceeds RAM ({} MiB): the limit no longer protects against a DoS",
                mem >> 20
            ),
        );
    }
    Assessed::ok("fits in memory (each orphan may pin up to 64 KiB)")
}

fn retries(v: &str, outgoing: bool) -> Assessed {
    let n = int_or_malformed!(v);
    let scope = if outgoing {
        "SYN retries apply to outgoing connections (upstreams)"
    } else {
        "SYN-ACK retries apply to connections clients open"
    };
    if n < MIN_RETRIES {
        return Assessed::change(
            Raise,
            MIN_RETRIES.to_string(),
            format!("{scope}: with {n}, one lost packet fails the connection"),
        );
    }
    Assessed::ok(scope)
}

pub fn syn_retries(v: &str, _: &Ctx) -> Assessed {
    retries(v, true)
}

pub fn synack_retries(v: &str, _: &Ctx) -> Assessed {
    retries(v, false)
}

pub fn keepalive_time(v: &str, _: &Ctx) -> Assessed {
    let _ = int_or_malformed!(v);
    Assessed::ok(
        "TCP keepalive probes for sockets with SO_KEEPALIVE only (`listen … so_keepalive=on`); \
         unrelated to HTTP keepalive_timeout",
    )
}

pub fn local_port_range(v: &str, _: &Ctx) -> Assessed {
    let [lo, hi] = match fixed::<2>(v) {
        Ok(r) => r,
        Err(e) => return malformed(e),
    };
    if hi < lo {
        return malformed(format!("{lo} > {hi}"));
    }
    if lo < 1024 {
        return Assessed::change(
            Raise,
            format!("1024 {hi}"),
            "outgoing connections would take privileged ports other services expect to bind",
        );
    }
    let parity = if lo % 2 == hi % 2 {
        "; prefer bounds of different parity (ip-sysctl.rst)"
    } else {
        ""
    };
    Assessed::ok(format!(
        "ports for outgoing connections: matters on upstream and load-generator hosts only{parity}"
    ))
}
