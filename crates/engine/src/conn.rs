//! One client connection: a transport (plain TCP or TLS) under a protocol
//! session (HTTP/1, or HTTP/2 once the preface came) with its exchanges.
//! The worker knows connections only through this type: it feeds
//! readiness in and closes what the session says to close.

use std::time::SystemTime;

use peregrine_core::ConnInfo;

use crate::ctx::Ctx;
use crate::h2::H2Session;
use crate::http1::{Close, Http1, Phase};
use crate::stats::Gauge;
use crate::transport::Transport;

/// The protocol spoken on a connection. HTTP/2 is boxed: an HTTP/1
/// connection's slot stays small (see the test below), which is why the
/// variants differ in size: the HTTP/1 one is the hot path, inline.
#[allow(clippy::large_enum_variant)]
pub enum Session {
    Http1(Http1),
    Http2(Box<H2Session>),
}

pub struct Conn {
    pub transport: Transport,
    pub session: Session,
}

impl Conn {
    pub fn new(
        transport: Transport,
        key: usize,
        info: ConnInfo,
        lst: usize,
        clocks: (SystemTime, u64),
    ) -> Conn {
        Conn {
            transport,
            session: Session::Http1(Http1::new(key, info, lst, clocks)),
        }
    }

    /// Runs the session until it must wait for the socket or close.
    #[inline]
    pub fn drive(&mut self, key: usize, cx: &mut Ctx) -> Option<Close> {
        // A `listen ... proxy_protocol` connection whose header is still
        // to be read (the header, once read, is in the connection's info).
        if let Session::Http1(s) = &mut self.session
            && s.info.proxy.is_none()
            && cx.lctx(s.lst).proxy_protocol
        {
            match crate::proxy_protocol::read(&mut self.transport, s, cx) {
                crate::proxy_protocol::Read::Done => {}
                crate::proxy_protocol::Read::Wait => return None,
                crate::proxy_protocol::Read::Close(how) => return Some(how),
            }
        }
        match &mut self.session {
            Session::Http1(s) => match s.drive(&mut self.transport, key, cx) {
                Some(Close::ToHttp2) => self.upgrade_to_http2(key, cx),
                other => other,
            },
            Session::Http2(s) => s.drive(&mut self.transport, key, cx),
        }
    }

    /// The HTTP/1 session met the HTTP/2 preface: the HTTP/2 session takes
    /// the connection, with the bytes read so far.
    #[cold]
    #[inline(never)]
    fn upgrade_to_http2(&mut self, key: usize, cx: &mut Ctx) -> Option<Close> {
        let Session::Http1(h1) = &mut self.session else {
            return Some(Close::Normal);
        };
        let mut info = h1.info.clone();
        // The HTTP/2 session counts its streams as the requests.
        info.requests = 0;
        info.http2 = true;
        let pending = h1.rbuf.as_ref().map_or(&[][..], |b| b.pending());
        let mut h2 = H2Session::new(info, h1.lst, pending, cx);
        h1.set_gauge(Gauge::None, cx);
        if let Some(b) = h1.rbuf.take() {
            cx.pool.put_read_buf(b.data);
        }
        h2.set_gauge(Gauge::Writing, cx);
        self.session = Session::Http2(Box::new(h2));
        self.drive(key, cx)
    }

    /// A timer of this connection fired.
    pub fn on_timeout(&mut self, cx: &mut Ctx) -> Close {
        match &mut self.session {
            Session::Http1(s) => s.on_timeout(cx),
            Session::Http2(s) => s.on_timeout(&mut self.transport, cx),
        }
    }

    /// The timer armed is `limit_rate`'s pause, not a timeout (taken).
    pub fn take_delayed(&mut self) -> bool {
        match &mut self.session {
            Session::Http1(s) => std::mem::take(&mut s.delayed),
            Session::Http2(_) => false,
        }
    }

    /// The timer fired for HTTP/2 streams' upstream jobs (marked timed
    /// out, to be driven), not for the connection.
    pub fn take_job_timeouts(&mut self, now: std::time::Instant) -> bool {
        match &mut self.session {
            Session::Http1(_) => false,
            Session::Http2(s) => s.job_timeouts(now),
        }
    }

    /// Where the connection is, for the worker's draining and reuse: an
    /// HTTP/2 connection without streams is idle and kept alive.
    pub fn phase(&self) -> Phase {
        match &self.session {
            Session::Http1(s) => s.phase,
            Session::Http2(s) if s.is_idle() => Phase::Idle { keepalive: true },
            Session::Http2(_) => Phase::Send,
        }
    }

    /// The worker starts draining: an HTTP/2 connection gets its graceful
    /// GOAWAY (nginx's ngx_http_v2_finalize_connection on shutdown)
    /// rather than a silent close.
    pub fn drain(&mut self, key: usize, cx: &mut Ctx) -> Option<Close> {
        match &mut self.session {
            Session::Http1(_) => Some(Close::Normal),
            Session::Http2(s) => s.drain(&mut self.transport, key, cx),
        }
    }

    pub fn is_http2(&self) -> bool {
        matches!(self.session, Session::Http2(_))
    }

    pub fn set_gauge(&mut self, g: Gauge, cx: &Ctx) {
        match &mut self.session {
            Session::Http1(s) => s.set_gauge(g, cx),
            Session::Http2(s) => s.set_gauge(g, cx),
        }
    }

    /// The connection closes: what its session still owes (the access log
    /// of an unfinished exchange) and its buffer back to the pool.
    /// Inlined into the worker's close (its one caller): out of line it
    /// cost each `Connection: close` exchange some 30 instructions.
    #[inline]
    pub fn closing(&mut self, how: Close, cx: &mut Ctx) {
        let session = match &mut self.session {
            Session::Http1(s) => s,
            Session::Http2(s) => {
                s.closing(cx);
                return;
            }
        };
        if cx.upstreams.active(session.key as usize) {
            session.abort_proxy(cx);
        }
        if session.ex.is_some() {
            session.log_unfinished(cx);
        }
        if how == Close::Reset {
            self.transport.set_linger_zero();
        }
        session.set_gauge(Gauge::None, cx);
        if let Some(b) = session.rbuf.take() {
            cx.pool.put_read_buf(b.data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::net::TcpStream;

    /// An idle keep-alive connection is its slot in the worker's table and
    /// nothing else (no buffer, no exchange): keep that slot small.
    #[test]
    fn idle_connection_footprint() {
        // mio's socket carries a selector id in debug builds only: the
        // release binary's slot is this much smaller.
        let debug_only =
            std::mem::size_of::<TcpStream>() - std::mem::size_of::<std::net::TcpStream>();
        let size = std::mem::size_of::<Option<Conn>>() - debug_only;
        // 256 until the PROXY protocol header's pointer in `ConnInfo`
        // (`proxy`: 8 bytes, null on connections without one) and its
        // HTTP/2 flag (with its alignment); a field more should find
        // room in the existing padding first.
        assert!(size <= 268, "Conn slot is {size} bytes");
    }
}
