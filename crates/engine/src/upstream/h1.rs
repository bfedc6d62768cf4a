//! The HTTP/1 exchange as an upstream job's [`Owner`]: the job keyed by
//! the connection (its socket's token and its timer are the
//! connection's), the body from the connection's read buffer, the answer
//! as bytes on the socket (re-chunked when its length is unknown),
//! `101 Switching Protocols` as a byte tunnel.

use std::io::{self, Write};
use std::time::Duration;

use peregrine_codec::upstream::{self as uc, Framing};
use peregrine_codec::{BodyDecoder, BodyKind};
use peregrine_conf::model::LogLevel;
use peregrine_core::ConnInfo;
use peregrine_core::proxy::ProxyJob;
use peregrine_core::proxy::answer::{ClientFraming, client_framing};

use super::owner::Owner;
use super::{Machine, Proxy, State, find, read_up};
use crate::body::read::{Broken, Pull};
use crate::ctx::Ctx;
use crate::exchange::{Exchange, Plan};
use crate::http1::{Close, Http1, Phase, Step};
use crate::transport::{Sink, TlsSink, Transport};
use crate::write::{ConnHeader, serialize_head};

impl Http1 {
    /// Core's answer was a proxied request: start it (out of the static
    /// path's line).
    #[inline(never)]
    pub(crate) fn start_proxy(
        &mut self,
        t: &mut Transport,
        ex: Box<Exchange>,
        job: Box<ProxyJob>,
        cx: &mut Ctx,
    ) -> Step {
        self.start_proxy_with(t, ex, job, cx, true)
    }
    /// One turn of the proxied request.
    #[inline(never)]
    pub(crate) fn step_proxy(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        let Some(mut p) = cx.upstreams.take(key) else {
            return Step::Close(Close::Normal);
        };
        let step = if self.in_background() {
            super::background::BgOwner(self).proxy_turn(&mut p, t, key, cx)
        } else if self.in_subrequest() {
            super::subrequest::SubOwner(self).proxy_turn(&mut p, t, key, cx)
        } else {
            self.proxy_turn(&mut p, t, key, cx)
        };
        if self.phase == Phase::Proxy && !cx.upstreams.active(key) {
            cx.upstreams.set(key, p);
        } else {
            self.end_upstream(&mut p, cx, false);
        }
        step
    }
    /// The client connection closes with the request still upstream.
    pub(crate) fn abort_proxy(&mut self, cx: &mut Ctx) {
        if let Some(mut p) = cx.upstreams.take(self.key as usize) {
            self.free_peer(&mut p, cx, false);
        }
        cx.resolvers.forget(self.key as usize);
    }
}

impl Owner for Http1 {
    fn ex_slot(&mut self) -> &mut Option<Box<Exchange>> {
        &mut self.ex
    }

    fn ex_ref(&self) -> Option<&Exchange> {
        self.ex.as_deref()
    }

    fn info(&self) -> &ConnInfo {
        &self.info
    }

    fn log(&self, cx: &Ctx, level: LogLevel, text: &str, doing: &str) {
        Http1::log(self, cx, level, text, doing);
    }

    fn arm_timer(&mut self, cx: &mut Ctx, d: Duration) {
        cx.timers.arm(self.key as usize, cx.now, d);
    }

    fn disarm_timer(&mut self, cx: &mut Ctx) {
        cx.timers.disarm(self.key as usize);
    }

    fn body_kind(&self) -> BodyKind {
        self.ex
            .as_ref()
            .and_then(|e| e.req())
            .map_or(BodyKind::None, |r| r.body_kind())
    }

