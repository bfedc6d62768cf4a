//! What the limit modules (`limit_req`, `limit_conn`, realip, auth_delay)
//! keep per request and hand the engine: the request's
//! `$limit_req_status`/`$limit_conn_status`, its real address, the
//! `limit_conn` slots it holds, and a delay. A request that is to wait
//! (`limit_req` with a delay, `auth_delay`) is answered by nothing: the
//! engine holds its exchange on the connection's timer (the worker loop
//! goes on) and runs it again with the [`Resume`] it was given, as nginx
//! resumes a delayed request at its next phase.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use peregrine_conf::model::Config;

use crate::HttpCore;
use crate::http::{Ctx, Step};
use crate::limit_conn::{ConnSlot, ConnZone};
use crate::limit_req::{LimitStatus, ReqZone};

/// The configuration's zones, shared with the other workers.
#[derive(Default)]
pub(crate) struct LimitZones {
    pub req: Vec<ReqZone>,
    pub conn: Vec<ConnZone>,
}

impl LimitZones {
    pub(crate) fn of(conf: &Config) -> LimitZones {
        let Some(h) = conf.http.as_ref() else {
            return LimitZones::default();
        };
        LimitZones {
            req: h
                .limit_req_zones
                .iter()
                .map(|z| ReqZone {
                    conf: z.clone(),
                    zone: crate::zone::zone("limit_req", &z.name, z.size, &z.key),
                })
                .collect(),
            conn: h
                .limit_conn_zones
                .iter()
                .map(|z| ConnZone {
                    conf: z.clone(),
                    zone: crate::zone::zone("limit_conn", &z.name, z.size, &z.key),
                })
                .collect(),
        }
    }
}

/// A request's limit state (in `Ctx`; variables read it).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RequestLimits {
    pub req: Option<LimitStatus>,
    pub conn: Option<LimitStatus>,
    /// The address realip found.
    pub real: Option<SocketAddr>,
    pub realip_done: bool,
    /// How long the request is to wait before it runs again.
    pub delay: Option<Duration>,
    /// `auth_delay` was waited out: answer the 401 now.
    pub auth_delayed: bool,
    /// When the request started, for a request run again (`$request_time`).
    pub started: Option<SystemTime>,
}

/// How a held request runs again (see [`HttpCore::resume`]).
#[derive(Debug, Clone, Copy)]
pub struct Resume {
    limits: RequestLimits,
}

/// What a request leaves the engine ([`HttpCore::take_held`]).
#[derive(Debug, Default)]
pub struct Held {
    /// Wait this long, then run the request again with [`Held::resume`]:
    /// the response given is not to be sent.
    pub delay: Option<Duration>,
    pub resume: Option<Resume>,
    /// The client's address as realip found it (the logs' `$remote_addr`).
    pub real_peer: Option<SocketAddr>,
    /// `limit_conn` slots, given back when this is dropped.
    pub slots: Vec<ConnSlot>,
    /// The engine's: the connection's own address while realip's stands
    /// in for it.
    pub conn_peer: Option<SocketAddr>,
}

impl HttpCore {
    /// What the last request left for the engine: `None` for nearly every
    /// request (one test).
    #[inline]
    pub fn take_held(&mut self) -> Option<Box<Held>> {
        self.held.take()
    }

    /// The next request handled is `r`'s, run again after its delay; it
    /// started at `started`.
    pub fn resume(&mut self, r: Resume, started: SystemTime) {
        let mut limits = r.limits;
        limits.delay = None;
        limits.started = Some(started);
        self.resuming = Some(limits);
    }

    /// Collects what the request in `limits`/`slots` leaves the engine.
    pub(crate) fn leave(&mut self, limits: &RequestLimits, slots: Vec<ConnSlot>) {
        if limits.delay.is_none() && limits.real.is_none() && slots.is_empty() {
            return;
        }
        self.held = Some(Box::new(Held {
            delay: limits.delay,
            resume: limits.delay.map(|_| Resume { limits: *limits }),
            real_peer: limits.real,
            slots,
            conn_peer: None,
        }));
    }

