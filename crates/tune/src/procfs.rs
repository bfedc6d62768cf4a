//! Reading the live system through a proc root (`/proc`, or a fake tree in
//! tests): sysctl values, rlimits, CPUs, memory, kernel version and the
//! evidence counters.
//!
//! The formats are the kernel's (proc(5)); they are line-oriented and tiny, so
//! they are split by hand rather than pulling in a procfs crate, which would
//! also insist on the real `/proc` and so defeat `--proc-root`.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Why a proc entry could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("{0} does not exist")]
    Missing(String),
    #[error("{path} unreadable: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{path}: unexpected contents")]
    Malformed { path: String },
    #[error("`{0}` is not a valid sysctl key")]
    BadKey(String),
}

/// A proc root: every read is relative to it.
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
}

impl ProcFs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ProcFs { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads `rel` (relative to the proc root) as text.
    pub fn read(&self, rel: &str) -> Result<String, ProbeError> {
        let path = self.root.join(rel);
        std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            ErrorKind::NotFound => ProbeError::Missing(path.display().to_string()),
            _ => ProbeError::Unreadable {
                path: path.display().to_string(),
                reason: e.to_string(),
            },
        })
    }

    /// The value of a sysctl as sysctl(8) prints it: fields separated by one
    /// space (the kernel separates vectors with tabs).
    pub fn sysctl(&self, key: &str) -> Result<String, ProbeError> {
        let rel = sysctl_path(key).ok_or_else(|| ProbeError::BadKey(key.to_string()))?;
        let text = self.read(&format!("sys/{rel}"))?;
        Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// Whether the running kernel has this sysctl at all.
    pub fn has_sysctl(&self, key: &str) -> bool {
        sysctl_path(key).is_some_and(|rel| self.root.join("sys").join(rel).exists())
    }

    /// An integer sysctl.
    pub fn sysctl_u64(&self, key: &str) -> Result<u64, ProbeError> {
        let v = self.sysctl(key)?;
        v.parse().map_err(|_| ProbeError::Malformed {
            path: format!("sys/{}", sysctl_path(key).unwrap_or_default()),
        })
    }
}

/// The path under `/proc/sys` of a key, as sysctl(8) maps it: with a `/` in
/// the key, slashes separate and dots are literal (interface names such as
/// `eth0.100`); otherwise dots separate. `None` for keys that could escape
/// the tree or are empty.
pub fn sysctl_path(key: &str) -> Option<String> {
    let parts: Vec<&str> = if key.contains('/') {
        key.split('/').collect()
    } else {
        key.split('.').collect()
    };
    let bad = |p: &&str| p.is_empty() || *p == ".." || *p == "." || p.contains('\0');
    if parts.is_empty() || parts.iter().any(bad) {
        return None;
    }
    Some(parts.join("/"))
}

/// The canonical dotted form of a key written either way.
pub fn canonical_key(key: &str) -> String {
    if key.contains('/') {
        key.trim_matches('/').replace('/', ".")
    } else {
        key.to_string()
    }
}

/// A kernel release, `major.minor.patch` from `kernel/osrelease`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KernelVersion(pub u32, pub u32, pub u32);

/// Serialized as `"6.1.0"`, as people write it.
impl serde::Serialize for KernelVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Parses `6.1.0-18-amd64` → 6.1.0: the leading numeric dotted part.
pub fn parse_osrelease(s: &str) -> Option<KernelVersion> {
    let mut nums = [0u32; 3];
    let head = s
        .trim()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()?;
    let mut it = head.split('.');
    for (i, n) in nums.iter_mut().enumerate() {
        match it.next() {
            Some(p) if !p.is_empty() => *n = p.parse().ok()?,
            // major and minor are required; the patch level may be absent.
            _ if i >= 2 => break,
            _ => return None,
        }
    }
    let [major, minor, patch] = nums;
    Some(KernelVersion(major, minor, patch))
}

/// A resource limit: `None` means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Rlimit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

/// The `Max open files` row of `/proc/PID/limits`.
pub fn parse_limits_nofile(text: &str) -> Option<Rlimit> {
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    let mut rest = line["Max open files".len()..].split_whitespace();
    let mut value = || match rest.next()? {
        "unlimited" => Some(None),
        n => n.parse().ok().map(Some),
    };
    let soft = value()?;
    let hard = value()?;
    Some(Rlimit { soft, hard })
}

/// Counters from `/proc/net/netstat` (`TcpExt:` name and value line pairs).
pub fn parse_netstat(text: &str, section: &str, name: &str) -> Option<u64> {
    let prefix = format!("{section}:");
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(&prefix)).collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let idx = names.split_whitespace().skip(1).position(|n| n == name);
        if let Some(i) = idx {
            return values.split_whitespace().skip(1).nth(i)?.parse().ok();
        }
    }
    None
}

/// Sums of the `dropped` (second) and `time_squeeze` (third) columns of
/// `/proc/net/softnet_stat`, one hexadecimal row per CPU.
pub fn parse_softnet(text: &str) -> Option<(u64, u64)> {
    let mut dropped = 0u64;
    let mut squeezed = 0u64;
    let mut rows = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let col = |i: usize| cols.get(i).and_then(|c| u64::from_str_radix(c, 16).ok());
        dropped = dropped.saturating_add(col(1)?);
        squeezed = squeezed.saturating_add(col(2)?);
        rows += 1;
    }
    (rows > 0).then_some((dropped, squeezed))
}

