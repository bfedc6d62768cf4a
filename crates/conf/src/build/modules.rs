//! nginx's small stock modules: `empty_gif`, `random_index`,
//! `valid_referers` (ngx_http_referer_module), `secure_link*`, `userid*`
//! (ngx_http_userid_filter_module) and `open_log_file_cache`
//! (ngx_http_log_module). Messages are those of the nginx functions named.

use std::sync::Arc;
use std::time::Duration;

use super::Env;
use super::handlers::{arg, duplicate, flag, fresh, invalid, msg, set, set_with};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::*;
use crate::syntax::Directive;
use crate::values::{parse_number, parse_time_sec};

/// `empty_gif` (location only): the location's content handler.
pub fn empty_gif(l: &mut RawLoc, _: &Directive, _: &Env<'_>) -> Result<()> {
    l.empty_gif = Some(true);
    Ok(())
}

pub fn random_index(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.random_index, d, || flag(d))
}

// ---- referer ----

/// `valid_referers none | blocked | server_names | host[/uri] | ~regex ...`
/// (`ngx_http_valid_referers`); several at one level add up.
pub fn valid_referers(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let conf = l.referer.get_or_insert_with(|| RefererConf {
        none: false,
        blocked: false,
        server_names: false,
        hosts: Vec::new(),
        regex: Vec::new(),
    });
    for v in &d.args {
        match v.as_str() {
            "" => return Err(msg(d, format!("invalid referer \"{v}\""))),
            "none" => conf.none = true,
            "blocked" => conf.blocked = true,
            "server_names" => conf.server_names = true,
            _ if v.starts_with('~') => {
                let pattern = &v[1..];
                if pattern.is_empty() {
                    return Err(msg(d, format!("empty regex in \"{v}\"")));
                }
                // NGX_REGEX_CASELESS.
                let re = super::location::compile(pattern, true, &d.span)?;
                conf.regex.push(re);
            }
            _ => {
                let (host, uri) = match v.find('/') {
                    Some(i) => (&v[..i], Some(v[i..].to_string())),
                    None => (v.as_str(), None),
                };
                let h = referer_host(host, uri)
                    .ok_or_else(|| msg(d, format!("invalid hostname or wildcard \"{host}\"")))?;
                if conf.hosts.iter().any(|o| same_key(o, &h)) {
                    return Err(msg(d, format!("conflicting parameter \"{host}\"")));
                }
                conf.hosts.push(h);
            }
        }
    }
    // nginx makes this check when merging; server names count there (a
    // server always has at least one, the empty name by default).
    if (conf.none || conf.blocked) && conf.hosts.is_empty() && !conf.server_names {
        return Err(msg(
            d,
            "the \"none\" or \"blocked\" referers are specified in the \"valid_referers\" directive without any valid referer",
        ));
    }
    Ok(())
}

/// A host of `valid_referers` as `ngx_hash_add_key(NGX_HASH_WILDCARD_KEY)`
/// sorts it: `None` for what it declines (two `*`, `..`, a `*` elsewhere).
pub fn referer_host(host: &str, uri: Option<String>) -> Option<RefererHost> {
    let lower = host.to_ascii_lowercase();
    if lower.matches('*').count() > 1 || lower.contains("..") {
        return None;
    }
    let uri = uri.filter(|u| !u.is_empty());
    if lower.len() > 1 && lower.starts_with('.') {
        return Some(RefererHost::Head {
            suffix: lower,
            also_bare: true,
            uri,
        });
    }
    if lower.len() > 2 {
        if let Some(rest) = lower.strip_prefix("*.") {
            return Some(RefererHost::Head {
                suffix: format!(".{rest}"),
                also_bare: false,
                uri,
            });
        }
        if let Some(prefix) = lower.strip_suffix('*')
            && prefix.ends_with('.')
        {
            return Some(RefererHost::Tail(prefix.to_string(), uri));
        }
    }
    if lower.contains('*') {
        return None;
    }
    Some(RefererHost::Exact(lower, uri))
}

/// Two hosts with one hash key (nginx's NGX_BUSY).
fn same_key(a: &RefererHost, b: &RefererHost) -> bool {
    match (a, b) {
        (RefererHost::Exact(x, _), RefererHost::Exact(y, _)) => x == y,
        (RefererHost::Head { suffix: x, .. }, RefererHost::Head { suffix: y, .. }) => x == y,
        (RefererHost::Tail(x, _), RefererHost::Tail(y, _)) => x == y,
        _ => false,
    }
}

// ---- secure_link ----

