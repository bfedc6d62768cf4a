//! The preaccess phase's `limit_req` (`ngx_http_limit_req_module`): nginx's
//! leaky bucket per key, in milli-requests. A state's `excess` drains at
//! the zone's rate and each request adds 1000; over `burst` the request is
//! rejected (`limit_req_status`, 503), over `delay` it is delayed until the
//! excess above `delay` has drained. Several rules apply in order; the
//! longest delay wins (`ngx_http_limit_req_account`). The zones are
//! `crate::zone`'s; a delayed request is held by the engine's timer and
//! run again ([`crate::Held`]), limit_req then passing it as `DELAYED`.
//! Read by `peregrine_conf::build::limit_req`.

use std::sync::Arc;
use std::time::Duration;

use peregrine_conf::model::{LimitZoneConf, LogLevel};

use crate::http::{Ctx, HttpCore, Step};
use crate::special::Special;
use crate::zone::{Lru, Zone};

/// nginx's limit on a key's length (`is more than 65535 bytes`).
pub const MAX_KEY_LEN: usize = 65535;

/// A state older than this with nothing left in its bucket may go
/// (`ngx_http_limit_req_expire`'s 60 s).
const STALE_MS: u64 = 60_000;

/// `$limit_req_status` and `$limit_conn_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitStatus {
    Passed,
    Delayed,
    Rejected,
    DelayedDryRun,
    RejectedDryRun,
}

impl LimitStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitStatus::Passed => "PASSED",
            LimitStatus::Delayed => "DELAYED",
            LimitStatus::Rejected => "REJECTED",
            LimitStatus::DelayedDryRun => "DELAYED_DRY_RUN",
            LimitStatus::RejectedDryRun => "REJECTED_DRY_RUN",
        }
    }
}

/// One key's bucket (`ngx_http_limit_req_node_t`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReqState {
    /// Milli-requests above the rate.
    excess: u64,
    /// When `excess` was last computed (zone milliseconds).
    last: u64,
    /// Requests between their lookup and their accounting: such a state
    /// is not evicted.
    count: u32,
}

/// A zone's shared part and its definition.
pub(crate) struct ReqZone {
    pub conf: LimitZoneConf,
    pub zone: Arc<Zone<ReqState>>,
}

/// What a lookup decided (nginx's return codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rc {
    /// Over the burst.
    Busy,
    /// No room for a new state.
    Error,
    /// Counted, to be accounted after the last rule.
    Again,
    /// Accounted (the last rule).
    Ok,
}

/// nginx's drain: `excess - rate * ms / 1000 + 1000`, at least 0, with
/// its clock-step guards (a state more than 60 s in the future counts
/// 1 ms; a little, 0).
fn drained(s: &ReqState, rate: u64, now: u64) -> (u64, u64) {
    let ms = now.wrapping_sub(s.last) as i64;
    let ms = if ms < -60_000 { 1 } else { ms.max(0) as u64 };
    let excess = (s.excess as i64 - (rate.saturating_mul(ms) / 1000) as i64 + 1000).max(0);
    (excess as u64, ms)
}

/// `ngx_http_limit_req_lookup`: the bucket of `key` after this request,
/// written back when `account` (the last rule), else counted for
/// [`account`].
fn lookup(
    states: &mut Lru<ReqState>,
    rate: u64,
    now: u64,
    key: &[u8],
    burst: u64,
    account: bool,
) -> (Rc, u64) {
    if let Some(s) = states.get(key) {
        let (excess, ms) = drained(s, rate, now);
        if excess > burst {
            return (Rc::Busy, excess);
        }
        if account {
            s.excess = excess;
            if ms > 0 {
                s.last = now;
            }
            return (Rc::Ok, excess);
        }
        s.count += 1;
        return (Rc::Again, excess);
    }
    expire(states, rate, now, 1);
    if !states.fits(key.len()) {
        expire(states, rate, now, 0);
    }
    let state = if account {
        ReqState {
            excess: 0,
            last: now,
            count: 0,
        }
    } else {
        ReqState {
            excess: 0,
            last: 0,
            count: 1,
        }
    };
    if !states.insert(key, state) {
        return (Rc::Error, 0);
    }
    (if account { Rc::Ok } else { Rc::Again }, 0)
}

/// `ngx_http_limit_req_expire`: from the least recently used end, up to
/// two states with an empty bucket and 60 s old; with `n` 0, first the
/// oldest whatever it holds. A state counted by a request in flight stops
/// the walk.
fn expire(states: &mut Lru<ReqState>, rate: u64, now: u64, mut n: u32) {
    while n < 3 {
        let Some(s) = states.oldest() else { return };
        if s.count > 0 {
            return;
        }
        let forced = n == 0;
        n += 1;
        if !forced {
            let ms = now.abs_diff(s.last);
            if ms < STALE_MS {
                return;
            }
            if s.excess as i128 - (rate as i128 * ms as i128 / 1000) > 0 {
                return;
            }
        }
        states.pop_oldest();
    }
}

