//! One client connection: the per-connection state machine.
//!
//! ```text
//!  accept ─► Idle ─first byte─► Head ─parsed─► Send ─written─┬─► Idle (keep-alive)
//!             ▲                  ▲                            ├─► Head (pipelined bytes left)
//!             │                  └────────────────────────────┤
//!             └──────────── Discard (body still arriving) ◄───┤
//!                                                             └─► Linger ─► closed
//! ```
//!
//! Readiness is edge-triggered (`mio`), so the connection remembers whether
//! the socket may still have bytes (`readable`) or room (`writable`) and
//! only goes back to the event loop after `WouldBlock`. A request is parsed
//! only after the previous response is completely written: pipelined
//! requests are answered in order and a slow reader cannot make the worker
//! buffer unbounded responses.

use std::io;
use std::net::Shutdown;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mio::net::TcpStream;
use peregrine_codec::{BodyDecoder, Limits};
use peregrine_conf::model::{LogLevel, ServerConf};
use peregrine_core::ConnInfo;

use crate::errlog::{self, Context};
use crate::exchange::Exchange;
use crate::stats::Gauge;
use crate::worker::Ctx;

/// Bytes read and thrown away in lingering close before giving up (nginx
/// bounds only the time; a fast client could otherwise keep a worker busy
/// for the whole `lingering_time`).
pub const LINGERING_MAX_BYTES: u64 = 1 << 20;

/// `lingering_time` and `lingering_timeout` of the request that ends (or
/// nginx's defaults, for a connection with no location yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lingering {
    /// The longest a closing connection keeps reading (and discarding) what
    /// the client still sends.
    pub time: Duration,
    /// The longest wait for more bytes while lingering or discarding a body.
    pub timeout: Duration,
}

impl Lingering {
    pub fn of(conf: Option<&peregrine_conf::model::LocConf>) -> Lingering {
        let c = conf.map_or_else(peregrine_conf::model::ConnConf::default, |c| c.conn);
        Lingering {
            time: c.lingering_time,
            timeout: c.lingering_timeout,
        }
    }
}

/// What the worker knows about one listening address, for its connections.
pub struct ListenCtx {
    pub limits: Limits,
    /// `client_header_timeout` of the address's default server.
    pub header_timeout: Duration,
    /// `reset_timedout_connection` of the default server (header timeouts).
    pub reset_timedout: bool,
    /// The default server's first name (`server:` in error-log lines).
    pub server_name: String,
    /// Largest head buffer: the codec's limits plus one read's slack.
    pub max_head: usize,
    /// The default server and its settings: what answers (and logs) a
    /// request that failed before a server was chosen, as in nginx.
    pub default_server: Option<Arc<ServerConf>>,
}

/// A connection's read buffer: `data[start..end]` is received, unconsumed.
pub struct Buf {
    pub data: Vec<u8>,
    pub start: usize,
    pub end: usize,
}

impl Buf {
    pub fn pending(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the first byte of a request: a fresh connection
    /// (`keepalive == false`, under the header timeout since accept) or a
    /// kept-alive one (under `keepalive_timeout`).
    Idle { keepalive: bool },
    /// Reading a request head.
    Head,
    /// Writing a response (and discarding any body that arrives meanwhile).
    Send,
    /// Response written; the request body is still arriving and must be
    /// read and thrown away before the next request.
    Discard { until: Instant, timeout: Duration },
    /// Closing: write side shut, reading and discarding until EOF.
    Linger {
        until: Instant,
        read: u64,
        timeout: Duration,
    },
}

/// How a connection is to be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// Normal close (FIN).
    Normal,
    /// `SO_LINGER 0` then close: RST, nothing left in FIN_WAIT
    /// (`reset_timedout_connection`).
    Reset,
}

/// What one step of the state machine leads to.
pub enum Step {
    Continue,
    Wait,
    Close(Close),
}