/// `secure_link*` as written at one level.
#[derive(Debug, Clone, Default)]
pub struct RawSecureLink {
    pub variable: Option<String>,
    pub md5: Option<String>,
    pub secret: Option<String>,
}

impl RawSecureLink {
    /// `ngx_http_secure_link_merge_conf`: a level's secret stands alone;
    /// otherwise the expressions are inherited one by one, and the secret
    /// too when neither is set.
    pub fn merge(&self, p: &Arc<SecureLinkConf>) -> Arc<SecureLinkConf> {
        if self.secret.is_some() {
            return Arc::new(SecureLinkConf {
                variable: None,
                md5: None,
                secret: self.secret.clone(),
            });
        }
        if self.variable.is_none() && self.md5.is_none() {
            return Arc::clone(p);
        }
        Arc::new(SecureLinkConf {
            variable: self.variable.clone().or_else(|| p.variable.clone()),
            md5: self.md5.clone().or_else(|| p.md5.clone()),
            secret: None,
        })
    }
}

pub fn secure_link(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.secure_link.variable, arg(d, 0).to_string(), d)?;
    mixed(l, d)
}

pub fn secure_link_md5(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.secure_link.md5, arg(d, 0).to_string(), d)?;
    super::vars::check_value(d, arg(d, 0))?;
    mixed(l, d)
}

pub fn secure_link_secret(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.secure_link.secret, arg(d, 0).to_string(), d)?;
    mixed(l, d)
}

/// nginx refuses the mix when merging the level; here at its directive.
fn mixed(l: &RawLoc, d: &Directive) -> Result<()> {
    let s = &l.secure_link;
    if s.secret.is_some() && (s.variable.is_some() || s.md5.is_some()) {
        return Err(msg(
            d,
            "\"secure_link_secret\" cannot be mixed with \"secure_link\" and \"secure_link_md5\"",
        ));
    }
    Ok(())
}

// ---- userid ----

/// `userid*` as written at one level.
#[derive(Debug, Clone, Default)]
pub struct RawUserid {
    pub mode: Option<UseridMode>,
    /// `None` when unset; `userid_flags off` is the empty set.
    pub flags: Option<UseridFlags>,
    pub service: Option<u32>,
    pub name: Option<String>,
    pub domain: Option<String>,
    pub path: Option<String>,
    pub p3p: Option<String>,
    pub expires: Option<u64>,
    pub mark: Option<u8>,
}

impl RawUserid {
    /// `ngx_http_userid_merge_conf`.
    pub fn merge(&self, p: &Arc<UseridConf>) -> Arc<UseridConf> {
        if self.mode.is_none()
            && self.flags.is_none()
            && self.service.is_none()
            && self.name.is_none()
            && self.domain.is_none()
            && self.path.is_none()
            && self.p3p.is_none()
            && self.expires.is_none()
            && self.mark.is_none()
        {
            return Arc::clone(p);
        }
        Arc::new(UseridConf {
            mode: self.mode.unwrap_or(p.mode),
            flags: self.flags.unwrap_or(p.flags),
            service: self.service.or(p.service),
            name: self.name.clone().unwrap_or_else(|| p.name.clone()),
            domain: self.domain.clone().unwrap_or_else(|| p.domain.clone()),
            path: self.path.clone().unwrap_or_else(|| p.path.clone()),
            p3p: self.p3p.clone().unwrap_or_else(|| p.p3p.clone()),
            expires: self.expires.unwrap_or(p.expires),
            mark: self.mark.unwrap_or(p.mark),
        })
    }
}

/// `userid on|v1|log|off` (`ngx_conf_set_enum_slot`).
pub fn userid(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.userid.mode, d)?;
    let m = match arg(d, 0) {
        "off" => UseridMode::Off,
        "log" => UseridMode::Log,
        "v1" => UseridMode::V1,
        "on" => UseridMode::On,
        v => return Err(msg(d, format!("invalid value \"{v}\""))),
    };
    set(&mut l.userid.mode, m, d)
}

pub fn userid_service(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.userid.service, d, || {
        // ngx_conf_set_num_slot, kept as the 32 bits nginx stores.
        parse_number(arg(d, 0))
            .map(|n| n as u32)
            .ok_or_else(|| msg(d, "invalid number"))
    })
}

pub fn userid_name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.userid.name, arg(d, 0).to_string(), d)
}

/// `userid_domain name|none` (`ngx_http_userid_domain`).
pub fn userid_domain(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let v = match arg(d, 0) {
        "none" => String::new(),
        v => format!("; domain={v}"),
    };
    set(&mut l.userid.domain, v, d)
}

pub fn userid_path(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.userid.path, format!("; path={}", arg(d, 0)), d)
}

