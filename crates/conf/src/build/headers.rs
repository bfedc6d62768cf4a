//! The response-header directives: `add_header`, `add_trailer`, their
//! `*_inherit`, and `expires` (ngx_http_headers_filter_module), and the
//! core module's `server_tokens`, `etag` and `if_modified_since`. Messages
//! are nginx's (`ngx_http_headers_add`, `ngx_http_headers_expires`,
//! `ngx_http_parse_expires`, `ngx_conf_set_enum_slot`).

use super::Env;
use super::handlers::{arg, duplicate, flag, msg, set_with};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{AddHeader, Expires, HeadersInherit, IfModifiedSince, ServerTokens};
use crate::syntax::Directive;
use crate::values::parse_time_sec;

/// `ngx_http_parse_expires`'s limit for `@TIME`.
const DAY_SECS: i64 = 24 * 60 * 60;

/// `NAME VALUE [always]` into `list` (created at this level on first use).
fn add(list: &mut Option<Vec<AddHeader>>, d: &Directive, env: &Env<'_>) -> Result<()> {
    let value = arg(d, 1);
    super::vars::check_value(d, value)?;
    let value = super::rewrite::compile(value, d, env)?;
    let always = match d.args.get(2).map(String::as_str) {
        None => false,
        Some("always") => true,
        Some(other) => return Err(msg(d, format!("invalid parameter \"{other}\""))),
    };
    list.get_or_insert_with(Vec::new).push(AddHeader {
        name: arg(d, 0).to_string(),
        value,
        always,
    });
    Ok(())
}

pub fn add_header(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    add(&mut l.add_headers, d, env)
}

pub fn add_trailer(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    add(&mut l.add_trailers, d, env)
}

/// `ngx_conf_set_enum_slot` over (word, value) pairs.
fn enum_value<T: Copy>(d: &Directive, words: &[(&str, T)]) -> Result<T> {
    let v = arg(d, 0);
    words
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(v))
        .map(|&(_, t)| t)
        .ok_or_else(|| msg(d, format!("invalid value \"{v}\"")))
}

const INHERIT: [(&str, HeadersInherit); 3] = [
    ("off", HeadersInherit::Off),
    ("on", HeadersInherit::On),
    ("merge", HeadersInherit::Merge),
];

pub fn add_header_inherit(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.add_header_inherit, d, || enum_value(d, &INHERIT))
}

pub fn add_trailer_inherit(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.add_trailer_inherit, d, || enum_value(d, &INHERIT))
}

pub fn server_tokens(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let words = [
        ("off", ServerTokens::Off),
        ("on", ServerTokens::On),
        ("build", ServerTokens::Build),
    ];
    set_with(&mut l.server_tokens, d, || enum_value(d, &words))
}

pub fn if_modified_since(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let words = [
        ("off", IfModifiedSince::Off),
        ("exact", IfModifiedSince::Exact),
        ("before", IfModifiedSince::Before),
    ];
    set_with(&mut l.if_modified_since, d, || enum_value(d, &words))
}

pub fn etag(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.etag, d, || flag(d))
}

/// `expires [modified] TIME|epoch|max|off|@TIME`.
pub fn expires(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.expires.is_some() {
        return Err(duplicate(d));
    }
    let modified = d.args.len() == 2;
    if modified && arg(d, 0) != "modified" {
        return Err(msg(d, "\"expires\" directive invalid value"));
    }
    let value = arg(d, usize::from(modified));
    super::vars::check_value(d, value)?;
    let e = if value.contains('$') {
        Expires::Variable {
            modified,
            value: value.to_string(),
        }
    } else {
        parse_expires(value, modified)
            .map_err(|err| msg(d, format!("\"expires\" directive {err}")))?
    };
    l.expires = Some(e);
    Ok(())
}

/// `ngx_http_parse_expires`: the value of `expires` (also at request time,
/// for a value with variables). `Err` holds nginx's reason.
pub fn parse_expires(value: &str, modified: bool) -> std::result::Result<Expires, &'static str> {
    if !modified {
        match value {
            "epoch" => return Ok(Expires::Epoch),
            "max" => return Ok(Expires::Max),
            "off" => return Ok(Expires::Off),
            _ => {}
        }
    }
    let (daily, minus, time) = match value.as_bytes().first() {
        Some(b'@') if modified => {
            return Err("daily time cannot be used with \"modified\" parameter");
        }
        Some(b'@') => (true, false, &value[1..]),
        Some(b'+') => (false, false, &value[1..]),
        Some(b'-') => (false, true, &value[1..]),
        _ => (false, false, value),
    };
    let secs = parse_time_sec(time)
        .and_then(|t| i64::try_from(t.as_secs()).ok())
        .ok_or("invalid value")?;
    if daily && secs > DAY_SECS {
        return Err("daily time value must be less than 24 hours");
    }
    let secs = if minus { -secs } else { secs };
    Ok(if daily {
        Expires::Daily(secs)
    } else if modified {
        Expires::Modified(secs)
    } else {
        Expires::Access(secs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_values_as_nginx_parses_them() {
        assert_eq!(parse_expires("epoch", false), Ok(Expires::Epoch));
        assert_eq!(parse_expires("max", false), Ok(Expires::Max));
        assert_eq!(parse_expires("off", false), Ok(Expires::Off));
        assert_eq!(parse_expires("1h", false), Ok(Expires::Access(3600)));
        assert_eq!(parse_expires("+30m", false), Ok(Expires::Access(1800)));
        assert_eq!(parse_expires("-1", false), Ok(Expires::Access(-1)));
        assert_eq!(parse_expires("1d", true), Ok(Expires::Modified(86_400)));
        assert_eq!(parse_expires("@15h30m", false), Ok(Expires::Daily(55_800)));
        assert_eq!(parse_expires("@24h", false), Ok(Expires::Daily(86_400)));
        assert!(parse_expires("@25h", false).is_err());
        assert!(parse_expires("@1h", true).is_err());
        assert_eq!(parse_expires("epoch", true), Err("invalid value"));
        assert_eq!(parse_expires("1x", false), Err("invalid value"));
        assert_eq!(parse_expires("", false), Err("invalid value"));
    }
}