    /// `auth_delay` (`ngx_http_core_auth_delay`): a 401 of the access
    /// phase waits first, the request held and run again to answer it.
    pub(crate) fn auth_delay(&mut self, ctx: &mut Ctx<'_>, step: Step) -> Step {
        let unauthorized = match &step {
            Step::Special(sp) => sp.status == 401,
            _ => false,
        };
        if !unauthorized || ctx.conf.auth_delay.is_zero() || ctx.limits.auth_delayed {
            return step;
        }
        ctx.limits.auth_delayed = true;
        ctx.limits.delay = Some(ctx.conf.auth_delay);
        // Not sent: the engine holds the request and runs it again.
        Step::Done(self.builtin(ctx, &crate::special::Special::status(500)))
    }

    /// The access phase with `satisfy any` (`ngx_http_core_access_phase`,
    /// `ngx_http_core_post_access_phase`): one module allowing lets the
    /// request on; else the last refusal, a 401 winning over a 403 (its
    /// challenge is what a client can answer). A module without settings
    /// here neither allows nor refuses.
    pub(crate) fn satisfy_any(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        let mut refusal: Option<Step> = None;
        if !ctx.conf.access.is_empty() {
            match crate::access::verdict(&ctx.conf.access, ctx.peer()) {
                Some(false) => return None,
                Some(true) => {
                    refusal = Some(Step::Special(crate::special::Special::status(403)));
                }
                None => {}
            }
        }
        let auth_applies = ctx.conf.auth_basic_user_file.is_some()
            && ctx.conf.auth_basic.as_deref().is_some_and(|r| r != "off");
        if auth_applies {
            match self.auth_basic(ctx) {
                None => return None,
                Some(step) => match status_of(&step) {
                    401 => refusal = Some(step),
                    // auth_basic's own 403 (no user file), unless the
                    // access module's stands already (logged below).
                    403 if refusal.is_none() => return Some(step),
                    403 => {}
                    _ => return Some(step),
                },
            }
        }
        if ctx.conf.auth_request.is_some() {
            match self.auth_request(ctx) {
                None => return None,
                // A 401 stands over a 403 (`ngx_http_core_access_phase`
                // keeps `r->access_code` once it is 401).
                Some(step) => match status_of(&step) {
                    401 => refusal = Some(step),
                    403 if refusal.as_ref().is_some_and(|r| status_of(r) == 401) => {}
                    403 => refusal = Some(step),
                    _ => return Some(step),
                },
            }
        }
        let step = refusal?;
        match status_of(&step) {
            403 => {
                self.note_failure(crate::response::ErrorNote::AccessForbidden);
                Some(step)
            }
            _ => Some(self.auth_delay(ctx, step)),
        }
    }

    /// A line for the error log, with the request's context (bounded as
    /// the rewrite module's).
    pub(crate) fn push_log_line(&mut self, level: peregrine_conf::model::LogLevel, text: String) {
        if self.log_lines.len() < crate::rewrite::MAX_PENDING_LOG_LINES {
            self.log_lines.push(crate::rewrite::LogLine { level, text });
        }
    }
}

/// `$request_time` in core (`add_header`, `return`): seconds with
/// milliseconds since the request started; a request not held before is
/// answered in the loop turn that read it (nginx's cached time gives 0.000).
pub(crate) fn push_request_time(
    out: &mut String,
    started: Option<std::time::SystemTime>,
    now: std::time::SystemTime,
) {
    use std::fmt::Write;
    let ms = started
        .and_then(|s| now.duration_since(s).ok())
        .map_or(0, |d| d.as_millis());
    let _ = write!(out, "{}.{:03}", ms / 1000, ms % 1000);
}

/// The status a refusing step answers with.
fn status_of(step: &Step) -> u16 {
    match step {
        Step::Special(sp) => sp.status,
        Step::Done(r) => r.status,
        _ => 0,
    }
}
