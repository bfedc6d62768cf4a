//! The access phase's `allow`/`deny` (`ngx_http_access_handler`): the
//! client's address against the location's rules in order, the first that
//! matches deciding; an IPv4-mapped IPv6 client is judged by the IPv4
//! rules, as nginx judges it. The rules are read by
//! `peregrine_conf::build::access`.

use std::net::{IpAddr, SocketAddr};

use peregrine_conf::model::{AccessNet, AccessRule};

/// Whether `rules` deny `peer` (no rule matching: allowed).
pub(crate) fn denied(rules: &[AccessRule], peer: SocketAddr) -> bool {
    verdict(rules, peer) == Some(true)
}

/// The first rule matching `peer`: `Some(deny)`, or `None` (nginx's
/// `NGX_DECLINED`, which `satisfy any` does not count as allowing).
pub(crate) fn verdict(rules: &[AccessRule], peer: SocketAddr) -> Option<bool> {
    rules
        .iter()
        .find(|r| net_matches(&r.net, peer))
        .map(|r| r.deny)
}

/// `ngx_cidr_match` for one network: `unix:` matches a client on a
/// UNIX-domain socket (`peregrine_conf::model::UNIX_PEER`), which no
/// address rule matches; an IPv4-mapped IPv6 address is matched as IPv4.
pub fn net_matches(net: &AccessNet, peer: SocketAddr) -> bool {
    if peregrine_conf::model::is_unix(peer) {
        return matches!(net, AccessNet::All | AccessNet::Unix);
    }
    let ip = match peer.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    match (net, ip) {
        (AccessNet::All, _) => true,
        (AccessNet::V4 { addr, mask }, IpAddr::V4(a)) => u32::from(a) & mask == *addr,
        (AccessNet::V6 { addr, mask }, IpAddr::V6(a)) => u128::from(a) & mask == *addr,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(deny: bool, net: AccessNet) -> AccessRule {
        AccessRule { deny, net }
    }

    #[test]
    fn first_match_decides_per_family() {
        let rules = [
            rule(
                false,
                AccessNet::V4 {
                    addr: 0x7f00_0002,
                    mask: u32::MAX,
                },
            ),
            rule(
                true,
                AccessNet::V4 {
                    addr: 0x7f00_0000,
                    mask: 0xff00_0000,
                },
            ),
            rule(
                false,
                AccessNet::V6 {
                    addr: 1,
                    mask: u128::MAX,
                },
            ),
            rule(true, AccessNet::All),
        ];
        let at = |s: &str| denied(&rules, s.parse().unwrap());
        assert!(!at("127.0.0.2:1"));
        assert!(at("127.0.0.1:1"));
        assert!(at("10.0.0.1:1"), "all");
        assert!(!at("[::1]:1"));
        assert!(at("[::2]:1"));
        // An IPv4-mapped client meets the IPv4 rules.
        assert!(!at("[::ffff:127.0.0.2]:1"));
        assert!(at("[::ffff:127.0.0.1]:1"));
        assert!(!denied(&[], "1.2.3.4:5".parse().unwrap()));
    }
}