pub struct Conn {
    pub stream: TcpStream,
    pub info: ConnInfo,
    /// Index of the listening address in the worker's [`ListenCtx`] table.
    pub lst: usize,
    pub phase: Phase,
    pub rbuf: Option<Buf>,
    pub ex: Option<Box<Exchange>>,
    /// This connection's key in the worker's table (and timer wheel).
    pub key: usize,
    pub readable: bool,
    pub writable: bool,
    pub gauge: Gauge,
    pub nodelay: bool,
    /// Registered for writability too. A connection starts registered for
    /// reading only: with edge-triggered epoll a write interest makes every
    /// ACK that frees send-buffer space queue an event (and a loop turn),
    /// while a response that fits the socket buffer — nearly all of them —
    /// never needs one. The interest is added the first time a write
    /// blocks (see [`Conn::needs_write_interest`]) and then kept.
    pub write_interest: bool,
    /// When the current request's first byte was read.
    pub req_start: SystemTime,
    /// The current request was buffered behind the previous one.
    pub pipelined: bool,
    /// A kept-alive connection's header timeout is still to be armed (see
    /// [`Conn::begin_request`]).
    pub header_timer: bool,
    /// When the connection was accepted, on the timers' clock
    /// ([`crate::timer::Timers::nanos`]; `keepalive_time`).
    pub born: u64,
    /// The timer armed is `limit_rate`'s pause, not a timeout.
    pub delayed: bool,
}

impl Conn {
    pub fn new(
        stream: TcpStream,
        key: usize,
        info: ConnInfo,
        lst: usize,
        (now, born): (SystemTime, u64),
    ) -> Conn {
        Conn {
            stream,
            info,
            lst,
            phase: Phase::Idle { keepalive: false },
            rbuf: None,
            ex: None,
            key,
            readable: false,
            writable: true,
            gauge: Gauge::None,
            nodelay: false,
            write_interest: false,
            req_start: now,
            pipelined: false,
            header_timer: false,
            born,
            delayed: false,
        }
    }

    pub fn set_gauge(&mut self, g: Gauge, cx: &Ctx) {
        cx.stats.shift(self.gauge, g);
        self.gauge = g;
    }

    /// A write blocked and epoll does not yet report writability for this
    /// connection: the worker must add the interest before waiting.
    pub fn needs_write_interest(&self) -> bool {
        !self.writable && !self.write_interest
    }

    pub fn buffered(&self) -> usize {
        self.rbuf.as_ref().map_or(0, |b| b.end - b.start)
    }

    /// Gives the read buffer back when it holds nothing unconsumed, so an
    /// idle connection holds no buffer.
    pub fn release_empty_buf(&mut self, cx: &mut Ctx) {
        if self.buffered() == 0
            && let Some(b) = self.rbuf.take()
        {
            cx.pool.put_read_buf(b.data);
        }
    }

    /// Runs the state machine until it must wait for the socket or close.
    /// Discarding and lingering are rare and kept out of line (never
    /// inlined), so the common loop's frame stays small.
    pub fn drive(&mut self, key: usize, cx: &mut Ctx) -> Option<Close> {
        loop {
            let step = match self.phase {
                Phase::Idle { .. } | Phase::Head => self.step_head(cx),
                Phase::Send => self.step_send(key, cx),
                Phase::Discard { .. } => self.step_discard(key, cx),
                Phase::Linger { .. } => self.step_linger(key, cx),
            };
            match step {
                Step::Continue => {}
                Step::Wait => return None,
                Step::Close(c) => return Some(c),
            }
        }
    }

    /// Reads more bytes into the read buffer, growing it up to `max`.
    pub fn fill(&mut self, cx: &mut Ctx, max: usize) -> io::Result<usize> {
        let b = self.rbuf.get_or_insert_with(|| Buf {
            data: cx.pool.read_buf(),
            start: 0,
            end: 0,
        });
        if b.start == b.end {
            b.start = 0;
            b.end = 0;
        }
        if b.end == b.data.len() {
            if b.start > 0 {
                b.data.copy_within(b.start..b.end, 0);
                b.end -= b.start;
                b.start = 0;
            } else if b.data.len() < max {
                let n = (b.data.len() * 2).clamp(crate::pool::READ_BUF_SIZE, max);
                b.data.resize(n, 0);
            } else {
                return Err(io::Error::other("request head exceeds every buffer"));
            }
        }
        let room = b.data.len() - b.end;
        let n = peregrine_sys::recv(&self.stream, &mut b.data[b.end..])?;
        b.end += n;
        if n < room {
            // A short read drained the socket; with edge-triggered epoll any
            // later arrival raises a new event (nginx clears `rev->ready`
            // the same way), so no extra read just to see EAGAIN.
            self.readable = false;
        }
        Ok(n)
    }

