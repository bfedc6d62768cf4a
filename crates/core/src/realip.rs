//! The realip module (`ngx_http_realip_module`): a client behind a trusted
//! proxy (`set_real_ip_from`) is known by the address the proxy reports in
//! `real_ip_header` (X-Real-IP, X-Forwarded-For read from its end,
//! recursively past trusted proxies with `real_ip_recursive on`, or any
//! header). It runs in the post-read phase with the server's settings and,
//! if that found nothing, in the preaccess phase with the location's, once
//! per request, as nginx's handler. `$remote_addr`, `$remote_port`, access
//! rules, limits and the logs then see that address;
//! `$realip_remote_addr` and `$realip_remote_port` keep the connection's.
//! Read by `peregrine_conf::build::realip`.

use std::net::{IpAddr, SocketAddr};

use peregrine_conf::model::{AccessNet, RealIpConf, RealIpHeader};

use crate::http::Ctx;

/// `ngx_cidr_match`: whether `addr` is one of the trusted ones. Only the
/// connection's own address (`conn`) can be a UNIX-domain client matched by
/// `unix:`; an address read from a header never is.
fn trusted(from: &[AccessNet], addr: SocketAddr, conn: bool) -> bool {
    if !conn && peregrine_conf::model::is_unix(addr) {
        return false;
    }
    from.iter().any(|n| crate::access::net_matches(n, addr))
}

/// `ngx_parse_addr_port`: `ADDR`, `ADDR:PORT`, `[V6]:PORT` or a bare IPv6
/// address (port 0: none given).
pub(crate) fn parse_addr_port(s: &str) -> Option<SocketAddr> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return (a.port() != 0).then_some(a);
    }
    let ip: IpAddr = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(s)
        .parse()
        .ok()?;
    Some(SocketAddr::new(ip, 0))
}

/// What one header value gave (nginx's `NGX_OK`, `NGX_DONE`, `NGX_DECLINED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// The value was used to its start (or one address without recursion).
    Whole,
    /// An address was found, then an untrusted one or garbage stopped it.
    Part,
    None,
}

/// `ngx_http_get_forwarded_addr_internal`: `addr` replaced by the value's
/// addresses from its end while the current one is trusted.
fn from_value(addr: &mut SocketAddr, xff: &str, from: &[AccessNet], recursive: bool) -> Found {
    let b = xff.as_bytes();
    let mut len = b.len();
    let mut found = false;
    loop {
        if !trusted(from, *addr, !found) {
            return if found { Found::Part } else { Found::None };
        }
        if len == 0 {
            return if found { Found::Part } else { Found::None };
        }
        let mut p = len - 1;
        while p > 0 && matches!(b[p], b' ' | b',') {
            p -= 1;
            len -= 1;
        }
        while p > 0 {
            if matches!(b[p], b' ' | b',') {
                p += 1;
                break;
            }
            p -= 1;
        }
        let Some(a) = xff.get(p..len).and_then(parse_addr_port) else {
            return if found { Found::Part } else { Found::None };
        };
        *addr = a;
        found = true;
        if !(recursive && p > 0) {
            return Found::Whole;
        }
        len = p - 1;
    }
}

/// `ngx_http_get_forwarded_addr`: the headers' values from the last one.
pub(crate) fn forwarded(
    peer: SocketAddr,
    values: &[&str],
    from: &[AccessNet],
    recursive: bool,
) -> Option<SocketAddr> {
    let mut addr = peer;
    let mut rc = Found::None;
    let mut found = false;
    for v in values.iter().rev() {
        rc = from_value(&mut addr, v, from, recursive);
        if !recursive {
            break;
        }
        if rc == Found::None && found {
            rc = Found::Part;
            break;
        }
        if rc != Found::Whole {
            break;
        }
        found = true;
    }
    (rc != Found::None).then_some(addr)
}

/// `ngx_http_realip_handler` with `conf`: sets `ctx.limits.real` once an
/// address is found.
pub(crate) fn run(ctx: &mut Ctx<'_>, conf: &RealIpConf) {
    if ctx.limits.realip_done || conf.from.is_empty() {
        return;
    }
    let name = match &conf.header {
        RealIpHeader::XRealIp => "X-Real-IP",
        RealIpHeader::XForwardedFor => "X-Forwarded-For",
        RealIpHeader::ProxyProtocol => {
            if let Some(a) = crate::proxy_protocol::real_addr(ctx.conn, conf) {
                ctx.limits.realip_done = true;
                ctx.limits.real = Some(a);
            }
            return;
        }
        RealIpHeader::Other(h) => h.as_str(),
    };
    let mut values = Vec::new();
    if matches!(conf.header, RealIpHeader::XForwardedFor) {
        ctx.req.headers.each_value(name, &mut |v| values.push(v));
    } else if let Some(v) = ctx.req.header(name) {
        values.push(v);
    }
    if values.is_empty() {
        return;
    }
    if let Some(a) = forwarded(ctx.conn.peer, &values, &conf.from, conf.recursive) {
        ctx.limits.realip_done = true;
        ctx.limits.real = Some(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<AccessNet> {
        list.iter()
            .map(|s| peregrine_conf::build::access::cidr(s).unwrap().0)
            .collect()
    }

    #[test]
    fn forwarded_for_from_its_end() {
        let from = nets(&["127.0.0.1/32", "10.0.1.0/24"]);
        let peer: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let at = |v: &[&str], rec| forwarded(peer, v, &from, rec).map(|a| a.to_string());
        assert_eq!(
            at(&["10.0.0.1, 192.0.2.1"], false).as_deref(),
            Some("192.0.2.1:0")
        );
        assert_eq!(
            at(&["192.0.2.1, 10.0.1.1, 127.0.0.1"], false).as_deref(),
            Some("127.0.0.1:0")
        );
        assert_eq!(
            at(&["10.0.1.1, 192.0.2.1, 127.0.0.1"], true).as_deref(),
            Some("192.0.2.1:0")
        );
        assert_eq!(
            at(&["192.0.2.1", "127.0.0.1, 10.0.1.1"], false).as_deref(),
            Some("10.0.1.1:0")
        );
        assert_eq!(
            at(&["10.0.1.1", "192.0.2.1", "127.0.0.1"], true).as_deref(),
            Some("192.0.2.1:0")
        );
        assert_eq!(
            at(&["127.0.0.1:123"], false).as_deref(),
            Some("127.0.0.1:123")
        );
        assert_eq!(at(&["[::1]:8"], false).as_deref(), Some("[::1]:8"));
        assert_eq!(at(&["garbage"], false), None);
        // An untrusted peer is not asked.
        let other: SocketAddr = "192.0.2.9:1".parse().unwrap();
        assert_eq!(forwarded(other, &["10.0.0.1"], &from, false), None);
    }
}
