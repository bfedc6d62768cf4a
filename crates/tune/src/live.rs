//! The live report: every rule judged against the running kernel's value.

use std::collections::HashMap;

use crate::facts::Facts;
use crate::procfs::{ProbeError, ProcFs};
use crate::rules::{Ctx, Needs, RULES};
use crate::verdict::{Finding, Verdict};

/// The key whose absence is the expected state on Linux ≥ 4.12.
const TW_RECYCLE: &str = "net.ipv4.tcp_tw_recycle";

/// Judges every rule's key as the kernel has it now.
pub fn sysctls(proc: &ProcFs, facts: &Facts, needs: &Needs) -> Vec<Finding> {
    let empty = HashMap::new();
    let ctx = Ctx {
        proc,
        facts,
        needs,
        file: &empty,
        audit: false,
    };
    RULES
        .iter()
        .map(|rule| match proc.sysctl(rule.key) {
            Ok(v) => {
                let a = (rule.assess)(&v, &ctx);
                if a.malformed {
                    let why = format!("unexpected contents `{v}`");
                    return Finding::new(rule.key, Verdict::Unknown, why).source(rule.source);
                }
                let mut f = Finding::new(rule.key, a.verdict, a.reason)
                    .current(v)
                    .source(rule.source);
                f.recommended = a.recommended;
                f
            }
            Err(ProbeError::Missing(_)) if rule.key == TW_RECYCLE => Finding::new(
                rule.key,
                Verdict::Ok,
                "not in this kernel (removed in Linux 4.12): nothing to do; a sysctl file setting \
                 it only produces an error",
            )
            .source(rule.source),
            Err(e) => Finding::new(rule.key, Verdict::Unknown, e.to_string()).source(rule.source),
        })
        .collect()
}
