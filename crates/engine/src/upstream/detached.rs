//! The owners of an HTTP/1 exchange's upstream job whose answer no client
//! reads as it comes: a proxied subrequest (`subrequest.rs`, the answer
//! kept in memory for core) and a cache background refresh
//! (`background.rs`, the answer discarded while the cache writer stores
//! it). They share the connection's timer, logs and job slot, send no
//! request body, take the answer unframed and never tunnel; [`Detached`]
//! says only what differs, and one impl of [`Owner`] does the rest.

use std::io;
use std::time::Duration;

use peregrine_codec::upstream::Framing;
use peregrine_codec::{BodyDecoder, BodyKind};
use peregrine_conf::model::LogLevel;
use peregrine_core::ConnInfo;
use peregrine_core::proxy::answer::{ClientFraming, client_framing};

use super::Proxy;
use super::owner::Owner;
use crate::body::read::{Broken, Pull};
use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::{Http1, Phase, Step};
use crate::transport::Transport;

/// What a detached owner does with its job's answer.
pub(crate) trait Detached {
    /// The connection whose exchange the job belongs to.
    fn conn(&mut self) -> &mut Http1;
    fn conn_ref(&self) -> &Http1;
    /// Whether the job stops because the client left.
    fn gone(&mut self, t: &mut Transport) -> bool;
    /// The answer's head, through core's filters.
    fn head(&mut self, ex: &mut Exchange, resp: peregrine_core::Response);
    /// Bytes of the answer's body.
    fn bytes(&mut self, buf: &[u8]);
    /// Core answered instead of the upstream (an error page).
    fn core_answer(
        &mut self,
        ex: Box<Exchange>,
        resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step;
    /// The job is over.
    fn finished(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step;
}

impl<D: Detached> Owner for D {
    fn ex_slot(&mut self) -> &mut Option<Box<Exchange>> {
        &mut self.conn().ex
    }

    fn ex_ref(&self) -> Option<&Exchange> {
        self.conn_ref().ex.as_deref()
    }

    fn info(&self) -> &ConnInfo {
        &self.conn_ref().info
    }

    fn log(&self, cx: &Ctx, level: LogLevel, text: &str, doing: &str) {
        Http1::log(self.conn_ref(), cx, level, text, doing);
    }

    fn arm_timer(&mut self, cx: &mut Ctx, d: Duration) {
        cx.timers.arm(self.conn().key as usize, cx.now, d);
    }

    fn disarm_timer(&mut self, cx: &mut Ctx) {
        cx.timers.disarm(self.conn().key as usize);
    }

    /// No body of its own: a subrequest's would be the parent's (read or
    /// discarded by the parent), a refresh's the stale answer's request's.
    fn body_kind(&self) -> BodyKind {
        BodyKind::None
    }

    fn begin_job(&mut self, _t: &mut Transport, p: Box<Proxy>, _c: bool, cx: &mut Ctx) {
        let conn = self.conn();
        cx.upstreams.set(conn.key as usize, p);
        conn.phase = Phase::Proxy;
    }

    fn job_mut<'a>(&'a mut self, cx: &'a mut Ctx) -> Option<&'a mut Proxy> {
        cx.upstreams.get_mut(self.conn().key as usize)
    }

    fn client_gone(&mut self, t: &mut Transport) -> bool {
        self.gone(t)
    }

    fn pull_body(
        &mut self,
        _dec: &mut BodyDecoder,
        _t: &mut Transport,
        _cx: &mut Ctx,
        _sink: &mut dyn FnMut(&[u8]) -> Result<(), u16>,
    ) -> (Pull, Option<Broken>) {
        (Pull::Done, None)
    }

    /// The body unframed, as it is kept.
    fn framing(&self, up: Framing, _p: &Proxy) -> ClientFraming {
        client_framing(up, false, false)
    }

    fn queue_head(
        &mut self,
        ex: &mut Exchange,
        resp: peregrine_core::Response,
        p: &mut Proxy,
        _cx: &mut Ctx,
    ) {
        if resp.header_only {
            p.framing = ClientFraming::None;
        }
        self.head(ex, resp);
    }

    fn client_write(&mut self, _t: &mut Transport, buf: &[u8]) -> io::Result<usize> {
        self.bytes(buf);
        Ok(buf.len())
    }

    fn respond_core(
        &mut self,
        _p: &mut Proxy,
        ex: Box<Exchange>,
        resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step {
        self.core_answer(ex, resp, t, cx)
    }

    fn complete_job(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        self.finished(t, key, cx)
    }
}
