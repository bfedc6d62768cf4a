//! Verdicts and findings: the unit of every report row.

use serde::Serialize;

/// What to do about one item. Ordered by severity so a report can take the
/// worst one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Holds as it is (or is not relevant to a web server).
    Ok,
    /// Could not be checked: the entry was unreadable or missing.
    Unknown,
    /// Too low for the configured load or the evidence.
    Raise,
    /// Too high: wastes memory or defeats the protection the limit gives.
    Lower,
    /// Obsolete or ineffective: the line does nothing (any more).
    Remove,
    /// Breaks clients, removes a protection, or the kernel docs forbid it.
    Harmful,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Unknown => "unknown",
            Verdict::Raise => "raise",
            Verdict::Lower => "lower",
            Verdict::Remove => "remove",
            Verdict::Harmful => "harmful",
        }
    }
}

/// One row of a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The sysctl key, rlimit or configuration check this row is about.
    pub item: String,
    pub verdict: Verdict,
    /// The value in force (live report) or written (audit), as text.
    pub current: Option<String>,
    /// In an audit, the running kernel's value of the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<String>,
    /// What to set instead, when the verdict asks for a change.
    pub recommended: Option<String>,
    pub reason: String,
    /// Where the reasoning comes from (kernel docs, man page, commit).
    pub source: String,
    /// In an audit, for a line that sets nothing as written (a misspelled
    /// key, a broken `echo`): the verdict of the line as its author meant it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_corrected: Option<Verdict>,
    /// In an audit, the 1-based line of the audited file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl Finding {
    pub fn new(item: impl Into<String>, verdict: Verdict, reason: impl Into<String>) -> Self {
        Finding {
            item: item.into(),
            verdict,
            current: None,
            live: None,
            recommended: None,
            reason: reason.into(),
            source: String::new(),
            if_corrected: None,
            line: None,
        }
    }

    pub fn current(mut self, v: impl Into<String>) -> Self {
        self.current = Some(v.into());
        self
    }

    pub fn recommended(mut self, v: impl Into<String>) -> Self {
        self.recommended = Some(v.into());
        self
    }

    pub fn source(mut self, s: impl Into<String>) -> Self {
        self.source = s.into();
        self
    }
}

/// The worst verdict of a set of findings (`Ok` when empty).
pub fn worst(findings: &[Finding]) -> Verdict {
    findings
        .iter()
        .map(|f| f.verdict)
        .max()
        .unwrap_or(Verdict::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmful_is_worst() {
        let f = vec![
            Finding::new("a", Verdict::Raise, ""),
            Finding::new("b", Verdict::Harmful, ""),
            Finding::new("c", Verdict::Ok, ""),
        ];
        assert_eq!(worst(&f), Verdict::Harmful);
        assert_eq!(worst(&[]), Verdict::Ok);
    }

    #[test]
    fn serializes_lowercase() {
        let s = serde_json::to_string(&Verdict::Harmful).unwrap_or_default();
        assert_eq!(s, "\"harmful\"");
    }
}
