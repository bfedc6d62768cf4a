//! `location [=|^~|~|~*] uri` and `location @name`: modifiers, regexes, and
//! nginx's nesting rules (`ngx_http_core_location`), plus the duplicate check
//! nginx makes at the end of `http { }` (`ngx_http_join_exact_locations`).

use std::collections::HashSet;

use regex::RegexBuilder;

use super::raw::{RawLoc, RawLocation};
use crate::error::{ConfError, Result};
use crate::model::{LocationMatch, Span};
use crate::syntax::Directive;

/// Compiled regexes larger than this are refused (the regex crate's own
/// default, stated so that the limit is visible).
pub const REGEX_SIZE_LIMIT: usize = 10 * 1024 * 1024;

/// Compiles a regex written in a configuration; errors are worded like
/// nginx's `pcre2_compile() failed: ... in "RE"` (the reason is the regex
/// crate's, whose syntax is close to PCRE's but lacks look-around and
/// backreferences).
pub fn compile(re: &str, case_insensitive: bool, span: &Span) -> Result<regex::Regex> {
    RegexBuilder::new(&unquote(re))
        .case_insensitive(case_insensitive)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let text = e.to_string();
            let reason = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid regex")
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            ConfError::at(span, format!("regex compile failed: {reason} in \"{re}\""))
        })
}

/// PCRE's `\\Q...\\E` (the text between taken literally, up to `\\E` or
/// the end), which the regex crate lacks: the text escaped instead.
fn unquote(re: &str) -> std::borrow::Cow<'_, str> {
    if !re.contains("\\Q") {
        return std::borrow::Cow::Borrowed(re);
    }
    let mut out = String::with_capacity(re.len() + 8);
    let mut rest = re;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let esc = &rest[i..];
        let Some(c) = esc[1..].chars().next() else {
            out.push('\\');
            rest = "";
            break;
        };
        if c == 'Q' {
            let quoted = &esc[2..];
            let end = quoted.find("\\E").unwrap_or(quoted.len());
            out.push_str(&regex::escape(&quoted[..end]));
            rest = quoted.get(end + 2..).unwrap_or("");
        } else {
            out.push_str(&esc[..1 + c.len_utf8()]);
            rest = &esc[1 + c.len_utf8()..];
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
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
    use super::unquote;

    #[test]
    fn pcre_quoting_becomes_escapes() {
        assert_eq!(unquote(r"^a\.b$"), r"^a\.b$");
        assert_eq!(
            unquote(r"^(?P<n>[a-z]+)\Q.ex.com\E$"),
            r"^(?P<n>[a-z]+)\.ex\.com$"
        );
        assert_eq!(unquote(r"\Qa+b"), r"a\+b");
        assert_eq!(unquote(r"\\Q.x"), r"\\Q.x", "an escaped backslash");
        let re = regex::Regex::new(&unquote(r"^\Q*.com\E$")).unwrap();
        assert!(re.is_match("*.com") && !re.is_match("a.com"));
    }
}
