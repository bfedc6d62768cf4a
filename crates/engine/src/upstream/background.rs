//! `*_cache_background_update` on HTTP/1: a stale cached answer went to
//! the client at once (`cache_store::hit` kept the job in
//! [`Exchange::bg`]); once it is written, the job goes upstream with this
//! [`Owner`], which discards the answer's bytes while the cache writer
//! stores them, and then the exchange completes as any other
//! (`ngx_http_upstream_cache_background_update`: the main request ends
//! when its background subrequest does). The client's next request waits
//! for it, as in nginx. A proxied `post_action` runs the same way once its
//! response is written (`queue_post_action`).

use peregrine_core::proxy::{ProxyJob, UpstreamVars};

use super::Machine;
use super::detached::Detached;
use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::{Http1, Phase, Step};
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

    /// `post_action`: the response is written, the location's post action
    /// runs (`HttpCore::post_action`); a proxied one becomes the
    /// exchange's job, its answer discarded as a refresh's.
    #[cold]
    pub(crate) fn queue_post_action(&mut self, cx: &mut Ctx) {
        let Some(ex) = self.ex.as_mut() else { return };
        ex.post_done = true;
        let (Some(req), Some(resp)) = (ex.req(), ex.resp.as_ref()) else {
            return;
        };
        if let Some(job) = cx.core.post_action(&self.info, req, cx.wall, resp) {
            ex.bg = Background::Pending(job);
        }
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

impl Detached for BgOwner<'_> {
    fn conn(&mut self) -> &mut Http1 {
        self.0
    }

    fn conn_ref(&self) -> &Http1 {
        self.0
    }

    /// The refresh goes on when the client leaves (its answer is sent).
    fn gone(&mut self, _t: &mut Transport) -> bool {
        false
    }

    /// The client has its answer: the exchange keeps the stale one's.
    fn head(&mut self, _ex: &mut Exchange, _resp: peregrine_core::Response) {}

    /// Discarded: the cache writer stores them.
    fn bytes(&mut self, _buf: &[u8]) {}

    fn core_answer(
        &mut self,
        ex: Box<Exchange>,
        _resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step {
        self.0.ex = Some(ex);
        let key = self.0.key as usize;
        self.done(t, key, cx)
    }

    fn finished(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        self.done(t, key, cx)
    }
}
