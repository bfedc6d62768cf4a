//! One TCP stream session (`ngx_stream_proxy_module`'s TCP side): the
//! client's connection, its PROXY protocol header when the address says
//! `proxy_protocol`, then `return` or the proxy: a non-blocking connect to
//! a peer (the next one on failure, as `proxy_next_upstream` allows), the
//! PROXY protocol v1 line first when `proxy_protocol on`, then bytes both
//! ways through one `proxy_buffer_size` buffer per direction until
//! nginx's `ngx_stream_proxy_test_finalize` says the session is done.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use mio::net::TcpStream;
use peregrine_codec::proxy_protocol::ProxyHeader;
use peregrine_upstream::Attempt;

use super::vars::UpstreamVars;
use crate::upstream::sock::Sock;

/// What a session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Reading the PROXY protocol header (`proxy_protocol_timeout`).
    ProxyProtocol,
    /// Sending a `return` value.
    Returning,
    /// A connect to a peer is in progress (`proxy_connect_timeout`).
    Connecting,
    /// Bytes both ways (`proxy_timeout`).
    Proxying,
}

/// One direction's buffer: bytes read from one side not yet written to
/// the other.
#[derive(Debug, Default)]
pub struct Buf {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl Buf {
    pub fn new(size: usize) -> Buf {
        Buf {
            data: vec![0; size.max(1)],
            start: 0,
            end: 0,
        }
    }