    /// [`Conn::fill`] with the outcomes every reader handles alike: `None`
    /// after `WouldBlock`/`EINTR` (flag updated), `Some(0)` at EOF.
    /// Inlined: a read that returns bytes is one test more than `fill`.
    #[inline]
    fn read_some(&mut self, cx: &mut Ctx, max: usize, doing: &str) -> Result<Option<usize>, Close> {
        match self.fill(cx, max) {
            Ok(n) => Ok(Some(n)),
            Err(e) => self.read_failed(cx, &e, doing),
        }
    }

    /// The rest of [`Conn::read_some`]: why a read returned no bytes.
    #[inline(never)]
    fn read_failed(
        &mut self,
        cx: &Ctx,
        e: &io::Error,
        doing: &str,
    ) -> Result<Option<usize>, Close> {
        match e.kind() {
            io::ErrorKind::WouldBlock => {
                self.readable = false;
                Ok(None)
            }
            io::ErrorKind::Interrupted => Ok(None),
            _ => {
                self.log(
                    cx,
                    LogLevel::Info,
                    &errlog::with_os_error("recv() failed", e),
                    doing,
                );
                Err(Close::Normal)
            }
        }
    }

    /// Reads and parses until a head is answered, the socket is drained or
    /// the connection ends. A read leaves the phase as it was, so it loops
    /// here rather than through [`Conn::drive`].
    fn step_head(&mut self, cx: &mut Ctx) -> Step {
        loop {
            if self.buffered() > 0 {
                if let Phase::Idle { keepalive } = self.phase {
                    self.begin_request(cx, keepalive);
                }
                if let Some(step) = self.try_parse(cx) {
                    return step;
                }
            }
            if !self.readable {
                if matches!(self.phase, Phase::Idle { .. }) {
                    self.release_empty_buf(cx);
                }
                return Step::Wait;
            }
            let max = cx.lctx(self.lst).max_head;
            let doing = if self.phase == Phase::Head {
                "while reading client request headers"
            } else {
                "while waiting for request"
            };
            match self.read_some(cx, max, doing) {
                Ok(Some(0)) => {
                    if self.phase == Phase::Head {
                        self.log(
                            cx,
                            LogLevel::Info,
                            "client prematurely closed connection",
                            doing,
                        );
                        self.log_unanswered(400, cx);
                    }
                    return Step::Close(Close::Normal);
                }
                Ok(_) => {}
                Err(c) => return Step::Close(c),
            }
        }
    }

    /// The first byte of a request arrived (nginx creates the request here:
    /// `requests` and `Reading` count from now).
    pub fn begin_request(&mut self, cx: &mut Ctx, rearm: bool) {
        self.pipelined = matches!(self.phase, Phase::Send);
        self.phase = Phase::Head;
        self.req_start = cx.wall;
        // nginx counts the request (`$connection_requests`, stub_status
        // `requests`) when it is created, at its first byte.
        self.info.requests += 1;
        cx.stats.request();
        self.set_gauge(Gauge::Reading, cx);
        // A fresh connection's header timeout runs from accept (nginx's
        // post-accept timer); a kept-alive one's from this first byte, armed
        // only if the head turns out incomplete (see `try_parse`): nearly
        // every head arrives whole, and arming then disarming at once would
        // cost two wheel updates per request.
        self.header_timer = rearm;
    }