/// One rule looked up and counted (`ctx->node` in nginx).
struct Counted {
    rule: usize,
    key: Vec<u8>,
}

/// `ngx_http_limit_req_account`: accounts the counted states, returns the
/// longest delay (ms) and the excess and rule that give it.
fn account(
    zones: &[&ReqZone],
    rules: &[peregrine_conf::model::LimitReqRule],
    counted: &[Counted],
    mut excess: u64,
    mut limit: usize,
) -> (u64, u64, usize) {
    let delay_of = |e: u64, i: usize| {
        let d = rules[i].delay;
        if e <= d {
            0
        } else {
            (e - d) * 1000 / zones[i].conf.rate.max(1)
        }
    };
    let mut max_delay = delay_of(excess, limit);
    for c in counted.iter().rev() {
        let z = zones[c.rule];
        let e = {
            let mut states = z.zone.states.lock().unwrap_or_else(|e| e.into_inner());
            let now = z.zone.now_ms();
            let Some(s) = states.get(&c.key) else {
                continue;
            };
            let (e, ms) = drained(s, z.conf.rate, now);
            if ms > 0 {
                s.last = now;
            }
            s.excess = e;
            s.count = s.count.saturating_sub(1);
            e
        };
        let d = delay_of(e, c.rule);
        if d > max_delay {
            max_delay = d;
            excess = e;
            limit = c.rule;
        }
    }
    (max_delay, excess, limit)
}

/// `ngx_http_limit_req_unlock`: the counted states are not accounted.
fn uncount(zones: &[&ReqZone], counted: &[Counted]) {
    for c in counted {
        let z = zones[c.rule];
        let mut states = z.zone.states.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = states.get(&c.key) {
            s.count = s.count.saturating_sub(1);
        }
    }
}

/// nginx's `delay_log_level`: one level below `limit_req_log_level`, but
/// not below info.
fn delay_level(l: LogLevel) -> LogLevel {
    match l {
        LogLevel::Error => LogLevel::Warn,
        LogLevel::Warn => LogLevel::Notice,
        _ => LogLevel::Info,
    }
}

/// `excess` as nginx prints it (`0.500`).
fn milli(n: u64) -> String {
    format!("{}.{:03}", n / 1000, n % 1000)
}

/// The key of a zone for this request: `$binary_remote_addr` as the
/// address's bytes (4 or 16), anything else expanded.
pub(crate) fn key_of(ctx: &Ctx<'_>, template: &str) -> Vec<u8> {
    if template == "$binary_remote_addr" {
        return match ctx.peer().ip() {
            std::net::IpAddr::V4(a) => a.octets().to_vec(),
            std::net::IpAddr::V6(a) => a.octets().to_vec(),
        };
    }
    ctx.vars().expand(template).into_bytes()
}

