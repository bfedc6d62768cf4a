//! Who owns an upstream job: the client side the machine of this module
//! answers to. An HTTP/1 exchange ([`crate::http1::Http1`]) and an HTTP/2
//! stream (`crate::h2`) are owners; the machine (connect, send, head,
//! stream, errors, next peer) is written once against this trait and
//! monomorphized for each, so the HTTP/1 path pays nothing for it.
//!
//! What differs between owners is only the client's side: where the
//! request body comes from (the connection's read buffer or DATA frames),
//! how the answer goes out (bytes on the socket or HEADERS and DATA
//! frames), how the job's timer and its socket's token are keyed (the
//! connection's key, or a key of the stream's own, see
//! [`super::Upstreams::add_stream_job`]), and how the exchange ends.

use std::io;
use std::time::Duration;

use peregrine_codec::upstream::{Framing, UpstreamHead};
use peregrine_codec::{BodyDecoder, BodyKind};
use peregrine_conf::model::LogLevel;
use peregrine_core::ConnInfo;
use peregrine_core::proxy::answer::ClientFraming;

use super::Proxy;
use crate::body::read::{Broken, Pull};
use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::Step;
use crate::transport::Transport;

/// The client's side of an upstream job.
pub(crate) trait Owner {
    /// The exchange proxied (taken out while core makes its response).
    fn ex_slot(&mut self) -> &mut Option<Box<Exchange>>;
    fn ex_ref(&self) -> Option<&Exchange>;
    fn info(&self) -> &ConnInfo;
    /// Logs `text doing` with nginx's context of the request.
    fn log(&self, cx: &Ctx, level: LogLevel, text: &str, doing: &str);
    /// The job's timer, armed for `d` (the connection's for HTTP/1, the
    /// stream job's own deadline for HTTP/2).
    fn arm_timer(&mut self, cx: &mut Ctx, d: Duration);
    fn disarm_timer(&mut self, cx: &mut Ctx);
    /// How the request body arrives: its kind (a `Content-Length`, or
    /// length unknown as `Chunked`, or none).
    fn body_kind(&self) -> BodyKind;
    /// A new job takes the owner (a first one, or an error page or
    /// `X-Accel-Redirect` that proxies again); `continue_100`: answer
    /// `Expect: 100-continue` first.
    fn begin_job(&mut self, t: &mut Transport, p: Box<Proxy>, continue_100: bool, cx: &mut Ctx);
    /// The job [`Owner::begin_job`] placed, while it is in flight.
    fn job_mut<'a>(&'a mut self, cx: &'a mut Ctx) -> Option<&'a mut Proxy>;
    /// The client went away while the upstream works (499).
    fn client_gone(&mut self, t: &mut Transport) -> bool;
    /// Decodes the client's body into `sink` as it arrives.
    fn pull_body(
        &mut self,
        dec: &mut BodyDecoder,
        t: &mut Transport,
        cx: &mut Ctx,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), u16>,
    ) -> (Pull, Option<Broken>);
    /// How the answer's body is framed for this client.
    fn framing(&self, up: Framing, p: &Proxy) -> ClientFraming;
    /// Sends the client's head of `resp` (HTTP/1: serialized into
    /// `p.cout`; HTTP/2: a HEADERS frame) and keeps `resp` in `ex`.
    fn queue_head(
        &mut self,
        ex: &mut Exchange,
        resp: peregrine_core::Response,
        p: &mut Proxy,
        cx: &mut Ctx,
    );
    /// Writes answer bytes to the client; `WouldBlock` when it cannot
    /// take more now.
    fn client_write(&mut self, t: &mut Transport, buf: &[u8]) -> io::Result<usize>;
    /// Core's own response for the request (an error page, a redirect's
    /// answer) goes out instead of an upstream's.
    fn respond_core(
        &mut self,
        p: &mut Proxy,
        ex: Box<Exchange>,
        resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step;
    /// The upstream's answer went whole to the client: the exchange ends.
    fn complete_job(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step;
    /// `101 Switching Protocols`: a byte tunnel. Only a client's own
    /// HTTP/1 connection can become one; every other owner (an HTTP/2
    /// stream, RFC 9113 §8.6; a subrequest; a cache refresh) keeps this
    /// default, `None`, and the 101 answers as any other status.
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
    /// A turn of the tunnel [`Owner::start_tunnel`] started (never runs
    /// for an owner without one).
    fn tunnel_step(
        &mut self,
        _p: &mut Proxy,
        _t: &mut Transport,
        _k: usize,
        _cx: &mut Ctx,
    ) -> Step {
        Step::Close(crate::http1::Close::Normal)
    }
    fn end_tunnel(&mut self, _p: &mut Proxy, _t: &mut Transport, _k: usize, _cx: &mut Ctx) -> Step {
        Step::Close(crate::http1::Close::Normal)
    }
}
