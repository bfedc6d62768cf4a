//! The report as a terminal table (coloured when asked) or as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::facts::Facts;
use crate::rules::Needs;
use crate::verdict::{Finding, Verdict};

/// A whole run's result.
#[derive(Debug, Serialize)]
pub struct Report {
    /// `live` or `audit`.
    pub mode: &'static str,
    pub proc_root: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audited_file: Option<String>,
    /// The configuration file read, if any.
    pub config: Option<String>,
    pub facts: Facts,
    pub needs: Needs,
    pub findings: Vec<Finding>,
    /// Count of findings per verdict.
    pub summary: BTreeMap<Verdict, usize>,
    pub harmful: bool,
}

impl Report {
    pub fn new(
        mode: &'static str,
        proc_root: String,
        facts: Facts,
        needs: Needs,
        findings: Vec<Finding>,
    ) -> Self {
        let mut summary = BTreeMap::new();
        for f in &findings {
            *summary.entry(f.verdict).or_insert(0) += 1;
        }
        let harmful = summary.contains_key(&Verdict::Harmful);
        Report {
            mode,
            proc_root,
            audited_file: None,
            config: None,
            facts,
            needs,
            findings,
            summary,
            harmful,
        }
    }
}

fn colour(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok => "\x1b[32m",
        Verdict::Unknown => "\x1b[36m",
        Verdict::Raise | Verdict::Lower => "\x1b[33m",
        Verdict::Remove => "\x1b[35m",
        Verdict::Harmful => "\x1b[1;31m",
    }
}

const RESET: &str = "\x1b[0m";
const VERDICT_W: usize = 8;
const ITEM_W: usize = 34;
const LINE_W: usize = 4;

fn facts_line(f: &Facts) -> String {
    let opt = |o: Option<String>| o.unwrap_or_else(|| "?".into());
    let lim = f.nofile.map(|r| {
        let s = |v: Option<u64>| v.map_or("unlimited".to_string(), |n| n.to_string());
        format!("{}/{} ({})", s(r.soft), s(r.hard), f.nofile_of)
    });
    format!(
        "kernel {}, {} CPUs, {} MiB RAM, RLIMIT_NOFILE {}\n\
         evidence: ListenOverflows {}, ListenDrops {}, softnet drops {}, \
         error log: upstream EAGAIN {}, EMFILE {}",
        opt(f.kernel.map(|k| k.to_string())),
        opt(f.cpu_count().map(|c| c.to_string())),
        opt(f.mem_total.map(|m| (m >> 20).to_string())),
        opt(lim),
        opt(f.listen_overflows.map(|n| n.to_string())),
        opt(f.listen_drops.map(|n| n.to_string())),
        opt(f.softnet_dropped.map(|n| n.to_string())),
        f.log.upstream_eagain,
        f.log.emfile,
    )
}

/// The terminal table.
pub fn text(r: &Report, colours: bool) -> String {
    let mut s = header(r);
    let line_col = r.mode == "audit";
    let indent = if line_col {
        LINE_W + 1 + VERDICT_W + 1
    } else {
        VERDICT_W + 1
    };
    let _ = writeln!(
        s,
        "\n{}{:<VERDICT_W$} {:<ITEM_W$} CURRENT → RECOMMENDED\n{:indent$}REASON [SOURCE]",
        if line_col {
            format!("{:<LINE_W$} ", "LINE")
        } else {
            String::new()
        },
        "VERDICT",
        "ITEM",
        ""
    );
    for f in &r.findings {
        row(&mut s, f, line_col, indent, colours);
    }
    let counts: Vec<String> = r
        .summary
        .iter()
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    let _ = writeln!(
        s,
        "\nsummary: {}{}",
        counts.join(", "),
        if r.harmful {
            " — HARMFUL settings found"
        } else {
            ""
        }
    );
    s
}

