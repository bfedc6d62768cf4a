//! The TLS transport: a rustls `ServerConnection` (buffered: records are
//! read into and written from rustls's own buffers) over the socket.
//!
//! A connection to a TLS address starts by reading: the first bytes tell a
//! TLS ClientHello (record type 22, or an SSLv2-style hello with the high
//! bit set, as nginx's `ngx_http_ssl_handshake` tells them) from plain
//! HTTP, which is then served as plain HTTP marked
//! [`super::Transport::plain_on_tls`] (nginx's 497). A hello goes to a
//! rustls `Acceptor` until it is whole; its SNI then chooses the server
//! block's configuration ([`crate::tls::TlsTable::config_for`]) before the
//! handshake goes on.

use std::io::{self, IoSlice, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::ServerConnection;
use rustls::server::Acceptor;

use super::Sink;
use crate::tls::TlsTable;

/// TLS record content type `handshake` (RFC 8446, 5.1).
const RECORD_HANDSHAKE: u8 = 0x16;

enum State {
    /// Nothing read yet: TLS or plain HTTP?
    Detect,
    Accepting(Box<Acceptor>),
    Open(Box<ServerConnection>),
    /// The client spoke plain HTTP: bytes go as they are.
    Plain,
}

/// One TLS connection's session (the socket stays the transport's).
pub struct TlsStream {
    state: State,
    table: Arc<TlsTable>,
    local: SocketAddr,
}

/// What [`TlsStream::recv`] found.
pub(super) enum Recv {
    /// Plaintext bytes (0: the peer closed).
    Data(usize),
    /// The first bytes were plain HTTP: they are in the buffer, `n` of them.
    Plain(usize),
}

/// Reads from the socket for rustls, which reads what one call gives.
struct SockIo<'a>(&'a TcpStream);

impl Read for SockIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        peregrine_sys::recv(self.0, buf)
    }
}

