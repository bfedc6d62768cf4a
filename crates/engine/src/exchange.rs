//! One request/response exchange of a connection's session: the parsed
//! request, core's response, its output in flight and the request body
//! still to discard; how the response is to go out ([`Plan`]); and the
//! worker's pool of idle exchanges ([`ExchangePool`]).

use std::sync::Arc;
use std::time::SystemTime;

use peregrine_codec::{BodyDecoder, BodyKind, Request};
use peregrine_conf::model::LocConf;
use peregrine_core::Response;

use crate::compress::Compressing;
use crate::pool::{POOL_MAX, Pool};
use crate::write::{ConnHeader, HeadStart, Output, serialize_head};

/// One request and its response. Exchanges are pooled whole (see
/// [`ExchangePool::take`]): the request is parsed in place and the
/// head serialized into the output's kept buffer, so a request allocates
/// nothing and moves no large value into the heap.
#[derive(Default)]
pub struct Exchange {
    /// The request head, parsed in place (the exchange itself is boxed).
    req: Request,
    /// `req` holds this exchange's request (false: the head failed to parse).
    parsed: bool,
    /// `None` while idle: what a response references (settings, server,
    /// body) is released when its exchange ends.
    pub resp: Option<Response>,
    pub out: Output,
    /// Decoder of a request body still to discard.
    pub body: Option<BodyDecoder>,
    /// Head plus body bytes read (`$request_length`).
    pub request_length: u64,
    /// The head said `Connection: keep-alive` (may still close if draining).
    pub keepalive: bool,
    /// Close with lingering (errors: nginx lingers so the client reads the
    /// error page before a RST could destroy it).
    pub linger: bool,
    /// Access-logged (and counted) already: an exchange that ends
    /// abnormally is logged when its connection closes, once.
    pub logged: bool,
    // proxy
    /// A proxied request's `$upstream_*`, for the access log.
    pub upstream: Option<Box<peregrine_core::proxy::UpstreamVars>>,
    // limits
    /// What core left for this request: its `limit_conn` slots (given
    /// back when the exchange ends), realip's address, a delayed run.
    pub held: Option<Box<peregrine_core::limits::Held>>,
    // subrequests
    /// A proxied subrequest in flight for this request, and the answers
    /// of those before it (`upstream::subrequest`).
    pub sub: Option<Box<crate::upstream::subrequest::SubState>>,
    /// A cache refresh after a stale answer (`*_cache_background_update`).
    pub bg: crate::upstream::background::Background,
    /// The location's `post_action` was run for this exchange.
    pub post_done: bool,
}

impl Exchange {
    /// The request, unless its head failed to parse.
    pub fn req(&self) -> Option<&Request> {
        self.parsed.then_some(&self.req)
    }

    /// Where the next head is parsed (the codec resets it).
    pub fn req_mut(&mut self) -> &mut Request {
        &mut self.req
    }

    pub fn conf(&self) -> Option<&Arc<LocConf>> {
        self.resp.as_ref()?.conf.as_ref()
    }

    /// Back to idle, keeping the request's and the output's buffers.
    /// Always inlined: the proxy's callers made LLVM call it out of line
    /// on the plain path too.
    #[inline(always)]
    pub fn reset(&mut self, pool: &mut Pool) {
        self.parsed = false;
        self.resp = None;
        self.out.reset(pool);
        self.body = None;
        self.request_length = 0;
        self.keepalive = false;
        self.linger = false;
        self.logged = false;
        self.post_done = false;
        self.upstream = None;
        // Tested first: nearly every exchange holds nothing, and the drop
        // glue of a held one is a call.
        if self.held.is_some() {
            self.held = None;
        }
        if self.sub.is_some() {
            self.sub = None;
        }
        if !matches!(self.bg, crate::upstream::background::Background::None) {
            self.bg = Default::default();
        }
    }
}

/// How a queued response goes out and what follows it.
pub struct Plan {
    /// `Connection: keep-alive` in the head.
    pub keepalive: bool,
    /// `100 Continue` first.
    pub expect: bool,
    /// Lingering close afterwards.
    pub linger: bool,
    /// A request body to discard.
    pub body: Option<BodyDecoder>,
    /// The body goes through an encoder.
    pub comp: Option<Box<Compressing>>,
}

pub fn body_pending(kind: BodyKind) -> bool {
    match kind {
        BodyKind::None | BodyKind::Length(0) => false,
        BodyKind::Length(_) | BodyKind::Chunked => true,
    }
}

impl Plan {
    /// A response that ends its connection (a bad head's error page).
    pub fn closing() -> Plan {
        Plan {
            keepalive: false,
            expect: false,
            linger: true,
            body: None,
            comp: None,
        }
    }

