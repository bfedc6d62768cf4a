//! `resolver` and `resolver_timeout` (ngx_http_core_module; the parsing
//! is `ngx_resolver_create`'s): the name servers that names built from
//! variables at run time are looked up with (`proxy_pass
//! http://$host:8080`), their addresses given or resolved at load, port 53
//! by default. The run-time side is `peregrine-resolver` and the engine's
//! `resolver`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use super::Env;
use super::handlers::{arg, msg, set, time};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::ResolverConf;
use crate::syntax::Directive;
use crate::values::parse_time_sec;

/// nginx's `resolver_timeout` default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// A name server's port when the address has none.
const DNS_PORT: u16 = 53;

/// One level's settings as written; both inherit from the enclosing
/// level (nginx's `ngx_conf_merge_ptr_value`, `ngx_conf_merge_msec_value`).
#[derive(Debug, Clone, Default)]
pub struct RawResolver {
    pub servers: Option<Arc<ResolverConf>>,
    pub timeout: Option<Duration>,
}

/// `resolver ADDRESS ... [valid=TIME] [ipv4=on|off] [ipv6=on|off]
/// [status_zone=ZONE]`.
pub fn resolver(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let mut conf = ResolverConf {
        servers: Vec::new(),
        valid: None,
        ipv4: true,
        ipv6: true,
    };
    for a in &d.args {
        let invalid = || msg(d, format!("invalid parameter: {a}"));
        if let Some(v) = a.strip_prefix("valid=") {
            conf.valid = Some(parse_time_sec(v).ok_or_else(invalid)?);
        } else if let Some(v) = a.strip_prefix("ipv4=") {
            conf.ipv4 = on_off(v).ok_or_else(invalid)?;
        } else if let Some(v) = a.strip_prefix("ipv6=") {
            conf.ipv6 = on_off(v).ok_or_else(invalid)?;
        } else if a.starts_with("status_zone=") {
            // nginx Plus's per-resolver statistics: accepted, nothing kept.
        } else {
            conf.servers.extend(addresses(d, a)?);
        }
    }
    if !conf.ipv4 && !conf.ipv6 {
        return Err(msg(d, "\"ipv4\" and \"ipv6\" cannot both be \"off\""));
    }
    set(&mut l.resolver.servers, Arc::new(conf), d)
}

/// `resolver_timeout TIME`.
pub fn resolver_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.resolver.timeout, time(d, arg(d, 0))?, d)
}

fn on_off(v: &str) -> Option<bool> {
    match v {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

/// One address: `IP`, `IP:PORT`, `[IPv6]:PORT`, or a host name (all its
/// addresses, resolved now as nginx's `ngx_parse_url` does).
fn addresses(d: &Directive, a: &str) -> Result<Vec<SocketAddr>> {
    if let Ok(ip) = a.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, DNS_PORT)]);
    }
    if let Ok(sa) = a.parse::<SocketAddr>() {
        if sa.port() == 0 {
            return Err(msg(d, format!("invalid port in resolver \"{a}\"")));
        }
        return Ok(vec![sa]);
    }
    let (host, port) = match a.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => {
            let port = p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| msg(d, format!("invalid port in resolver \"{a}\"")))?;
            (h, port)
        }
        _ => (a, DNS_PORT),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let found: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map(|i| i.collect())
        .unwrap_or_default();
    if found.is_empty() {
        return Err(msg(d, format!("host not found in resolver \"{a}\"")));
    }
    Ok(found)
}
