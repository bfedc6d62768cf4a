//! `--audit-sysctl FILE`: judges a sysctl.conf text line by line against the
//! running kernel, as `sysctl -p` would apply it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::facts::Facts;
use crate::procfs::{ProcFs, canonical_key, sysctl_path};
use crate::rules::{self, Assessed, Ctx, Needs};
use crate::sysctl_file::{self, LineKind};
use crate::verdict::{Finding, Verdict};

/// How a key as written maps onto the running kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The key exists (or has a rule): its dotted form.
    Exact(String),
    /// Only a case- or space-insensitive match exists: the real key. Keys
    /// are case-sensitive paths under /proc/sys, so the line sets nothing.
    Misspelled(String),
    /// No such key at all.
    Unknown(String),
}

/// Resolves a key as written.
pub fn resolve(proc: &ProcFs, key: &str) -> Resolved {
    let canon = canonical_key(key);
    if rules::rule(&canon).is_some() || proc.has_sysctl(&canon) {
        return Resolved::Exact(canon);
    }
    let norm: String = canon.to_ascii_lowercase().split_whitespace().collect();
    if let Some(r) = rules::RULES.iter().find(|r| r.key == norm) {
        return Resolved::Misspelled(r.key.to_string());
    }
    match find_case_insensitive(proc, &norm) {
        Some(real) => Resolved::Misspelled(real),
        None => Resolved::Unknown(canon),
    }
}

/// Walks /proc/sys matching each component without regard to case.
fn find_case_insensitive(proc: &ProcFs, norm: &str) -> Option<String> {
    let rel = sysctl_path(norm)?;
    let mut dir: PathBuf = proc.root().join("sys");
    let mut parts = Vec::new();
    for comp in rel.split('/') {
        let entry = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.eq_ignore_ascii_case(comp))?;
        dir = dir.join(&entry);
        parts.push(entry);
    }
    Some(parts.join("."))
}

/// Audits a sysctl text. `path` only names the file in findings.
pub fn audit(text: &str, proc: &ProcFs, facts: &Facts, needs: &Needs) -> Vec<Finding> {
    let lines = sysctl_file::parse(text);
    // The values the file leaves in force (last line wins), for rules that
    // look at another key, and the line that wins for each key.
    let mut file: HashMap<String, String> = HashMap::new();
    let mut last_line: HashMap<String, usize> = HashMap::new();
    for l in &lines {
        if let LineKind::Setting { key, value, .. } = &l.kind
            && let Resolved::Exact(k) = resolve(proc, key)
        {
            file.insert(k.clone(), value.clone());
            last_line.insert(k, l.number);
        }
    }
    let ctx = Ctx {
        proc,
        facts,
        needs,
        file: &file,
        audit: true,
    };
    let mut out = Vec::new();
    for l in &lines {
        let f = match &l.kind {
            LineKind::Skip => continue,
            LineKind::Setting { key, value, .. } => setting(&ctx, key, value, l.number, &last_line),
            LineKind::Inert(reason) => inert(&ctx, &l.text, reason),
        };
        out.push(Finding {
            line: Some(l.number),
            ..f
        });
    }
    out
}

/// Reads and audits a file; an unreadable file is one `unknown` finding.
pub fn audit_file(
    path: &Path,
    proc: &ProcFs,
    facts: &Facts,
    needs: &Needs,
) -> Result<Vec<Finding>, std::io::Error> {
    let bytes = std::fs::read(path)?;
    // Damaged copies may hold stray bytes: judge what is readable.
    let text = String::from_utf8_lossy(&bytes);
    Ok(audit(&text, proc, facts, needs))
}

