//! The proxy's `Set-Cookie` rewriting directives (`proxy_cookie_domain`,
//! `proxy_cookie_path`, `proxy_cookie_flags`), read as nginx's
//! `ngx_http_proxy_cookie_domain`, `_path` and `_flags` do. The run-time
//! side is `peregrine_core::proxy::cookie`.

use super::Env;
use super::handlers::{arg, duplicate, msg};
use super::location::compile;
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{CookieFlags, CookieName, CookieRule};
use crate::syntax::Directive;

/// The flags `proxy_cookie_flags` knows (`ngx_http_proxy_cookie_flags_masks`),
/// compared caselessly per request.
pub const COOKIE_FLAGS: &[&str] = &[
    "secure",
    "nosecure",
    "httponly",
    "nohttponly",
    "samesite=strict",
    "samesite=lax",
    "samesite=none",
    "nosamesite",
];

/// `off` alone, once, before any rule; otherwise rules. A level's list is
/// `Some(empty)` after `off`, which a rule then finds duplicate (nginx's
/// `NULL` list).
fn off_or_list<'s, T>(
    slot: &'s mut Option<Vec<T>>,
    d: &Directive,
) -> Result<Option<&'s mut Vec<T>>> {
    if matches!(slot, Some(v) if v.is_empty()) {
        return Err(duplicate(d));
    }
    if d.args.len() == 1 {
        if arg(d, 0) != "off" {
            return Err(msg(d, format!("invalid parameter \"{}\"", arg(d, 0))));
        }
        if slot.is_some() {
            return Err(duplicate(d));
        }
        *slot = Some(Vec::new());
        return Ok(None);
    }
    Ok(Some(slot.get_or_insert_with(Vec::new)))
}

/// `proxy_cookie_domain off | DOMAIN REPLACEMENT`: a literal domain and
/// its replacement lose a leading `.` (the cookie's own dot is kept at
/// run time); `~REGEX` is always caseless, its replacement as written.
pub fn proxy_cookie_domain(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let Some(list) = off_or_list(&mut l.proxy.cookie_domain, d)? else {
        return Ok(());
    };
    let (from, to) = (arg(d, 0), arg(d, 1));
    let rule = match from.strip_prefix('~') {
        Some(re) => CookieRule::Regex(compile(re, true, &d.span)?, to.to_string()),
        None => CookieRule::Literal(
            from.strip_prefix('.').unwrap_or(from).to_string(),
            to.strip_prefix('.').unwrap_or(to).to_string(),
        ),
    };
    list.push(rule);
    Ok(())
}

/// `proxy_cookie_path off | PATH REPLACEMENT`: a literal path is a
/// case-sensitive prefix; `~` and `~*` regexes.
pub fn proxy_cookie_path(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let Some(list) = off_or_list(&mut l.proxy.cookie_path, d)? else {
        return Ok(());
    };
    let (from, to) = (arg(d, 0), arg(d, 1).to_string());
    let rule = match from.strip_prefix('~') {
        Some(re) => match re.strip_prefix('*') {
            Some(re) => CookieRule::Regex(compile(re, true, &d.span)?, to),
            None => CookieRule::Regex(compile(re, false, &d.span)?, to),
        },
        None => CookieRule::Literal(from.to_string(), to),
    };
    list.push(rule);
    Ok(())
}

/// `proxy_cookie_flags off | COOKIE FLAG...` (nginx 1.19.3): the cookie by
/// name (variables allowed) or `~REGEX` (caseless). nginx reads the flags
/// (with variables) per request and skips one not among [`COOKIE_FLAGS`],
/// so an unknown flag loads.
pub fn proxy_cookie_flags(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let Some(list) = off_or_list(&mut l.proxy.cookie_flags, d)? else {
        return Ok(());
    };
    let name = arg(d, 0);
    let cookie = match name.strip_prefix('~') {
        Some(re) => CookieName::Regex(compile(re, true, &d.span)?),
        None => CookieName::Name(name.to_string()),
    };
    let flags: Vec<String> = d.args[1..].to_vec();
    list.push(CookieFlags { cookie, flags });
    Ok(())
}
