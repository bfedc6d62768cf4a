//! `upstream { }` blocks (`ngx_http_upstream` and its balancer modules'
//! directives): the group's servers with their parameters, its balancing
//! method, its keepalive pool settings. Host names are resolved when the
//! configuration loads, every address becoming a peer, as nginx does
//! without `resolve`. The block's directives exist only inside it, so the
//! block reads them itself (as `types { }` does) rather than through the
//! directive table; `include` works inside it.
//!
//! `proxy_pass http://NAME` uses a group (`fastcgi_pass` is refused until
//! issue 22). The run-time side is `peregrine_upstream`, balanced per
//! worker by the engine's `upstream` module.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::Builder;
use super::handlers::{arg, msg};
use crate::error::{ConfError, Result};
use crate::model::{BalanceMethod, PeerAddr, UpstreamConf, UpstreamServer};
use crate::syntax::{Block, Directive};
use crate::values::{parse_mem_size, parse_number, parse_time, parse_time_sec};

/// nginx's defaults for a `server` line (`ngx_http_upstream_server`) and
/// the keepalive pool (`ngx_http_upstream_keepalive_create_conf`).
const DEFAULT_WEIGHT: u32 = 1;
const DEFAULT_MAX_FAILS: u32 = 1;
const DEFAULT_FAIL_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_KEEPALIVE_REQUESTS: u64 = 1000;
const DEFAULT_KEEPALIVE_TIME: Duration = Duration::from_secs(3600);
const DEFAULT_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// `server host` without a port (`u.default_port = 80`).
const DEFAULT_PORT: u16 = 80;

/// The `server` parameters a method allows (nginx's `NGX_HTTP_UPSTREAM_*`
/// flags). Checked when the `server` line is read, against the method
/// declared before it, as nginx checks.
fn allows_backup(m: BalanceMethod) -> bool {
    matches!(m, BalanceMethod::RoundRobin | BalanceMethod::LeastConn)
}

impl Builder {
    /// Reads `upstream NAME { ... }`; `taken`: the groups read so far.
    pub(super) fn upstream(
        &mut self,
        d: &Directive,
        block: &Block,
        taken: &[UpstreamConf],
    ) -> Result<UpstreamConf> {
        let name = arg(d, 0).to_string();
        if taken.iter().any(|u| u.name.eq_ignore_ascii_case(&name)) {
            return Err(msg(d, format!("duplicate upstream \"{name}\"")));
        }
        let mut up = UpstreamConf {
            name,
            method: BalanceMethod::RoundRobin,
            hash_key: None,
            servers: Vec::new(),
            keepalive: None,
            keepalive_requests: DEFAULT_KEEPALIVE_REQUESTS,
            keepalive_time: DEFAULT_KEEPALIVE_TIME,
            keepalive_timeout: DEFAULT_KEEPALIVE_TIMEOUT,
            zone: None,
            span: d.span.clone(),
        };
        let mut method_set = false;
        self.upstream_items(&block.items, block.error.as_ref(), &mut up, &mut method_set)?;
        if up.servers.is_empty() {
            // Reported where nginx checks it: once the block is read.
            let end = crate::model::Span {
                line: block.end.max(d.span.line),
                ..d.span.clone()
            };
            return Err(ConfError::at(&end, "no servers are inside upstream"));
        }
        Ok(up)
    }