    /// How `resp`, core's answer to `req`, goes out (the compression
    /// filter may rewrite its head). `keep` says whether the connection
    /// itself may stay open (`draining`, `keepalive_requests`,
    /// `keepalive_time`: see [`crate::keepalive::allowed`]).
    #[inline(always)]
    pub fn of(req: &Request, resp: &mut Response, wall: SystemTime, keep: Keep) -> Plan {
        let comp = crate::compress::apply(req, resp, wall);
        let kind = req.body_kind();
        let pending = body_pending(kind);
        let keepalive = resp.keepalive
            && req.keep_alive()
            && !keep.draining
            && resp.conf.as_ref().is_some_and(|c| {
                !c.keepalive_timeout.is_zero()
                    && keep.requests < c.keepalive_requests
                    && crate::keepalive::allowed(&c.conn, req, keep.age_ns)
            });
        // nginx sends 100 Continue when it reads or discards the body for a
        // normal response; error pages (special responses) set
        // `expect_tested` first and never send it.
        let expect = req.expect_continue() && pending && (resp.status < 300 || resp.status == 304);
        Plan {
            keepalive,
            expect,
            linger: !resp.keepalive,
            body: pending.then(|| BodyDecoder::new(kind)),
            comp,
        }
    }
}

/// What of the connection decides whether it may be kept alive.
#[derive(Clone, Copy)]
pub struct Keep {
    /// The worker is draining (graceful stop or reload).
    pub draining: bool,
    /// Requests begun on the connection (`keepalive_requests`).
    pub requests: u64,
    /// Nanoseconds since accept (`keepalive_time`).
    pub age_ns: u64,
}

impl Exchange {
    /// The request and the response slot, borrowed apart (core answers
    /// into the slot while reading the request).
    pub fn split(&mut self) -> (&Request, &mut Option<Response>) {
        (&self.req, &mut self.resp)
    }

    /// The head was parsed into [`Exchange::req_mut`].
    pub fn set_parsed(&mut self) {
        self.parsed = true;
    }

    /// Serializes the head of the response and starts its output as
    /// `plan` says; `sendfile_ok`: the transport can send a file as is.
    /// False when there is no response (a bug, met by closing).
    #[inline]
    pub fn queue(&mut self, plan: Plan, start: &HeadStart, sendfile_ok: bool) -> bool {
        let http11 = self
            .req()
            .is_some_and(|r| matches!(r.version(), peregrine_codec::Version::Http11));
        let Exchange { resp, out, .. } = self;
        let Some(resp) = resp.as_mut() else {
            return false;
        };
        resp.status = peregrine_codec::response::wire_status(resp.status);
        let conf = resp.conf.as_deref();
        let ch = ConnHeader {
            keepalive: plan.keepalive,
            keepalive_header: conf.and_then(|c| c.keepalive_header),
        };
        serialize_head(out.head_mut(), resp, start, &ch, plan.expect);
        let sendfile = sendfile_ok && conf.is_some_and(|c| c.sendfile);
        out.nopush = conf.is_some_and(|c| c.tcp_nopush);
        let framing = crate::write::Framing::of(resp, http11);
        out.start(&resp.body, resp.header_only, sendfile, plan.comp, framing);
        // With a request body still to discard, the close waits for it
        // (`Phase::Discard`): the final bytes must not wait with it.
        out.last = !plan.keepalive && plan.body.is_none();
        self.request_length = self.req().map_or(0, |r| r.head_len() as u64);
        self.body = plan.body;
        self.keepalive = plan.keepalive;
        self.linger = plan.linger;
        true
    }
}

/// A worker's idle exchanges with their request and output buffers: a
/// request takes one whole (one pop, no allocation) instead of a box, a
/// request, a head buffer and a piece list one by one.
#[derive(Default)]
pub struct ExchangePool {
    #[allow(clippy::vec_box)]
    idle: Vec<Box<Exchange>>,
}

#[cold]
fn new_exchange() -> Box<Exchange> {
    Box::default()
}

impl ExchangePool {
    /// An idle exchange (see [`Exchange::reset`]).
    #[inline]
    pub fn take(&mut self) -> Box<Exchange> {
        self.idle.pop().unwrap_or_else(new_exchange)
    }

    /// Takes back an exchange, which must be idle: reset by its owner, so
    /// nothing its response referenced stays alive in the pool.
    pub fn put(&mut self, ex: Box<Exchange>) {
        if self.idle.len() < POOL_MAX {
            self.idle.push(ex);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_are_reused() {
        let mut p = ExchangePool::default();
        let ex = p.take();
        let ptr: *const Exchange = &*ex;
        p.put(ex);
        assert!(std::ptr::eq(&*p.take(), ptr), "exchanges are reused");
    }
}