pub fn userid_p3p(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let v = match arg(d, 0) {
        "none" => String::new(),
        v => v.to_string(),
    };
    set(&mut l.userid.p3p, v, d)
}

/// `userid_expires time|max|off` (`ngx_http_userid_expires`).
pub fn userid_expires(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.userid.expires, d, || match arg(d, 0) {
        "max" => Ok(USERID_MAX_EXPIRES),
        "off" => Ok(0),
        v => parse_time_sec(v)
            .map(|t| t.as_secs())
            .ok_or_else(|| invalid(d)),
    })
}

/// `userid_mark off|letter|digit|=` (`ngx_http_userid_mark`).
pub fn userid_mark(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.userid.mark, d, || match arg(d, 0).as_bytes() {
        b"off" => Ok(0),
        [c] if c.is_ascii_alphanumeric() || *c == b'=' => Ok(*c),
        _ => Err(msg(
            d,
            format!(
                "\"{}\" directive value must be \"off\" or a single letter, digit or \"=\"",
                d.name
            ),
        )),
    })
}

/// `userid_flags off | flag ...` (`ngx_conf_set_bitmask_slot`).
pub fn userid_flags(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.userid.flags.is_some() {
        return Err(duplicate(d));
    }
    let mut f = UseridFlags::default();
    for a in &d.args {
        match a.as_str() {
            "off" => {}
            "secure" => f.secure = true,
            "httponly" => f.httponly = true,
            "samesite=strict" => f.samesite = Some("strict"),
            "samesite=lax" => f.samesite = Some("lax"),
            "samesite=none" => f.samesite = Some("none"),
            _ => return Err(msg(d, format!("invalid value \"{a}\""))),
        }
    }
    l.userid.flags = Some(f);
    Ok(())
}

// ---- open_log_file_cache ----

/// nginx's defaults for `open_log_file_cache`'s parameters.
pub const LOG_CACHE_DEFAULT_INACTIVE: Duration = Duration::from_secs(10);
pub const LOG_CACHE_DEFAULT_VALID: Duration = Duration::from_secs(60);

/// `open_log_file_cache max=N [inactive=time] [min_uses=N] [valid=time] | off`
/// (`ngx_http_log_open_file_cache`).
pub fn open_log_file_cache(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.open_log_file_cache, d)?;
    let mut max = 0;
    let mut c = OpenLogFileCacheConf {
        max: 0,
        inactive: LOG_CACHE_DEFAULT_INACTIVE,
        min_uses: 1,
        valid: LOG_CACHE_DEFAULT_VALID,
    };
    let mut off = false;
    for a in &d.args {
        let bad = || {
            msg(
                d,
                format!("invalid \"open_log_file_cache\" parameter \"{a}\""),
            )
        };
        if let Some(v) = a.strip_prefix("max=") {
            max = parse_number(v).ok_or_else(bad)?;
        } else if let Some(v) = a.strip_prefix("inactive=") {
            c.inactive = parse_time_sec(v).ok_or_else(bad)?;
        } else if let Some(v) = a.strip_prefix("min_uses=") {
            c.min_uses = parse_number(v)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(bad)?;
        } else if let Some(v) = a.strip_prefix("valid=") {
            c.valid = parse_time_sec(v).ok_or_else(bad)?;
        } else if a == "off" {
            off = true;
        } else {
            return Err(bad());
        }
    }
    if off {
        l.open_log_file_cache = Some(None);
        return Ok(());
    }
    if max == 0 {
        return Err(msg(
            d,
            "\"open_log_file_cache\" must have \"max\" parameter",
        ));
    }
    c.max = usize::try_from(max).map_err(|_| invalid(d))?;
    l.open_log_file_cache = Some(Some(c));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn referer_hosts_as_nginx_sorts_them() {
        let h = |s: &str| referer_host(s, None);
        assert_eq!(
            h("WWW.Example.org"),
            Some(RefererHost::Exact("www.example.org".into(), None))
        );
        assert_eq!(
            h("*.example.com"),
            Some(RefererHost::Head {
                suffix: ".example.com".into(),
                also_bare: false,
                uri: None
            })
        );
        assert!(matches!(
            h(".example.com"),
            Some(RefererHost::Head {
                also_bare: true,
                ..
            })
        ));
        assert_eq!(
            referer_host("www.example.*", Some("/uri".into())),
            Some(RefererHost::Tail(
                "www.example.".into(),
                Some("/uri".into())
            ))
        );
        for bad in ["*.*.com", "a..b", "w*w.com", "*"] {
            assert_eq!(h(bad), None, "{bad}");
        }
    }
}