    fn upstream_items(
        &mut self,
        items: &[Directive],
        error: Option<&ConfError>,
        up: &mut UpstreamConf,
        method_set: &mut bool,
    ) -> Result<()> {
        for d in items {
            if d.name == "include" {
                if d.args.len() != 1 {
                    return Err(msg(
                        d,
                        "invalid number of arguments in \"include\" directive",
                    ));
                }
                for path in self.include_paths(d)? {
                    let parsed = self.load_file(&path, d)?;
                    self.include_depth += 1;
                    let r =
                        self.upstream_items(&parsed.items, parsed.error.as_ref(), up, method_set);
                    self.include_depth -= 1;
                    r?;
                }
                continue;
            }
            if d.block.is_some() {
                return Err(not_here(d));
            }
            self.upstream_directive(d, up, method_set)?;
        }
        match error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn upstream_directive(
        &mut self,
        d: &Directive,
        up: &mut UpstreamConf,
        method_set: &mut bool,
    ) -> Result<()> {
        let n = d.args.len();
        let arity = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(msg(
                    d,
                    format!("invalid number of arguments in \"{}\" directive", d.name),
                ))
            }
        };
        let method = match d.name.as_str() {
            "server" => {
                arity(n >= 1)?;
                up.servers.push(server(d, up.method)?);
                return Ok(());
            }
            "ip_hash" => arity(n == 0).map(|_| BalanceMethod::IpHash)?,
            "least_conn" => arity(n == 0).map(|_| BalanceMethod::LeastConn)?,
            "hash" => {
                arity(n == 1 || n == 2)?;
                self.note_variables(d)?;
                up.hash_key = Some(d.args[0].clone());
                hash_method(d)?
            }
            "random" => arity(n <= 2).and_then(|_| random_method(d))?,
            "keepalive" | "keepalive_requests" | "keepalive_time" | "keepalive_timeout" => {
                arity(n == 1)?;
                return keepalive(d, up);
            }
            "zone" => {
                arity(n == 1 || n == 2)?;
                return self.zone(d, up);
            }
            _ => return Err(unknown_here(d)),
        };
        if *method_set {
            self.warnings
                .borrow_mut()
                .push(format!("load balancing method redefined in {}", d.span));
        }
        *method_set = true;
        up.method = method;
        Ok(())
    }

    /// `zone NAME [SIZE]`: accepted with a notice (the state stays per
    /// worker, as nginx's without a zone).
    fn zone(&mut self, d: &Directive, up: &mut UpstreamConf) -> Result<()> {
        let size = match d.args.get(1) {
            Some(s) => Some(
                parse_mem_size(s).ok_or_else(|| msg(d, format!("invalid zone size \"{s}\"")))?,
            ),
            None => None,
        };
        up.zone = Some((d.args[0].clone(), size));
        self.notices.push(format!(
            "\"zone\" is accepted; Peregrine keeps a group's peer state per worker, \
             as nginx does without a zone (in {})",
            d.span
        ));
        Ok(())
    }
}

/// `hash KEY [consistent]`.
fn hash_method(d: &Directive) -> Result<BalanceMethod> {
    let consistent = match d.args.get(1).map(String::as_str) {
        None => false,
        Some("consistent") => true,
        Some(p) => return Err(msg(d, format!("invalid parameter \"{p}\""))),
    };
    Ok(BalanceMethod::Hash { consistent })
}

/// `random [two [least_conn]]`.
fn random_method(d: &Directive) -> Result<BalanceMethod> {
    match (
        d.args.first().map(String::as_str),
        d.args.get(1).map(String::as_str),
    ) {
        (None, _) => Ok(BalanceMethod::Random { two: false }),
        (Some("two"), None | Some("least_conn")) => Ok(BalanceMethod::Random { two: true }),
        (Some("two"), Some(p)) | (Some(p), _) => Err(msg(d, format!("invalid parameter \"{p}\""))),
    }
}

/// `keepalive N` (idle connections per worker), `keepalive_requests`,
/// `keepalive_time`, `keepalive_timeout`.
fn keepalive(d: &Directive, up: &mut UpstreamConf) -> Result<()> {
    let v = &d.args[0];
    match d.name.as_str() {
        "keepalive" => {
            let n = parse_number(v).filter(|&n| n > 0).ok_or_else(|| {
                msg(
                    d,
                    format!("invalid value \"{v}\" in \"keepalive\" directive"),
                )
            })?;
            if up.keepalive.is_some() {
                return Err(msg(d, "\"keepalive\" directive is duplicate"));
            }
            up.keepalive = Some(u32::try_from(n).unwrap_or(u32::MAX));
        }
        "keepalive_requests" => {
            up.keepalive_requests = parse_number(v).ok_or_else(|| msg(d, "invalid number"))?;
        }
        name => {
            let t = parse_time(v).ok_or_else(|| msg(d, "invalid value"))?;
            if name == "keepalive_time" {
                up.keepalive_time = t;
            } else {
                up.keepalive_timeout = t;
            }
        }
    }
    Ok(())
}

impl Builder {
    /// The key's variables must exist, as everywhere (checked at the end
    /// of `http { }`).
    fn note_variables(&mut self, d: &Directive) -> Result<()> {
        super::vars::check_script(d)?;
        for name in super::vars::names(&d.args[0]) {
            if !self.used_vars.iter().any(|u| u.eq_ignore_ascii_case(name)) {
                self.used_vars.push(name.to_string());
            }
        }
        Ok(())
    }
}

/// A directive nginx does not allow in `upstream { }`: its words for a
/// name it knows elsewhere, and for one it does not know at all.
fn not_here(d: &Directive) -> ConfError {
    msg(d, format!("\"{}\" directive is not allowed here", d.name))
}

fn unknown_here(d: &Directive) -> ConfError {
    match crate::known::status(&d.name) {
        // nginx's upstream directives Peregrine lacks (resolver, ntlm,
        // sticky, state...).
        Some(_) if crate::known::upstream_directive(&d.name) => msg(
            d,
            format!("\"{}\" directive is not supported by Peregrine yet", d.name),
        ),
        Some(_) => not_here(d),
        None => msg(d, format!("unknown directive \"{}\"", d.name)),
    }
}

