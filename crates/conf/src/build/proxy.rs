//! The proxy module's directives (`ngx_http_proxy_module`): `proxy_pass`
//! in its forms (an address or host with or without a URI part, an
//! `upstream` name, `unix:/path:`, a URL with variables), the request it
//! builds (`proxy_set_header`, `proxy_method`, `proxy_set_body`,
//! `proxy_pass_request_*`, `proxy_http_version`), the timeouts, the
//! answer's treatment (`proxy_hide_header`, `proxy_pass_header`,
//! `proxy_ignore_headers`, `proxy_redirect`, `proxy_intercept_errors`)
//! and the retries (`proxy_next_upstream*`); the cookie rules are
//! `super::proxy_cookie`'s. The run-time side is
//! `peregrine_core::proxy` (the request head, the answer's head) and the
//! engine's `upstream` (the connections).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::Env;
use super::handlers::{arg, flag, fresh, invalid, msg, set, set_with, size, time};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{
    CookieFlags, CookieRule, ProxyConf, ProxyPass, ProxyRedirect, ProxyTarget, RedirectRule, Regex,
    ignore, next,
};
use crate::syntax::Directive;

/// nginx's defaults (`ngx_http_proxy_create_loc_conf` / merge).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// `proxy_buffer_size`: one memory page.
const DEFAULT_BUFFER_SIZE: usize = 4096;
/// `proxy_http` URLs without a port.
const DEFAULT_PORT: u16 = 80;
/// `https://` URLs without a port.
pub const DEFAULT_TLS_PORT: u16 = 443;

/// The headers nginx's proxy sets unless a level sets them itself
/// (`ngx_http_proxy_headers`): the ones with an empty value are dropped
/// from the client's request; `Content-Length` and `Transfer-Encoding`
/// are the proxy's own (the body's framing upstream).
pub const DEFAULT_HEADERS: &[(&str, &str)] = &[
    ("Host", "$proxy_host"),
    ("Connection", "close"),
    ("Proxy-Connection", ""),
    ("TE", ""),
    ("Keep-Alive", ""),
    ("Expect", ""),
    ("Upgrade", ""),
];

/// The upstream's headers nginx does not pass to the client
/// (`ngx_http_proxy_hide_headers`), lowercase.
pub const HIDDEN_HEADERS: &[&str] = &[
    "date",
    "server",
    "x-pad",
    "x-accel-expires",
    "x-accel-redirect",
    "x-accel-limit-rate",
    "x-accel-buffering",
    "x-accel-charset",
];

/// One level's proxy settings as written.
#[derive(Debug, Clone, Default)]
pub struct RawProxy {
    pub pass: Option<Arc<ProxyPass>>,
    pub set_headers: Option<Vec<(String, String)>>,
    pub http11: Option<bool>,
    pub connect_timeout: Option<Duration>,
    pub send_timeout: Option<Duration>,
    pub read_timeout: Option<Duration>,
    pub pass_request_headers: Option<bool>,
    pub pass_request_body: Option<bool>,
    pub set_body: Option<String>,
    pub method: Option<String>,
    pub hide_headers: Option<Vec<String>>,
    pub pass_headers: Option<Vec<String>>,
    pub ignore_headers: Option<u32>,
    pub redirect: Option<ProxyRedirect>,
    pub next_upstream: Option<u32>,
    pub next_upstream_tries: Option<u32>,
    pub next_upstream_timeout: Option<Duration>,
    pub intercept_errors: Option<bool>,
    pub buffering: Option<bool>,
    pub request_buffering: Option<bool>,
    pub ignore_client_abort: Option<bool>,
    pub limit_rate: Option<u64>,
    pub buffer_size: Option<usize>,
    // proxy_cookie (`Some(empty)`: `off`)
    pub cookie_domain: Option<Vec<CookieRule>>,
    pub cookie_path: Option<Vec<CookieRule>>,
    pub cookie_flags: Option<Vec<CookieFlags>>,
    /// `proxy_cache*` (and the gateways' twins): `super::cache`.
    pub cache: super::cache::RawCache,
}

