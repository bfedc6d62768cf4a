//! One client connection slot: its socket, where it is in the
//! request/response cycle, and the instants ab's Connection Times need.

use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use mio::net::TcpStream;
use socket2::{Domain, Protocol, Socket, Type};

use crate::response::Parser;

/// Where a connection slot stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No request outstanding (the socket, if any, is kept alive).
    Idle,
    /// Non-blocking connect() in progress.
    Connecting,
    /// Request bytes partly written.
    Writing,
    /// Waiting for the responses of the batch.
    Reading,
}

/// A connection slot. It keeps its slot index (the mio token) across
/// reconnects.
#[derive(Debug)]
pub struct Conn {
    pub target: usize,
    pub stream: Option<TcpStream>,
    pub phase: Phase,
    pub parser: Parser,
    /// Requests of the current batch not yet answered.
    pub in_flight: u64,
    /// Requests in the current batch (1 unless pipelining).
    pub batch: u64,
    /// Bytes of the batch written so far.
    pub written: usize,
    /// When the request was meant to start (ab's `c->start`).
    pub start: Instant,
    /// When connect() completed (equals `start` on a kept-alive socket).
    pub connected: Instant,
    /// When the last request byte went out.
    pub write_done: Instant,
    /// When the current response's first byte arrived.
    pub first_byte: Option<Instant>,
    /// The socket already carried a complete response.
    pub reused: bool,
    /// A request was retried once on a fresh socket after the kept-alive
    /// one was closed under it; a second such close is a failure.
    pub retried: bool,
}

impl Conn {
    pub fn new(target: usize, now: Instant) -> Conn {
        Conn {
            target,
            stream: None,
            phase: Phase::Idle,
            parser: Parser::default(),
            in_flight: 0,
            batch: 0,
            written: 0,
            start: now,
            connected: now,
            write_done: now,
            first_byte: None,
            reused: false,
            retried: false,
        }
    }

    /// Drops the socket (the registration goes with the descriptor).
    pub fn close(&mut self) {
        self.stream = None;
        self.reused = false;
        self.parser.reset();
        self.first_byte = None;
    }
}

/// Socket options ab exposes: `-b` (buffer sizes) and `-B` (local address).
#[derive(Clone, Copy, Debug, Default)]
pub struct SocketOpts {
    pub windowsize: Option<usize>,
    pub bind: Option<SocketAddr>,
}

/// Starts a non-blocking connect to `addr`.
pub fn connect(addr: SocketAddr, opts: SocketOpts) -> io::Result<TcpStream> {
    let sock = Socket::new(
        Domain::for_address(addr),
        Type::STREAM.nonblocking(),
        Some(Protocol::TCP),
    )?;
    if let Some(w) = opts.windowsize {
        sock.set_send_buffer_size(w)?;
        sock.set_recv_buffer_size(w)?;
    }
    if let Some(b) = opts.bind {
        sock.bind(&b.into())?;
    }
    // Requests are written in one call; Nagle would only delay pipelined
    // batches that straddle a segment.
    sock.set_tcp_nodelay(true)?;
    match sock.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(sock.into()))
}