/// `server ADDRESS [weight=N] [max_fails=N] [fail_timeout=T] [max_conns=N]
/// [backup] [down]`.
fn server(d: &Directive, method: BalanceMethod) -> Result<UpstreamServer> {
    let mut s = UpstreamServer {
        name: d.args[0].clone(),
        addrs: Vec::new(),
        weight: DEFAULT_WEIGHT,
        max_fails: DEFAULT_MAX_FAILS,
        fail_timeout: DEFAULT_FAIL_TIMEOUT,
        max_conns: 0,
        backup: false,
        down: false,
        span: d.span.clone(),
    };
    for p in &d.args[1..] {
        let invalid = || msg(d, format!("invalid parameter \"{p}\""));
        let number = |v: &str| parse_number(v).and_then(|n| u32::try_from(n).ok());
        if let Some(v) = p.strip_prefix("weight=") {
            s.weight = number(v).filter(|&w| w > 0).ok_or_else(invalid)?;
        } else if let Some(v) = p.strip_prefix("max_conns=") {
            s.max_conns = number(v).ok_or_else(invalid)?;
        } else if let Some(v) = p.strip_prefix("max_fails=") {
            s.max_fails = number(v).ok_or_else(invalid)?;
        } else if let Some(v) = p.strip_prefix("fail_timeout=") {
            s.fail_timeout = parse_time_sec(v).ok_or_else(invalid)?;
        } else if p == "backup" {
            if !allows_backup(method) {
                return Err(msg(
                    d,
                    format!("balancing method does not support parameter \"{p}\""),
                ));
            }
            s.backup = true;
        } else if p == "down" {
            s.down = true;
        } else if p == "resolve" || p.starts_with("service=") {
            return Err(msg(
                d,
                format!("\"server ... {p}\" is not supported by Peregrine yet"),
            ));
        } else {
            return Err(invalid());
        }
    }
    s.addrs = resolve(d, &s.name)?;
    Ok(s)
}

/// The addresses of a `server` line (`ngx_parse_url` with port 80 by
/// default): a `unix:` path, an address, or a host name resolved now.
pub(super) fn resolve(d: &Directive, url: &str) -> Result<Vec<PeerAddr>> {
    let fail = |what: &str| msg(d, format!("{what} in upstream \"{url}\""));
    if let Some(path) = url.strip_prefix("unix:") {
        if path.is_empty() {
            return Err(fail("no path in the unix domain socket"));
        }
        return Ok(vec![PeerAddr::Unix(PathBuf::from(path))]);
    }
    if url.contains("://") {
        return Err(fail("invalid host"));
    }
    let (host, port) = split_host_port(url).ok_or_else(|| fail("invalid port"))?;
    if host.is_empty() {
        return Err(fail("no host"));
    }
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = literal.parse::<std::net::IpAddr>() {
        return Ok(vec![PeerAddr::Inet(SocketAddr::new(ip, port))]);
    }
    let addrs: Vec<PeerAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|_| fail("host not found"))?
        .map(PeerAddr::Inet)
        .collect();
    if addrs.is_empty() {
        return Err(fail("host not found"));
    }
    Ok(addrs)
}

/// `host[:port]`, `[v6][:port]`: the port defaults to 80; a port that is
/// not 1-65535 is `None`.
fn split_host_port(url: &str) -> Option<(&str, u16)> {
    let (host, port) = if url.starts_with('[') {
        let close = url.find(']')?;
        match &url[close + 1..] {
            "" => (&url[..=close], None),
            rest => (&url[..=close], Some(rest.strip_prefix(':')?)),
        }
    } else {
        match url.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            Some(_) => return None,
            None => (url, None),
        }
    };
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => parse_number(p)
            .and_then(|n| u16::try_from(n).ok())
            .filter(|&n| n > 0)?,
    };
    Some((host, port))
}

#[cfg(test)]
mod tests {
    use super::split_host_port;

    #[test]
    fn host_and_port_as_ngx_parse_url() {
        assert_eq!(split_host_port("a.b"), Some(("a.b", 80)));
        assert_eq!(split_host_port("a.b:8080"), Some(("a.b", 8080)));
        assert_eq!(split_host_port("[::1]:81"), Some(("[::1]", 81)));
        assert_eq!(split_host_port("[::1]"), Some(("[::1]", 80)));
        assert_eq!(split_host_port("a:0"), None);
        assert_eq!(split_host_port("a:65536"), None);
        assert_eq!(split_host_port("a:x"), None);
    }
}
