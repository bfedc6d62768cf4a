//! `geo` variables (`ngx_http_geo_module`): the value of the network
//! (longest prefix) or range holding the client's address, or SOURCE's;
//! with `proxy`, a trusted proxy's client is read from `X-Forwarded-For`
//! (`ngx_http_geo_real_addr`). Read by `peregrine_conf::build::geo`. The
//! value is kept for the request (in the map cache, after the maps)
//! unless the block is `volatile`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use peregrine_conf::model::GeoConf;

use crate::vars::VarCtx;

/// nginx's `INADDR_NONE`: what an unparsable SOURCE is looked up as.
const NONE: u32 = u32::MAX;

/// The address `g` looks up for this request.
fn address(vc: &VarCtx<'_>, g: &GeoConf) -> IpAddr {
    if let Some(src) = &g.source {
        let text = vc.expand(src);
        return text
            .parse::<IpAddr>()
            .unwrap_or(IpAddr::V4(Ipv4Addr::from(NONE)));
    }
    let peer: SocketAddr = vc.peer;
    // A UNIX-domain client has no address: nginx's `ngx_http_geo_addr`
    // looks up INADDR_NONE for any family but AF_INET(6).
    if peregrine_conf::model::is_unix(peer) {
        return IpAddr::V4(Ipv4Addr::from(NONE));
    }
    if g.proxies.is_empty() {
        return peer.ip();
    }
    let mut values = Vec::new();
    vc.req
        .headers
        .each_value("X-Forwarded-For", &mut |v| values.push(v));
    crate::realip::forwarded(peer, &values, &g.proxies, g.proxy_recursive)
        .map_or(peer.ip(), |a| a.ip())
}

/// The value of `g` for address `ip`.
pub(crate) fn lookup(g: &GeoConf, ip: IpAddr) -> &str {
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    if g.ranges {
        // Ranges are IPv4: an IPv6 client is looked up as nginx's INADDR_NONE.
        let a = match ip {
            IpAddr::V4(v4) => u32::from(v4),
            IpAddr::V6(_) => NONE,
        };
        return g
            .range_map
            .range(..=a)
            .next_back()
            .filter(|(_, (end, _))| *end >= a)
            .map_or(g.default.as_str(), |(_, (_, v))| v.as_str());
    }
    let found = match ip {
        IpAddr::V4(v4) => {
            let a = u32::from(v4);
            g.v4.iter().find_map(|(mask, nets)| nets.get(&(a & mask)))
        }
        IpAddr::V6(v6) => {
            let a = u128::from(v6);
            g.v6.iter().find_map(|(mask, nets)| nets.get(&(a & mask)))
        }
    };
    found.map_or(g.default.as_str(), String::as_str)
}

/// `$VAR` of `g` (the `index`th geo), cached unless `volatile`.
pub(crate) fn push(vc: &VarCtx<'_>, g: &GeoConf, index: usize, out: &mut String) {
    let slot = vc.maps.len() + index;
    if let Some(Some(v)) = vc.map_cache.borrow().get(slot) {
        out.push_str(v);
        return;
    }
    let value = lookup(g, address(vc, g));
    out.push_str(value);
    if !g.volatile {
        let mut cache = vc.map_cache.borrow_mut();
        if cache.len() <= slot {
            cache.resize(slot + 1, None);
        }
        cache[slot] = Some(value.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn longest_prefix_then_default() {
        let mut g = GeoConf {
            default: "world".into(),
            ..GeoConf::default()
        };
        let mut n8 = BTreeMap::new();
        n8.insert(0x7f00_0000, "loopback".to_string());
        let mut n24 = BTreeMap::new();
        n24.insert(0x7f00_0100, "inner".to_string());
        g.v4 = vec![(0xffff_ff00, n24), (0xff00_0000, n8)];
        let at = |s: &str| lookup(&g, s.parse().unwrap()).to_string();
        assert_eq!(at("127.0.1.9"), "inner");
        assert_eq!(at("127.0.0.1"), "loopback");
        assert_eq!(at("::ffff:127.0.0.1"), "loopback");
        assert_eq!(at("10.0.0.1"), "world");
        assert_eq!(at("::1"), "world");
    }
}
