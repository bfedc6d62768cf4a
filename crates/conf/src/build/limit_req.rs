//! `limit_req_zone` and `limit_req` (`ngx_http_limit_req_module`): the
//! zone's key and rate (milli-requests a second, as nginx keeps it), a
//! location's rules with their burst and delay. The settings shared with
//! `limit_conn` are in `build::limit_zone`; the run-time side is
//! `peregrine_core::limit_req`.

use super::Env;
use super::handlers::{arg, msg};
use super::limit_zone::{define, zone_param};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{LimitReqRule, LimitZoneConf};
use crate::syntax::Directive;

/// `nodelay`: nginx's `NGX_MAX_INT_T_VALUE / 1000`, in milli-requests.
pub const NODELAY: u64 = (i64::MAX as u64 / 1000) * 1000;

/// `limit_req_zone KEY zone=NAME:SIZE rate=RATE`.
pub fn limit_req_zone(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let mut zone = None;
    let mut rate = 1000;
    for value in &d.args[1..] {
        if value.starts_with("zone=") {
            zone = Some(zone_param(d, value)?);
        } else if let Some(r) = value.strip_prefix("rate=") {
            rate = parse_rate(r).ok_or_else(|| msg(d, format!("invalid rate \"{value}\"")))?;
        } else {
            return Err(msg(d, format!("invalid parameter \"{value}\"")));
        }
    }
    let Some((name, size)) = zone else {
        return Err(msg(
            d,
            format!("\"{}\" must have \"zone\" parameter", d.name),
        ));
    };
    let zone = LimitZoneConf {
        name,
        key: arg(d, 0).to_string(),
        size,
        rate,
    };
    define(&mut l.zones.req, zone, d)
}

/// `N`, `Nr/s` or `Nr/m` in milli-requests a second (`rate * 1000 / scale`).
fn parse_rate(r: &str) -> Option<u64> {
    let (n, scale) = if let Some(n) = r.strip_suffix("r/s") {
        (n, 1)
    } else if let Some(n) = r.strip_suffix("r/m") {
        (n, 60)
    } else {
        (r, 1)
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = n.parse().ok().filter(|&n| n > 0)?;
    Some(n.checked_mul(1000)? / scale)
}

/// `limit_req zone=NAME [burst=N] [nodelay | delay=N]`.
pub fn limit_req(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let mut zone = None;
    let (mut burst, mut delay) = (0, 0);
    for value in &d.args {
        let positive = |v: &str| v.parse::<u64>().ok().filter(|&n| n > 0 && n < 1 << 53);
        if let Some(z) = value.strip_prefix("zone=") {
            zone = Some(z.to_string());
        } else if let Some(b) = value.strip_prefix("burst=") {
            burst = positive(b)
                .ok_or_else(|| msg(d, format!("invalid burst value \"{value}\"")))?
                * 1000;
        } else if let Some(n) = value.strip_prefix("delay=") {
            delay = positive(n)
                .ok_or_else(|| msg(d, format!("invalid delay value \"{value}\"")))?
                * 1000;
        } else if value == "nodelay" {
            delay = NODELAY;
        } else {
            return Err(msg(d, format!("invalid parameter \"{value}\"")));
        }
    }
    let Some(zone) = zone else {
        return Err(msg(
            d,
            format!("\"{}\" must have \"zone\" parameter", d.name),
        ));
    };
    let rules = l.limit_req.rules.get_or_insert_with(Vec::new);
    if rules.iter().any(|r| r.zone == zone) {
        return Err(msg(d, format!("\"{}\" directive is duplicate", d.name)));
    }
    rules.push(LimitReqRule { zone, burst, delay });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_rate;

    #[test]
    fn rates_in_milli_requests_as_nginx() {
        assert_eq!(parse_rate("2r/s"), Some(2000));
        assert_eq!(parse_rate("30r/m"), Some(500));
        assert_eq!(parse_rate("1r/m"), Some(16));
        assert_eq!(parse_rate("1000r/s"), Some(1_000_000));
        assert_eq!(parse_rate("5"), Some(5000));
        for bad in ["0r/s", "r/s", "-1r/s", "1r/h", "x"] {
            assert_eq!(parse_rate(bad), None, "{bad}");
        }
    }
}
