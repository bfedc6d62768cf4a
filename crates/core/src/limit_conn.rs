//! The preaccess phase's `limit_conn` (`ngx_http_limit_conn_module`): a
//! count of the requests in flight per key, in a zone shared by the
//! workers (`crate::zone`). A request over a rule's number is rejected
//! (`limit_conn_status`, 503); one that passes holds a [`ConnSlot`] per
//! rule until it ends: the engine keeps the slots with the exchange and
//! drops them when the exchange ends, however it ends (a client that
//! vanishes included). Read by `peregrine_conf::build::limit_conn`.

use std::sync::Arc;

use peregrine_conf::model::{LimitZoneConf, LogLevel};

use crate::http::{Ctx, HttpCore, Step};
use crate::limit_req::{LimitStatus, key_of};
use crate::special::Special;
use crate::zone::Zone;

/// nginx's limit on a key's length (`is more than 255 bytes`).
pub const MAX_KEY_LEN: usize = 255;

/// A zone's shared part and its definition.
pub(crate) struct ConnZone {
    pub conf: LimitZoneConf,
    pub zone: Arc<Zone<u32>>,
}

/// One request counted in one zone: dropping it gives the count back
/// (`ngx_http_limit_conn_cleanup`), removing the state at zero.
#[derive(Debug)]
pub struct ConnSlot {
    zone: Arc<Zone<u32>>,
    key: Box<[u8]>,
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        let mut states = self.zone.states.lock().unwrap_or_else(|e| e.into_inner());
        let zero = match states.get(&self.key) {
            Some(n) => {
                *n = n.saturating_sub(1);
                *n == 0
            }
            None => false,
        };
        if zero {
            states.remove(&self.key);
        }
    }
}

/// Counts `key` in `zone` under `limit`: the slot, or why not.
fn acquire(zone: &Arc<Zone<u32>>, key: &[u8], limit: u32) -> Result<ConnSlot, Refused> {
    let mut states = zone.states.lock().unwrap_or_else(|e| e.into_inner());
    match states.get(key) {
        Some(n) if *n >= limit => return Err(Refused::Limit),
        Some(n) => *n += 1,
        None => {
            if !states.insert(key, 1) {
                return Err(Refused::NoMemory);
            }
        }
    }
    Ok(ConnSlot {
        zone: zone.clone(),
        key: key.into(),
    })
}

#[derive(Debug, PartialEq, Eq)]
enum Refused {
    Limit,
    NoMemory,
}

impl HttpCore {
    /// `ngx_http_limit_conn_handler`: `None` to go on, the slots taken in
    /// `ctx.slots`; else the rejection (the slots of the earlier rules
    /// given back, as `ngx_http_limit_conn_cleanup_all`).
    #[inline(never)]
    pub(crate) fn limit_conn(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        if ctx.limits.conn.is_some() {
            return None;
        }
        let conf = ctx.conf.clone();
        let lc = &conf.limit_conn;
        let all = self.limit_zones.clone();
        for rule in lc.rules.iter() {
            let Some(z) = all.conn.iter().find(|z| z.conf.name == rule.zone) else {
                return Some(Step::Special(Special::status(500)));
            };
            let key = key_of(ctx, &z.conf.key);
            if key.is_empty() {
                continue;
            }
            if key.len() > MAX_KEY_LEN {
                let text = format!(
                    "the value of the \"{}\" key is more than 255 bytes: \"{}\"",
                    z.conf.key,
                    String::from_utf8_lossy(&key)
                );
                self.push_log_line(LogLevel::Error, text);
                continue;
            }
            ctx.limits.conn = Some(LimitStatus::Passed);
            let refused = match acquire(&z.zone, &key, rule.conn) {
                Ok(slot) => {
                    ctx.slots.push(slot);
                    continue;
                }
                Err(r) => r,
            };
            let text = match refused {
                Refused::Limit => format!(
                    "limiting connections{} by zone \"{}\"",
                    if lc.dry_run { ", dry run," } else { "" },
                    z.conf.name
                ),
                Refused::NoMemory => format!(
                    "ngx_slab_alloc() failed: no memory in limit_conn zone \"{}\"",
                    z.conf.name
                ),
            };
            let level = match refused {
                Refused::Limit => lc.log_level,
                Refused::NoMemory => LogLevel::Crit,
            };
            self.push_log_line(level, text);
            ctx.slots.clear();
            if lc.dry_run {
                ctx.limits.conn = Some(LimitStatus::RejectedDryRun);
                return None;
            }
            ctx.limits.conn = Some(LimitStatus::Rejected);
            return Some(Step::Special(Special::status(lc.status)));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_count_and_give_back() {
        let z: Arc<Zone<u32>> = crate::zone::zone("limit_conn_test", "c", 1 << 16, "$k");
        let a = acquire(&z, b"k", 2).expect("first");
        let b = acquire(&z, b"k", 2).expect("second");
        assert_eq!(acquire(&z, b"k", 2).unwrap_err(), Refused::Limit);
        drop(a);
        let c = acquire(&z, b"k", 2).expect("a slot given back");
        drop((b, c));
        assert!(z.states.lock().unwrap().is_empty(), "state removed at zero");
    }

    #[test]
    fn a_full_zone_refuses_new_keys() {
        let z: Arc<Zone<u32>> = crate::zone::zone("limit_conn_test", "full", 8 * 4096, "$k");
        let mut held = Vec::new();
        let mut i = 0u32;
        let refused = loop {
            match acquire(&z, &i.to_be_bytes(), 1) {
                Ok(s) => held.push(s),
                Err(r) => break r,
            }
            i += 1;
        };
        assert_eq!(refused, Refused::NoMemory);
        assert!(held.len() > 100, "{}", held.len());
        held.clear();
        assert!(acquire(&z, b"new", 1).is_ok());
    }
}