impl Default for ProxyConf {
    fn default() -> Self {
        ProxyConf {
            pass: None,
            set_headers: DEFAULT_HEADERS
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            http11: false,
            connect_timeout: DEFAULT_TIMEOUT,
            send_timeout: DEFAULT_TIMEOUT,
            read_timeout: DEFAULT_TIMEOUT,
            pass_request_headers: true,
            pass_request_body: true,
            set_body: None,
            method: None,
            hide_headers: Vec::new(),
            pass_headers: Vec::new(),
            ignore_headers: 0,
            redirect: ProxyRedirect::Default,
            next_upstream: next::ERROR | next::TIMEOUT,
            next_upstream_tries: 0,
            next_upstream_timeout: Duration::ZERO,
            intercept_errors: false,
            buffering: true,
            request_buffering: true,
            ignore_client_abort: false,
            limit_rate: 0,
            buffer_size: DEFAULT_BUFFER_SIZE,
            cookie_domain: Vec::new(),
            cookie_path: Vec::new(),
            cookie_flags: Vec::new(),
            cache: Arc::default(),
        }
    }
}

impl RawProxy {
    /// nginx's merge: everything inherits but `proxy_pass`; the header
    /// lists are a level's own or its parent's.
    pub fn merge(&self, p: &ProxyConf) -> ProxyConf {
        ProxyConf {
            pass: self.pass.clone(),
            set_headers: match &self.set_headers {
                Some(own) => with_defaults(own),
                None => p.set_headers.clone(),
            },
            http11: self.http11.unwrap_or(p.http11),
            connect_timeout: self.connect_timeout.unwrap_or(p.connect_timeout),
            send_timeout: self.send_timeout.unwrap_or(p.send_timeout),
            read_timeout: self.read_timeout.unwrap_or(p.read_timeout),
            pass_request_headers: self.pass_request_headers.unwrap_or(p.pass_request_headers),
            pass_request_body: self.pass_request_body.unwrap_or(p.pass_request_body),
            set_body: self.set_body.clone().or_else(|| p.set_body.clone()),
            method: self.method.clone().or_else(|| p.method.clone()),
            hide_headers: self
                .hide_headers
                .clone()
                .unwrap_or_else(|| p.hide_headers.clone()),
            pass_headers: self
                .pass_headers
                .clone()
                .unwrap_or_else(|| p.pass_headers.clone()),
            ignore_headers: self.ignore_headers.unwrap_or(p.ignore_headers),
            redirect: self.redirect.clone().unwrap_or_else(|| p.redirect.clone()),
            next_upstream: self.next_upstream.unwrap_or(p.next_upstream),
            next_upstream_tries: self.next_upstream_tries.unwrap_or(p.next_upstream_tries),
            next_upstream_timeout: self
                .next_upstream_timeout
                .unwrap_or(p.next_upstream_timeout),
            intercept_errors: self.intercept_errors.unwrap_or(p.intercept_errors),
            buffering: self.buffering.unwrap_or(p.buffering),
            request_buffering: self.request_buffering.unwrap_or(p.request_buffering),
            ignore_client_abort: self.ignore_client_abort.unwrap_or(p.ignore_client_abort),
            limit_rate: self.limit_rate.unwrap_or(p.limit_rate),
            buffer_size: self.buffer_size.unwrap_or(p.buffer_size),
            cookie_domain: own_or(&self.cookie_domain, &p.cookie_domain),
            cookie_path: own_or(&self.cookie_path, &p.cookie_path),
            cookie_flags: own_or(&self.cookie_flags, &p.cookie_flags),
            cache: Arc::new(self.cache.merge(&p.cache)),
        }
    }
}

/// A level's own list (`off`: empty) or its parent's
/// (`ngx_conf_merge_ptr_value`).
fn own_or<T: Clone>(own: &Option<Vec<T>>, parent: &[T]) -> Vec<T> {
    own.clone().unwrap_or_else(|| parent.to_vec())
}

/// A level's own `proxy_set_header`s after nginx's defaults for the names
/// it does not set (`ngx_http_proxy_init_headers`).
fn with_defaults(own: &[(String, String)]) -> Arc<[(String, String)]> {
    let mut all: Vec<(String, String)> = own.to_vec();
    for (n, v) in DEFAULT_HEADERS {
        if !own.iter().any(|(o, _)| o.eq_ignore_ascii_case(n)) {
            all.push((n.to_string(), v.to_string()));
        }
    }
    all.into()
}

