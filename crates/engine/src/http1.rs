//! The HTTP/1 session of a connection: nginx's ngx_http_request.c and the
//! HTTP/1 side of its write path. It reads request heads through the
//! connection's [`Transport`] (plain or TLS: it does not know which), asks
//! core for each answer, writes the response through the same transport,
//! discards request bodies, keeps alive, pipelines and closes (lingering).
//!
//! ```text
//!  accept ─► Idle ─first byte─► Head ─parsed─► Send ─written─┬─► Idle (keep-alive)
//!             ▲                  ▲                            ├─► Head (pipelined bytes left)
//!             │                  └────────────────────────────┤
//!             └──────────── Discard (body still arriving) ◄───┤
//!                                                             └─► Linger ─► closed
//! ```
//!
//! The session goes back to the event loop only after the transport says
//! `WouldBlock` (edge-triggered readiness, see [`Transport`]). A request is
//! parsed only after the previous response is completely written:
//! pipelined requests are answered in order and a slow reader cannot make
//! the worker buffer unbounded responses.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant, SystemTime};

use peregrine_codec::{BodyDecoder, BodyKind, HttpError};
use peregrine_conf::model::{LingeringClose, LogLevel};
use peregrine_core::response::ErrorNote;
use peregrine_core::{ConnInfo, Response};

use crate::AccessEntry;
use crate::ctx::Ctx;
use crate::errlog::{self, Context, with_os_error};
use crate::exchange::{Exchange, Keep, Plan};
use crate::pool::{Pool, READ_BUF_SIZE};
use crate::rate;
use crate::stats::{Finished, Gauge};
use crate::transport::{TlsSink, Transport};
use crate::write::{Output, Progress, WriteError};

/// Bytes read and thrown away in lingering close before giving up (nginx
/// bounds only the time; a fast client could otherwise keep a worker busy
/// for the whole `lingering_time`).
pub const LINGERING_MAX_BYTES: u64 = 1 << 20;

/// nginx's `sendfile_max_chunk` default, for a response with no location.
const DEFAULT_SENDFILE_MAX_CHUNK: usize = 2 << 20;

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
        match conf {
            Some(c) => Lingering {
                time: c.conn.lingering_time,
                timeout: c.conn.lingering_timeout,
            },
            None => {
                let c = peregrine_conf::model::ConnConf::default();
                Lingering {
                    time: c.lingering_time,
                    timeout: c.lingering_timeout,
                }
            }
        }
    }
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
    /// A proxied request: the upstream side runs (`crate::upstream`).
    Proxy,
    /// A request held by `limit_req`'s delay or `auth_delay`, under the
    /// connection's timer (`crate::limits`).
    Held,
}

/// How a connection is to be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// Normal close (FIN).
    Normal,
    /// `SO_LINGER 0` then close: RST, nothing left in FIN_WAIT
    /// (`reset_timedout_connection`).
    Reset,
    /// Not a close: the client spoke the HTTP/2 preface on an address
    /// with HTTP/2 (h2c by prior knowledge, or TLS with ALPN `h2`), and
    /// the connection's HTTP/2 session takes over (conn.rs).
    ToHttp2,
}

/// What one step of the state machine leads to.
pub enum Step {
    Continue,
    Wait,
    Close(Close),
}

/// One connection's HTTP/1 session: where it is in the state machine, its
/// read buffer and its exchange in flight.
pub struct Http1 {
    pub info: ConnInfo,
    /// Index of the listening address in the worker's `ListenCtx` table.
    pub lst: usize,
    pub phase: Phase,
    pub rbuf: Option<Buf>,
    pub ex: Option<Box<Exchange>>,
    /// This connection's key in the worker's table (and timer wheel);
    /// `u32` beside the one-byte fields keeps the slot small (see `conn`'s
    /// test): `worker_connections` is far below it.
    pub key: u32,
    pub gauge: Gauge,
    /// When the current request's first byte was read.
    pub req_start: SystemTime,
    /// The current request was buffered behind the previous one.
    pub pipelined: bool,
    /// A kept-alive connection's header timeout is still to be armed (see
    /// [`Http1::begin_request`]).
    pub header_timer: bool,
    /// When the connection was accepted, on the timers' clock
    /// ([`crate::timer::Timers::nanos`]; `keepalive_time`).
    pub born: u64,
    /// The timer armed is `limit_rate`'s pause, not a timeout.
    pub delayed: bool,
}

impl Http1 {
    pub fn new(key: usize, info: ConnInfo, lst: usize, (now, born): (SystemTime, u64)) -> Http1 {
        Http1 {
            info,
            lst,
            phase: Phase::Idle { keepalive: false },
            rbuf: None,
            ex: None,
            key: u32::try_from(key).unwrap_or(u32::MAX),
            gauge: Gauge::None,
            req_start: now,
            pipelined: false,
            header_timer: false,
            born,
            delayed: false,
        }
    }

    fn delay(&mut self, key: usize, cx: &mut Ctx, d: Duration) {
        self.delayed = true;
        cx.timers.arm(key, cx.now, d);
    }

