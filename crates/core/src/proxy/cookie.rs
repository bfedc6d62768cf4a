//! `proxy_cookie_domain`, `proxy_cookie_path` and `proxy_cookie_flags` on
//! an answer's `Set-Cookie` values (`ngx_http_proxy_rewrite_cookie`): the
//! value split into attributes at `;`, a `Domain` or `Path` value through
//! the first rule that matches, the cookie's flags edited, and the value
//! written again (`name=value; Attr=value; Flag`) only when something
//! changed. Hand-written because it is nginx's own small parser: the
//! cookie crates normalize more than nginx does.

use std::borrow::Cow;

use peregrine_conf::build::proxy_cookie::COOKIE_FLAGS;
use peregrine_conf::model::{CookieName, CookieRule, ProxyConf, Regex};

use crate::vars::VarCtx;

/// A domain or path rule of one request: a literal's variables expanded,
/// a regex's replacement expanded but for its `$N`.
#[derive(Debug, Clone)]
pub enum Rewrite {
    Literal(String, String),
    Regex(Regex, String),
}

/// A `proxy_cookie_flags` rule of one request.
#[derive(Debug, Clone)]
pub struct FlagsRule {
    cookie: NameRun,
    /// [`flag`] bits.
    flags: u8,
}

#[derive(Debug, Clone)]
enum NameRun {
    Name(String),
    Regex(Regex),
}

/// `proxy_cookie_flags` bits (nginx's `NGX_HTTP_PROXY_COOKIE_*`), in
/// [`COOKIE_FLAGS`]'s order.
mod flag {
    pub const SECURE_ON: u8 = 1 << 0;
    pub const SECURE_OFF: u8 = 1 << 1;
    pub const HTTPONLY_ON: u8 = 1 << 2;
    pub const HTTPONLY_OFF: u8 = 1 << 3;
    pub const STRICT: u8 = 1 << 4;
    pub const LAX: u8 = 1 << 5;
    pub const NONE: u8 = 1 << 6;
    pub const SAMESITE_OFF: u8 = 1 << 7;
}

/// The cookie rules of one request, `None` when the location has none
/// (then `Set-Cookie` passes untouched, as nginx sets no
/// `u->rewrite_cookie`).
#[derive(Debug, Clone, Default)]
pub struct CookieJob {
    domains: Vec<Rewrite>,
    paths: Vec<Rewrite>,
    flags: Vec<FlagsRule>,
}

/// The location's rules with the request's variables.
pub(crate) fn for_request(p: &ProxyConf, v: &VarCtx<'_>) -> Option<Box<CookieJob>> {
    if p.cookie_domain.is_empty() && p.cookie_path.is_empty() && p.cookie_flags.is_empty() {
        return None;
    }
    let rules = |list: &[CookieRule]| -> Vec<Rewrite> {
        list.iter()
            .map(|r| match r {
                CookieRule::Literal(f, t) => Rewrite::Literal(v.expand(f), v.expand(t)),
                CookieRule::Regex(re, t) => Rewrite::Regex(re.clone(), keep_captures(v, t)),
            })
            .collect()
    };
    let flags = p
        .cookie_flags
        .iter()
        .map(|r| FlagsRule {
            cookie: match &r.cookie {
                CookieName::Name(n) => NameRun::Name(v.expand(n)),
                CookieName::Regex(re) => NameRun::Regex(re.clone()),
            },
            flags: r.flags.iter().fold(0, |f, w| f | flag_bit(&v.expand(w))),
        })
        .collect();
    Some(Box::new(CookieJob {
        domains: rules(&p.cookie_domain),
        paths: rules(&p.cookie_path),
        flags,
    }))
}

/// The bit of a flag's value; nginx skips an unknown one (a debug line).
fn flag_bit(w: &str) -> u8 {
    COOKIE_FLAGS
        .iter()
        .position(|k| k.eq_ignore_ascii_case(w))
        .map_or(0, |i| 1 << i)
}

/// `template`'s variables expanded, its `$N` left for the match.
fn keep_captures(v: &VarCtx<'_>, template: &str) -> String {
    let b = template.as_bytes();
    let mut out = String::with_capacity(template.len() + 16);
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            out.push_str(&v.expand(&template[start..i]));
            out.push_str(&template[i..i + 2]);
            i += 2;
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&v.expand(&template[start..]));
    out
}

