//! `limit_conn_zone` and `limit_conn` (`ngx_http_limit_conn_module`): the
//! zone's key, a location's limits. The settings shared with `limit_req`
//! are in `build::limit_zone`; the run-time side is
//! `peregrine_core::limit_conn`.

use super::Env;
use super::handlers::{arg, msg};
use super::limit_zone::{define, zone_param};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{LimitConnRule, LimitZoneConf};
use crate::syntax::Directive;

/// `limit_conn_zone KEY zone=NAME:SIZE`.
pub fn limit_conn_zone(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let mut zone = None;
    for value in &d.args[1..] {
        if value.starts_with("zone=") {
            zone = Some(zone_param(d, value)?);
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
        rate: 0,
    };
    define(&mut l.zones.conn, zone, d)
}

/// `limit_conn ZONE NUMBER` (1 to 65535).
pub fn limit_conn(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let zone = arg(d, 0).to_string();
    let rules = l.limit_conn.rules.get_or_insert_with(Vec::new);
    if rules.iter().any(|r| r.zone == zone) {
        return Err(msg(d, format!("\"{}\" directive is duplicate", d.name)));
    }
    let n = arg(d, 1);
    let conn: i64 = n
        .parse()
        .ok()
        .filter(|&c| c > 0)
        .ok_or_else(|| msg(d, format!("invalid number of connections \"{n}\"")))?;
    let conn = u32::try_from(conn)
        .ok()
        .filter(|&c| c <= 65535)
        .ok_or_else(|| msg(d, "connection limit must be less 65536"))?;
    rules.push(LimitConnRule { zone, conn });
    Ok(())
}