    /// Arms the header timeout deferred by [`Conn::begin_request`] (same
    /// loop turn, so the same `cx.now` as the first byte's).
    fn arm_deferred_header_timer(&mut self, cx: &mut Ctx) {
        if std::mem::take(&mut self.header_timer) {
            let d = cx.lctx(self.lst).header_timeout;
            cx.timers.arm(self.key, cx.now, d);
        }
    }

    fn try_parse(&mut self, cx: &mut Ctx) -> Option<Step> {
        let b = self.rbuf.as_mut()?;
        let mut ex = cx.pool.exchange();
        let parsed =
            peregrine_codec::parse_request(b.pending(), &cx.lctx(self.lst).limits, ex.req_mut());
        match parsed {
            Ok(peregrine_codec::Parsed::Partial) => {
                cx.pool.put_exchange(ex);
                self.arm_deferred_header_timer(cx);
                None
            }
            Ok(peregrine_codec::Parsed::Complete(n)) => {
                b.start += n;
                self.header_timer = false;
                Some(self.start_exchange(ex, cx))
            }
            Err(e) => {
                self.header_timer = false;
                Some(self.start_error(ex, e, cx))
            }
        }
    }

    /// Discards body bytes already buffered; true when the body is complete.
    /// Inlined: nearly every request has no body, which is one test.
    #[inline]
    pub fn discard_buffered(&mut self) -> Result<bool, peregrine_codec::HttpError> {
        if self.ex.as_ref().is_none_or(|ex| ex.body.is_none()) {
            return Ok(true);
        }
        self.discard_buffered_body()
    }

    fn discard_buffered_body(&mut self) -> Result<bool, peregrine_codec::HttpError> {
        let Some(ex) = self.ex.as_mut() else {
            return Ok(true);
        };
        let Some(dec) = ex.body.as_mut() else {
            return Ok(true);
        };
        if let Some(b) = self.rbuf.as_mut() {
            while b.start < b.end {
                let p = dec.decode(b.pending())?;
                b.start += p.consumed;
                ex.request_length += p.consumed as u64;
                if p.done {
                    ex.body = None;
                    return Ok(true);
                }
                if p.consumed == 0 {
                    break;
                }
            }
        }
        Ok(dec_done(ex.body.as_ref()))
    }

    #[inline(never)]
    fn step_discard(&mut self, key: usize, cx: &mut Ctx) -> Step {
        let Phase::Discard { until, timeout } = self.phase else {
            return Step::Continue;
        };
        match self.discard_buffered() {
            Ok(true) => return self.complete(key, cx),
            Ok(false) => {}
            Err(e) => {
                self.log(cx, LogLevel::Error, &e.kind.to_string(), "");
                return Step::Close(Close::Normal);
            }
        }
        if cx.now >= until {
            return Step::Close(Close::Normal);
        }
        if !self.readable {
            let d = timeout.min(until - cx.now);
            cx.timers.arm(key, cx.now, d);
            return Step::Wait;
        }
        match self.read_some(
            cx,
            crate::pool::READ_BUF_SIZE,
            "while discarding request body",
        ) {
            Ok(Some(0)) => Step::Close(Close::Normal),
            Ok(_) => Step::Continue,
            Err(c) => Step::Close(c),
        }
    }

    /// Enters lingering close: nginx's `ngx_http_set_lingering_close`.
    pub fn start_linger(&mut self, key: usize, cx: &mut Ctx, l: Lingering) -> Step {
        let _ = self.stream.shutdown(Shutdown::Write);
        if let Some(b) = self.rbuf.as_mut() {
            b.start = b.end;
        }
        self.phase = Phase::Linger {
            until: cx.now + l.time,
            read: 0,
            timeout: l.timeout,
        };
        cx.timers.arm(key, cx.now, l.timeout.min(l.time));
        Step::Continue
    }

