//! `post_action` (`ngx_http_post_action`): once a response is sent, the
//! URI or named location of the location that answered runs as an
//! internal redirect of the same request, its answer read by nobody.
//! What shows of it is what it does: a proxied post action makes its
//! upstream request (the engine runs the job with its answer discarded,
//! as a cache refresh's); a local answer is made and dropped.

use std::sync::Arc;
use std::time::SystemTime;

use crate::http::{HttpCore, Step, split_args};
use crate::proxy::{ProxyJob, view_of};
use crate::response::{ConnInfo, Response};

impl HttpCore {
    /// The post action of the location that made `resp`, for `req`: the
    /// upstream job to run with its answer discarded, if its target
    /// proxies. `None` also when the location has no `post_action`.
    pub fn post_action(
        &mut self,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: SystemTime,
        resp: &Response,
    ) -> Option<Box<ProxyJob>> {
        let conf = resp.conf.as_ref()?;
        let target = conf.request.post_action.clone()?;
        let servers = self.servers.clone();
        let server = servers.iter().position(|s| {
            resp.server
                .as_ref()
                .is_some_and(|r| Arc::ptr_eq(&s.conf, r))
        })?;
        let srv = &servers[server];
        let view = view_of(req);
        let mut ctx = Self::start_ctx(srv, server, &view, conn, now);
        ctx.conf = conf.clone();
        ctx.status = self.status.clone();
        let step = if target.starts_with('@') {
            Step::Named(target)
        } else {
            let (uri, args) = split_args(&target);
            Step::Redirect(uri, args)
        };
        self.proxy_job = None;
        self.begin_pass();
        let _dropped = self.drive(&mut ctx, &servers, step);
        self.end_pass();
        if !ctx.slots.is_empty() || ctx.limits.delay.is_some() || ctx.limits.real.is_some() {
            let slots = std::mem::take(&mut ctx.slots);
            self.leave(&ctx.limits, slots);
        }
        self.take_proxy()
    }
}
