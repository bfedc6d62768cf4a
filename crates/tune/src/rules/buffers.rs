//! The judgement of the buffer, memory and limit rules (socket buffers,
//! tcp_mem, file limits, swappiness) and of the settings whose default is
//! right. Thresholds are named constants with the reasoning beside them.

use super::assess::malformed;
use super::{Assessed, Ctx, fixed, int};
use crate::verdict::Verdict::{Lower, Raise, Remove};

/// net.core.{r,w}mem_default/max default (SK_RMEM_MAX/SK_WMEM_MAX on 64-bit).
pub const CORE_MEM_DEFAULT: i64 = 212_992;

/// The page size tcp_mem is counted in (x86-64; 64 KiB pages on some arm64
/// kernels make the check conservative there).
pub const PAGE_SIZE: i64 = 4096;

/// tcp_mem's top above this fraction of RAM lets socket buffers crowd out
/// the page cache that serves static files, and makes the OOM killer, not TCP
/// memory pressure, the limit (the kernel's own default is about 3/32).
pub const TCP_MEM_MAX_FRACTION: i64 = 2;

/// Kernel defaults of tcp_rmem / tcp_wmem (ip-sysctl.rst): the middle value
/// is a new socket's buffer, the last the autotuning ceiling.
pub const TCP_RMEM_DEFAULT: [i64; 3] = [4096, 131_072, 6_291_456];
pub const TCP_WMEM_DEFAULT: [i64; 3] = [4096, 16384, 4_194_304];

/// Initial receive buffers below this shrink the first receive window: it
/// was tcp_rmem's middle default for fifteen years (131072 only since 5.x),
/// so only values below it are flagged.
pub const TCP_RMEM_MID_FLOOR: i64 = 87380;

pub fn core_mem_default(v: &str, c: &Ctx, max_key: &str) -> Assessed {
    let n = int_or_malformed!(v);
    let max = c.value(max_key).and_then(|m| int(&m).ok());
    if let Some(max) = max.filter(|m| n > *m) {
        return Assessed::change(
            Lower,
            max.to_string(),
            format!("above {max_key} ({max}); TCP ignores it anyway (it uses tcp_rmem/tcp_wmem)"),
        );
    }
    Assessed::ok("TCP ignores it (tcp_rmem/tcp_wmem apply); sizes UDP and unix sockets")
}

pub fn rmem_default(v: &str, c: &Ctx) -> Assessed {
    core_mem_default(v, c, "net.core.rmem_max")
}

pub fn wmem_default(v: &str, c: &Ctx) -> Assessed {
    core_mem_default(v, c, "net.core.wmem_max")
}

pub fn core_mem_max(v: &str, _: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    if n < CORE_MEM_DEFAULT {
        return Assessed::change(
            Raise,
            CORE_MEM_DEFAULT.to_string(),
            "below the kernel default",
        );
    }
    Assessed::ok(
        "caps SO_RCVBUF/SO_SNDBUF set by programs (`listen … rcvbuf=`); TCP autotuning is \
         capped by tcp_rmem/tcp_wmem instead",
    )
}

fn tcp_buf(v: &str, def: [i64; 3], mid_floor: i64, name: &str) -> Assessed {
    let [min, mid, max] = match fixed::<3>(v) {
        Ok(r) => r,
        Err(e) => return malformed(e),
    };
    if !(min <= mid && mid <= max) {
        return Assessed::change(
            Raise,
            def.map(|d| d.to_string()).join(" "),
            "min ≤ default ≤ max does not hold",
        );
    }
    let [dmin, dmid, dmax] = def;
    if mid < mid_floor || max < dmax {
        let rec = [min, if mid < mid_floor { dmid } else { mid }, max.max(dmax)];
        return Assessed::change(
            Raise,
            rec.map(|d| d.to_string()).join(" "),
            format!(
                "below the kernel's own {name} ({} {} {}): smaller initial buffer or autotuning \
                 ceiling than an untuned kernel",
                dmin, dmid, dmax
            ),
        );
    }
    Assessed::ok("bytes: min, initial, autotuning ceiling; at or above the kernel default")
}

pub fn tcp_rmem(v: &str, _: &Ctx) -> Assessed {
    tcp_buf(v, TCP_RMEM_DEFAULT, TCP_RMEM_MID_FLOOR, "tcp_rmem")
}