    pub fn pending(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    pub fn capacity(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Appends bytes (the PROXY protocol line, a `return` value), growing
    /// the buffer if they do not fit.
    pub fn push(&mut self, b: &[u8]) {
        self.compact();
        if self.data.len() - self.end < b.len() {
            self.data.resize(self.end + b.len(), 0);
        }
        self.data[self.end..self.end + b.len()].copy_from_slice(b);
        self.end += b.len();
    }

    fn compact(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.start > 0 && self.end == self.data.len() {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// Reads from `src` into the free space: bytes read, 0 at EOF.
    fn fill(&mut self, src: &mut impl Read) -> io::Result<Option<usize>> {
        self.compact();
        if self.end == self.data.len() {
            return Ok(None);
        }
        let n = src.read(&mut self.data[self.end..])?;
        self.end += n;
        Ok(Some(n))
    }

    /// Writes the pending bytes to `dst`: bytes written.
    fn drain(&mut self, dst: &mut impl Write) -> io::Result<usize> {
        let n = dst.write(&self.data[self.start..self.end])?;
        self.start += n;
        Ok(n)
    }
}

/// A TCP session.
pub struct Session {
    pub server: usize,
    pub client: TcpStream,
    pub upstream: Option<Sock>,
    pub peer: SocketAddr,
    pub local: SocketAddr,
    /// The listening address as nginx prints it (`server:` in log lines).
    pub listen_text: Arc<str>,
    pub id: u64,
    pub start: Instant,
    pub start_wall: SystemTime,
    pub phase: Phase,
    pub header: Option<Arc<ProxyHeader>>,
    /// The attempts at the group and when they began
    /// (`proxy_next_upstream_timeout`).
    pub attempt: Option<Attempt>,
    pub tries_start: Instant,
    /// The peer of the attempt in progress, as `upstream: "..."` shows it.
    pub peer_name: Option<String>,
    pub connect_start: Instant,
    pub up: UpstreamVars,
    pub received: u64,
    pub sent: u64,
    pub up_received: u64,
    pub up_sent: u64,
    pub to_up: Buf,
    pub to_client: Buf,
    pub c_eof: bool,
    pub u_eof: bool,
    pub c_readable: bool,
    pub c_writable: bool,
    pub u_readable: bool,
    pub u_writable: bool,
    pub half_closed: bool,
}

/// What moving bytes came to.
pub enum Pump {
    /// Waiting for events; `true` if any byte moved (the timer restarts).
    Wait(bool),
    /// The session is done (status 200), or a write failed.
    Done(&'static str),
}

impl Session {
    /// Moves what can be moved both ways, then applies nginx's test of
    /// whether the session is over (`ngx_stream_proxy_test_finalize`).
    pub fn pump(&mut self, half_close: bool) -> Pump {
        let Some(up) = self.upstream.as_mut() else {
            return Pump::Wait(false);
        };
        let mut moved = false;
        loop {
            let mut progress = false;
            // Client to upstream.
            if !self.c_eof && self.c_readable {
                match self.to_up.fill(&mut self.client) {
                    Ok(Some(0)) => self.c_eof = true,
                    Ok(Some(n)) => {
                        self.received += n as u64;
                        progress = true;
                    }
                    Ok(None) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.c_readable = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => progress = true,
                    Err(_) => self.c_eof = true,
                }
            }
            if !self.to_up.is_empty() && self.u_writable {
                match self.to_up.drain(up) {
                    Ok(n) => {
                        self.up_sent += n as u64;
                        progress |= n > 0;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.u_writable = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => progress = true,
                    Err(_) => return Pump::Done("upstream"),
                }
            }
            // Upstream to client.
            if !self.u_eof && self.u_readable {
                match self.to_client.fill(up) {
                    Ok(Some(0)) => self.u_eof = true,
                    Ok(Some(n)) => {
                        if self.up_received == 0 {
                            let t = self.start.elapsed();
                            if let Some(f) = self.up.first_byte.last_mut() {
                                *f = Some(
                                    t.saturating_sub(self.connect_start.duration_since(self.start)),
                                );
                            }
                        }
                        self.up_received += n as u64;
                        progress = true;
                    }
                    Ok(None) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.u_readable = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => progress = true,
                    Err(_) => self.u_eof = true,
                }
            }
            if !self.to_client.is_empty() && self.c_writable {
                match self.to_client.drain(&mut self.client) {
                    Ok(n) => {
                        self.sent += n as u64;
                        progress |= n > 0;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.c_writable = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => progress = true,
                    Err(_) => return Pump::Done("client"),
                }
            }
            // `proxy_half_close`: the client's EOF goes on to the upstream
            // once its bytes are written (nginx's `shutdown(SHUT_WR)`).
            if half_close && self.c_eof && self.to_up.is_empty() && !self.half_closed {
                if let Sock::Tcp(s) = up {
                    let _ = s.shutdown(std::net::Shutdown::Write);
                }
                self.half_closed = true;
            }
            moved |= progress;
            if !progress {
                break;
            }
        }
        let (ce, ue) = (self.c_eof, self.u_eof);
        let (cb, ub) = (!self.to_client.is_empty(), !self.to_up.is_empty());
        // nginx's three "not yet" cases: neither side at EOF, or a side
        // still reading whose peer has bytes waiting for it.
        let open_client = !ce && (!ue || cb);
        let open_upstream = !ue && ub;
        // With `proxy_half_close`, both read ends must be at EOF and both
        // buffers flushed.
        let half_open = half_close && (!ce || !ue || cb || ub);
        if open_client || open_upstream || half_open {
            return Pump::Wait(moved);
        }
        Pump::Done(if ue { "upstream" } else { "client" })
    }

    /// Writes a `return` value: true once all of it is sent.
    pub fn flush_return(&mut self) -> io::Result<bool> {
        while !self.to_client.is_empty() {
            match self.to_client.drain(&mut self.client) {
                Ok(n) => self.sent += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.c_writable = false;
                    return Ok(false);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// The PROXY protocol v1 line nginx sends (`ngx_proxy_protocol_write`):
/// the client's address and port, then the address it connected to.
pub fn proxy_line(peer: SocketAddr, local: SocketAddr) -> Vec<u8> {
    if peregrine_conf::model::is_unix(peer) || peer.is_ipv4() != local.is_ipv4() {
        return b"PROXY UNKNOWN\r\n".to_vec();
    }
    let fam = if peer.is_ipv4() { "TCP4" } else { "TCP6" };
    format!(
        "PROXY {fam} {} {} {} {}\r\n",
        peer.ip(),
        local.ip(),
        peer.port(),
        local.port()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_line_is_nginx_s_v1() {
        let p: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let l: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            proxy_line(p, l),
            b"PROXY TCP4 127.0.0.1 127.0.0.1 5000 8080\r\n"
        );
        let p6: SocketAddr = "[::1]:5000".parse().unwrap();
        let l6: SocketAddr = "[::1]:80".parse().unwrap();
        assert_eq!(proxy_line(p6, l6), b"PROXY TCP6 ::1 ::1 5000 80\r\n");
    }

    #[test]
    fn a_buffer_keeps_order_across_compaction() {
        let mut b = Buf::new(4);
        let mut src: &[u8] = b"abcdef";
        assert_eq!(b.fill(&mut src).unwrap(), Some(4));
        let mut out = Vec::new();
        let mut w = std::io::Cursor::new(&mut out);
        assert_eq!(b.drain(&mut w).unwrap(), 4);
        assert_eq!(b.fill(&mut src).unwrap(), Some(2));
        b.drain(&mut w).unwrap();
        assert_eq!(out, b"abcdef");
    }
}
