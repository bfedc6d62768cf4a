//! The socket side of a worker: connecting, writing the batch, reading
//! and feeding the parser.

use std::io::{self, Read, Write};
use std::time::Instant;

use mio::{Interest, Token};

use super::{Failure, Worker};
use crate::conn::{self, Phase};

impl Worker<'_> {
    /// Sends the current batch, connecting first when needed.
    pub(super) fn send(&mut self, i: usize, now: Instant) {
        self.deadlines[i] = now + self.plan.timeout;
        let c = &mut self.conns[i];
        c.written = 0;
        c.first_byte = None;
        if c.stream.is_some() {
            c.connected = c.start;
            c.phase = Phase::Writing;
            self.write(i, false);
            return;
        }
        let addr = self.plan.targets[c.target].addr;
        match conn::connect(addr, self.opts) {
            Ok(mut s) => {
                let reg = self.poll.registry().register(
                    &mut s,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                );
                c.stream = Some(s);
                c.phase = Phase::Connecting;
                if let Err(e) = reg {
                    self.connect_failed(i, e);
                }
            }
            Err(e) => self.connect_failed(i, e),
        }
    }

    /// `closed`: the peer's FIN (or an error) is already queued behind
    /// the data, so reading must go on to the end of the stream: no new
    /// edge will announce it.
    pub(super) fn handle(&mut self, i: usize, readable: bool, closed: bool) {
        match self.conns[i].phase {
            Phase::Connecting => self.on_connect(i, readable),
            Phase::Writing => self.write(i, readable),
            Phase::Reading => self.read(i, closed),
            Phase::Idle => {
                if readable && self.conns[i].stream.is_some() {
                    self.read(i, closed);
                }
            }
        }
    }

    pub(super) fn on_connect(&mut self, i: usize, readable: bool) {
        let Some(s) = &self.conns[i].stream else {
            return;
        };
        let err = match s.take_error() {
            Ok(Some(e)) | Err(e) => Some(e),
            Ok(None) => match s.peer_addr() {
                Ok(_) => None,
                // Not connected yet: a spurious wake-up.
                Err(e) if e.kind() == io::ErrorKind::NotConnected && !readable => return,
                Err(e) => Some(e),
            },
        };
        if let Some(e) = err {
            self.connect_failed(i, e);
            return;
        }
        let c = &mut self.conns[i];
        c.connected = Instant::now();
        c.phase = Phase::Writing;
        self.write(i, readable);
    }

    pub(super) fn write(&mut self, i: usize, readable: bool) {
        let c = &mut self.conns[i];
        let t = &self.plan.targets[c.target];
        let len = t.request.len() * c.batch as usize;
        let Some(bytes) = t.batch.get(..len) else {
            return;
        };
        let Some(s) = c.stream.as_mut() else { return };
        while c.written < len {
            match s.write(&bytes[c.written..]) {
                Ok(0) => {
                    self.send_failed(i);
                    return;
                }
                Ok(n) => {
                    c.written += n;
                    self.stats.bytes_sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.send_failed(i);
                    return;
                }
            }
        }
        c.write_done = Instant::now();
        c.phase = Phase::Reading;
        if readable {
            self.read(i, true);
        }
    }

    pub(super) fn send_failed(&mut self, i: usize) {
        if self.retry(i) {
            return;
        }
        self.stats.write_errors += 1;
        self.fail(i, Failure::Exception);
    }

    /// Resends the unanswered requests on a fresh connection when the
    /// kept-alive one was closed under them; false when that is not the
    /// case (or was already tried).
    pub(super) fn retry(&mut self, i: usize) -> bool {
        let c = &mut self.conns[i];
        if !c.reused || c.retried || c.parser.in_progress() {
            return false;
        }
        c.close();
        c.retried = true;
        c.batch = c.in_flight;
        self.send(i, Instant::now());
        true
    }

    pub(super) fn read(&mut self, i: usize, drain: bool) {
        let mut buf = std::mem::take(&mut self.buf);
        while let Some(s) = self.conns[i].stream.as_mut() {
            match s.read(&mut buf) {
                Ok(0) => {
                    self.on_eof(i);
                    break;
                }
                Ok(n) => {
                    self.stats.bytes_read += n as u64;
                    // A short read drained the socket (Linux TCP copies all
                    // queued data up to the buffer size), so waiting for the
                    // next edge is safe and saves the EAGAIN read, unless a
                    // FIN already sits behind the data.
                    if !self.consume(i, &buf[..n]) || (n < buf.len() && !drain) {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.on_recv_error(i, e);
                    break;
                }
            }
        }
        self.buf = buf;
    }

    /// Feeds bytes to the parser; false when the batch or socket ended.
    pub(super) fn consume(&mut self, i: usize, mut data: &[u8]) -> bool {
        let now = Instant::now();
        while !data.is_empty() {
            let c = &mut self.conns[i];
            if c.in_flight == 0 {
                // Bytes nobody asked for: the stream is out of step.
                c.close();
                c.phase = Phase::Idle;
                return false;
            }
            if c.first_byte.is_none() {
                c.first_byte = Some(now);
            }
            let want_server = self.stats.server.is_none();
            match c.parser.feed(data, self.plan.head, want_server) {
                Ok((used, done)) => {
                    data = &data[used..];
                    if let Some(r) = done {
                        let keep = r.keep_alive && self.plan.keepalive;
                        self.response(i, r, now);
                        let c = &mut self.conns[i];
                        c.first_byte = None;
                        if !keep {
                            self.shared.give_back(c.in_flight);
                            c.in_flight = 0;
                            c.close();
                        } else {
                            c.reused = true;
                            // Progress was made: a later close of this
                            // kept-alive socket may be retried again.
                            c.retried = false;
                        }
                        if self.conns[i].in_flight == 0 {
                            self.batch_done(i);
                            return false;
                        }
                    }
                }
                Err(e) => {
                    if self.plan.verbosity >= 2 {
                        println!("WARNING: {e}");
                    }
                    self.fail(i, Failure::Exception);
                    return false;
                }
            }
        }
        true
    }
}
