//! `set_real_ip_from`, `real_ip_header` and `real_ip_recursive`
//! (`ngx_http_realip_module`): the trusted addresses (addresses, CIDR,
//! IPv6, `unix:`, host names resolved at load) and where the client's own
//! address is read. The run-time side is `peregrine_core::realip`.

use std::net::ToSocketAddrs;
use std::sync::Arc;

use super::Env;
use super::access::cidr;
use super::handlers::{arg, duplicate, flag, msg, set};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{AccessNet, RealIpConf, RealIpHeader};
use crate::syntax::Directive;

/// One level's realip settings as written.
#[derive(Debug, Clone, Default)]
pub struct RawRealIp {
    pub from: Option<Vec<AccessNet>>,
    pub header: Option<RealIpHeader>,
    pub recursive: Option<bool>,
}

impl RawRealIp {
    /// `ngx_http_realip_merge_loc_conf`: each setting inherited alone.
    pub fn merge(&self, p: &RealIpConf) -> RealIpConf {
        RealIpConf {
            from: match &self.from {
                Some(v) => Arc::from(v.as_slice()),
                None => p.from.clone(),
            },
            header: self.header.clone().unwrap_or_else(|| p.header.clone()),
            recursive: self.recursive.unwrap_or(p.recursive),
        }
    }
}

/// `set_real_ip_from ADDRESS | CIDR | unix: | HOST`.
pub fn set_real_ip_from(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let value = arg(d, 0);
    let from = l.realip.from.get_or_insert_with(Vec::new);
    if value == "unix:" {
        from.push(AccessNet::Unix);
        return Ok(());
    }
    if let Some((net, exact)) = cidr(value) {
        if !exact {
            env.warn(d, format!("low address bits of {value} are meaningless"));
        }
        from.push(net);
        return Ok(());
    }
    // `ngx_inet_resolve_host`: every address of the name, exactly.
    let addrs = (value, 0)
        .to_socket_addrs()
        .map_err(|_| msg(d, format!("host not found in set_real_ip_from \"{value}\"")))?;
    for a in addrs {
        from.push(match a.ip() {
            std::net::IpAddr::V4(v4) => AccessNet::V4 {
                addr: u32::from(v4),
                mask: u32::MAX,
            },
            std::net::IpAddr::V6(v6) => AccessNet::V6 {
                addr: u128::from(v6),
                mask: u128::MAX,
            },
        });
    }
    Ok(())
}

/// `real_ip_header X-Real-IP | X-Forwarded-For | proxy_protocol | NAME`
/// (the names compared exactly, as nginx's `ngx_strcmp`).
pub fn real_ip_header(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.realip.header.is_some() {
        return Err(duplicate(d));
    }
    let h = match arg(d, 0) {
        "X-Real-IP" => RealIpHeader::XRealIp,
        "X-Forwarded-For" => RealIpHeader::XForwardedFor,
        "proxy_protocol" => RealIpHeader::ProxyProtocol,
        other => RealIpHeader::Other(other.to_ascii_lowercase()),
    };
    l.realip.header = Some(h);
    Ok(())
}

/// `real_ip_recursive on|off`.
pub fn real_ip_recursive(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let on = flag(d)?;
    set(&mut l.realip.recursive, on, d)
}