pub fn proxy_pass(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.proxy.pass.is_some() {
        return Err(msg(d, "\"proxy_pass\" directive is duplicate"));
    }
    l.proxy.pass = Some(Arc::new(parse_pass(d, arg(d, 0))?));
    Ok(())
}

/// `proxy_pass URL` (`ngx_http_proxy_pass`): `http://` or `https://`, the
/// host part up to the first `/`.
pub fn parse_pass(d: &Directive, url: &str) -> Result<ProxyPass> {
    if url.contains('$') {
        // nginx checks a URL with variables once evaluated, per request.
        return Ok(ProxyPass {
            url: url.to_string(),
            target: ProxyTarget::Vars,
            uri: None,
            tls: false,
        });
    }
    let (rest, tls) = match url.get(..7) {
        Some(p) if p.eq_ignore_ascii_case("http://") => (&url[7..], false),
        _ if url
            .get(..8)
            .is_some_and(|p| p.eq_ignore_ascii_case("https://")) =>
        {
            (&url[8..], true)
        }
        _ => return Err(invalid_prefix(d, url)),
    };
    let (mut target, uri) = parse_target(rest).map_err(|m| msg(d, format!("{m} in {url}")))?;
    if let ProxyTarget::Host {
        port, port_given, ..
    } = &mut target
        && tls
        && !*port_given
    {
        *port = DEFAULT_TLS_PORT;
    }
    Ok(ProxyPass {
        url: url.to_string(),
        target,
        uri,
        tls,
    })
}

fn invalid_prefix(d: &Directive, url: &str) -> crate::error::ConfError {
    msg(d, format!("invalid URL prefix in \"{url}\""))
}

/// The part after `http://`: `unix:/path[:uri]`, or `host[:port][/uri]`.
pub fn parse_target(rest: &str) -> std::result::Result<(ProxyTarget, Option<String>), String> {
    if let Some(path) = rest.strip_prefix("unix:") {
        let (path, uri) = match path.split_once(':') {
            Some((p, u)) => (p, (!u.is_empty()).then(|| u.to_string())),
            None => (path, None),
        };
        if path.is_empty() {
            return Err("no path in the unix domain socket".into());
        }
        return Ok((ProxyTarget::Unix(PathBuf::from(path)), uri));
    }
    let (hostport, uri) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], Some(rest[i..].to_string())),
        None => (rest, None),
    };
    let (host, port) = if hostport.starts_with('[') {
        let close = hostport.find(']').ok_or("invalid host")?;
        (&hostport[..=close], hostport[close + 1..].strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return Err("no host".into());
    }
    let port_given = port.is_some();
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or("invalid port")?,
    };
    Ok((
        ProxyTarget::Host {
            host: host.to_string(),
            port,
            port_given,
        },
        uri,
    ))
}

pub fn proxy_set_header(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    l.proxy
        .set_headers
        .get_or_insert_with(Vec::new)
        .push((arg(d, 0).to_string(), arg(d, 1).to_string()));
    Ok(())
}

pub fn proxy_http_version(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let v = match arg(d, 0) {
        "1.0" => false,
        "1.1" => true,
        other => {
            return Err(msg(
                d,
                format!("invalid value \"{other}\" in \"{}\" directive", d.name),
            ));
        }
    };
    set(&mut l.proxy.http11, v, d)
}

pub fn proxy_connect_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.connect_timeout, d, || time(d, arg(d, 0)))
}

pub fn proxy_send_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.send_timeout, d, || time(d, arg(d, 0)))
}

pub fn proxy_read_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.read_timeout, d, || time(d, arg(d, 0)))
}

pub fn proxy_next_upstream_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.next_upstream_timeout, d, || time(d, arg(d, 0)))
}

pub fn proxy_next_upstream_tries(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.next_upstream_tries, d, || {
        arg(d, 0)
            .parse::<u32>()
            .map_err(|_| msg(d, format!("\"{}\" directive invalid number", d.name)))
    })
}

pub fn proxy_pass_request_headers(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.pass_request_headers, d, || flag(d))
}

pub fn proxy_pass_request_body(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.pass_request_body, d, || flag(d))
}