/// The facts and what was read.
fn header(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "peregrine tune ({}) — {}", r.mode, facts_line(&r.facts));
    let _ = match (&r.audited_file, &r.config) {
        (Some(a), _) => writeln!(
            s,
            "audited: {a} (as `sysctl -p` would apply it to this kernel)"
        ),
        (None, Some(c)) => writeln!(s, "configuration: {c}"),
        (None, None) => writeln!(
            s,
            "configuration: none read (kernel checks against nginx defaults)"
        ),
    };
    s
}

/// One finding: verdict, item and values; the reason indented below.
fn row(s: &mut String, f: &Finding, line_col: bool, indent: usize, colours: bool) {
    if line_col {
        let n = f.line.map(|n| n.to_string()).unwrap_or_default();
        let _ = write!(s, "{n:<LINE_W$} ");
    }
    let v = format!("{:<VERDICT_W$}", f.verdict.as_str());
    if colours {
        let _ = write!(s, "{}{v}{RESET}", colour(f.verdict));
    } else {
        s.push_str(&v);
    }
    let _ = write!(
        s,
        " {:<ITEM_W$} {}",
        clean(&f.item),
        clean(f.current.as_deref().unwrap_or("-"))
    );
    if let Some(rec) = &f.recommended {
        let _ = write!(s, " → {}", clean(rec));
    }
    let _ = write!(s, "\n{:indent$}{}", "", clean(&f.reason));
    if !f.source.is_empty() {
        let _ = write!(s, " [{}]", f.source);
    }
    s.push('\n');
}

/// Audited files may hold anything: control characters (terminal escapes)
/// are shown as `?` rather than sent to the terminal.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The JSON document.
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The rules table as Markdown (also what `--rules` prints).
pub fn rules_markdown() -> String {
    let mut s = String::from(
        "| setting | what it does | kernel default | recommendation | why | source |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in crate::rules::RULES {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} |",
            r.key, r.what, r.default, r.recommendation, r.why, r.source
        );
    }
    s
}

/// The rules table as JSON.
pub fn rules_json() -> String {
    let rows: Vec<serde_json::Value> = crate::rules::RULES
        .iter()
        .map(|r| {
            serde_json::json!({
                "key": r.key, "what": r.what, "default": r.default,
                "recommendation": r.recommendation, "why": r.why, "source": r.source,
            })
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        let f = vec![
            Finding::new("net.ipv4.tcp_syncookies", Verdict::Harmful, "x")
                .current("0")
                .recommended("1"),
            Finding::new("net.core.somaxconn", Verdict::Ok, "y").current("4096"),
        ];
        Report::new(
            "live",
            "/proc".into(),
            Facts::default(),
            Needs::without_config(),
            f,
        )
    }

    #[test]
    fn colour_only_when_asked() {
        let r = report();
        assert!(!text(&r, false).contains('\x1b'));
        assert!(text(&r, true).contains("\x1b[1;31mharmful"));
        assert!(text(&r, false).contains("1 ok, 1 harmful"));
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let f = vec![Finding::new("x\x1b[2Jy", Verdict::Remove, "r\x07").current("\x1b]0;t\x07")];
        let r = Report::new(
            "audit",
            "/proc".into(),
            Facts::default(),
            Needs::without_config(),
            f,
        );
        let t = text(&r, false);
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
        assert!(t.contains("x?[2Jy"));
    }

    #[test]
    fn rules_table_lists_every_rule() {
        let md = rules_markdown();
        assert_eq!(md.lines().count(), crate::rules::RULES.len() + 2);
        assert!(md.contains("| `net.ipv4.tcp_tw_recycle` |"));
        let v: serde_json::Value = serde_json::from_str(&rules_json()).unwrap_or_default();
        assert_eq!(v.as_array().map(Vec::len), Some(crate::rules::RULES.len()));
    }

    #[test]
    fn json_has_verdicts() {
        let v: serde_json::Value = serde_json::from_str(&json(&report())).unwrap_or_default();
        assert_eq!(v["harmful"], true);
        assert_eq!(v["findings"][0]["verdict"], "harmful");
        assert_eq!(v["summary"]["ok"], 1);
    }
}
