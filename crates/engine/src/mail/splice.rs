//! The proxied session after the login: bytes both ways between the
//! client (plain or TLS) and the backend until either closes or neither
//! has moved for `proxy_timeout` (nginx's `ngx_mail_proxy_handler`).
//!
//! One `mio` poll of the session's own thread watches both sockets
//! (edge-triggered: each side is read and written until it would block);
//! a TLS client is driven through its rustls connection by hand, since the
//! poll needs the raw socket.

use std::io::{self, Read, Write};
use std::time::Duration;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use rustls::ServerConnection;

/// The client's end.
pub enum Side {
    Plain(TcpStream),
    Tls(Box<ServerConnection>, TcpStream),
}

impl Side {
    fn sock(&mut self) -> &mut TcpStream {
        match self {
            Side::Plain(s) | Side::Tls(_, s) => s,
        }
    }

    /// Plain bytes from the side (`Ok(0)` at its end).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Side::Tls(c, s) = self else {
            return self.sock().read(buf);
        };
        loop {
            match c.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                r => return r,
            }
            if c.read_tls(s)? == 0 {
                return Ok(0);
            }
            c.process_new_packets().map_err(io::Error::other)?;
            flush_tls(c, s)?;
        }
    }

    /// Writes some of `data`.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let Side::Tls(c, s) = self else {
            return self.sock().write(data);
        };
        flush_tls(c, s)?;
        if c.wants_write() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = c.writer().write(data)?;
        match flush_tls(c, s) {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(n),
        }
    }
}

/// Writes what rustls has sealed (`WouldBlock` when the socket is full).
fn flush_tls(c: &mut ServerConnection, s: &mut TcpStream) -> io::Result<()> {
    while c.wants_write() {
        c.write_tls(s)?;
    }
    Ok(())
}

/// One direction's bytes in flight.
struct Pipe {
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl Pipe {
    fn new(first: Vec<u8>) -> Pipe {
        Pipe {
            buf: first,
            pos: 0,
            eof: false,
        }
    }

    /// Moves bytes `from` → `to` until one would block; whether any moved.
    fn pump(&mut self, from: &mut Side, to: &mut Side, size: usize) -> io::Result<bool> {
        let mut moved = false;
        loop {
            if self.pos < self.buf.len() {
                match to.write(&self.buf[self.pos..]) {
                    Ok(n) => {
                        self.pos += n;
                        moved = true;
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(moved),
                    Err(e) => return Err(e),
                }
            }
            if self.eof {
                return Ok(moved);
            }
            self.buf.resize(size, 0);
            self.pos = 0;
            match from.read(&mut self.buf) {
                Ok(0) => {
                    self.buf.clear();
                    self.eof = true;
                    return Ok(true);
                }
                Ok(n) => {
                    self.buf.truncate(n);
                    moved = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.buf.clear();
                    return Ok(moved);
                }
                Err(e) => {
                    self.buf.clear();
                    return Err(e);
                }
            }
        }
    }

    fn drained(&self) -> bool {
        self.eof && self.pos >= self.buf.len()
    }
}

/// Why a splice ended.
#[derive(Debug)]
pub enum End {
    /// One side closed (its bytes delivered).
    Closed,
    /// Nothing moved for `proxy_timeout`.
    TimedOut,
    Error(io::Error),
}

/// Splices `client` and `backend` (already non-blocking), `up` and `down`
/// the bytes each direction starts with.
pub fn splice(
    mut client: Side,
    mut backend: Side,
    up: Vec<u8>,
    down: Vec<u8>,
    size: usize,
    timeout: Duration,
) -> End {
    let run = || -> io::Result<End> {
        let mut poll = Poll::new()?;
        let both = Interest::READABLE | Interest::WRITABLE;
        poll.registry().register(client.sock(), Token(0), both)?;
        poll.registry().register(backend.sock(), Token(1), both)?;
        let mut events = Events::with_capacity(4);
        let (mut upstream, mut downstream) = (Pipe::new(up), Pipe::new(down));
        loop {
            let a = upstream.pump(&mut client, &mut backend, size)?;
            let b = downstream.pump(&mut backend, &mut client, size)?;
            if upstream.drained() || downstream.drained() {
                return Ok(End::Closed);
            }
            if a || b {
                continue;
            }
            poll.poll(&mut events, Some(timeout))?;
            if events.is_empty() {
                return Ok(End::TimedOut);
            }
        }
    };
    run().unwrap_or_else(End::Error)
}
