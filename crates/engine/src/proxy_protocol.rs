//! Reading a connection's PROXY protocol header (`listen ...
//! proxy_protocol`) before anything else: before the TLS handshake and
//! before the first HTTP byte, as nginx's `ngx_http_wait_request_handler`
//! and `ngx_http_ssl_handshake` do. The parse is
//! `peregrine_codec::proxy_protocol`; what the header gives a request is
//! `peregrine_core`'s (`$proxy_protocol_*`, realip).
//!
//! The header is peeked (`MSG_PEEK`), then exactly its bytes are consumed,
//! so that what follows stays in the socket for the transport: the TLS
//! ClientHello or the request, read as on any connection. nginx peeks the
//! same way on TLS listeners only; on plain ones it reads the header into
//! the request buffer, which is the same bytes in the end.
//!
//! One difference: nginx takes the header from one read and calls a
//! header cut by it broken; here a header that has not all arrived is
//! waited for (under `client_header_timeout`, armed at accept, as nginx's
//! timer is). A load balancer sends the header in one segment, so both
//! agree on what balancers send.

use std::io::{self, Read as _};
use std::net::SocketAddr;

use peregrine_codec::proxy_protocol::{MAX_HEADER, Parsed, parse};
use peregrine_conf::model::{Config, LogLevel};

use crate::ctx::Ctx;
use crate::http1::{Close, Http1};
use crate::transport::Transport;

/// What reading the header came to.
pub enum Read {
    /// The header was read; the session starts on what follows it.
    Done,
    /// More bytes are needed (the socket is drained).
    Wait,
    Close(Close),
}

/// nginx's `c->log->action` while the header is read.
const DOING: &str = "while reading PROXY protocol";

/// Whether connections to `addr` start with a PROXY protocol header.
pub fn listens_on(conf: &Config, addr: SocketAddr) -> bool {
    conf.http.as_ref().is_some_and(|h| {
        h.servers
            .iter()
            .flat_map(|s| &s.listen)
            .any(|l| l.proxy_protocol && l.addr == addr)
    })
}

/// Peeks at the socket and, once a whole header is there, consumes it and
/// keeps it in the session's connection info.
#[inline(never)]
pub fn read(t: &mut Transport, s: &mut Http1, cx: &mut Ctx) -> Read {
    if !t.readable {
        return Read::Wait;
    }
    // Plain HTTP reads the header into `client_header_buffer_size`, TLS
    // into nginx's `NGX_PROXY_PROTOCOL_MAX_HEADER`: the largest header each
    // takes.
    let limit = if t.tls.is_some() {
        MAX_HEADER
    } else {
        cx.lctx(s.lst).limits.header_buffer_size.min(MAX_HEADER)
    };
    let mut buf = [0u8; MAX_HEADER];
    let n = match t.sock.peek(&mut buf[..limit]) {
        Ok(0) => return Read::Close(Close::Normal),
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            t.readable = false;
            return Read::Wait;
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return Read::Wait,
        Err(e) => {
            let text = crate::errlog::with_os_error("recv() failed", &e);
            s.log(cx, LogLevel::Info, &text, DOING);
            return Read::Close(Close::Normal);
        }
    };
    match parse(&buf[..n], limit) {
        Ok(Parsed::Partial) => {
            // Everything there was peeked: epoll's next edge is new bytes.
            t.readable = false;
            Read::Wait
        }
        Ok(Parsed::Header(h)) => {
            if consume(t, &mut buf[..h.len]).is_err() {
                return Read::Close(Close::Normal);
            }
            s.info.proxy = Some(std::sync::Arc::new(h));
            Read::Done
        }
        Err(e) => {
            if e.is_logged() {
                s.log(cx, LogLevel::Error, &e.to_string(), DOING);
            }
            Read::Close(Close::Normal)
        }
    }
}

/// Reads exactly the header's bytes, which the peek found in the socket.
fn consume(t: &mut Transport, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match (&t.sock).read(&mut buf[got..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
