//! `health_status;` (Peregrine's, beyond nginx): a health endpoint that
//! knows about draining, for a Kubernetes readiness probe or a balancer's
//! check. It answers `200 ok` while the server takes work and `503
//! draining` from the moment a graceful shutdown (QUIT, or WINCH on an
//! upgrade's old master) begins, while in-flight requests finish; with
//! `shutdown_delay` the listeners stay open that long first, so the probe
//! sees the 503 and the balancer stops sending before anything is refused.

use std::sync::Arc;

use crate::head::HeadSpec;
use crate::http::{Ctx, HttpCore, Step};
use crate::phases::simple;
use crate::request::Method;
use crate::response::Body;
use crate::special::Special;

/// The bodies: short, and what a person reading a probe's log wants.
const OK: &[u8] = b"ok\n";
const DRAINING: &[u8] = b"draining\n";

impl HttpCore {
    /// GET and HEAD only (405 otherwise, as `stub_status`).
    pub(crate) fn health_status(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if !matches!(ctx.method, Method::Get | Method::Head) {
            return Step::Special(Special::status(405));
        }
        let draining = self.status_source().is_some_and(|s| s.draining());
        let (code, text) = if draining { (503, DRAINING) } else { (200, OK) };
        let len = text.len() as u64;
        let head = HeadSpec {
            content_type: Some("text/plain"),
            content_length: Some(len),
            ..HeadSpec::default()
        };
        let body = if ctx.header_only() {
            Body::Empty
        } else {
            Body::Shared(Arc::from(text))
        };
        let status = ctx.status(code);
        Step::Done(simple(ctx, status, head, body, Some(len)))
    }
}
