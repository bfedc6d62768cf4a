//! `*_cache_background_update` on HTTP/1: a stale cached answer went to
//! the client at once (`cache_store::hit` kept the job in
//! [`Exchange::bg`]); once it is written, the job goes upstream with this
//! [`Owner`], which discards the answer's bytes while the cache writer
//! stores them, and then the exchange completes as any other
//! (`ngx_http_upstream_cache_background_update`: the main request ends
//! when its background subrequest does). The client's next request waits
//! for it, as in nginx.

use std::io;
use std::time::Duration;

use peregrine_codec::upstream::{Framing, UpstreamHead};
use peregrine_codec::{BodyDecoder, BodyKind};
use peregrine_conf::model::LogLevel;
use peregrine_core::ConnInfo;
use peregrine_core::proxy::answer::{ClientFraming, client_framing};
use peregrine_core::proxy::{ProxyJob, UpstreamVars};

use super::owner::Owner;
use super::{Machine, Proxy};
use crate::body::read::{Broken, Pull};
use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::{Close, Http1, Phase, Step};
use crate::transport::Transport;

/// An exchange's cache refresh.
#[derive(Default)]
pub enum Background {
    #[default]
    None,
    /// To run once the stale answer is written.
    Pending(Box<ProxyJob>),
    /// Running; the stale answer's `$upstream_*` for the access log.
    Running(Option<Box<UpstreamVars>>),
}

/// The exchange whose cache entry the job refreshes.
pub(crate) struct BgOwner<'a>(pub &'a mut Http1);

impl Http1 {
    /// The response is written: a pending refresh starts (`Some`), or
    /// the exchange completes (`None`).
    pub(crate) fn start_background(&mut self, t: &mut Transport, cx: &mut Ctx) -> Option<Step> {
        let ex = self.ex.as_mut()?;
        if !matches!(ex.bg, Background::Pending(_)) {
            return None;
        }
        let kept = ex.upstream.take();
        let Background::Pending(job) = std::mem::replace(&mut ex.bg, Background::Running(kept))
        else {
            return None;
        };
        let ex = self.ex.take()?;
        Some(BgOwner(self).start_proxy_with(t, ex, job, cx, false))
    }

    /// The job in flight is a cache refresh.
    pub(crate) fn in_background(&self) -> bool {
        self.ex
            .as_ref()
            .is_some_and(|e| matches!(e.bg, Background::Running(_)))
    }
}

impl BgOwner<'_> {
    fn done(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        if let Some(ex) = self.0.ex.as_mut()
            && let Background::Running(kept) = std::mem::take(&mut ex.bg)
        {
            ex.upstream = kept;
        }
        self.0.phase = Phase::Send;
        self.0.complete(t, key, cx)
    }
}

impl Owner for BgOwner<'_> {
    fn ex_slot(&mut self) -> &mut Option<Box<Exchange>> {
        &mut self.0.ex
    }

    fn ex_ref(&self) -> Option<&Exchange> {
        self.0.ex.as_deref()
    }

    fn info(&self) -> &ConnInfo {
        &self.0.info
    }

    fn log(&self, cx: &Ctx, level: LogLevel, text: &str, doing: &str) {
        Http1::log(self.0, cx, level, text, doing);
    }

    fn arm_timer(&mut self, cx: &mut Ctx, d: Duration) {
        cx.timers.arm(self.0.key as usize, cx.now, d);
    }

    fn disarm_timer(&mut self, cx: &mut Ctx) {
        cx.timers.disarm(self.0.key as usize);
    }

    /// The client's body was the stale answer's request's: not sent again.
    fn body_kind(&self) -> BodyKind {
        BodyKind::None
    }

    fn begin_job(&mut self, _t: &mut Transport, p: Box<Proxy>, _c: bool, cx: &mut Ctx) {
        cx.upstreams.set(self.0.key as usize, p);
        self.0.phase = Phase::Proxy;
    }

    fn job_mut<'a>(&'a mut self, cx: &'a mut Ctx) -> Option<&'a mut Proxy> {
        cx.upstreams.get_mut(self.0.key as usize)
    }

    /// The refresh goes on when the client leaves (its answer is sent).
    fn client_gone(&mut self, _t: &mut Transport) -> bool {
        false
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

    fn framing(&self, up: Framing, _p: &Proxy) -> ClientFraming {
        client_framing(up, false, false)
    }

    /// The client has its answer: the exchange keeps the stale one's.
    fn queue_head(
        &mut self,
        _ex: &mut Exchange,
        resp: peregrine_core::Response,
        p: &mut Proxy,
        _cx: &mut Ctx,
    ) {
        if resp.header_only {
            p.framing = ClientFraming::None;
        }
    }

    fn client_write(&mut self, _t: &mut Transport, buf: &[u8]) -> io::Result<usize> {
        Ok(buf.len())
    }

    fn respond_core(
        &mut self,
        _p: &mut Proxy,
        ex: Box<Exchange>,
        _resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step {
        self.0.ex = Some(ex);
        let key = self.0.key as usize;
        self.done(t, key, cx)
    }

    fn complete_job(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        self.done(t, key, cx)
    }

    fn start_tunnel(
        &mut self,
        _p: &mut Proxy,
        _h: &UpstreamHead,
        _t: &mut Transport,
        _key: usize,
        _cx: &mut Ctx,
    ) -> Option<Step> {
        None
    }

    fn tunnel_step(
        &mut self,
        _p: &mut Proxy,
        _t: &mut Transport,
        _k: usize,
        _cx: &mut Ctx,
    ) -> Step {
        Step::Close(Close::Normal)
    }

    fn end_tunnel(&mut self, _p: &mut Proxy, _t: &mut Transport, _k: usize, _cx: &mut Ctx) -> Step {
        Step::Close(Close::Normal)
    }
}
