//! One client connection: a transport (plain TCP; TLS next) under a
//! protocol session (HTTP/1; HTTP/2 later) with its exchanges. The worker
//! knows connections only through this type: it feeds readiness in and
//! closes what the session says to close.

use std::time::SystemTime;

use peregrine_core::ConnInfo;

use crate::ctx::Ctx;
use crate::http1::{Close, Http1, Phase};
use crate::stats::Gauge;
use crate::transport::Transport;

pub struct Conn {
    pub transport: Transport,
    pub session: Http1,
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
            session: Http1::new(key, info, lst, clocks),
        }
    }

    /// Runs the session until it must wait for the socket or close.
    #[inline]
    pub fn drive(&mut self, key: usize, cx: &mut Ctx) -> Option<Close> {
        // A `listen ... proxy_protocol` connection whose header is still
        // to be read (the header, once read, is in the connection's info).
        if self.session.info.proxy.is_none() && cx.lctx(self.session.lst).proxy_protocol {
            match crate::proxy_protocol::read(&mut self.transport, &mut self.session, cx) {
                crate::proxy_protocol::Read::Done => {}
                crate::proxy_protocol::Read::Wait => return None,
                crate::proxy_protocol::Read::Close(how) => return Some(how),
            }
        }
        self.session.drive(&mut self.transport, key, cx)
    }

    /// A timer of this connection fired.
    pub fn on_timeout(&mut self, cx: &mut Ctx) -> Close {
        self.session.on_timeout(cx)
    }

    pub fn phase(&self) -> Phase {
        self.session.phase
    }

    pub fn set_gauge(&mut self, g: Gauge, cx: &Ctx) {
        self.session.set_gauge(g, cx);
    }

    /// The connection closes: what its session still owes (the access log
    /// of an unfinished exchange) and its buffer back to the pool.
    /// Inlined into the worker's close (its one caller): out of line it
    /// cost each `Connection: close` exchange some 30 instructions.
    #[inline]
    pub fn closing(&mut self, how: Close, cx: &mut Ctx) {
        if cx.upstreams.active(self.session.key as usize) {
            self.session.abort_proxy(cx);
        }
        if self.session.ex.is_some() {
            self.session.log_unfinished(cx);
        }
        if how == Close::Reset {
            self.transport.set_linger_zero();
        }
        self.set_gauge(Gauge::None, cx);
        if let Some(b) = self.session.rbuf.take() {
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
        // (`proxy`: 8 bytes, null on connections without one).
        assert!(size <= 264, "Conn slot is {size} bytes");
    }
}
