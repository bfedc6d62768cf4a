//! The local time zone's UTC offset, as nginx gets it from `localtime_r`:
//! the `TZ` environment variable, else `/etc/localtime`, read once.
//!
//! Hand-written rather than with `chrono-tz`/`tz-rs`: the need is one
//! lookup (offset at an instant) in a TZif file (RFC 8536), which is a
//! header and four arrays; `localtime_r` itself would need `unsafe`, which
//! this crate may not contain.
//!
//! After a file's last transition the footer's POSIX rule applies (see
//! `tz_rule`); a `TZ` value that names no file is read as such a rule.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::tz_rule::Rule;

/// Where zone names in `TZ` are looked up (glibc's default `TZDIR`).
const ZONEINFO_DIR: &str = "/usr/share/zoneinfo";
/// The system zone when `TZ` is unset.
const LOCALTIME: &str = "/etc/localtime";
/// Zone files are a few kilobytes; anything far larger is not one.
const MAX_TZIF_BYTES: u64 = 1 << 20;

/// A parsed zone: transition instants and the offset (seconds east of UTC)
/// in force from each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Zone {
    transitions: Vec<i64>,
    /// Offset from `transitions[i]` on.
    offsets: Vec<i32>,
    /// Offset before the first transition (RFC 8536 §3.2: time type 0).
    initial: i32,
    /// The footer rule, for instants after the last transition.
    rule: Option<Rule>,
}

/// UTC, for callers that must not depend on the machine's zone.
pub(crate) static UTC: Zone = Zone {
    transitions: Vec::new(),
    offsets: Vec::new(),
    initial: 0,
    rule: None,
};

impl Zone {
    pub(crate) fn fixed(offset: i32) -> Zone {
        Zone {
            transitions: Vec::new(),
            offsets: Vec::new(),
            initial: offset,
            rule: None,
        }
    }

    fn from_rule(rule: Rule) -> Zone {
        Zone {
            rule: Some(rule),
            ..Zone::fixed(rule.std_offset())
        }
    }

    /// Seconds east of UTC at `unix`.
    pub(crate) fn offset_at(&self, unix: i64) -> i32 {
        let n = self.transitions.partition_point(|&t| t <= unix);
        if n == self.transitions.len()
            && let Some(rule) = &self.rule
        {
            return rule.offset_at(unix);
        }
        match n {
            0 => self.initial,
            n => self.offsets.get(n - 1).copied().unwrap_or(self.initial),
        }
    }
}

/// The process's zone, loaded on first use.
pub(crate) fn local_zone() -> &'static Zone {
    static ZONE: OnceLock<Zone> = OnceLock::new();
    ZONE.get_or_init(|| {
        let tz = std::env::var("TZ").ok();
        load(tz.as_deref()).unwrap_or_else(|| Zone::fixed(0))
    })
}

/// glibc's reading of `TZ`: unset → `/etc/localtime`; `:x` or `x` naming a
/// file (absolute, or under the zoneinfo directory) → that file; otherwise
/// a POSIX rule.
pub(crate) fn load(tz: Option<&str>) -> Option<Zone> {
    let Some(tz) = tz else {
        return read_tzif(Path::new(LOCALTIME));
    };
    let name = tz.strip_prefix(':').unwrap_or(tz);
    if name.is_empty() {
        return Some(Zone::fixed(0));
    }
    let path = if name.starts_with('/') {
        PathBuf::from(name)
    } else {
        Path::new(ZONEINFO_DIR).join(name)
    };
    // `..` in a name would leave the zoneinfo directory; glibc refuses too.
    if !name.split('/').any(|c| c == "..")
        && let Some(z) = read_tzif(&path)
    {
        return Some(z);
    }
    Rule::parse(name).map(Zone::from_rule)
}

fn read_tzif(path: &Path) -> Option<Zone> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_TZIF_BYTES {
        return None;
    }
    parse_tzif(&std::fs::read(path).ok()?)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The six counts of a TZif header at `at`.
struct Counts {
    isut: usize,
    isstd: usize,
    leap: usize,
    time: usize,
    typ: usize,
    chars: usize,
}

const HEADER_LEN: usize = 44;

fn counts(b: &[u8], at: usize) -> Option<Counts> {
    if b.get(at..at + 4)? != b"TZif" {
        return None;
    }
    let c = |i: usize| be32(b, at + 20 + 4 * i).map(|v| v as usize);
    Some(Counts {
        isut: c(0)?,
        isstd: c(1)?,
        leap: c(2)?,
        time: c(3)?,
        typ: c(4)?,
        chars: c(5)?,
    })
}

impl Counts {
    fn data_len(&self, time_size: usize) -> usize {
        self.time * time_size
            + self.time
            + self.typ * 6
            + self.chars
            + self.leap * (time_size + 4)
            + self.isstd
            + self.isut
    }
}

/// Parses a TZif file, preferring the 64-bit block of version 2+.
pub(crate) fn parse_tzif(b: &[u8]) -> Option<Zone> {
    let v1 = counts(b, 0)?;
    let version = *b.get(4)?;
    if version >= b'2' {
        let at = HEADER_LEN + v1.data_len(4);
        let v2 = counts(b, at)?;
        let start = at + HEADER_LEN;
        let mut zone = parse_block(b, start, &v2, 8)?;
        zone.rule = footer(b.get(start + v2.data_len(8)..)?);
        return Some(zone);
    }
    parse_block(b, HEADER_LEN, &v1, 4)
}

fn parse_block(b: &[u8], at: usize, c: &Counts, time_size: usize) -> Option<Zone> {
    let data = b.get(at..at + c.data_len(time_size))?;
    if c.typ == 0 {
        return None;
    }
    let (times, rest) = data.split_at(c.time * time_size);
    let (indices, rest) = rest.split_at(c.time);
    let type_offset = |i: usize| -> Option<i32> { Some(be32(rest, i * 6)? as i32) };
    let mut transitions = Vec::with_capacity(c.time);
    let mut offsets = Vec::with_capacity(c.time);
    for (i, &idx) in indices.iter().enumerate() {
        let t = match time_size {
            8 => i64::from_be_bytes(times.get(i * 8..i * 8 + 8)?.try_into().ok()?),
            _ => i64::from(be32(times, i * 4)? as i32),
        };
        if usize::from(idx) >= c.typ {
            return None;
        }
        transitions.push(t);
        offsets.push(type_offset(usize::from(idx))?);
    }
    Some(Zone {
        transitions,
        offsets,
        initial: type_offset(0)?,
        rule: None,
    })
}

/// `\nRULE\n` after the v2+ data (RFC 8536 §3.3); empty means none.
fn footer(b: &[u8]) -> Option<Rule> {
    let text = b.strip_prefix(b"\n")?;
    let end = text.iter().position(|&c| c == b'\n')?;
    Rule::parse(std::str::from_utf8(&text[..end]).ok()?)
}

#[cfg(test)]
#[path = "tz_tests.rs"]
mod tests;
