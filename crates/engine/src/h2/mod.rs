//! The HTTP/2 session of a connection: nginx's ngx_http_v2.c over the
//! sans-I/O protocol of `peregrine_h2`. It reads frames through the
//! connection's [`Transport`] (plain h2c or TLS with ALPN `h2`: it does
//! not know which), makes each stream an exchange answered by the same
//! core as HTTP/1 ([`stream`]), and writes the frames the protocol queues
//! with the DATA the streams send in turn ([`send`]).
//!
//! ```text
//!  HTTP/1 session ─preface─► H2Session ─┬─ read ─► Connection::recv ─► events ─► streams
//!                                        └─ write ◄─ Connection::output ◄─ HEADERS, DATA (round robin)
//! ```
//!
//! Timers (one per connection, as HTTP/1's): `keepalive_timeout` while no
//! stream is open (then GOAWAY and close, as nginx's idle handler),
//! `send_timeout` while output waits for the socket. `keepalive_requests`
//! streams end the connection with a graceful GOAWAY, as does draining
//! (QUIT, reload).

mod head;
mod proxy;
mod send;
mod stream;
mod timers;

use std::collections::{HashMap, VecDeque};
use std::io;
use std::time::Duration;

use peregrine_conf::model::LogLevel;
use peregrine_core::ConnInfo;
use peregrine_h2::{Connection, ErrorCode, Event, Progress};

use crate::ctx::Ctx;
use crate::errlog::{self, Context};
use crate::http1::Close;
use crate::stats::Gauge;
use crate::transport::{Sink, TlsSink, Transport};

use stream::Stream;

/// The most input read at once: a whole frame of the largest size we
/// accept and its header, a few times over.
const READ_CHUNK: usize = 4 * (16384 + 9);
/// The most an emptied input buffer keeps between reads (more is freed, so
/// an idle connection does not hold a burst's buffer).
const INBUF_KEEP: usize = 4096;