    #[inline(never)]
    fn step_linger(&mut self, key: usize, cx: &mut Ctx) -> Step {
        let Phase::Linger {
            until,
            read,
            timeout,
        } = self.phase
        else {
            return Step::Continue;
        };
        if cx.now >= until || read >= LINGERING_MAX_BYTES {
            return Step::Close(Close::Normal);
        }
        if !self.readable {
            return Step::Wait;
        }
        match self.fill(cx, crate::pool::READ_BUF_SIZE) {
            Ok(0) => Step::Close(Close::Normal),
            Ok(n) => {
                if let Some(b) = self.rbuf.as_mut() {
                    b.start = b.end;
                }
                self.phase = Phase::Linger {
                    until,
                    read: read + n as u64,
                    timeout,
                };
                // nginx re-arms lingering_timeout after every read.
                let d = timeout.min(until.saturating_duration_since(cx.now));
                cx.timers.arm(key, cx.now, d);
                Step::Continue
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.readable = false;
                Step::Wait
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Step::Continue,
            Err(_) => Step::Close(Close::Normal),
        }
    }

    /// A timer of this connection fired.
    pub fn on_timeout(&mut self, cx: &mut Ctx) -> Close {
        let timedout = io::Error::from_raw_os_error(libc::ETIMEDOUT);
        let text = errlog::with_os_error("client timed out", &timedout);
        match self.phase {
            Phase::Idle { keepalive: true } | Phase::Discard { .. } | Phase::Linger { .. } => {
                Close::Normal
            }
            Phase::Idle { keepalive: false } if cx.draining => Close::Normal,
            Phase::Idle { keepalive: false } | Phase::Head => {
                let doing = if self.phase == Phase::Head {
                    "while reading client request headers"
                } else {
                    "while waiting for request"
                };
                self.log(cx, LogLevel::Info, &text, doing);
                if self.phase == Phase::Head {
                    self.log_unanswered(408, cx);
                }
                if cx.lctx(self.lst).reset_timedout {
                    Close::Reset
                } else {
                    Close::Normal
                }
            }
            Phase::Send => {
                self.log(
                    cx,
                    LogLevel::Info,
                    &text,
                    "while sending response to client",
                );
                // nginx logs 408 when nothing at all was sent
                // (`ngx_http_terminate_request`), else the response's own.
                if let Some(ex) = self.ex.as_mut()
                    && ex.out.head_bytes + ex.out.body_bytes == 0
                    && let Some(r) = ex.resp.as_mut()
                {
                    r.status = 408;
                }
                let reset = self
                    .ex
                    .as_ref()
                    .and_then(|e| e.conf())
                    .is_some_and(|c| c.reset_timedout_connection);
                if reset { Close::Reset } else { Close::Normal }
            }
        }
    }

    /// Logs `text doing` with nginx's connection context.
    pub fn log(&self, cx: &Ctx, level: LogLevel, text: &str, doing: &str) {
        let loc_log = self
            .ex
            .as_ref()
            .and_then(|e| e.conf())
            .and_then(|c| c.error_log.as_ref());
        if level < cx.log_level && loc_log.is_none() {
            return;
        }
        let req = self.ex.as_ref().and_then(|e| e.req());
        let server = self
            .ex
            .as_ref()
            .and_then(|e| e.resp.as_ref()?.server.as_ref())
            .and_then(|s| s.server_names.first())
            .map(crate::exchange::server_name_text)
            .unwrap_or_else(|| cx.lctx(self.lst).server_name.clone());
        let ctx = Context {
            id: self.info.id,
            peer: self.info.peer,
            server: &server,
            request: req.map(|r| r.request_line()),
            host: req.and_then(|r| r.host()),
        };
        let msg = if doing.is_empty() {
            text.to_string()
        } else {
            format!("{text} {doing}")
        };
        let line = errlog::conn_message(&ctx, &msg);
        match loc_log {
            Some(confs) => cx.loc_errlogs.write(confs, level, &line),
            None => (cx.errlog)(level, &line),
        }
    }
}

fn dec_done(d: Option<&BodyDecoder>) -> bool {
    d.is_none_or(BodyDecoder::is_done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An idle keep-alive connection is its slot in the worker's table and
    /// nothing else (no buffer, no exchange): keep that slot small.
    #[test]
    fn idle_connection_footprint() {
        let size = std::mem::size_of::<Option<Conn>>();
        assert!(size <= 256, "Conn slot is {size} bytes");
    }
}