pub fn proxy_intercept_errors(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.intercept_errors, d, || flag(d))
}

pub fn proxy_buffering(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.buffering, d, || flag(d))
}

pub fn proxy_request_buffering(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.request_buffering, d, || flag(d))
}

/// `proxy_ignore_client_abort on|off` (and the gateways' twins).
pub fn proxy_ignore_client_abort(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.ignore_client_abort, d, || flag(d))
}

/// `proxy_limit_rate SIZE` (and the gateways' twins): the answer is read
/// from the upstream at most this fast (`ngx_event_pipe_read_upstream`).
/// nginx 1.27 takes variables here too; Peregrine a size only, for now.
pub fn proxy_limit_rate(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.limit_rate, d, || {
        let v = arg(d, 0);
        if v.contains('$') {
            return Err(msg(
                d,
                format!(
                    "variables in \"{}\" are not supported by Peregrine yet",
                    d.name
                ),
            ));
        }
        crate::values::parse_size(v).ok_or_else(|| invalid(d))
    })
}

pub fn proxy_buffer_size(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy.buffer_size, d, || size(d, arg(d, 0)))
}

pub fn proxy_set_body(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.proxy.set_body, arg(d, 0).to_string(), d)
}

pub fn proxy_method(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.proxy.method, arg(d, 0).to_string(), d)
}

pub fn proxy_hide_header(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let list = l.proxy.hide_headers.get_or_insert_with(Vec::new);
    list.push(arg(d, 0).to_ascii_lowercase());
    Ok(())
}

pub fn proxy_pass_header(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let list = l.proxy.pass_headers.get_or_insert_with(Vec::new);
    list.push(arg(d, 0).to_ascii_lowercase());
    Ok(())
}

/// `ngx_conf_set_bitmask_slot` with `ngx_http_upstream_ignore_headers_masks`.
pub fn proxy_ignore_headers(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.proxy.ignore_headers, d)?;
    let mut bits = 0;
    for a in &d.args {
        bits |= match a.to_ascii_lowercase().as_str() {
            "x-accel-redirect" => ignore::X_ACCEL_REDIRECT,
            "x-accel-expires" => ignore::X_ACCEL_EXPIRES,
            "x-accel-limit-rate" => ignore::X_ACCEL_LIMIT_RATE,
            "x-accel-buffering" => ignore::X_ACCEL_BUFFERING,
            "x-accel-charset" => ignore::X_ACCEL_CHARSET,
            "expires" => ignore::EXPIRES,
            "cache-control" => ignore::CACHE_CONTROL,
            "set-cookie" => ignore::SET_COOKIE,
            "vary" => ignore::VARY,
            _ => return Err(msg(d, format!("invalid value \"{a}\""))),
        };
    }
    l.proxy.ignore_headers = Some(bits);
    Ok(())
}

/// `ngx_conf_set_bitmask_slot` with `ngx_http_proxy_next_upstream_masks`;
/// `off` with others is nginx's "invalid value".
pub fn proxy_next_upstream(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.proxy.next_upstream, d)?;
    let mut bits = 0;
    for a in &d.args {
        bits |= match a.as_str() {
            "error" => next::ERROR,
            "timeout" => next::TIMEOUT,
            "invalid_header" => next::INVALID_HEADER,
            "non_idempotent" => next::NON_IDEMPOTENT,
            "http_500" => next::HTTP_500,
            "http_502" => next::HTTP_502,
            "http_503" => next::HTTP_503,
            "http_504" => next::HTTP_504,
            "http_403" => next::HTTP_403,
            "http_404" => next::HTTP_404,
            "http_429" => next::HTTP_429,
            "updating" => next::UPDATING,
            "off" => next::OFF,
            _ => return Err(msg(d, format!("invalid value \"{a}\""))),
        };
    }
    if bits & next::OFF != 0 {
        bits = next::OFF;
    }
    l.proxy.next_upstream = Some(bits);
    Ok(())
}

