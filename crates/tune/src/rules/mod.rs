//! The rules table: one row per sysctl, kept as data (what it does, the
//! kernel default, the recommendation, why, the source), each with the
//! function that judges a value of it.
//!
//! The same rows judge the live value (`peregrine tune`) and a value written
//! in a sysctl file (`--audit-sysctl`); [`Ctx`] says which, and gives the
//! facts (kernel, memory, evidence) and the needs derived from the
//! configuration (largest listen backlog, descriptors).

/// The integer of a value, or a `malformed` judgement returned at once.
macro_rules! int_or_malformed {
    ($v:expr) => {
        match $crate::rules::int($v) {
            Ok(n) => n,
            Err(e) => return $crate::rules::assess::malformed(e),
        }
    };
}

mod assess;
mod buffers;
mod table;

use std::collections::HashMap;

pub use table::RULES;

use crate::facts::Facts;
use crate::procfs::ProcFs;
use crate::verdict::Verdict;

/// nginx's listen backlog when `backlog=` is absent (NGX_LISTEN_BACKLOG, 511
/// on Linux: one less than a power of two because old kernels rounded up).
pub const NGINX_DEFAULT_BACKLOG: u64 = 511;

/// One row of the table.
#[derive(Debug)]
pub struct Rule {
    /// The dotted sysctl key.
    pub key: &'static str,
    /// What the setting does, in one sentence.
    pub what: &'static str,
    /// The kernel's default (may depend on memory; then said how).
    pub default: &'static str,
    /// The recommendation or the formula.
    pub recommendation: &'static str,
    /// Why: what the seed articles get wrong, or what the limit protects.
    pub why: &'static str,
    pub source: &'static str,
    /// Judges a value (as sysctl(8) prints it, fields separated by spaces).
    pub assess: fn(&str, &Ctx) -> Assessed,
}

/// A rule's judgement of one value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessed {
    pub verdict: Verdict,
    /// The value itself is not what the kernel accepts (a live value like
    /// that means the proc entry is not what it should be).
    pub malformed: bool,
    pub recommended: Option<String>,
    pub reason: String,
}

impl Assessed {
    pub fn ok(reason: impl Into<String>) -> Self {
        Assessed {
            verdict: Verdict::Ok,
            malformed: false,
            recommended: None,
            reason: reason.into(),
        }
    }

    pub fn change(verdict: Verdict, to: impl Into<String>, reason: impl Into<String>) -> Self {
        Assessed {
            verdict,
            malformed: false,
            recommended: Some(to.into()),
            reason: reason.into(),
        }
    }

    pub fn bare(verdict: Verdict, reason: impl Into<String>) -> Self {
        Assessed {
            verdict,
            malformed: false,
            recommended: None,
            reason: reason.into(),
        }
    }
}

/// What the configuration asks of the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Needs {
    /// The largest listen backlog (nginx's 511 when no configuration).
    pub backlog: u64,
    /// Descriptors one worker may need (`None` without a configuration).
    pub fds_per_worker: Option<u64>,
    /// Descriptors all workers together may need.
    pub fds_total: Option<u64>,
    /// The RLIMIT_NOFILE the workers will ask for: `worker_rlimit_nofile`
    /// or, without it, what they need; fs.nr_open must allow it.
    pub nofile_wanted: Option<u64>,
}

impl Needs {
    pub fn without_config() -> Self {
        Needs {
            backlog: NGINX_DEFAULT_BACKLOG,
            fds_per_worker: None,
            fds_total: None,
            nofile_wanted: None,
        }
    }
}

/// The context a rule judges in.
pub struct Ctx<'a> {
    pub proc: &'a ProcFs,
    pub facts: &'a Facts,
    pub needs: &'a Needs,
    /// In an audit: the values the audited file sets (they override the
    /// live ones when a rule looks at another key, e.g. tw_reuse needs
    /// timestamps). Empty in a live report.
    pub file: &'a HashMap<String, String>,
    pub audit: bool,
}

impl Ctx<'_> {
    /// The value in force for another key: the audited file's, else live.
    pub fn value(&self, key: &str) -> Option<String> {
        self.file
            .get(key)
            .cloned()
            .or_else(|| self.proc.sysctl(key).ok())
    }

    /// The live value of a key as an integer.
    pub fn live_u64(&self, key: &str) -> Option<u64> {
        self.proc.sysctl_u64(key).ok()
    }
}

/// The rule for a key.
pub fn rule(key: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.key == key)
}

/// The first `n` integers of a value; `Err` says why it is not.
/// Words after them are tolerated here and reported by the audit.
pub fn ints(v: &str, n: usize) -> Result<Vec<i64>, String> {
    let words: Vec<&str> = v.split_whitespace().take(n).collect();
    if words.len() < n {
        return Err(format!("expects {n} integer(s), got `{v}`"));
    }
    words
        .iter()
        .map(|w| {
            w.parse::<i64>()
                .map_err(|_| format!("`{w}` is not an integer"))
        })
        .collect()
}

/// Exactly the first `N` integers of a value, as an array.
pub fn fixed<const N: usize>(v: &str) -> Result<[i64; N], String> {
    ints(v, N)?
        .try_into()
        .map_err(|_| format!("expects {N} integer(s), got `{v}`"))
}

/// The single integer of a value.
pub fn int(v: &str) -> Result<i64, String> {
    ints(v, 1)?
        .first()
        .copied()
        .ok_or_else(|| format!("expects an integer, got `{v}`"))
}

#[cfg(test)]
mod tests;
