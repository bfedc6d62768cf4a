//! `location [=|^~|~|~*] uri` and `location @name`: modifiers, regexes, and
//! nginx's nesting rules (`ngx_http_core_location`), plus the duplicate check
//! nginx makes at the end of `http { }` (`ngx_http_join_exact_locations`).

use std::collections::HashSet;

use super::raw::{RawLoc, RawLocation};
use crate::error::{ConfError, Result};
use crate::model::{LocationMatch, Span};
use crate::regex::Regex;
use crate::syntax::Directive;

/// Compiles a regex written in a configuration (PCRE2, see
/// [`crate::regex`]); errors are worded as nginx's `ngx_regex_compile`:
/// `pcre2_compile() failed: REASON in "RE" at "REST"` (`at` omitted when
/// the error is at the end of the pattern).
pub fn compile(re: &str, case_insensitive: bool, span: &Span) -> Result<Regex> {
    Regex::with_case(re, case_insensitive).map_err(|e| {
        let at = match e.offset {
            Some(off) if off < re.len() => format!(" at \"{}\"", re.get(off..).unwrap_or("")),
            _ => String::new(),
        };
        ConfError::at(
            span,
            format!("pcre2_compile() failed: {} in \"{re}\"{at}", e.reason),
        )
    })
}

fn matcher(d: &Directive) -> Result<(LocationMatch, String)> {
    let regex = |re: &str, ci: bool| -> Result<(LocationMatch, String)> {
        let regex = compile(re, ci, &d.span)?;
        Ok((
            LocationMatch::Regex {
                regex,
                case_insensitive: ci,
            },
            re.to_string(),
        ))
    };
    let prefix = |p: &str, no_regex: bool| {
        (
            LocationMatch::Prefix {
                path: p.to_string(),
                no_regex,
            },
            p.to_string(),
        )
    };
    match d.args.as_slice() {
        [m, name] => match m.as_str() {
            "=" => Ok((LocationMatch::Exact(name.clone()), name.clone())),
            "^~" => Ok(prefix(name, true)),
            "~" => regex(name, false),
            "~*" => regex(name, true),
            _ => Err(ConfError::at(
                &d.span,
                format!("invalid location modifier \"{m}\""),
            )),
        },
        [name] => {
            if let Some(n) = name.strip_prefix('=') {
                Ok((LocationMatch::Exact(n.to_string()), n.to_string()))
            } else if let Some(n) = name.strip_prefix("^~") {
                Ok(prefix(n, true))
            } else if let Some(n) = name.strip_prefix("~*") {
                regex(n, true)
            } else if let Some(n) = name.strip_prefix('~') {
                regex(n, false)
            } else if let Some(n) = name.strip_prefix('@') {
                Ok((LocationMatch::Named(n.to_string()), name.clone()))
            } else {
                Ok(prefix(name, false))
            }
        }
        _ => Err(ConfError::at(
            &d.span,
            "invalid number of arguments in \"location\" directive",
        )),
    }
}

/// A new location, checked against its parent (none at server level).
pub fn new(d: &Directive, parent: Option<&RawLocation>) -> Result<RawLocation> {
    let (matcher, name) = matcher(d)?;
    if let Some(p) = parent {
        let err = |m: String| Err(ConfError::at(&d.span, m));
        match &p.matcher {
            LocationMatch::Exact(_) => {
                return err(format!(
                    "location \"{name}\" cannot be inside the exact location \"{}\"",
                    p.name
                ));
            }
            LocationMatch::Named(_) => {
                return err(format!(
                    "location \"{name}\" cannot be inside the named location \"{}\"",
                    p.name
                ));
            }
            _ => {}
        }
        if matches!(matcher, LocationMatch::Named(_)) {
            return err(format!(
                "named location \"{name}\" can be on the server level only"
            ));
        }
        if !matches!(matcher, LocationMatch::Regex { .. }) && !name.starts_with(p.name.as_str()) {
            return err(format!(
                "location \"{name}\" is outside location \"{}\"",
                p.name
            ));
        }
    }
    Ok(RawLocation {
        matcher,
        name,
        loc: RawLoc::default(),
        locations: Vec::new(),
        span: d.span.clone(),
    })
}

/// nginx refuses two exact or two prefix locations with the same URI at one
/// level (`^~` counts as prefix), reported at the second one.
pub fn check_duplicates(locations: &[RawLocation]) -> Result<()> {
    let mut seen: HashSet<(bool, &str)> = HashSet::new();
    for l in locations {
        let key = match &l.matcher {
            LocationMatch::Exact(p) => Some((true, p.as_str())),
            LocationMatch::Prefix { path, .. } => Some((false, path.as_str())),
            _ => None,
        };
        if let Some(k) = key
            && !seen.insert(k)
        {
            return Err(ConfError::at(
                &l.span,
                format!("duplicate location \"{}\"", l.name),
            ));
        }
        check_duplicates(&l.locations)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::regex::Regex;

    /// PCRE's `\Q...\E` quoting, which server names use (`~^\Q*.com\E$`).
    #[test]
    fn pcre_quoting() {
        let re = Regex::new(r"^(?P<n>[a-z]+)\Q.ex.com\E$").unwrap();
        assert!(re.is_match("a.ex.com") && !re.is_match("a.exxcom"));
        let re = Regex::new(r"^\Q*.com\E$").unwrap();
        assert!(re.is_match("*.com") && !re.is_match("a.com"));
    }
}
