//! `allow` and `deny` (`ngx_http_access_module`): rules by client address,
//! tried in order, the first that matches deciding; a level without rules
//! takes its parent's. The run-time side is `peregrine_core::access`.

use super::Env;
use super::handlers::msg;
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{AccessNet, AccessRule};
use crate::syntax::Directive;

/// `allow ADDRESS | CIDR | unix: | all;` and `deny ...`.
pub fn rule(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let value = d.args[0].as_str();
    let net = match value {
        "all" => AccessNet::All,
        "unix:" => AccessNet::Unix,
        _ => {
            let (net, exact) =
                cidr(value).ok_or_else(|| msg(d, format!("invalid parameter \"{value}\"")))?;
            if !exact {
                env.warn(d, format!("low address bits of {value} are meaningless"));
            }
            net
        }
    };
    l.access.get_or_insert_with(Vec::new).push(AccessRule {
        deny: d.name == "deny",
        net,
    });
    Ok(())
}

/// `ngx_ptocidr`: an address, or address/bits; the address is masked, and
/// `exact` says whether it had no bits below the mask.
pub fn cidr(text: &str) -> Option<(AccessNet, bool)> {
    let (addr, bits) = match text.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (text, None),
    };
    let bits = |max: u32| -> Option<u32> {
        match bits {
            None => Some(max),
            Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
                b.parse().ok().filter(|&n| n <= max)
            }
            Some(_) => None,
        }
    };
    if let Ok(v4) = addr.parse::<std::net::Ipv4Addr>() {
        let n = bits(32)?;
        let mask = if n == 0 { 0 } else { u32::MAX << (32 - n) };
        let a = u32::from(v4);
        return Some((
            AccessNet::V4 {
                addr: a & mask,
                mask,
            },
            a & !mask == 0,
        ));
    }
    let v6 = addr.parse::<std::net::Ipv6Addr>().ok()?;
    let n = bits(128)?;
    let mask = if n == 0 { 0 } else { u128::MAX << (128 - n) };
    let a = u128::from(v6);
    Some((
        AccessNet::V6 {
            addr: a & mask,
            mask,
        },
        a & !mask == 0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_as_ngx_ptocidr() {
        assert_eq!(
            cidr("10.0.0.0/8"),
            Some((
                AccessNet::V4 {
                    addr: 0x0a00_0000,
                    mask: 0xff00_0000
                },
                true
            ))
        );
        assert_eq!(
            cidr("10.1.2.3/8"),
            Some((
                AccessNet::V4 {
                    addr: 0x0a00_0000,
                    mask: 0xff00_0000
                },
                false
            ))
        );
        assert_eq!(
            cidr("127.0.0.1"),
            Some((
                AccessNet::V4 {
                    addr: 0x7f00_0001,
                    mask: u32::MAX
                },
                true
            ))
        );
        assert_eq!(
            cidr("0.0.0.0/0"),
            Some((AccessNet::V4 { addr: 0, mask: 0 }, true))
        );
        assert!(matches!(
            cidr("::1"),
            Some((AccessNet::V6 { addr: 1, .. }, true))
        ));
        assert!(matches!(
            cidr("2001:db8::/32"),
            Some((AccessNet::V6 { .. }, true))
        ));
        for bad in [
            "10.0.0.0/33",
            "10.0.0/8",
            "x",
            "10.0.0.0/",
            "::1/129",
            "1.2.3.4/-1",
        ] {
            assert_eq!(cidr(bad), None, "{bad}");
        }
    }
}