impl Write for SockIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        peregrine_sys::send(self.0, buf, false)
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        peregrine_sys::send_vectored(self.0, bufs, false)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl TlsStream {
    #[cold]
    pub fn new(table: Arc<TlsTable>, local: SocketAddr) -> TlsStream {
        TlsStream {
            state: State::Detect,
            table,
            local,
        }
    }

    /// Reads plaintext into `buf`, running the handshake on the way.
    /// `readable` is cleared only when the socket itself is drained (a
    /// short read of plaintext says nothing of the socket here).
    pub(super) fn recv(
        &mut self,
        sock: &TcpStream,
        buf: &mut [u8],
        readable: &mut bool,
    ) -> io::Result<Recv> {
        loop {
            match &mut self.state {
                State::Detect => {
                    let n = peregrine_sys::recv(sock, buf)?;
                    if n == 0 {
                        return Ok(Recv::Data(0));
                    }
                    if buf[0] != RECORD_HANDSHAKE && buf[0] & 0x80 == 0 {
                        if n < buf.len() {
                            *readable = false;
                        }
                        self.state = State::Plain;
                        return Ok(Recv::Plain(n));
                    }
                    let mut a = Box::new(Acceptor::default());
                    a.read_tls(&mut &buf[..n])?;
                    self.state = State::Accepting(a);
                }
                State::Accepting(a) => match a.accept() {
                    Ok(Some(accepted)) => {
                        let hello = accepted.client_hello();
                        let config = self.table.config_for(self.local, hello.server_name());
                        let Some(config) = config else {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                "no certificate for the server",
                            ));
                        };
                        match accepted.into_connection(config) {
                            Ok(c) => self.state = State::Open(Box::new(c)),
                            Err((e, mut alert)) => {
                                let _ = alert.write_all(&mut SockIo(sock));
                                return Err(tls_error(e));
                            }
                        }
                        self.write_pending(sock)?;
                    }
                    Ok(None) => match a.read_tls(&mut SockIo(sock)) {
                        Ok(0) => return Ok(Recv::Data(0)),
                        Ok(_) => {}
                        Err(e) => {
                            if e.kind() == io::ErrorKind::WouldBlock {
                                *readable = false;
                            }
                            return Err(e);
                        }
                    },
                    Err((e, mut alert)) => {
                        let _ = alert.write_all(&mut SockIo(sock));
                        return Err(tls_error(e));
                    }
                },
                State::Plain => {
                    let n = peregrine_sys::recv(sock, buf)?;
                    if n < buf.len() {
                        *readable = false;
                    }
                    return Ok(Recv::Data(n));
                }
                State::Open(c) => {
                    match c.reader().read(buf) {
                        Ok(n) => return Ok(Recv::Data(n)),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        // The peer closed without close_notify.
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            return Ok(Recv::Data(0));
                        }
                        Err(e) => return Err(e),
                    }
                    match c.read_tls(&mut SockIo(sock)) {
                        Ok(0) => return Ok(Recv::Data(0)),
                        Ok(_) => {
                            let state = c.process_new_packets();
                            if let Err(e) = state {
                                let _ = c.write_tls(&mut SockIo(sock));
                                return Err(tls_error(e));
                            }
                            // Handshake messages (or a key update) to send.
                            self.write_pending(sock)?;
                        }
                        Err(e) => {
                            if e.kind() == io::ErrorKind::WouldBlock {
                                *readable = false;
                            }
                            return Err(e);
                        }
                    }
                }
            }
        }
    }

    /// Sends the records rustls holds; true when none is left. A full
    /// socket is not an error here (false).
    #[inline(never)]
    pub(super) fn write_pending(&mut self, sock: &TcpStream) -> io::Result<bool> {
        let State::Open(c) = &mut self.state else {
            return Ok(true);
        };
        while c.wants_write() {
            match c.write_tls(&mut SockIo(sock)) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// `close_notify`, sent as far as the socket takes it.
    #[inline(never)]
    pub(super) fn close_notify(&mut self, sock: &TcpStream) {
        if let State::Open(c) = &mut self.state {
            c.send_close_notify();
            let _ = self.write_pending(sock);
        }
    }

    /// The client spoke plain HTTP (see [`super::Transport::plain_on_tls`]).
    pub fn is_plain(&self) -> bool {
        matches!(self.state, State::Plain)
    }

    /// Hands plaintext to rustls after what it holds has gone out: its
    /// buffer stays bounded by what one write gives, and a full socket is
    /// `WouldBlock`, as for a plain socket.
    fn encrypt(
        &mut self,
        sock: &TcpStream,
        write: impl FnOnce(&mut ServerConnection) -> io::Result<usize>,
    ) -> io::Result<usize> {
        if !self.write_pending(sock)? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let State::Open(c) = &mut self.state else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let n = write(c)?;
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        // What the socket does not take now goes out with the next write
        // or the transport's flush.
        self.write_pending(sock)?;
        Ok(n)
    }
}

/// What a response's output writes to under TLS: the session and its
/// socket.
pub struct TlsSink<'a> {
    pub sock: &'a TcpStream,
    pub tls: &'a mut TlsStream,
}

impl TlsSink<'_> {
    /// Sends the records rustls holds; true when none is left.
    pub fn flush(&mut self) -> io::Result<bool> {
        self.tls.write_pending(self.sock)
    }
}

impl Sink for TlsSink<'_> {
    fn send(&mut self, buf: &[u8], more: bool) -> io::Result<usize> {
        if let State::Plain = self.tls.state {
            return peregrine_sys::send(self.sock, buf, more);
        }
        self.tls.encrypt(self.sock, |c| c.writer().write(buf))
    }
    fn send_vectored(&mut self, iov: &[IoSlice<'_>], more: bool) -> io::Result<usize> {
        if let State::Plain = self.tls.state {
            return peregrine_sys::send_vectored(self.sock, iov, more);
        }
        self.tls
            .encrypt(self.sock, |c| c.writer().write_vectored(iov))
    }
    fn sendfile(&mut self, _: &std::fs::File, _: &mut u64, _: usize) -> io::Result<usize> {
        // A file body under TLS is read and encrypted (see
        // `Transport::can_sendfile`): kTLS would send it as is.
        Err(io::ErrorKind::Unsupported.into())
    }
}