/// One attribute: `key[=value]`; a removed flag has no key.
struct Attr<'v> {
    key: Option<Cow<'v, str>>,
    value: Option<Cow<'v, str>>,
}

/// `ngx_http_proxy_parse_cookie`: pieces at `;`, spaces around keys and
/// values trimmed.
fn parse(v: &str) -> Vec<Attr<'_>> {
    v.split(';')
        .map(|piece| {
            let (k, val) = match piece.split_once('=') {
                Some((k, val)) => (k, Some(val.trim_matches(' '))),
                None => (piece, None),
            };
            Attr {
                key: Some(Cow::Borrowed(k.trim_matches(' '))),
                value: val.map(Cow::Borrowed),
            }
        })
        .collect()
}

/// The new `Set-Cookie` value, `None` when no rule changed it.
pub fn rewrite(value: &str, job: &CookieJob) -> Option<String> {
    let mut attrs = parse(value);
    attrs.first()?.value.as_ref()?;
    let mut changed = false;
    for a in attrs.iter_mut().skip(1) {
        let (Some(k), Some(val)) = (&a.key, &a.value) else {
            continue;
        };
        let new = if k.eq_ignore_ascii_case("domain") {
            first_rule(val, &job.domains, true)
        } else if k.eq_ignore_ascii_case("path") {
            first_rule(val, &job.paths, false)
        } else {
            None
        };
        if let Some(n) = new {
            a.value = Some(Cow::Owned(n));
            changed = true;
        }
    }
    changed |= edit_flags(&mut attrs, &job.flags);
    changed.then(|| join(&attrs))
}

/// The value through the first rule that matches it
/// (`ngx_http_proxy_rewrite_cookie_value`).
fn first_rule(val: &str, rules: &[Rewrite], domain: bool) -> Option<String> {
    rules.iter().find_map(|r| match r {
        // `ngx_http_proxy_rewrite_domain_handler`: the cookie's leading
        // dot stays, the rest compared whole and caselessly.
        Rewrite::Literal(from, to) if domain => {
            let dot = usize::from(val.starts_with('.'));
            val[dot..]
                .eq_ignore_ascii_case(from)
                .then(|| format!("{}{to}", &val[..dot]))
        }
        // `ngx_http_proxy_rewrite_complex_handler`: a prefix.
        Rewrite::Literal(from, to) => val
            .strip_prefix(from.as_str())
            .map(|rest| format!("{to}{rest}")),
        Rewrite::Regex(re, to) => re
            .captures(val)
            .map(|caps| super::answer::with_captures(to, &caps)),
    })
}

/// `ngx_http_proxy_rewrite_cookie_flags` and `_edit_cookie_flags`: the
/// first rule naming the cookie; a flag present is kept (or removed by
/// its `no` form), one missing is added after the others.
fn edit_flags(attrs: &mut Vec<Attr<'_>>, rules: &[FlagsRule]) -> bool {
    let name = attrs[0].key.as_deref().unwrap_or("");
    let Some(rule) = rules.iter().find(|r| match &r.cookie {
        NameRun::Name(n) => n.eq_ignore_ascii_case(name),
        NameRun::Regex(re) => re.is_match(name),
    }) else {
        return false;
    };
    let mut f = rule.flags;
    if f == 0 {
        return false;
    }
    for a in attrs.iter_mut().skip(1) {
        let Some(k) = a.key.as_deref() else { continue };
        if k.eq_ignore_ascii_case("secure") {
            toggle(a, &mut f, flag::SECURE_ON, flag::SECURE_OFF);
        } else if k.eq_ignore_ascii_case("httponly") {
            toggle(a, &mut f, flag::HTTPONLY_ON, flag::HTTPONLY_OFF);
        } else if k.eq_ignore_ascii_case("samesite") {
            samesite(a, &mut f);
        }
    }
    let mut add = |k: &'static str, v: Option<&'static str>| {
        attrs.push(Attr {
            key: Some(Cow::Borrowed(k)),
            value: v.map(Cow::Borrowed),
        })
    };
    if f & flag::SECURE_ON != 0 {
        add("Secure", None);
    }
    if f & flag::HTTPONLY_ON != 0 {
        add("HttpOnly", None);
    }
    if let Some(v) = samesite_value(f) {
        add("SameSite", Some(v));
    }
    true
}