    pub fn set_gauge(&mut self, g: Gauge, cx: &Ctx) {
        cx.stats.shift(self.gauge, g);
        self.gauge = g;
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
    pub fn drive(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Option<Close> {
        loop {
            let step = match self.phase {
                Phase::Idle { .. } | Phase::Head => self.step_head(t, cx),
                Phase::Send => self.step_send(t, key, cx),
                Phase::Discard { .. } => self.step_discard(t, key, cx),
                Phase::Linger { .. } => self.step_linger(t, key, cx),
                Phase::Proxy => self.step_proxy(t, key, cx),
                Phase::Held => self.step_held(t, cx),
            };
            match step {
                Step::Continue => {}
                Step::Wait => return None,
                Step::Close(c) => return Some(c),
            }
        }
    }

    /// Reads more bytes into the read buffer, growing it up to `max`.
    pub fn fill(&mut self, t: &mut Transport, cx: &mut Ctx, max: usize) -> io::Result<usize> {
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
                let n = (b.data.len() * 2).clamp(READ_BUF_SIZE, max);
                b.data.resize(n, 0);
            } else {
                return Err(io::Error::other("request head exceeds every buffer"));
            }
        }
        // A short read clears `readable` (see `Transport::recv`).
        let vars = crate::transport::HandshakeVars {
            core: &cx.core,
            now: cx.wall,
        };
        let n = t.recv_handshaking(&mut b.data[b.end..], &vars)?;
        b.end += n;
        Ok(n)
    }

    /// [`Http1::fill`] with the outcomes every reader handles alike: `None`
    /// after `WouldBlock`/`EINTR` (flag updated), `Some(0)` at EOF.
    /// Inlined: a read that returns bytes is one test more than `fill`.
    #[inline]
    fn read_some(
        &mut self,
        t: &mut Transport,
        cx: &mut Ctx,
        max: usize,
        doing: &str,
    ) -> Result<Option<usize>, Close> {
        match self.fill(t, cx, max) {
            Ok(n) => Ok(Some(n)),
            Err(e) => self.read_failed(t, cx, &e, doing),
        }
    }