/// The CPU ids listed as `cpuN` rows of `/proc/stat` (the online CPUs).
pub fn parse_stat_cpus(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .strip_prefix("cpu")?
                .parse()
                .ok()
        })
        .collect()
}

/// A CPU list such as `0-3,8,10-11` (`Cpus_allowed_list` of `/proc/PID/status`).
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > MAX_CPU_RANGE {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// The widest CPU range accepted in a CPU list: the kernel's NR_CPUS maximum
/// (8192 on x86-64 with MAXSMP) — anything wider is corrupt input.
pub const MAX_CPU_RANGE: usize = 8192;

/// `Cpus_allowed_list:` of a status file.
pub fn parse_status_cpus(text: &str) -> Option<Vec<usize>> {
    let line = text.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
    parse_cpu_list(&line["Cpus_allowed_list:".len()..])
}

/// `MemTotal:` of `/proc/meminfo`, in bytes.
pub fn parse_memtotal(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_paths() {
        assert_eq!(
            sysctl_path("net.core.somaxconn").as_deref(),
            Some("net/core/somaxconn")
        );
        assert_eq!(
            sysctl_path("net/ipv4/conf/eth0.100/rp_filter").as_deref(),
            Some("net/ipv4/conf/eth0.100/rp_filter")
        );
        assert_eq!(sysctl_path("net..core"), None);
        assert_eq!(sysctl_path("../etc/passwd"), None);
        assert_eq!(sysctl_path(""), None);
        assert_eq!(canonical_key("net/core/somaxconn"), "net.core.somaxconn");
    }

    #[test]
    fn osrelease() {
        assert_eq!(
            parse_osrelease("6.1.0-18-amd64\n"),
            Some(KernelVersion(6, 1, 0))
        );
        assert_eq!(parse_osrelease("4.9"), Some(KernelVersion(4, 9, 0)));
        assert_eq!(
            parse_osrelease("2.6.9-78.ELsmp"),
            Some(KernelVersion(2, 6, 9))
        );
        assert_eq!(parse_osrelease("garbage"), None);
        assert_eq!(parse_osrelease(""), None);
    }

    #[test]
    fn limits() {
        let t = "Limit                     Soft Limit           Hard Limit           Units\n\
                 Max open files            1024                 524288               files\n";
        assert_eq!(
            parse_limits_nofile(t),
            Some(Rlimit {
                soft: Some(1024),
                hard: Some(524288)
            })
        );
        let u = "Max open files            unlimited            unlimited            files\n";
        assert_eq!(
            parse_limits_nofile(u),
            Some(Rlimit {
                soft: None,
                hard: None
            })
        );
        assert_eq!(parse_limits_nofile("Max open files  x"), None);
    }

    #[test]
    fn netstat() {
        let t = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 7 9\n\
                 IpExt: InNoRoutes\nIpExt: 3\n";
        assert_eq!(parse_netstat(t, "TcpExt", "ListenOverflows"), Some(7));
        assert_eq!(parse_netstat(t, "TcpExt", "ListenDrops"), Some(9));
        assert_eq!(parse_netstat(t, "TcpExt", "Nope"), None);
        assert_eq!(
            parse_netstat("TcpExt: ListenDrops\n", "TcpExt", "ListenDrops"),
            None
        );
    }

    #[test]
    fn softnet() {
        let t = "000000b1 00000002 00000000 0\n00000c4a 00000010 00000001 0\n";
        assert_eq!(parse_softnet(t), Some((0x12, 1)));
        assert_eq!(parse_softnet(""), None);
        assert_eq!(parse_softnet("zz yy xx\n"), None);
    }

    #[test]
    fn cpus() {
        assert_eq!(
            parse_stat_cpus("cpu 1 2\ncpu0 1\ncpu1 2\nintr 5\n"),
            vec![0, 1]
        );
        assert_eq!(parse_cpu_list("0-2,5"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("0-99999999"), None);
        assert_eq!(
            parse_status_cpus("Name: x\nCpus_allowed_list:\t0-1\n"),
            Some(vec![0, 1])
        );
    }

    #[test]
    fn memtotal() {
        assert_eq!(parse_memtotal("MemTotal:  1024 kB\n"), Some(1024 * 1024));
        assert_eq!(parse_memtotal("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn parsers_never_panic_on_prefixes() {
        let t = "TcpExt: ListenOverflows ListenDrops\nTcpExt: 1 2\nMax open files 1 2 files\n\
                 Cpus_allowed_list: 0-3\nMemTotal: 12 kB\ncpu0 1\n";
        for i in 0..=t.len() {
            let p = &t[..i];
            let _ = parse_netstat(p, "TcpExt", "ListenDrops");
            let _ = parse_limits_nofile(p);
            let _ = parse_status_cpus(p);
            let _ = parse_memtotal(p);
            let _ = parse_softnet(p);
            let _ = parse_stat_cpus(p);
            let _ = parse_osrelease(p);
        }
    }
}
