//! The transport under a connection's protocol session: the bytes a
//! session reads and writes go through it, plain TCP or TLS, and the
//! session (HTTP/1 now, HTTP/2 later) does not know which.
//!
//! Readiness is edge-triggered (`mio`), so the transport remembers whether
//! the socket may still have bytes (`readable`) or room (`writable`); a
//! read shorter than the room offered means the socket is drained (see
//! [`Transport::recv`]), which every transport keeps true.
//!
//! Writing goes through [`Sink`], the three calls a response's output
//! makes; the output is generic over it, so the plain path compiles to the
//! system calls it always made.

use std::io::{self, IoSlice};
use std::net::Shutdown;

use mio::net::TcpStream;

mod tls;

pub use tls::{TlsSink, TlsStream, tls_failure};

/// What a handshake needs to evaluate certificates named by variables:
/// the worker's core (the variables) and the wall clock.
pub struct HandshakeVars<'a> {
    pub core: &'a peregrine_core::HttpCore,
    pub now: std::time::SystemTime,
}

/// What a response's output writes to: a plain socket (the system calls
/// themselves) or a TLS session (records).
pub trait Sink {
    /// `send(2)`; `more` is `MSG_MORE` (more bytes follow at once).
    fn send(&mut self, buf: &[u8], more: bool) -> io::Result<usize>;
    /// `sendmsg(2)` of `iov`.
    fn send_vectored(&mut self, iov: &[IoSlice<'_>], more: bool) -> io::Result<usize>;
    /// `sendfile(2)` of `count` bytes at `*offset` (advanced).
    fn sendfile(
        &mut self,
        file: &std::fs::File,
        offset: &mut u64,
        count: usize,
    ) -> io::Result<usize>;
}

impl Sink for TcpStream {
    #[inline(always)]
    fn send(&mut self, buf: &[u8], more: bool) -> io::Result<usize> {
        peregrine_sys::send(&*self, buf, more)
    }
    #[inline(always)]
    fn send_vectored(&mut self, iov: &[IoSlice<'_>], more: bool) -> io::Result<usize> {
        peregrine_sys::send_vectored(&*self, iov, more)
    }
    #[inline(always)]
    fn sendfile(
        &mut self,
        file: &std::fs::File,
        offset: &mut u64,
        count: usize,
    ) -> io::Result<usize> {
        peregrine_sys::sendfile(&*self, file, offset, count)
    }
}

/// A connection's transport: its socket, what is known of it, and the
/// TLS session over it, if any.
pub struct Transport {
    pub sock: TcpStream,
    /// The socket may have bytes to read.
    pub readable: bool,
    /// The socket may have room to write.
    pub writable: bool,
    /// Registered for writability too. A connection starts registered for
    /// reading only: with edge-triggered epoll a write interest makes every
    /// ACK that frees send-buffer space queue an event (and a loop turn),
    /// while a response that fits the socket buffer — nearly all of them —
    /// never needs one. The interest is added the first time a write
    /// blocks (see [`Transport::needs_write_interest`]) and then kept.
    pub write_interest: bool,
    /// `TCP_NODELAY` is set.
    pub nodelay: bool,
    /// TLS over the socket (boxed apart from it: a plain connection's slot
    /// stays small, see `conn`'s test).
    pub tls: Option<Box<TlsStream>>,
}

impl Transport {
    pub fn plain(sock: TcpStream) -> Transport {
        Transport {
            sock,
            readable: false,
            writable: true,
            write_interest: false,
            nodelay: false,
            tls: None,
        }
    }

    /// A connection to a TLS address (see [`TlsStream`]).
    #[inline(never)]
    pub fn tls(
        sock: TcpStream,
        table: std::sync::Arc<crate::tls::TlsTable>,
        local: std::net::SocketAddr,
        peer: std::net::SocketAddr,
    ) -> Transport {
        Transport {
            tls: Some(Box::new(TlsStream::new(table, local, peer))),
            ..Transport::plain(sock)
        }
    }

    /// A connection to a TLS address whose client spoke plain HTTP (nginx
    /// answers its request with 497, sent as 400).
    #[inline(always)]
    pub fn plain_on_tls(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.is_plain())
    }

    /// Whether a file body may go out with `sendfile(2)` (plain TCP only:
    /// under TLS a file is read and encrypted, as nginx does without kTLS).
    #[inline(always)]
    pub fn can_sendfile(&self) -> bool {
        self.tls.is_none()
    }

    /// A write blocked and epoll does not yet report writability for this
    /// connection: the worker must add the interest before waiting.
    pub fn needs_write_interest(&self) -> bool {
        !self.writable && !self.write_interest
    }

    /// Reads into `buf`. A short read drained the socket; with
    /// edge-triggered epoll any later arrival raises a new event (nginx
    /// clears `rev->ready` the same way), so `readable` is cleared then
    /// with no extra read just to see `EAGAIN`.
    #[inline(always)]
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.tls.is_some() {
            return self.recv_tls(buf, None);
        }
        let room = buf.len();
        let n = peregrine_sys::recv(&self.sock, buf)?;
        if n < room {
            self.readable = false;
        }
        Ok(n)
    }

    /// [`Transport::recv`] where a handshake may still run: `vars`
    /// evaluates certificates named by variables.
    #[inline(always)]
    pub fn recv_handshaking(
        &mut self,
        buf: &mut [u8],
        vars: &HandshakeVars<'_>,
    ) -> io::Result<usize> {
        if self.tls.is_some() {
            return self.recv_tls(buf, Some(vars));
        }
        self.recv(buf)
    }

    /// [`Transport::recv`] under TLS (a short read of plaintext says
    /// nothing of the socket there: the session clears `readable`).
    #[cold]
    #[inline(never)]
    fn recv_tls(&mut self, buf: &mut [u8], vars: Option<&HandshakeVars<'_>>) -> io::Result<usize> {
        let Some(t) = self.tls.as_deref_mut() else {
            return Ok(0);
        };
        match t.recv(&self.sock, buf, &mut self.readable, vars)? {
            tls::Recv::Data(n) | tls::Recv::Plain(n) => Ok(n),
        }
    }

    /// nginx's `ngx_http_test_reading`: while a response is held back
    /// (paused by `limit_rate`, or blocked on a full send buffer), a
    /// readable event may be the client's close. A one-byte `MSG_PEEK`
    /// tells, and leaves any pipelined byte (or TLS record) where it is.
    #[inline(never)]
    pub fn peer_closed(&mut self) -> bool {
        match peregrine_sys::peek(&self.sock) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.readable = false;
                false
            }
            Err(e) => e.kind() != io::ErrorKind::Interrupted,
        }
    }

    /// Ends the write side (FIN).
    pub fn shutdown_write(&mut self) {
        if let Some(t) = self.tls.as_deref_mut() {
            t.close_notify(&self.sock);
        }
        let _ = self.sock.shutdown(Shutdown::Write);
    }

    pub fn set_nodelay(&mut self) {
        self.nodelay = peregrine_sys::set_tcp_nodelay(&self.sock, true).is_ok();
    }

    /// `SO_LINGER 0`: the close sends RST (`reset_timedout_connection`).
    pub fn set_linger_zero(&mut self) {
        let _ = peregrine_sys::set_linger_zero(&self.sock);
    }
}