    /// The rest of [`Http1::read_some`]: why a read returned no bytes.
    #[inline(never)]
    fn read_failed(
        &mut self,
        t: &mut Transport,
        cx: &Ctx,
        e: &io::Error,
        doing: &str,
    ) -> Result<Option<usize>, Close> {
        match e.kind() {
            io::ErrorKind::WouldBlock => {
                t.readable = false;
                Ok(None)
            }
            io::ErrorKind::Interrupted => Ok(None),
            // A TLS failure (the handshake or a record): nginx's
            // `ngx_ssl_connection_error` words, at info for what a client
            // causes.
            // A certificate named by variables that did not load: nginx's
            // `cannot load certificate` at error level.
            io::ErrorKind::InvalidData
                if e.get_ref()
                    .is_some_and(|r| r.is::<crate::tls::dynamic::CertificateFailed>()) =>
            {
                self.log(cx, LogLevel::Error, &e.to_string(), "while SSL handshaking");
                Err(Close::Normal)
            }
            io::ErrorKind::InvalidData if t.tls.is_some() => {
                let (what, doing) = crate::transport::tls_failure(t, e);
                self.log(cx, LogLevel::Info, &what, doing);
                Err(Close::Normal)
            }
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
    /// here rather than through [`Http1::drive`].
    fn step_head(&mut self, t: &mut Transport, cx: &mut Ctx) -> Step {
        loop {
            if self.buffered() > 0 {
                if let Phase::Idle { keepalive } = self.phase {
                    self.begin_request(cx, keepalive);
                }
                if let Some(step) = self.try_parse(t, cx) {
                    return step;
                }
            }
            if !t.readable {
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
            match self.read_some(t, cx, max, doing) {
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

    /// Arms the header timeout deferred by [`Http1::begin_request`] (same
    /// loop turn, so the same `cx.now` as the first byte's).
    fn arm_deferred_header_timer(&mut self, cx: &mut Ctx) {
        if std::mem::take(&mut self.header_timer) {
            let d = cx.lctx(self.lst).header_timeout;
            cx.timers.arm(self.key as usize, cx.now, d);
        }
    }

    fn try_parse(&mut self, t: &mut Transport, cx: &mut Ctx) -> Option<Step> {
        let b = self.rbuf.as_mut()?;
        let mut ex = cx.exchanges.take();
        let parsed =
            peregrine_codec::parse_request(b.pending(), &cx.lctx(self.lst).limits, ex.req_mut());
        match parsed {
            Ok(peregrine_codec::Parsed::Partial) => {
                cx.exchanges.put(ex);
                self.arm_deferred_header_timer(cx);
                None
            }
            Ok(peregrine_codec::Parsed::Complete(n)) => {
                b.start += n;
                self.header_timer = false;
                Some(self.start_exchange(t, ex, cx))
            }
            Err(e) => {
                self.header_timer = false;
                Some(self.start_error(t, ex, e, cx))
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
    fn step_discard(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        let Phase::Discard { until, timeout } = self.phase else {
            return Step::Continue;
        };
        match self.discard_buffered() {
            Ok(true) => return self.complete(t, key, cx),
            Ok(false) => {}
            Err(e) => {
                self.log(cx, LogLevel::Error, &e.kind.to_string(), "");
                return Step::Close(Close::Normal);
            }
        }
        if cx.now >= until {
            return Step::Close(Close::Normal);
        }
        if !t.readable {
            let d = timeout.min(until - cx.now);
            cx.timers.arm(key, cx.now, d);
            return Step::Wait;
        }
        match self.read_some(t, cx, READ_BUF_SIZE, "while discarding request body") {
            Ok(Some(0)) => Step::Close(Close::Normal),
            Ok(_) => Step::Continue,
            Err(c) => Step::Close(c),
        }
    }

    /// Enters lingering close: nginx's `ngx_http_set_lingering_close`.
    pub fn start_linger(
        &mut self,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
        l: Lingering,
    ) -> Step {
        t.shutdown_write();
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
    fn step_linger(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
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
        if !t.readable {
            return Step::Wait;
        }
        match self.fill(t, cx, READ_BUF_SIZE) {
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
                t.readable = false;
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
            Phase::Idle { keepalive: true }
            | Phase::Discard { .. }
            | Phase::Linger { .. }
            | Phase::Proxy => Close::Normal,
            Phase::Held => Close::Normal,
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
            .map(crate::errlog::server_name_text)
            .unwrap_or_else(|| cx.lctx(self.lst).server_name.clone());
        let ctx = Context {
            id: self.info.id,
            peer: self.info.peer,
            server: &server,
            request: req.map(|r| r.request_line()),
            host: req.and_then(|r| r.header("Host")),
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

    /// What of the connection decides whether it may stay open after this
    /// response; its age (`keepalive_time`) from the timers' clock, whose
    /// turn has made the `Instant` subtraction already.
    #[inline(always)]
    pub(crate) fn keep(&self, cx: &mut Ctx) -> Keep {
        Keep {
            draining: cx.draining,
            requests: self.info.requests,
            age_ns: cx.timers.nanos(cx.now).saturating_sub(self.born),
        }
    }

    /// A head was parsed into `ex`: ask core, then queue the response.
    pub fn start_exchange(
        &mut self,
        t: &mut Transport,
        mut ex: Box<Exchange>,
        cx: &mut Ctx,
    ) -> Step {
        if t.tls.is_some() {
            match self.tls_exchange(t, ex, cx) {
                Ok(step) => return step,
                Err(back) => ex = back,
            }
        }
        self.set_gauge(Gauge::Writing, cx);
        cx.timers.disarm(self.key as usize);
        ex.set_parsed();
        let note = self.answer(&mut ex, cx);
        if let Some(held) = cx.core.take_held() {
            ex = match self.hold(ex, held, cx) {
                Ok(step) => return step,
                Err(ex) => ex,
            };
        }
        if cx.core.has_subrequest()
            && let Some(pending) = cx.core.take_subrequest()
        {
            return self.start_subrequest(t, ex, pending, cx);
        }
        // One read on the plain path: only a proxied answer left a job.
        if cx.core.has_proxy()
            && let Some(job) = cx.core.take_proxy()
            && ex.resp.as_ref().is_some_and(|r| r.status != 413)
            && let Some(job) = crate::upstream::cache_store::hit(&mut ex, job, &self.info, cx)
        {
            return self.start_proxy(t, ex, job, cx);
        }
        let (req, resp) = ex.split();
        // `answer` always puts a response in; `None` would be a bug, met
        // by closing rather than by a panic.
        let Some(resp) = resp.as_mut() else {
            return Step::Close(Close::Normal);
        };
        if resp.status == 444 {
            // nginx's `return 444`: close without sending anything.
            self.ex = Some(ex);
            self.log_access(cx);
            return Step::Close(Close::Normal);
        }
        let keep = self.keep(cx);
        let mut plan = Plan::of(req, resp, cx.wall, keep);
        let (consumed, bad_body) = if plan.body.is_some() && self.buffered() > 0 {
            self.read_buffered_body(&mut plan, resp, cx)
        } else {
            (0, None)
        };
        let step = self.queue(t, ex, plan, cx);
        if let Some(ex) = self.ex.as_mut() {
            ex.request_length += consumed;
        }
        if let Some(note) = note {
            // Logged once the exchange exists, for `request:` and `host:`.
            self.log(cx, LogLevel::Error, &note.to_string(), "");
        }
        if let Some(e) = bad_body {
            self.log(cx, LogLevel::Error, &e.kind.to_string(), "");
        }
        if cx.core.has_log_lines() {
            self.log_script_lines(cx);
        }
        step
    }

    /// The rewrite module's lines for this request (`rewrite_log`
    /// notices, `uninitialized_variable_warn` warnings), with its context.
    #[cold]
    fn log_script_lines(&self, cx: &mut Ctx) {
        for line in cx.core.take_log_lines() {
            self.log(cx, line.level, &line.text, "");
        }
    }

    /// Discards the body bytes already read before the response goes out,
    /// as nginx's handlers do first (`ngx_http_discard_request_body`). A
    /// body that cannot be valid (a bad chunk size, more data than a chunk
    /// declared) turns a normal response into 400, and an error page into
    /// one that closes, as nginx does (`client sent invalid chunked
    /// body`). Returns the bytes consumed and the error to log. Out of
    /// line: nearly every request has no body.
    #[inline(never)]
    fn read_buffered_body(
        &mut self,
        plan: &mut Plan,
        resp: &mut Response,
        cx: &mut Ctx,
    ) -> (u64, Option<HttpError>) {
        let (Some(dec), Some(b)) = (plan.body.as_mut(), self.rbuf.as_mut()) else {
            return (0, None);
        };
        let mut consumed = 0u64;
        while b.start < b.end {
            match dec.decode(b.pending()) {
                Ok(p) => {
                    b.start += p.consumed;
                    consumed += p.consumed as u64;
                    if p.done {
                        plan.body = None;
                        break;
                    }
                    if p.consumed == 0 {
                        break;
                    }
                }
                Err(e) => {
                    // Nothing after a broken body can be trusted.
                    b.start = b.end;
                    plan.body = None;
                    plan.keepalive = false;
                    plan.linger = true;
                    if resp.status < 300 || resp.status == 304 {
                        let conf = resp.conf.clone();
                        let server = resp.server.clone();
                        *resp = cx.core.error_response(e.status);
                        resp.keepalive = false;
                        resp.conf = resp.conf.take().or(conf);
                        resp.server = resp.server.take().or(server);
                        plan.expect = false;
                        plan.comp = None;
                    }
                    return (consumed, Some(e));
                }
            }
        }
        (consumed, None)
    }

    /// Puts in `ex.resp` core's response to `ex`'s request (returning what
    /// to write to the error log about it), or 500 if it panicked, or 413
    /// when the announced body is over `client_max_body_size`, or the
    /// scrape of a `metrics on` location. The response is written where it
    /// stays: a `Response` is a hundred bytes, and returning it through
    /// `catch_unwind` and the callers copied it four times.
    fn answer(&mut self, ex: &mut Exchange, cx: &mut Ctx) -> Option<ErrorNote> {
        let explain = LogLevel::Error >= cx.log_level;
        let (req, resp) = ex.split();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            let (r, note) = cx.core.handle_explained(&self.info, req, cx.wall, explain);
            *resp = Some(r);
            note
        }));
        let mut note = match caught {
            Ok(note) => note,
            Err(p) => {
                // A bug in request processing costs this request (500, as
                // nginx answers an internal error), not the worker's other
                // connections.
                // What it was doing may have left the caches half updated:
                // they go (nginx would lose the worker process).
                cx.core.drop_caches();
                let why = crate::errlog::panic_text(&*p);
                self.log(
                    cx,
                    LogLevel::Alert,
                    &format!("request processing panicked: {why}; the worker's caches are dropped"),
                    "",
                );
                let mut r = cx.core.error_response(500);
                r.keepalive = false;
                *resp = Some(r);
                None
            }
        };
        let Some(r) = resp.as_mut() else { return note };
        // nginx checks client_max_body_size once the location is known
        // (ngx_http_core_find_config_handler) and answers 413 with close.
        if let (Some(c), BodyKind::Length(n)) = (&r.conf, req.body_kind())
            && c.client_max_body_size > 0
            && n > c.client_max_body_size
            && r.status != 413
        {
            let conf = r.conf.clone();
            let server = r.server.clone();
            *r = cx.core.error_response(413);
            r.keepalive = false;
            note = explain.then_some(ErrorNote::TooLargeBody { length: n });
            r.conf = r.conf.take().or(conf);
            r.server = r.server.take().or(server);
        }
        note
    }

    /// The head could not be parsed: nginx's error page, then close.
    #[inline(never)]
    pub fn start_error(
        &mut self,
        t: &mut Transport,
        mut ex: Box<Exchange>,
        e: HttpError,
        cx: &mut Ctx,
    ) -> Step {
        if self.is_h2_preface(t, cx) {
            ex.reset(&mut cx.pool);
            cx.exchanges.put(ex);
            return Step::Close(Close::ToHttp2);
        }
        let doing = if matches!(e.status, 414) || self.buffered() == 0 {
            "while reading client request line"
        } else {
            "while reading client request headers"
        };
        self.log(cx, LogLevel::Info, &e.kind.to_string(), doing);
        if e.kind == peregrine_codec::HttpErrorKind::InvalidUri {
            // The request line was read and its URI refused while being
            // normalised: nginx logs the request's line, method and an
            // empty `$uri` (`ngx_http_process_request_uri` had allocated it).
            ex.set_parsed();
        }
        self.set_gauge(Gauge::Writing, cx);
        cx.timers.disarm(self.key as usize);
        // Nothing after a bad head can be trusted as the next request.
        if let Some(b) = self.rbuf.as_mut() {
            b.start = b.end;
        }
        ex.resp = Some(self.default_error_page(e.status, cx));
        self.queue(t, ex, Plan::closing(), cx)
    }

    /// The first request of a connection to an HTTP/2 address fails to
    /// parse as HTTP/1 because it is the HTTP/2 preface (or its start):
    /// nginx sniffs it the same way (`ngx_http_v2_init` after reading
    /// "PRI * HTTP/2.0"), when the connection may speak it ([`h2_allowed`]).
    fn is_h2_preface(&self, t: &Transport, cx: &Ctx) -> bool {
        let Some(b) = self.rbuf.as_ref() else {
            return false;
        };
        let have = b.pending();
        let n = have.len().min(peregrine_h2::frame::PREFACE.len());
        self.info.requests == 1
            && n > 0
            && have[..n] == peregrine_h2::frame::PREFACE[..n]
            && h2_allowed(t, cx.lctx(self.lst))
    }

    /// The default server's page for `status` (its `error_page` applies,
    /// as nginx's special response handler); a panic there costs the
    /// page, not the worker.
    fn default_error_page(&self, status: u16, cx: &mut Ctx) -> Response {
        let mut resp = crate::ctx::default_server_page(cx, self.lst, &self.info, status);
        resp.keepalive = false;
        resp
    }

    /// A plain HTTP request on a TLS address: nginx logs it and answers
    /// 497 (`ngx_http_process_request`: "client sent plain HTTP request to
    /// HTTPS port"), sent as 400 with its own page, and closes.
    #[cold]
    #[inline(never)]
    fn plain_on_tls(&mut self, t: &mut Transport, mut ex: Box<Exchange>, cx: &mut Ctx) -> Step {
        self.info.ssl = None;
        ex.set_parsed();
        self.set_gauge(Gauge::Writing, cx);
        cx.timers.disarm(self.key as usize);
        self.log(
            cx,
            LogLevel::Info,
            "client sent plain HTTP request to HTTPS port",
            "while reading client request headers",
        );
        if let Some(b) = self.rbuf.as_mut() {
            b.start = b.end;
        }
        ex.resp = Some(self.default_error_page(497, cx));
        self.queue(t, ex, Plan::closing(), cx)
    }

    /// A request on a TLS connection: plain HTTP (497), the session's
    /// variables taken once per connection, and `ssl_verify_client`'s
    /// refusals (495, 496). `Err` hands the exchange back to go on.
    #[cold]
    #[inline(never)]
    fn tls_exchange(
        &mut self,
        t: &mut Transport,
        mut ex: Box<Exchange>,
        cx: &mut Ctx,
    ) -> Result<Step, Box<Exchange>> {
        if t.plain_on_tls() {
            return Ok(self.plain_on_tls(t, ex, cx));
        }
        let Some(tls) = t.tls.as_deref_mut() else {
            return Err(ex);
        };
        let Some((vars, refuse)) = tls.take_vars() else {
            return Err(ex);
        };
        // nginx's `ngx_http_set_virtual_server`: a Host other than the
        // SNI name whose server asks for client certificates is 421.
        // (`start_exchange` calls this before marking the head parsed.)
        let host = ex.req_mut().host();
        let misdirected = match (vars.server_name.as_deref(), host) {
            (Some(sni), Some(host)) if !sni.eq_ignore_ascii_case(host) => {
                tls.table().asks_client_cert(self.info.local, host)
            }
            _ => false,
        };
        self.info.ssl = Some(std::sync::Arc::new(vars));
        match refuse {
            Some(status) => Ok(self.ssl_refuse(t, ex, status, cx)),
            None if misdirected => Ok(self.ssl_refuse(t, ex, 421, cx)),
            None => Err(ex),
        }
    }

    /// nginx's `ngx_http_process_request` for a client certificate that
    /// did not verify (495) or was not sent (496): logged at info, its
    /// page (or `error_page`) sent as 400, and the connection closed; and
    /// a misdirected request (421).
    #[cold]
    #[inline(never)]
    fn ssl_refuse(
        &mut self,
        t: &mut Transport,
        mut ex: Box<Exchange>,
        status: u16,
        cx: &mut Ctx,
    ) -> Step {
        ex.set_parsed();
        self.set_gauge(Gauge::Writing, cx);
        cx.timers.disarm(self.key as usize);
        let why = match self.info.ssl.as_ref().map(|v| v.client_verify.clone()) {
            _ if status == 421 => {
                "client attempted to request the server name different from the one that was negotiated".to_string()
            }
            Some(v) if status == 495 => format!(
                "client SSL certificate verify error: ({})",
                v.strip_prefix("FAILED:").unwrap_or(&v)
            ),
            _ => "client sent no required SSL certificate".to_string(),
        };
        self.log(
            cx,
            LogLevel::Info,
            &why,
            "while reading client request headers",
        );
        if let Some(b) = self.rbuf.as_mut() {
            b.start = b.end;
        }
        ex.resp = Some(self.default_error_page(status, cx));
        self.queue(t, ex, Plan::closing(), cx)
    }

    /// Serializes the head of `ex.resp` and starts its output.
    pub(crate) fn queue(
        &mut self,
        t: &mut Transport,
        mut ex: Box<Exchange>,
        plan: Plan,
        cx: &mut Ctx,
    ) -> Step {
        if !ex.queue(plan, &cx.head_start, t.can_sendfile()) {
            return Step::Close(Close::Normal);
        }
        self.ex = Some(ex);
        self.phase = Phase::Send;
        Step::Continue
    }

    /// Writes the response on: through the socket itself, or (out of
    /// line) through TLS. Each gets its own copy of the send step, so the
    /// plain one has no TLS branch inside its write loop.
    #[inline(always)]
    pub fn step_send(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        if t.tls.is_some() {
            return self.step_send_tls(t, key, cx);
        }
        self.send_with(t, key, cx, |t, out, pool, chunk| {
            out.write(&mut t.sock, pool, chunk)
        })
    }

    #[cold]
    #[inline(never)]
    fn step_send_tls(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        self.send_with(t, key, cx, |t, out, pool, chunk| {
            let Some(tls) = t.tls.as_deref_mut() else {
                return out.write(&mut t.sock, pool, chunk);
            };
            write_tls(out, TlsSink { sock: &t.sock, tls }, pool, chunk)
        })
    }

    #[inline(always)]
    fn send_with(
        &mut self,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
        write: impl FnOnce(
            &mut Transport,
            &mut Output,
            &mut Pool,
            usize,
        ) -> Result<Progress, WriteError>,
    ) -> Step {
        if t.readable && (self.delayed || !t.writable) {
            if t.peer_closed() {
                return self.end_closed(cx);
            }
            if self.delayed {
                // `limit_rate`'s timer is still armed: wait it out.
                return Step::Wait;
            }
        }
        if !t.writable {
            // Keep the body flowing meanwhile: a client that sends its whole
            // body before reading would otherwise deadlock with us.
            return self.discard_while_blocked(t, cx);
        }
        let Some(ex) = self.ex.as_mut() else {
            return self.complete(t, key, cx);
        };
        let (rate, after, chunk) = ex.conf().map_or((0, 0, DEFAULT_SENDFILE_MAX_CHUNK), |c| {
            (
                c.conn.limit_rate,
                c.conn.limit_rate_after,
                c.conn.sendfile_max_chunk,
            )
        });
        let mut before = 0;
        if rate > 0 {
            let elapsed = cx
                .wall
                .duration_since(self.req_start)
                .map_or(0, |d| d.as_secs());
            match rate::gate(&mut ex.out, rate, after, elapsed) {
                Ok(sent) => {
                    before = sent;
                    self.delayed = false;
                }
                Err(d) => {
                    self.delay(key, cx, d);
                    return Step::Wait;
                }
            }
        }
        match write(t, &mut ex.out, &mut cx.pool, chunk) {
            Ok(Progress::Done) => self.finish_output(t, key, cx),
            Ok(Progress::Limited) => {
                let d = rate::pause(&ex.out, rate, after, before);
                if d.is_zero() {
                    return Step::Continue;
                }
                self.delay(key, cx, d);
                Step::Wait
            }
            Ok(Progress::Blocked) => {
                t.writable = false;
                let d = ex
                    .conf()
                    .map_or(peregrine_conf::build::raw::DEFAULT_SEND_TIMEOUT, |c| {
                        c.send_timeout
                    });
                cx.timers.arm(key, cx.now, d);
                Step::Continue
            }
            Err(e) => {
                self.log_write_error(cx, &e);
                Step::Close(Close::Normal)
            }
        }
    }

    /// nginx's words and levels: a send that fails is the client's doing
    /// (info, as `ngx_connection_error` logs a reset or broken pipe); a
    /// file that cannot be read is the disk's (crit, as `ngx_read_file`);
    /// an encoder that fails is ours (alert, as the gzip filter's
    /// `deflate() failed`), and so is a file that shrank under us (alert,
    /// nginx's "file was truncated"). The worker goes on serving.
    #[inline(never)]
    fn log_write_error(&mut self, cx: &mut Ctx, e: &WriteError) {
        let (level, text) = match e {
            WriteError::Io(e) => (LogLevel::Info, with_os_error("writev() failed", e)),
            WriteError::Sendfile(e) => (LogLevel::Info, with_os_error("sendfile() failed", e)),
            WriteError::Read(e) => (LogLevel::Crit, with_os_error("pread() failed", e)),
            WriteError::Encode(e) => (LogLevel::Alert, format!("compression failed: {e}")),
            WriteError::Truncated => (LogLevel::Alert, "file was truncated".to_owned()),
        };
        self.log(cx, level, &text, "while sending response to client");
    }

    /// The client went away mid-response: nginx logs it at `info` and
    /// finalizes with 499 (`NGX_HTTP_CLIENT_CLOSED_REQUEST`), which becomes
    /// the logged status only when nothing was sent yet
    /// (`ngx_http_terminate_request`). The access log line follows at close.
    #[inline(never)]
    fn end_closed(&mut self, cx: &mut Ctx) -> Step {
        self.log(
            cx,
            LogLevel::Info,
            "client prematurely closed connection",
            "",
        );
        if let Some(ex) = self.ex.as_mut()
            && ex.out.head_bytes + ex.out.body_bytes == 0
            && let Some(resp) = ex.resp.as_mut()
        {
            resp.status = 499;
        }
        Step::Close(Close::Normal)
    }

    #[inline(never)]
    fn discard_while_blocked(&mut self, t: &mut Transport, cx: &mut Ctx) -> Step {
        let pending = self.ex.as_ref().is_some_and(|e| e.body.is_some());
        if !pending || !t.readable {
            return Step::Wait;
        }
        if self.discard_buffered().is_err() {
            return Step::Close(Close::Normal);
        }
        if self.ex.as_ref().is_some_and(|e| e.body.is_none()) {
            return Step::Wait;
        }
        match self.fill(t, cx, READ_BUF_SIZE) {
            Ok(0) => Step::Close(Close::Normal),
            Ok(_) => Step::Continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                t.readable = false;
                Step::Wait
            }
            Err(_) => Step::Close(Close::Normal),
        }
    }

    /// The whole response is in the kernel.
    #[inline(always)]
    fn finish_output(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        cx.timers.disarm(self.key as usize);
        match self.discard_buffered() {
            Ok(true) => self.complete(t, key, cx),
            Ok(false) => {
                // nginx keeps discarding (without shutting the write side)
                // until the body is in, then keeps alive or closes.
                let l = Lingering::of(self.ex.as_ref().and_then(|e| e.conf()).map(|c| &**c));
                self.phase = Phase::Discard {
                    until: cx.now + l.time,
                    timeout: l.timeout,
                };
                Step::Continue
            }
            Err(e) => {
                self.log(cx, LogLevel::Error, &e.kind.to_string(), "");
                self.log_access(cx);
                let l = Lingering::of(self.ex.as_ref().and_then(|e| e.conf()).map(|c| &**c));
                self.start_linger(t, key, cx, l)
            }
        }
    }

    /// The exchange is over (body discarded too): log, then keep alive or close.
    pub fn complete(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        if self.ex.as_ref().is_some_and(|e| {
            !e.post_done && e.conf().is_some_and(|c| c.request.post_action.is_some())
        }) {
            self.queue_post_action(cx);
        }
        if self
            .ex
            .as_ref()
            .is_some_and(|e| matches!(e.bg, crate::upstream::background::Background::Pending(_)))
            && let Some(step) = self.start_background(t, cx)
        {
            return step;
        }
        self.log_access(cx);
        let Some(mut ex) = self.ex.take() else {
            return Step::Close(Close::Normal);
        };
        if ex.held.is_some() {
            self.end_held(&ex);
        }
        let (keepalive, linger, held) = (ex.keepalive, ex.linger, ex.out.last);
        let conf = ex.conf().map(|c| (c.tcp_nodelay, c.keepalive_timeout));
        if !keepalive || cx.draining {
            return self.close_after(t, key, cx, ex, linger, held);
        }
        ex.reset(&mut cx.pool);
        cx.exchanges.put(ex);
        cx.timers.disarm(self.key as usize);
        let Some((tcp_nodelay, keepalive_timeout)) = conf else {
            return Step::Close(Close::Normal);
        };
        if tcp_nodelay && !t.nodelay {
            t.set_nodelay();
        }
        if self.buffered() > 0 {
            // Pipelined: the next request is already here.
            self.begin_request(cx, true);
            return Step::Continue;
        }
        self.phase = Phase::Idle { keepalive: true };
        self.set_gauge(Gauge::Waiting, cx);
        self.release_empty_buf(cx);
        cx.timers.arm(key, cx.now, keepalive_timeout);
        // A drained socket has nothing more for an idle connection: wait
        // now rather than through another turn of `drive`.
        if t.readable {
            Step::Continue
        } else {
            Step::Wait
        }
    }

    /// The end of a connection's last exchange: lingering close (nginx's
    /// `ngx_http_finalize_connection`: `lingering_close on` lingers when
    /// the client may still be sending) or close.
    fn close_after(
        &mut self,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
        mut ex: Box<Exchange>,
        linger: bool,
        held: bool,
    ) -> Step {
        let lingering = Lingering::of(ex.conf().map(|c| &**c));
        let mode = ex
            .conf()
            .map_or(LingeringClose::On, |c| c.conn.lingering_close);
        ex.reset(&mut cx.pool);
        cx.exchanges.put(ex);
        cx.timers.disarm(self.key as usize);
        let wanted = match mode {
            LingeringClose::Off => false,
            LingeringClose::Always => true,
            LingeringClose::On => linger || self.buffered() > 0 || t.readable,
        };
        if wanted {
            return self.start_linger(t, key, cx, lingering);
        }
        if held {
            // The tail sent with MSG_MORE is still queued. Bytes the
            // client sent after our last read would make `close` answer
            // with RST, and an RST discards what is queued: the whole
            // response would be lost (tcp_close: unread data → RST).
            // `shutdown` first sends the tail with the FIN, as wanted;
            // a later RST then only follows them.
            t.shutdown_write();
        }
        Step::Close(Close::Normal)
    }

    /// Access-logs a request that ended without an answer: nginx logs 408
    /// for a head that timed out and 400 for a client that closed mid-head,
    /// to the default server's `access_log`.
    pub fn log_unanswered(&mut self, status: u16, cx: &mut Ctx) {
        if cx.access.is_none() {
            return;
        }
        let mut resp = cx.core.error_response(status);
        if let Some(srv) = &cx.lctx(self.lst).default_server {
            resp.conf = resp.conf.or_else(|| Some(srv.conf.clone()));
            resp.server = resp.server.or_else(|| Some(srv.clone()));
        }
        let request_length = self.buffered() as u64;
        let entry = AccessEntry {
            conn: &self.info,
            request: None,
            response: &resp,
            status,
            bytes_sent: 0,
            body_bytes_sent: 0,
            request_length,
            start: self.req_start,
            end: cx.wall,
            pipelined: self.pipelined,
            upstream: None,
            conn_peer: None,
            core: Some(&cx.core),
        };
        if let Some(log) = cx.access.as_mut() {
            log.log(&entry);
        }
    }

    /// A connection closes with its exchange unfinished (a send error or
    /// timeout, a body discard cut short, a shutdown): nginx logs such a
    /// request too, with the status and the bytes actually sent.
    #[inline(never)]
    pub fn log_unfinished(&mut self, cx: &mut Ctx) {
        if self
            .ex
            .as_ref()
            .is_some_and(|e| !e.logged && e.resp.is_some())
        {
            self.log_access(cx);
        }
    }

    /// Counts the finished request for the metrics, then access-logs it.
    /// Inlined so that a worker with neither (the tuned setting, see
    /// [`crate::AccessLog::logs_nothing`]) pays a test, not a call.
    #[inline]
    fn log_access(&mut self, cx: &mut Ctx) {
        if cx.metrics || cx.access.is_some() {
            self.count_and_log(cx);
        }
    }

    fn count_and_log(&mut self, cx: &mut Ctx) {
        if let Some(ex) = self.ex.as_deref_mut() {
            ex.logged = true;
        }
        let Some(ex) = self.ex.as_deref() else { return };
        let Some(resp) = ex.resp.as_ref() else { return };
        if cx.metrics {
            cx.stats.caches(cx.core.take_cache_counts());
            cx.stats.finished(&Finished {
                server: resp.server.as_ref().and_then(|s| cx.core.server_index(s)),
                status: resp.status,
                bytes_in: ex.request_length,
                bytes_out: ex.out.head_bytes + ex.out.body_bytes,
                // The loop turn's clock, as nginx's cached time for
                // `$request_time`: no clock read per request.
                duration: cx.wall.duration_since(self.req_start).unwrap_or_default(),
            });
        }
        let Some(log) = cx.access.as_mut() else {
            return;
        };
        let entry = AccessEntry {
            conn: &self.info,
            request: ex.req(),
            response: resp,
            status: resp.status,
            bytes_sent: ex.out.head_bytes + ex.out.body_bytes,
            body_bytes_sent: ex.out.body_bytes,
            request_length: ex.request_length,
            start: self.req_start,
            // The loop turn's clock, as nginx's cached time
            // (`ngx_timeofday`, updated after each epoll_wait): no clock
            // read per request, logged or not.
            end: cx.wall,
            pipelined: self.pipelined,
            upstream: ex.upstream.as_deref(),
            conn_peer: ex.held.as_ref().and_then(|h| h.conn_peer),
            core: Some(&cx.core),
        };
        log.log(&entry);
    }
}

/// [`Output::write`] under TLS, out of the plain path's line (the write
/// is inlined where it is called: once for each kind of transport). A
/// write that is `Done` is done only once the records rustls holds are
/// sent too; until then it waits for the socket like a blocked write.
#[inline(always)]
fn write_tls(
    out: &mut Output,
    mut sink: TlsSink<'_>,
    pool: &mut Pool,
    chunk: usize,
) -> Result<Progress, WriteError> {
    let p = out.write(&mut sink, pool, chunk)?;
    if p == Progress::Done && !sink.flush()? {
        return Ok(Progress::Blocked);
    }
    Ok(p)
}

fn dec_done(d: Option<&BodyDecoder>) -> bool {
    d.is_none_or(BodyDecoder::is_done)
}

/// Whether the HTTP/2 preface starts HTTP/2 on this connection: on TLS
/// when ALPN chose `h2` (nginx's `ngx_http_ssl_handshake_handler`; the
/// preface sent in clear to a TLS address is a bad HTTP/1 request), on a
/// plain address (h2c) when its default server says `http2 on` or a
/// `listen` says `http2` (`ngx_http_wait_request_handler`).
fn h2_allowed(t: &Transport, l: &crate::ctx::ListenCtx) -> bool {
    match t.tls.as_deref() {
        Some(tls) => tls.alpn_is_h2(),
        None => l.http2_listen || l.default_server.as_ref().is_some_and(|s| s.http2.on),
    }
}
