//! A proxied subrequest of an HTTP/1 exchange as an upstream job's
//! [`Owner`] (nginx's `ngx_http_subrequest` to a location whose content
//! handler is the upstream module: SSI's `include virtual`, addition's
//! `add_before_body`, `auth_request`).
//!
//! Core runs subrequests inside one call and cannot wait for an upstream;
//! it leaves the first proxied one without an answer
//! (`HttpCore::take_subrequest`, see `peregrine_core::filters::subrequest`).
//! This owner runs that job on the connection's key and timer as the
//! exchange's own job would, but its answer goes into memory
//! ([`SubState`]) instead of onto the socket; when it ends, the request
//! runs again with the answers so far, until a pass needs none more.
//! The parent's response is then whole, its subrequests' output in place
//! and in order (what nginx's postpone filter streams).
//!
//! Deliberate difference: the parent's output waits for all of its
//! proxied subrequests before its first byte goes out (nginx sends what
//! precedes an unfinished subrequest at once).

use peregrine_core::filters::MAX_FILTERED_BODY;
use peregrine_core::filters::subrequest::{PendingSub, SubAnswer};

use super::Machine;
use super::cache_store;
use super::detached::Detached;
use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::{Close, Http1, Phase, Step};
use crate::transport::Transport;

/// The subrequest in flight and the answers of those before it, kept
/// with the exchange.
pub struct SubState {
    answers: Vec<SubAnswer>,
    status: u16,
    body: Vec<u8>,
    /// The answer passed [`MAX_FILTERED_BODY`]: the subrequest fails.
    too_big: bool,
}

/// The exchange whose subrequest the job is (see the module's doc).
pub(crate) struct SubOwner<'a>(pub &'a mut Http1);

impl Http1 {
    /// Core left a proxied subrequest: its pass's response is dropped
    /// (and with it an upstream job and log lines of its own); a cached
    /// answer is taken at once, else the subrequest's job starts.
    #[inline(never)]
    pub(crate) fn start_subrequest(
        &mut self,
        t: &mut Transport,
        mut ex: Box<Exchange>,
        pending: PendingSub,
        cx: &mut Ctx,
    ) -> Step {
        drop(cx.core.take_proxy());
        if cx.core.has_log_lines() {
            drop(cx.core.take_log_lines());
        }
        let PendingSub { job, mut answers } = pending;
        let pass = ex.resp.take();
        let upstream = ex.upstream.take();
        let Some(job) = cache_store::hit(&mut ex, job, &self.info, cx) else {
            // `ex.resp` is the stored answer: the request runs again.
            let cached = ex.resp.take();
            answers.push(SubAnswer {
                status: cached.as_ref().map_or(500, |r| r.status),
                body: cached
                    .as_ref()
                    .and_then(|r| peregrine_core::filters::read_body(&r.body))
                    .unwrap_or_default(),
                upstream: ex.upstream.take().map(|u| *u).unwrap_or_default(),
            });
            cx.core.subrequest_answers(answers);
            return self.start_exchange(t, ex, cx);
        };
        ex.resp = pass;
        ex.upstream = upstream;
        ex.sub = Some(Box::new(SubState {
            answers,
            status: 0,
            body: Vec::new(),
            too_big: false,
        }));
        SubOwner(self).start_proxy_with(t, ex, job, cx, false)
    }

    /// The job in flight is a subrequest's.
    pub(crate) fn in_subrequest(&self) -> bool {
        self.ex.as_ref().is_some_and(|e| e.sub.is_some())
    }
}

impl SubOwner<'_> {
    fn state(&mut self) -> Option<&mut SubState> {
        self.0.ex.as_mut()?.sub.as_deref_mut()
    }

    /// The subrequest's answer is whole: the request runs again with it.
    fn replay(&mut self, t: &mut Transport, cx: &mut Ctx) -> Step {
        let Some(mut ex) = self.0.ex.take() else {
            return Step::Close(Close::Normal);
        };
        let Some(sub) = ex.sub.take() else {
            return Step::Close(Close::Normal);
        };
        let SubState {
            mut answers,
            status,
            body,
            too_big,
        } = *sub;
        let upstream = ex.upstream.take().map(|u| *u).unwrap_or_default();
        answers.push(SubAnswer {
            status: if too_big { 500 } else { status },
            body: if too_big { Vec::new() } else { body },
            upstream,
        });
        cx.core.subrequest_answers(answers);
        ex.resp = None;
        self.0.phase = Phase::Send;
        self.0.start_exchange(t, ex, cx)
    }
}

impl Detached for SubOwner<'_> {
    fn conn(&mut self) -> &mut Http1 {
        self.0
    }

    fn conn_ref(&self) -> &Http1 {
        self.0
    }

    fn gone(&mut self, t: &mut Transport) -> bool {
        t.readable && t.peer_closed()
    }

    fn head(&mut self, ex: &mut Exchange, resp: peregrine_core::Response) {
        if let Some(s) = ex.sub.as_deref_mut() {
            s.status = resp.status;
        }
        // In the exchange as an owner's head is: a held answer's filtered
        // body is read from there (`Machine::release_held`). The pass's
        // own response is dropped anyway.
        ex.resp = Some(resp);
    }

    fn bytes(&mut self, buf: &[u8]) {
        if let Some(s) = self.state() {
            if s.body.len() + buf.len() > MAX_FILTERED_BODY as usize {
                s.too_big = true;
            } else {
                s.body.extend_from_slice(buf);
            }
        }
    }

    /// Core's own answer for the subrequest (an error page): it is the
    /// subrequest's.
    fn core_answer(
        &mut self,
        mut ex: Box<Exchange>,
        resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step {
        if let Some(s) = ex.sub.as_deref_mut() {
            s.status = resp.status;
            s.body = peregrine_core::filters::read_body(&resp.body).unwrap_or_default();
        }
        self.0.ex = Some(ex);
        self.replay(t, cx)
    }

    fn finished(&mut self, t: &mut Transport, _key: usize, cx: &mut Ctx) -> Step {
        self.replay(t, cx)
    }
}