/// A present `Secure` or `HttpOnly`: kept by the flag (not added again),
/// removed by its `no` form.
fn toggle(a: &mut Attr<'_>, f: &mut u8, on: u8, off: u8) {
    if *f & on != 0 {
        *f &= !on;
    } else if *f & off != 0 {
        a.key = None;
    }
}

/// The `SameSite` value a flag sets (strict before lax before none).
fn samesite_value(f: u8) -> Option<&'static str> {
    [
        (flag::STRICT, "Strict"),
        (flag::LAX, "Lax"),
        (flag::NONE, "None"),
    ]
    .into_iter()
    .find(|(b, _)| f & b != 0)
    .map(|(_, v)| v)
}

/// A present `SameSite`: set to the flag's value (written `SameSite=V`
/// when it differs), or removed by `nosamesite`.
fn samesite(a: &mut Attr<'_>, f: &mut u8) {
    if let Some(v) = samesite_value(*f) {
        *f &= !(flag::STRICT | flag::LAX | flag::NONE);
        let same = a
            .value
            .as_deref()
            .is_some_and(|x| x.eq_ignore_ascii_case(v));
        if !same {
            a.key = Some(Cow::Borrowed("SameSite"));
            a.value = Some(Cow::Borrowed(v));
        }
    } else if *f & flag::SAMESITE_OFF != 0 {
        a.key = None;
    }
}

/// The attributes written again, `; ` between them.
fn join(attrs: &[Attr<'_>]) -> String {
    let mut out = String::new();
    for (i, a) in attrs.iter().enumerate() {
        let Some(k) = &a.key else { continue };
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(k);
        if let Some(v) = &a.value {
            out.push('=');
            out.push_str(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(domains: Vec<Rewrite>, paths: Vec<Rewrite>) -> CookieJob {
        CookieJob {
            domains,
            paths,
            flags: Vec::new(),
        }
    }

    #[test]
    fn domain_literal_keeps_the_cookies_dot() {
        let j = job(
            vec![Rewrite::Literal(
                "localhost.com".into(),
                "en.localhost.org".into(),
            )],
            vec![],
        );
        assert_eq!(
            rewrite("v=1; Domain=.LocalHost.com", &j).as_deref(),
            Some("v=1; Domain=.en.localhost.org")
        );
        assert_eq!(rewrite("v=1; Domain=x.localhost.com", &j), None);
        // The cookie itself is never rewritten, nor a cookie without `=`.
        assert_eq!(rewrite("Domain=localhost.com", &j), None);
        assert_eq!(rewrite("v; Domain=localhost.com", &j), None);
    }

    #[test]
    fn path_prefix_and_regex() {
        let j = job(
            vec![],
            vec![
                Rewrite::Literal("/path/".into(), "/new/".into()),
                Rewrite::Regex(Regex::with_case("^/re/(.+)$", true).unwrap(), "/$1".into()),
            ],
        );
        assert_eq!(
            rewrite("a=b;path=/path/x ;Secure", &j).as_deref(),
            Some("a=b; path=/new/x; Secure")
        );
        assert_eq!(
            rewrite("a=b; Path=/RE/x", &j).as_deref(),
            Some("a=b; Path=/x")
        );
        assert_eq!(rewrite("a=b; Path=/Path/x", &j), None);
    }

    #[test]
    fn flags_added_kept_and_removed() {
        let rule = |n: &str, f: u8| FlagsRule {
            cookie: NameRun::Name(n.into()),
            flags: f,
        };
        let j = CookieJob {
            flags: vec![
                rule("a", flag::SECURE_ON | flag::HTTPONLY_ON | flag::NONE),
                rule(
                    "d",
                    flag::SECURE_OFF | flag::HTTPONLY_OFF | flag::SAMESITE_OFF,
                ),
            ],
            ..CookieJob::default()
        };
        assert_eq!(
            rewrite("a=1;Secure;samesite=lax", &j).as_deref(),
            Some("a=1; Secure; SameSite=None; HttpOnly")
        );
        assert_eq!(
            rewrite("d=1; secure;httponly;samesite=lax", &j).as_deref(),
            Some("d=1")
        );
        assert_eq!(rewrite("x=1;secure", &j), None);
        assert_eq!(flag_bit("SameSite=Lax"), flag::LAX);
        assert_eq!(flag_bit("bogus"), 0);
    }
}