impl HttpCore {
    /// `ngx_http_limit_req_handler`: `None` to go on (passed, delayed in
    /// a dry run, or the delay set for the engine), else the rejection.
    #[inline(never)]
    pub(crate) fn limit_req(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        if ctx.limits.req.is_some() {
            return None;
        }
        let conf = ctx.conf.clone();
        let lc = &conf.limit_req;
        let all = self.limit_zones.clone();
        let Some(zones) = lc
            .rules
            .iter()
            .map(|r| all.req.iter().find(|z| z.conf.name == r.zone))
            .collect::<Option<Vec<_>>>()
        else {
            return Some(Step::Special(Special::status(500)));
        };
        let mut counted = Vec::new();
        let (mut rc, mut excess, mut limit) = (None, 0, 0);
        for (n, rule) in lc.rules.iter().enumerate() {
            limit = n;
            let key = key_of(ctx, &zones[n].conf.key);
            if key.is_empty() {
                continue;
            }
            if key.len() > MAX_KEY_LEN {
                let text = format!(
                    "the value of the \"{}\" key is more than 65535 bytes: \"{}\"",
                    zones[n].conf.key,
                    String::from_utf8_lossy(&key)
                );
                self.push_log_line(LogLevel::Error, text);
                continue;
            }
            let z = &zones[n].zone;
            let (r, e) = {
                let mut states = z.states.lock().unwrap_or_else(|e| e.into_inner());
                let now = z.now_ms();
                let last = n == lc.rules.len() - 1;
                lookup(&mut states, zones[n].conf.rate, now, &key, rule.burst, last)
            };
            rc = Some(r);
            excess = e;
            if r == Rc::Again {
                counted.push(Counted { rule: n, key });
            } else {
                break;
            }
        }
        let rc = rc?;
        if matches!(rc, Rc::Busy | Rc::Error) {
            if rc == Rc::Busy {
                let text = format!(
                    "limiting requests{}, excess: {} by zone \"{}\"",
                    if lc.dry_run { ", dry run" } else { "" },
                    milli(excess),
                    zones[limit].conf.name
                );
                self.push_log_line(lc.log_level, text);
            } else {
                let text = format!(
                    "could not allocate node in limit_req zone \"{}\"",
                    zones[limit].conf.name
                );
                self.push_log_line(LogLevel::Alert, text);
            }
            uncount(&zones, &counted);
            if lc.dry_run {
                ctx.limits.req = Some(LimitStatus::RejectedDryRun);
                return None;
            }
            ctx.limits.req = Some(LimitStatus::Rejected);
            return Some(Step::Special(Special::status(lc.status)));
        }
        if rc == Rc::Again {
            excess = 0;
        }
        let (delay, excess, limit) = account(&zones, &lc.rules, &counted, excess, limit);
        if delay == 0 {
            ctx.limits.req = Some(LimitStatus::Passed);
            return None;
        }
        let text = format!(
            "delaying request{}, excess: {}, by zone \"{}\"",
            if lc.dry_run { ", dry run" } else { "" },
            milli(excess),
            zones[limit].conf.name
        );
        self.push_log_line(delay_level(lc.log_level), text);
        if lc.dry_run {
            ctx.limits.req = Some(LimitStatus::DelayedDryRun);
            return None;
        }
        ctx.limits.req = Some(LimitStatus::Delayed);
        ctx.limits.delay = Some(Duration::from_millis(delay));
        // Not sent: the engine holds the request and runs it again.
        Some(Step::Done(self.builtin(ctx, &Special::status(500))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket() -> Lru<ReqState> {
        Lru::new(1 << 16)
    }

    /// nginx's arithmetic at 2 r/s (rate 2000), burst 1: the first
    /// request passes with excess 0, the second at once has 1.000, the
    /// third 2.000 > burst: rejected (and not counted); 500 ms later
    /// 1.000 has drained to 0.000 + the new 1.000.
    #[test]
    fn the_leaky_bucket_as_nginx() {
        let mut s = bucket();
        assert_eq!(lookup(&mut s, 2000, 1000, b"k", 1000, true), (Rc::Ok, 0));
        assert_eq!(lookup(&mut s, 2000, 1000, b"k", 1000, true), (Rc::Ok, 1000));
        assert_eq!(
            lookup(&mut s, 2000, 1000, b"k", 1000, true),
            (Rc::Busy, 2000)
        );
        assert_eq!(
            lookup(&mut s, 2000, 1250, b"k", 1000, true),
            (Rc::Busy, 1500)
        );
        assert_eq!(lookup(&mut s, 2000, 1500, b"k", 1000, true), (Rc::Ok, 1000));
        // Drained far below zero: 0, plus this request.
        assert_eq!(lookup(&mut s, 2000, 9000, b"k", 1000, true), (Rc::Ok, 0));
        // 30r/m is 500 milli-requests a second: 1 s drains 0.500.
        let mut m = bucket();
        lookup(&mut m, 500, 0, b"a", 2000, true);
        assert_eq!(lookup(&mut m, 500, 0, b"a", 2000, true), (Rc::Ok, 1000));
        assert_eq!(lookup(&mut m, 500, 1000, b"a", 2000, true), (Rc::Ok, 1500));
    }

    #[test]
    fn a_clock_step_back_drains_nothing() {
        let s = ReqState {
            excess: 1000,
            last: 5000,
            count: 0,
        };
        assert_eq!(drained(&s, 1000, 4000), (2000, 0));
        let later = ReqState { last: 100_000, ..s };
        assert_eq!(drained(&later, 1000, 30_000).1, 1, "70 s back");
    }

    /// A new key in a full zone evicts the least recently used state when
    /// it is stale; forced, the oldest whatever it holds.
    #[test]
    fn eviction_as_nginx() {
        let cost = crate::zone::node_cost(1);
        let mut s = Lru::new(2 * cost);
        assert_eq!(lookup(&mut s, 1000, 0, b"a", 0, true).0, Rc::Ok);
        assert_eq!(lookup(&mut s, 1000, 0, b"b", 0, true).0, Rc::Ok);
        // Full: `a` (oldest) is evicted by force for `c`.
        assert_eq!(lookup(&mut s, 1000, 10, b"c", 0, true).0, Rc::Ok);
        assert_eq!(s.len(), 2);
        assert!(s.get(b"a").is_none());
        // A state counted by a request in flight is never evicted.
        s.get(b"b").unwrap().count = 1;
        s.get(b"c").unwrap().count = 1;
        assert_eq!(lookup(&mut s, 1000, 20, b"d", 0, true).0, Rc::Error);
        // Stale and empty states go without force: 60 s later both.
        s.get(b"b").unwrap().count = 0;
        s.get(b"c").unwrap().count = 0;
        expire(&mut s, 1000, 100_000, 1);
        assert!(s.is_empty());
    }

    #[test]
    fn delay_levels_and_excess_text() {
        assert_eq!(delay_level(LogLevel::Error), LogLevel::Warn);
        assert_eq!(delay_level(LogLevel::Warn), LogLevel::Notice);
        assert_eq!(delay_level(LogLevel::Notice), LogLevel::Info);
        assert_eq!(delay_level(LogLevel::Info), LogLevel::Info);
        assert_eq!(milli(500), "0.500");
        assert_eq!(milli(12_034), "12.034");
    }
}