/// `proxy_redirect default | off | FROM TO` (`ngx_http_proxy_redirect`):
/// `off` and `default` alone; regexes (`~`) are not read yet.
pub fn proxy_redirect(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let (a, b) = (arg(d, 0), d.args.get(1));
    if d.args.len() == 1 && a == "off" {
        if matches!(l.proxy.redirect, Some(ProxyRedirect::List(_))) {
            return Err(msg(d, "invalid parameter \"off\""));
        }
        l.proxy.redirect = Some(ProxyRedirect::Off);
        return Ok(());
    }
    if matches!(l.proxy.redirect, Some(ProxyRedirect::Off)) {
        return Err(msg(d, format!("invalid parameter \"{a}\"")));
    }
    let entry = match b {
        None if a == "default" => RedirectRule::Default,
        None => return Err(msg(d, format!("invalid parameter \"{a}\""))),
        Some(to) if a.starts_with('~') => {
            let (pat, caseless) = match a.strip_prefix("~*") {
                Some(p) => (p, true),
                None => (&a[1..], false),
            };
            let re = Regex::with_case(pat, caseless).map_err(|e| msg(d, e.to_string()))?;
            RedirectRule::Regex(re, to.clone())
        }
        Some(to) => RedirectRule::Prefix(a.to_string(), to.clone()),
    };
    let list = match l
        .proxy
        .redirect
        .get_or_insert(ProxyRedirect::List(Vec::new()))
    {
        ProxyRedirect::List(v) => v,
        other => {
            *other = ProxyRedirect::List(Vec::new());
            let ProxyRedirect::List(v) = other else {
                unreachable!()
            };
            v
        }
    };
    list.push(entry);
    Ok(())
}

/// After the whole `http { }` block: each `proxy_pass` host that names no
/// `upstream` must resolve (nginx resolves implicit upstreams at init:
/// `host not found in upstream "HOST" in FILE:LINE`).
pub fn check_hosts(
    conf: &crate::model::LocConf,
    upstreams: &[crate::model::UpstreamConf],
) -> Result<()> {
    check_pass(conf.proxy.pass.as_deref(), upstreams, "http://")
}

/// One pass's host (see [`check_hosts`]); `scheme` is taken off the URL
/// in the message.
pub fn check_pass(
    pass: Option<&ProxyPass>,
    upstreams: &[crate::model::UpstreamConf],
    scheme: &str,
) -> Result<()> {
    let Some(pass) = pass else {
        return Ok(());
    };
    let ProxyTarget::Host {
        host,
        port,
        port_given,
    } = &pass.target
    else {
        return Ok(());
    };
    if upstreams.iter().any(|u| u.name.eq_ignore_ascii_case(host)) && !*port_given {
        return Ok(());
    }
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if literal.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    use std::net::ToSocketAddrs;
    match (host.as_str(), *port)
        .to_socket_addrs()
        .map(|mut a| a.next())
    {
        Ok(Some(_)) => Ok(()),
        _ => Err(crate::error::ConfError::bare(format!(
            "host not found in upstream \"{}\"",
            pass.url.strip_prefix(scheme).unwrap_or(&pass.url)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_as_ngx_parse_url() {
        let (t, u) = parse_target("127.0.0.1:8081").unwrap();
        assert_eq!(
            t,
            ProxyTarget::Host {
                host: "127.0.0.1".into(),
                port: 8081,
                port_given: true
            }
        );
        assert_eq!(u, None);
        let (t, u) = parse_target("u/x?a").unwrap();
        assert!(matches!(
            t,
            ProxyTarget::Host {
                port: 80,
                port_given: false,
                ..
            }
        ));
        assert_eq!(u.as_deref(), Some("/x?a"));
        let (t, u) = parse_target("unix:/tmp/s:/u").unwrap();
        assert_eq!(t, ProxyTarget::Unix("/tmp/s".into()));
        assert_eq!(u.as_deref(), Some("/u"));
        assert!(parse_target("h:0").is_err());
        assert!(parse_target(":80").is_err());
        assert!(parse_target("unix::/x").is_err());
    }

    #[test]
    fn own_headers_then_defaults() {
        let h = with_defaults(&[("Host".into(), "$host".into())]);
        assert_eq!(h[0], ("Host".into(), "$host".into()));
        assert!(h.iter().any(|(n, v)| n == "Connection" && v == "close"));
        assert_eq!(h.iter().filter(|(n, _)| n == "Host").count(), 1);
    }
}