    fn begin_job(&mut self, t: &mut Transport, p: Box<Proxy>, continue_100: bool, cx: &mut Ctx) {
        if continue_100 {
            let _ = write_client(t, b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        cx.upstreams.set(self.key as usize, p);
        self.phase = Phase::Proxy;
    }

    fn job_mut<'a>(&'a mut self, cx: &'a mut Ctx) -> Option<&'a mut Proxy> {
        cx.upstreams.get_mut(self.key as usize)
    }

    fn client_gone(&mut self, t: &mut Transport) -> bool {
        t.readable && t.peer_closed()
    }

    fn pull_body(
        &mut self,
        dec: &mut BodyDecoder,
        t: &mut Transport,
        cx: &mut Ctx,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), u16>,
    ) -> (Pull, Option<Broken>) {
        Http1::pull_body(self, dec, t, cx, sink)
    }

    fn framing(&self, up: Framing, p: &Proxy) -> ClientFraming {
        let client11 = self
            .ex
            .as_ref()
            .and_then(|e| e.req())
            .is_some_and(|r| matches!(r.version(), peregrine_codec::Version::Http11));
        let chunked_on = p.job.conf.conn.chunked_transfer_encoding;
        client_framing(up, client11, chunked_on)
    }

    /// Serializes the client's head into `p.cout` and sets how the
    /// exchange ends.
    fn queue_head(
        &mut self,
        ex: &mut Exchange,
        mut resp: peregrine_core::Response,
        p: &mut Proxy,
        cx: &mut Ctx,
    ) {
        let keep = self.keep(cx);
        let (req, slot) = ex.split();
        let mut plan = Plan::of(req, &mut resp, cx.wall, keep);
        // What an unbuffered body left unread is discarded before the
        // next request (nginx's `ngx_http_discard_request_body`).
        plan.body = p.body_dec.take();
        if let Some(c) = plan.comp.take() {
            // The compression filter took the answer: chunked for HTTP/1.1,
            // else until the close (its head says so already).
            p.framing = if c.chunked {
                ClientFraming::Chunked
            } else {
                ClientFraming::Close
            };
            p.comp = Some(c);
        }
        resp.status = peregrine_codec::response::wire_status(resp.status);
        let ch = ConnHeader {
            keepalive: plan.keepalive,
            keepalive_header: resp.conf.as_deref().and_then(|c| c.keepalive_header),
        };
        p.cout.clear();
        p.cpos = 0;
        serialize_head(&mut p.cout, &resp, &cx.head_start, &ch, false);
        if resp.header_only {
            p.framing = ClientFraming::None;
        }
        *slot = Some(resp);
        ex.out.head_bytes = p.cout.len() as u64;
        ex.keepalive = plan.keepalive;
        ex.linger = plan.linger;
    }

    fn client_write(&mut self, t: &mut Transport, buf: &[u8]) -> io::Result<usize> {
        let r = write_client(t, buf);
        if r.as_ref()
            .is_err_and(|e| e.kind() == io::ErrorKind::WouldBlock)
        {
            t.writable = false;
        }
        r
    }

    fn respond_core(
        &mut self,
        p: &mut Proxy,
        mut ex: Box<Exchange>,
        resp: peregrine_core::Response,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Step {
        ex.resp = Some(resp);
        let keep = self.keep(cx);
        let (req, slot) = ex.split();
        let Some(resp) = slot.as_mut() else {
            return Step::Close(Close::Normal);
        };
        let mut plan = Plan::of(req, resp, cx.wall, keep);
        // What an unbuffered body left unread is discarded before the
        // next request (nginx's `ngx_http_discard_request_body`).
        plan.body = p.body_dec.take();
        self.phase = Phase::Send;
        self.queue(t, ex, plan, cx)
    }

    fn complete_job(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        self.phase = Phase::Send;
        self.complete(t, key, cx)
    }

    /// `101 Switching Protocols` to an `Upgrade` request
    /// (`ngx_http_upstream_upgrade`): the head with `Connection: upgrade`
    /// and the upstream's `Upgrade`, then a byte tunnel.
    fn start_tunnel(
        &mut self,
        p: &mut Proxy,
        h: &uc::UpstreamHead,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Option<Step> {
        p.framing = ClientFraming::None;
        p.reusable = false;
        let rest = p.inb.split_off(h.len);
        let Some(mut ex) = self.ex.take() else {
            return Some(Step::Close(Close::Normal));
        };
        let mut resp = {
            let Some(req) = ex.req() else {
                return Some(Step::Close(Close::Normal));
            };
            cx.core.proxied(
                &p.job,
                &self.info,
                req,
                cx.wall,
                &p.vars,
                h,
                &p.inb,
                ClientFraming::None,
            )
        };
        if let Some(up) = p.vars.header("upgrade")
            && !resp.head.has("Upgrade")
        {
            resp.head.to_mut().push("Upgrade", up.to_string());
        }
        resp.keepalive = false;
        p.inb = rest;
        Owner::queue_head(self, &mut ex, resp, p, cx);
        let close: &[u8] = b"\r\nConnection: close\r\n";
        if let Some(i) = find(&p.cout, close) {
            p.cout.splice(
                i..i + close.len(),
                b"\r\nConnection: upgrade\r\n".iter().copied(),
            );
        }
        ex.out.head_bytes = p.cout.len() as u64;
        ex.keepalive = false;
        self.ex = Some(ex);
        // The head's bytes are `$bytes_sent`'s, not `$body_bytes_sent`'s.
        p.tunnel_head = p.cout.len();
        // What the upstream sent after its head goes first.
        let early = std::mem::take(&mut p.inb);
        p.cout.extend_from_slice(&early);
        p.out.clear();
        p.sent = 0;
        p.state = State::Tunnel;
        Some(self.tunnel_step(p, t, key, cx))
    }
    /// Relays both ways until either side closes.
    fn tunnel_step(&mut self, p: &mut Proxy, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        loop {
            let mut moved = false;
            // Upstream to client.
            if p.cpos < p.cout.len() {
                match write_client(t, &p.cout[p.cpos..]) {
                    Ok(n) if n > 0 => {
                        p.cpos += n;
                        let head = n.min(p.tunnel_head);
                        p.tunnel_head -= head;
                        if let Some(ex) = self.ex.as_mut() {
                            ex.out.body_bytes += (n - head) as u64;
                        }
                        moved = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => t.writable = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => moved = true,
                    _ => return self.end_tunnel(p, t, key, cx),
                }
            } else {
                p.cout.clear();
                p.cpos = 0;
                match read_up(p) {
                    Ok(0) => return self.end_tunnel(p, t, key, cx),
                    Ok(_) => {
                        p.cout = std::mem::take(&mut p.inb);
                        moved = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => moved = true,
                    Err(_) => return self.end_tunnel(p, t, key, cx),
                }
            }
            // Client to upstream.
            if p.sent < p.out.len() {
                let Some(s) = p.sock.as_mut() else {
                    return self.end_tunnel(p, t, key, cx);
                };
                match s.write(&p.out[p.sent..]) {
                    Ok(n) if n > 0 => {
                        p.sent += n;
                        moved = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => moved = true,
                    _ => return self.end_tunnel(p, t, key, cx),
                }
            } else {
                p.out.clear();
                p.sent = 0;
                if let Some(b) = self.rbuf.as_mut()
                    && b.start < b.end
                {
                    p.out.extend_from_slice(b.pending());
                    b.start = b.end;
                    moved = true;
                } else if t.readable {
                    match self.fill(t, cx, crate::pool::READ_BUF_SIZE) {
                        Ok(0) => return self.end_tunnel(p, t, key, cx),
                        Ok(_) => moved = true,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => t.readable = false,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => moved = true,
                        Err(_) => return self.end_tunnel(p, t, key, cx),
                    }
                }
            }
            if !moved {
                cx.timers.arm(key, cx.now, p.job.up().read_timeout);
                return Step::Wait;
            }
        }
    }
    /// One side of the tunnel closed: so does the other.
    fn end_tunnel(&mut self, p: &mut Proxy, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        if let Some(tr) = p.vars.tries.last_mut() {
            tr.response = Some(cx.now - p.started);
        }
        self.end_upstream(p, cx, false);
        self.phase = Phase::Send;
        cx.timers.disarm(key);
        if let Some(ex) = self.ex.as_mut() {
            ex.keepalive = false;
            // The 101 head's bytes were counted as the head's when the
            // tunnel wrote them (`Proxy::tunnel_head`).
            ex.upstream = Some(Box::new(std::mem::take(&mut p.vars)));
        }
        self.complete(t, key, cx)
    }
}

fn write_client(t: &mut Transport, buf: &[u8]) -> io::Result<usize> {
    match t.tls.as_deref_mut() {
        None => Sink::send(&mut t.sock, buf, false),
        Some(tls) => {
            let mut sink = TlsSink { sock: &t.sock, tls };
            let n = sink.send(buf, false)?;
            if !sink.flush()? {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        }
    }
}