pub fn tcp_wmem(v: &str, _: &Ctx) -> Assessed {
    tcp_buf(v, TCP_WMEM_DEFAULT, TCP_WMEM_DEFAULT[1], "tcp_wmem")
}

pub fn tcp_mem(v: &str, c: &Ctx) -> Assessed {
    let [low, pressure, high] = match fixed::<3>(v) {
        Ok(r) => r,
        Err(e) => return malformed(e),
    };
    if !(low <= pressure && pressure <= high) {
        return malformed("low ≤ pressure ≤ high does not hold".into());
    }
    let Some(mem) = c.facts.mem_total.and_then(|m| i64::try_from(m).ok()) else {
        return Assessed::ok("in pages; RAM unknown, not checked");
    };
    let pages = mem / PAGE_SIZE;
    let cap = pages / TCP_MEM_MAX_FRACTION;
    if high > cap {
        // The kernel's own boot-time formula (tcp_init_mem): pages/16 as
        // the pressure threshold, 3/4 of it as low, twice low as high.
        let limit = pages / 16;
        let rec = [limit / 4 * 3, limit, limit / 4 * 3 * 2];
        return Assessed::change(
            Lower,
            rec.map(|d| d.to_string()).join(" "),
            format!(
                "counted in pages of 4 KiB, not bytes: {} pages = {} GiB against {} GiB of RAM; \
                 TCP would never feel memory pressure before the OOM killer",
                high,
                high.saturating_mul(PAGE_SIZE) >> 30,
                mem >> 30
            ),
        );
    }
    Assessed::ok("in pages; within half of RAM")
}

pub fn file_max(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    match c.needs.fds_total {
        Some(need) if u64::try_from(n).unwrap_or(0) < need => Assessed::change(
            Raise,
            need.to_string(),
            format!("all workers together may open {need} descriptors"),
        ),
        Some(need) => Assessed::ok(format!("≥ the {need} descriptors all workers may open")),
        None => Assessed::ok("system-wide open-file ceiling; no configuration to compare"),
    }
}

pub fn nr_open(v: &str, c: &Ctx) -> Assessed {
    let n = int_or_malformed!(v);
    match c.needs.nofile_wanted {
        Some(want) if u64::try_from(n).unwrap_or(0) < want => Assessed::change(
            Raise,
            want.to_string(),
            format!(
                "setrlimit(2) fails with EPERM above it: the workers' RLIMIT_NOFILE of {want} \
                 (worker_rlimit_nofile, or their need) cannot be set"
            ),
        ),
        _ => Assessed::ok("ceiling of RLIMIT_NOFILE (setrlimit fails above it)"),
    }
}

pub fn swappiness(v: &str, _: &Ctx) -> Assessed {
    match int_or_malformed!(v) {
        0 => Assessed::change(
            Raise,
            "10",
            "since Linux 3.5, 0 means never swap anonymous memory until nearly out of memory: \
             under pressure the OOM killer ends a worker instead of paging out idle memory",
        ),
        _ => Assessed::ok("memory is paged out under pressure rather than processes killed"),
    }
}

/// For settings whose default is right for a web server (1 = on).
pub fn on_is_right(v: &str, what: &str) -> Assessed {
    match int_or_malformed!(v) {
        0 => Assessed::change(Raise, "1", format!("off disables {what}")),
        _ => Assessed::ok(format!("{what} on (the default)")),
    }
}

pub fn window_scaling(v: &str, _: &Ctx) -> Assessed {
    on_is_right(v, "window scaling (windows above 64 KiB, RFC 7323 §2)")
}

pub fn sack(v: &str, _: &Ctx) -> Assessed {
    on_is_right(v, "selective acknowledgements (RFC 2018)")
}

pub fn congestion_control(v: &str, c: &Ctx) -> Assessed {
    let name = v.split_whitespace().next().unwrap_or("");
    let avail = c
        .proc
        .sysctl("net.ipv4.tcp_available_congestion_control")
        .ok();
    match avail {
        Some(a) if !a.split_whitespace().any(|x| x == name) => Assessed::bare(
            Remove,
            format!("`{name}` is not loaded in this kernel (available: {a}): the write fails"),
        ),
        _ => Assessed::ok(format!(
            "`{name}` is available (cubic is the kernel default)"
        )),
    }
}
