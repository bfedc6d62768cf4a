//! `limit_rate` and `limit_rate_after` with variables (nginx 1.27's
//! complex values, evaluated per request by `ngx_http_complex_value_size`),
//! `set $limit_rate` / `$limit_rate` (`ngx_http_variable_request_set_size`
//! and its getter) and an upstream's `X-Accel-Limit-Rate`. The engine paces a response by the numbers in the
//! response's location settings, the only place it reads them; so a
//! request whose numbers are its own gets a copy of those settings with
//! them in. Locations without variables in these (and without `set
//! $limit_rate`) pay nothing.

use std::sync::Arc;

use peregrine_conf::model::{LocConf, LogLevel, ignore};
use peregrine_conf::values::parse_size;

use crate::http::{Ctx, HttpCore};
use crate::response::Response;
use crate::vars::VarCtx;

/// `$limit_rate` as `set` left it: its size (an invalid one is 0, as
/// nginx's setter leaves the rate alone), `None` when it was not set.
fn set_rate(v: &VarCtx<'_>) -> Option<u64> {
    if !v.sets.any_stored() {
        return None;
    }
    let s = v.sets.by_name("limit_rate")?;
    Some(parse_size(s).unwrap_or(0))
}

/// An upstream answer's `X-Accel-Limit-Rate: BYTES` (nginx's
/// `ngx_http_upstream_process_limit_rate`, a plain number), unless the
/// location's `*_ignore_headers` names it; it holds through an
/// `X-Accel-Redirect` (the request keeps its rate).
fn accel_rate(v: &VarCtx<'_>) -> Option<u64> {
    let up = v.upstream?;
    let c = v.conf;
    let ignored = [
        c.proxy.ignore_headers,
        c.fastcgi.up.ignore_headers,
        c.uwsgi.up.ignore_headers,
        c.scgi.up.ignore_headers,
    ]
    .iter()
    .any(|bits| bits & ignore::X_ACCEL_LIMIT_RATE != 0);
    if ignored {
        return None;
    }
    up.header("x_accel_limit_rate")?.trim().parse().ok()
}

/// A complex value's size (`ngx_http_complex_value_size`): `Err` with the
/// value when it is not one (the rate is 0 then). A value naming
/// `$limit_rate` itself is 0 (no loop).
fn size_of(v: &VarCtx<'_>, template: &str) -> Result<u64, String> {
    if template.contains("limit_rate") {
        return Ok(0);
    }
    let s = v.expand(template);
    parse_size(&s).ok_or(s)
}

/// The request's `limit_rate` and `limit_rate_after`: `set $limit_rate`,
/// else an upstream's `X-Accel-Limit-Rate`, else the location's (its
/// variables evaluated); `bad` gets the values that were not sizes.
fn effective(v: &VarCtx<'_>, bad: &mut Vec<String>) -> (u64, u64) {
    let c = &v.conf.conn;
    let rate = match set_rate(v).or_else(|| accel_rate(v)) {
        Some(n) => n,
        None => match &c.limit_rate_var {
            Some(t) => size_of(v, t).unwrap_or_else(|s| {
                bad.push(s);
                0
            }),
            None => c.limit_rate,
        },
    };
    let after = match &c.limit_rate_after_var {
        Some(t) if rate > 0 => size_of(v, t).unwrap_or_else(|s| {
            bad.push(s);
            0
        }),
        _ => c.limit_rate_after,
    };
    (rate, after)
}

/// The value of `$limit_rate`: the request's rate.
pub(crate) fn variable(v: &VarCtx<'_>) -> u64 {
    effective(v, &mut Vec::new()).0
}

impl HttpCore {
    /// The response's own rate settings, when the request has any.
    pub(crate) fn own_rate(&mut self, ctx: &Ctx<'_>, r: &mut Response) {
        let c = &ctx.conf.conn;
        let own = c.limit_rate_var.is_some()
            || c.limit_rate_after_var.is_some()
            || ctx.sets.any_stored()
            || ctx.upstream.is_some();
        if !own {
            return;
        }
        // Built only now: a `VarCtx` is a large struct (~55 instructions
        // to fill), and most requests return above.
        let v = ctx.vars();
        let mut bad = Vec::new();
        let (rate, after) = effective(&v, &mut bad);
        for s in bad {
            self.log_line(LogLevel::Error, || format!("invalid size \"{s}\""));
        }
        if rate == c.limit_rate && after == c.limit_rate_after {
            return;
        }
        let mut own: LocConf = (*ctx.conf).clone();
        own.conn.limit_rate = rate;
        own.conn.limit_rate_after = after;
        r.conf = Some(Arc::new(own));
    }
}