thread_local! {
    /// The worker's one buffer that `recv` fills (zeroed once, reused by
    /// every HTTP/2 connection of the thread).
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
/// Output queued before writing: frames are produced until this much
/// waits, then written (a slow reader holds at most this per connection
/// beyond the kernel's buffer).
const OUT_HIGH: usize = 64 * 1024;
/// nginx's `keepalive_timeout` default, for an address with no server.
const DEFAULT_IDLE: Duration = Duration::from_secs(75);

pub struct H2Session {
    pub info: ConnInfo,
    pub lst: usize,
    gauge: Gauge,
    conn: Connection,
    /// Received, not yet consumed input.
    inbuf: Vec<u8>,
    streams: HashMap<u32, Stream>,
    /// Proxied streams, while their upstream job runs ([`proxy`]).
    jobs: HashMap<u32, proxy::Job>,
    /// Streams with body left and window to send it, in turn.
    sending: VecDeque<u32>,
    /// How many at the front of `sending` are still to send in this
    /// round ([`send`]); 0: the next round starts, sorted by priority.
    round_left: usize,
    /// Streams with body left whose window is shut, until WINDOW_UPDATE.
    parked: Vec<u32>,
    /// A file piece's bytes on their way into a DATA frame.
    scratch: Vec<u8>,
    /// The request head given to the codec (kept between streams).
    headbuf: Vec<u8>,
    /// The graceful GOAWAY went out (draining, `keepalive_requests`).
    going: bool,
    /// `ssl_verify_client`'s refusal of this connection's requests.
    refuse: Option<u16>,
    /// The connection reached EOF on read.
    eof: bool,
    /// Lingering close after our last GOAWAY: until when, bytes read.
    linger: Option<(std::time::Instant, u64)>,
    /// Streams core delayed, until their time ([`timers`]).
    held: HashMap<u32, timers::HeldStream>,
    /// The frame `inbuf` holds part of, and its stream's deadline.
    partial: Option<timers::Partial>,
    /// Answered streams whose request body is still open, until their
    /// RST_STREAM NO_ERROR ([`timers::DISCARD_GRACE`]).
    discarding: Vec<(u32, std::time::Instant)>,
}

impl H2Session {
    /// Takes over a connection whose HTTP/1 session met the preface:
    /// `pending` is what it had read (the preface and what followed).
    pub fn new(info: ConnInfo, lst: usize, pending: &[u8], cx: &Ctx) -> H2Session {
        let mut cfg = match cx.lctx(lst).http2 {
            Some(c) => peregrine_h2::Config {
                max_concurrent_streams: c.max_concurrent_streams,
                initial_window: u32::try_from(c.body_preread_size).unwrap_or(u32::MAX),
                chunk_size: u32::try_from(c.chunk_size).unwrap_or(u32::MAX),
                ..peregrine_h2::Config::default()
            },
            None => peregrine_h2::Config::default(),
        };
        // nginx bounds a request's fields by the default server's
        // `large_client_header_buffers`: one buffer per name or value, all
        // of them for the list (ngx_http_v2_state_header_block).
        if let Some(srv) = cx.lctx(lst).default_server.as_deref() {
            let (num, size) = srv.large_client_header_buffers;
            cfg.max_field_size = u32::try_from(size).unwrap_or(u32::MAX);
            cfg.max_header_list_size = u32::try_from(num * size).unwrap_or(u32::MAX);
            cfg.max_header_block_size = 2 * num * size;
        }
        H2Session {
            info,
            lst,
            gauge: Gauge::None,
            conn: Connection::new(cfg),
            inbuf: pending.to_vec(),
            streams: HashMap::new(),
            jobs: HashMap::new(),
            sending: VecDeque::new(),
            round_left: 0,
            parked: Vec::new(),
            scratch: Vec::new(),
            headbuf: Vec::new(),
            going: false,
            refuse: None,
            eof: false,
            linger: None,
            held: HashMap::new(),
            partial: None,
            discarding: Vec::new(),
        }
    }

    pub fn set_gauge(&mut self, g: Gauge, cx: &Ctx) {
        cx.stats.shift(self.gauge, g);
        self.gauge = g;
    }

    /// No stream is open: what the worker may close when it drains or
    /// runs out of connections.
    pub fn is_idle(&self) -> bool {
        self.streams.is_empty() && self.jobs.is_empty() && self.held.is_empty()
    }

    /// Runs the session until it must wait for the socket or close.
    pub fn drive(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Option<Close> {
        if t.tls.is_some() && self.info.requests == 0 {
            self.take_tls_vars(t);
        }
        if cx.draining && !self.going {
            self.going = true;
            self.conn.shutdown();
        }
        loop {
            if self.linger.is_some() {
                return self.step_linger(t, key, cx);
            }
            self.run_stream_timers(key, cx);
            if let Err(c) = self.process(key, cx) {
                let _ = self.write(t, cx);
                if !self.conn.wants_write() {
                    return self.step_linger(t, key, cx);
                }
                return Some(c);
            }
            let full = self.drive_jobs(t, cx);
            let blocked = match self.write(t, cx) {
                Ok(b) => b,
                Err(c) => return Some(c),
            };
            if full && !blocked {
                // A job waited for room in the output, which went out.
                continue;
            }
            if self.conn.is_finished() && !self.conn.wants_write() {
                return self.step_linger(t, key, cx);
            }
            if self.eof {
                self.log(cx, LogLevel::Info, "client closed connection");
                return Some(Close::Normal);
            }
            if !t.readable {
                self.arm_timer(key, cx, blocked);
                return None;
            }
            match self.read(t, cx) {
                Ok(()) => {}
                Err(c) => return Some(c),
            }
        }
    }

    /// Lingering close once our last GOAWAY is written (nginx's
    /// `ngx_http_v2_lingering_close`): the write side is shut and what the
    /// client still sends is read and dropped for `lingering_time` (at most
    /// `lingering_timeout` between reads), so that frames it sent before
    /// seeing the GOAWAY (a PING, WINDOW_UPDATEs) do not make the kernel
    /// reset the connection and destroy the response it has not read yet.
    fn step_linger(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Option<Close> {
        let l = crate::http1::Lingering::of(
            cx.lctx(self.lst).default_server.as_ref().map(|s| &*s.conf),
        );
        let (until, mut read) = match self.linger {
            Some(v) => v,
            None => {
                t.shutdown_write();
                self.inbuf = Vec::new();
                (cx.now + l.time, 0)
            }
        };
        let mut buf = [0u8; 4096];
        loop {
            if self.eof || cx.now >= until || read >= crate::http1::LINGERING_MAX_BYTES {
                return Some(Close::Normal);
            }
            if !t.readable {
                self.linger = Some((until, read));
                let d = l.timeout.min(until.saturating_duration_since(cx.now));
                cx.timers.arm(key, cx.now, d);
                return None;
            }
            match t.recv(&mut buf) {
                Ok(0) => return Some(Close::Normal),
                Ok(n) => read += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => t.readable = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Some(Close::Normal),
            }
        }
    }

    /// The graceful GOAWAY of a draining worker, written now; an idle
    /// connection then closes.
    pub fn drain(&mut self, t: &mut Transport, key: usize, cx: &mut Ctx) -> Option<Close> {
        self.drive(t, key, cx)
    }

    fn take_tls_vars(&mut self, t: &mut Transport) {
        if let Some(tls) = t.tls.as_deref_mut()
            && let Some((vars, refuse)) = tls.take_vars()
        {
            self.info.ssl = Some(std::sync::Arc::new(vars));
            self.refuse = refuse;
        }
    }

    fn arm_timer(&mut self, key: usize, cx: &mut Ctx, blocked: bool) {
        let d = if blocked || !self.sending.is_empty() || !self.parked.is_empty() {
            self.send_timeout()
        } else if self.is_idle() {
            self.set_gauge(Gauge::Waiting, cx);
            self.idle_timeout(cx)
        } else {
            // Streams wait for their request bodies.
            self.idle_timeout(cx)
        };
        // Upstream jobs' deadlines and the streams' timers share the
        // connection's timer.
        let next = [self.next_job_deadline(), self.next_stream_timer()];
        let d = next
            .into_iter()
            .flatten()
            .fold(d, |d, at| d.min(at.saturating_duration_since(cx.now)));
        cx.timers.arm(key, cx.now, d);
    }

    fn send_timeout(&self) -> Duration {
        self.streams
            .values()
            .find_map(|s| s.send_timeout())
            .unwrap_or(peregrine_conf::build::raw::DEFAULT_SEND_TIMEOUT)
    }

    /// nginx applies the default server's `keepalive_timeout` to an idle
    /// HTTP/2 connection (`ngx_http_v2_init`, after 1.19.7).
    /// `keepalive_timeout 0` still lets the first request come (nginx
    /// serves it, then sends GOAWAY: h2_keepalive.t): until then the wait
    /// is `client_header_timeout`.
    fn idle_timeout(&self, cx: &Ctx) -> Duration {
        let Some(s) = cx.lctx(self.lst).default_server.as_ref() else {
            return DEFAULT_IDLE;
        };
        match s.conf.keepalive_timeout {
            d if d.is_zero() && self.info.requests == 0 => s.client_header_timeout,
            d => d,
        }
    }

    /// Reads once into the input buffer.
    /// One `recv` into the worker's scratch buffer, the bytes got appended
    /// to `inbuf`: zeroing READ_CHUNK bytes of `inbuf` for every read (an
    /// EAGAIN one too) cost the 612-byte h2load row a sixth of its CPU, and
    /// the grown `inbuf` stayed with every idle connection.
    fn read(&mut self, t: &mut Transport, cx: &Ctx) -> Result<(), Close> {
        let r = SCRATCH.with_borrow_mut(|buf| {
            if buf.is_empty() {
                buf.resize(READ_CHUNK, 0);
            }
            let r = t.recv(buf);
            if let Ok(n) = r {
                self.inbuf.extend_from_slice(&buf[..n]);
            }
            r
        });
        match r {
            Ok(0) => {
                self.eof = true;
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                t.readable = false;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::InvalidData && t.tls.is_some() => {
                let (what, _) = crate::transport::tls_failure(t, &e);
                self.log(cx, LogLevel::Info, &what);
                Err(Close::Normal)
            }
            Err(e) => {
                self.log(
                    cx,
                    LogLevel::Info,
                    &errlog::with_os_error("recv() failed", &e),
                );
                Err(Close::Normal)
            }
        }
    }

    /// Feeds the buffered input to the protocol, acting on each event.
    fn process(&mut self, key: usize, cx: &mut Ctx) -> Result<(), Close> {
        if self.inbuf.is_empty() {
            return Ok(());
        }
        self.conn.start_read();
        let input = std::mem::take(&mut self.inbuf);
        let mut pos = 0;
        let result = loop {
            match self.conn.recv(&input[pos..]) {
                Ok(Progress::Partial) => break Ok(()),
                Ok(Progress::Frame { consumed, event }) => {
                    pos += consumed;
                    if let Some(ev) = event {
                        self.on_event(ev, key, cx);
                    }
                }
                Err(e) => {
                    self.log(cx, LogLevel::Info, e.reason);
                    break Err(Close::Normal);
                }
            }
        };
        let mut input = input;
        input.drain(..pos);
        // A buffer grown by a burst (DATA frames) is not kept idle.
        if input.is_empty() && input.capacity() > INBUF_KEEP {
            input = Vec::new();
        }
        self.inbuf = input;
        self.track_partial(cx);
        result
    }

    fn on_event(&mut self, ev: Event<'_>, key: usize, cx: &mut Ctx) {
        match ev {
            Event::Request {
                stream,
                head,
                end_stream,
            } => self.on_request(stream, &head, end_stream, key, cx),
            Event::Data {
                stream,
                data,
                end_stream,
            } if self.job_data(stream, data, end_stream)
                || self.held_data(stream, data, end_stream) => {}
            Event::Data { stream, data, .. } => {
                // Other request bodies are read and discarded (the static
                // handlers' ngx_http_discard_request_body): the credit goes
                // back at once.
                let n = u32::try_from(data.len()).unwrap_or(u32::MAX);
                if let Some(s) = self.streams.get_mut(&stream) {
                    s.request_length += u64::from(n);
                }
                self.conn.release(stream, n);
            }
            Event::Trailers { stream, .. } if self.held_body_end(stream, None) => {}
            Event::Trailers { stream, .. } => self.job_trailers(stream),
            Event::BadBody { stream, reason } if self.held_body_end(stream, Some(reason)) => {}
            Event::BadBody { stream, reason } => self.bad_body(stream, reason, cx),
            Event::Priority { .. } => {}
            Event::Reset { stream, .. } => self.on_reset(stream, cx),
            Event::WindowUpdate { .. } | Event::Settings => {
                self.sending.extend(self.parked.drain(..));
            }
            Event::GoAway { .. } => {}
        }
    }

    /// Writes what is queued, producing DATA while the output is short.
    /// `Ok(true)`: blocked on the socket.
    fn write(&mut self, t: &mut Transport, cx: &mut Ctx) -> Result<bool, Close> {
        loop {
            self.fill_output(cx);
            let out = self.conn.output();
            if out.is_empty() {
                return Ok(!flush_tls(t).map_err(|_| Close::Normal)?);
            }
            if !t.writable {
                return Ok(true);
            }
            let r = match t.tls.as_deref_mut() {
                None => t.sock.send(out, false),
                Some(tls) => TlsSink { sock: &t.sock, tls }.send(out, false),
            };
            match r {
                Ok(0) => {
                    t.writable = false;
                    return Ok(true);
                }
                Ok(n) => self.conn.advance_output(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    t.writable = false;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.log(
                        cx,
                        LogLevel::Info,
                        &errlog::with_os_error("send() failed", &e),
                    );
                    return Err(Close::Normal);
                }
            }
        }
    }

    /// A timer of this connection fired: idle (GOAWAY, close) or a send
    /// that waited past `send_timeout`.
    pub fn on_timeout(&mut self, t: &mut Transport, cx: &mut Ctx) -> Close {
        if self.linger.is_some() {
            return Close::Normal;
        }
        if !self.streams.is_empty() {
            let timedout = io::Error::from_raw_os_error(libc::ETIMEDOUT);
            let text = errlog::with_os_error("client timed out", &timedout);
            self.log(
                cx,
                LogLevel::Info,
                &format!("{text} while sending response to client"),
            );
        }
        self.conn.go_away(ErrorCode::NoError);
        let _ = self.write(t, cx);
        Close::Normal
    }

    /// The connection closes: the streams still open are logged (nginx
    /// logs each request, finished or not) and their exchanges returned.
    pub fn closing(&mut self, cx: &mut Ctx) {
        let jobs: Vec<u32> = self.jobs.keys().copied().collect();
        for id in jobs {
            self.abort_job(id, cx);
        }
        let held: Vec<u32> = self.held.keys().copied().collect();
        for id in held {
            self.drop_held(id, cx);
        }
        let ids: Vec<u32> = self.streams.keys().copied().collect();
        for id in ids {
            if let Some(mut s) = self.streams.remove(&id) {
                s.closed_early();
                self.finish(s, cx);
            }
        }
        self.set_gauge(Gauge::None, cx);
    }

    /// Logs `text` with nginx's connection context.
    pub(crate) fn log(&self, cx: &Ctx, level: LogLevel, text: &str) {
        if level < cx.log_level {
            return;
        }
        let server = cx.lctx(self.lst).server_name.clone();
        let ctx = Context {
            id: self.info.id,
            peer: self.info.peer,
            server: &server,
            request: None,
            host: None,
        };
        (cx.errlog)(level, &errlog::conn_message(&ctx, text));
    }
}

/// Sends the records rustls holds; true when none is left (always, on
/// plain TCP).
fn flush_tls(t: &mut Transport) -> io::Result<bool> {
    match t.tls.as_deref_mut() {
        None => Ok(true),
        Some(tls) => {
            let done = TlsSink { sock: &t.sock, tls }.flush()?;
            if !done {
                t.writable = false;
            }
            Ok(done)
        }
    }
}