fn setting(
    ctx: &Ctx,
    key: &str,
    value: &str,
    number: usize,
    last: &HashMap<String, usize>,
) -> Finding {
    let live = |k: &str| ctx.proc.sysctl(k).ok();
    match resolve(ctx.proc, key) {
        Resolved::Exact(k) => {
            let mut f = judge(ctx, &k, value);
            f.item = key.to_string();
            f.live = live(&k);
            if let Some(&winner) = last.get(&k).filter(|w| **w != number) {
                f.verdict = Verdict::Remove;
                f.recommended = None;
                f.reason = format!("overridden by line {winner} (sysctl applies lines in order)");
            }
            f
        }
        Resolved::Misspelled(real) => {
            let intended = judge(ctx, &real, value);
            let damage = if key.split_whitespace().nth(1).is_some() {
                "a space inside the key"
            } else {
                "sysctl keys are case-sensitive paths"
            };
            let mut f = Finding::new(
                key,
                Verdict::Remove,
                format!(
                    "{damage}: `{key}` does not exist, the line sets nothing; as `{real}` it \
                     would be {}: {}",
                    intended.verdict.as_str(),
                    intended.reason
                ),
            )
            .current(value)
            .source(intended.source.clone());
            f.recommended = Some(corrected_line(&real, value, &intended));
            f.live = live(&real);
            f.if_corrected = Some(intended.verdict);
            f
        }
        Resolved::Unknown(k) => Finding::new(
            key,
            Verdict::Remove,
            format!("no such key in this kernel (/proc/sys/{}): sysctl -p reports an error, nothing is set", sysctl_path(&k).unwrap_or(k.clone())),
        )
        .current(value)
        .source("sysctl(8)"),
    }
}

/// The judgement of a value for an existing key.
fn judge(ctx: &Ctx, key: &str, value: &str) -> Finding {
    let Some(rule) = rules::rule(key) else {
        return Finding::new(key, Verdict::Ok, "not relevant to a web server: not judged")
            .current(value);
    };
    let Assessed {
        verdict,
        recommended,
        mut reason,
        ..
    } = (rule.assess)(value, ctx);
    if let Some(note) = trailing_note(value) {
        reason.push_str(&note);
    }
    let mut f = Finding::new(key, verdict, reason)
        .current(value)
        .source(rule.source);
    f.recommended = recommended;
    f
}

/// sysctl.conf has no inline comments: words after the numbers go to the
/// kernel as part of the value.
fn trailing_note(value: &str) -> Option<String> {
    let mut words = value.split_whitespace();
    if words.next()?.parse::<i64>().is_err() {
        return None;
    }
    let rest: Vec<&str> = words.skip_while(|w| w.parse::<i64>().is_ok()).collect();
    (!rest.is_empty()).then(|| {
        format!(
            " (note: `{}` after the value goes to the kernel too: sysctl.conf has no inline \
             comments and no line continuation)",
            rest.join(" ")
        )
    })
}

fn inert(ctx: &Ctx, text: &str, reason: &str) -> Finding {
    let item: String = text.trim().chars().take(ITEM_WIDTH).collect();
    let mut f = Finding::new(item, Verdict::Remove, reason).source("sysctl.conf(5); bash(1)");
    if let Some((key, value)) = sysctl_file::intended_echo(text)
        && let Resolved::Exact(k) | Resolved::Misspelled(k) = resolve(ctx.proc, &key)
    {
        let intended = judge(ctx, &k, &value);
        f.reason = format!(
            "{reason}; as intended (`{k} = {value}`) it would be {}: {}",
            intended.verdict.as_str(),
            intended.reason
        );
        f.recommended = Some(corrected_line(&k, &value, &intended));
        f.live = ctx.proc.sysctl(&k).ok();
        f.if_corrected = Some(intended.verdict);
    }
    f
}

/// What to write instead of a line that sets nothing: the corrected line
/// with the recommended value, or nothing at all when even the corrected
/// line should go.
fn corrected_line(key: &str, value: &str, intended: &Finding) -> String {
    match (&intended.recommended, intended.verdict) {
        (Some(rec), _) => format!("{key} = {rec}"),
        (None, Verdict::Ok | Verdict::Unknown) => format!("{key} = {value}"),
        (None, _) => "(delete the line)".to_string(),
    }
}

/// How much of an unparseable line names it in a report.
const ITEM_WIDTH: usize = 48;
