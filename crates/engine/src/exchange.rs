//! One request/response exchange on a connection: from a parsed head (or a
//! parse error) to the response written, the body discarded, the access
//! log called, and the connection kept alive or closed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use peregrine_codec::{BodyDecoder, BodyKind, HttpError, Request};
use peregrine_conf::model::{LingeringClose, LocConf, LogLevel, ServerName};
use peregrine_core::Response;
use peregrine_core::response::ErrorNote;

use crate::AccessEntry;
use crate::conn::{Close, Conn, Lingering, Phase, Step};
use crate::errlog::with_os_error;
use crate::stats::{Finished, Gauge};
use crate::worker::Ctx;
use crate::write::{ConnHeader, Output, Progress, WriteError, serialize_head};

/// nginx's `sendfile_max_chunk` default, for a response with no location.
const DEFAULT_SENDFILE_MAX_CHUNK: usize = 2 << 20;

/// One request and its response. Exchanges are pooled whole (see
/// [`crate::pool::Pool::exchange`]): the request is parsed in place and the
/// head serialized into the output's kept buffer, so a request allocates
/// nothing and moves no large value into the heap.
#[derive(Default)]
pub struct Exchange {
    /// The request head, parsed in place (the exchange itself is boxed).
    req: Request,
    /// `req` holds this exchange's request (false: the head failed to parse).
    parsed: bool,
    /// `None` while idle: what a response references (settings, server,
    /// body) is released when its exchange ends.
    pub resp: Option<Response>,
    pub out: Output,
    /// Decoder of a request body still to discard.
    pub body: Option<BodyDecoder>,
    /// Head plus body bytes read (`$request_length`).
    pub request_length: u64,
    /// The head said `Connection: keep-alive` (may still close if draining).
    pub keepalive: bool,
    /// Close with lingering (errors: nginx lingers so the client reads the
    /// error page before a RST could destroy it).
    pub linger: bool,
    /// Access-logged (and counted) already: an exchange that ends
    /// abnormally is logged when its connection closes, once.
    pub logged: bool,
}

impl Exchange {
    /// The request, unless its head failed to parse.
    pub fn req(&self) -> Option<&Request> {
        self.parsed.then_some(&self.req)
    }

    /// Where the next head is parsed (the codec resets it).
    pub fn req_mut(&mut self) -> &mut Request {
        &mut self.req
    }

    pub fn conf(&self) -> Option<&Arc<LocConf>> {
        self.resp.as_ref()?.conf.as_ref()
    }

    /// Back to idle, keeping the request's and the output's buffers.
    pub fn reset(&mut self, pool: &mut crate::pool::Pool) {
        self.parsed = false;
        self.resp = None;
        self.out.reset(pool);
        self.body = None;
        self.request_length = 0;
        self.keepalive = false;
        self.linger = false;
        self.logged = false;
    }
}

/// nginx's text of a server name in log lines.
pub fn server_name_text(n: &ServerName) -> String {
    match n {
        ServerName::Exact(s) => s.clone(),
        ServerName::WildcardStart {
            suffix,
            also_bare: true,
        } => suffix.clone(),
        ServerName::WildcardStart {
            suffix,
            also_bare: false,
        } => format!("*{suffix}"),
        ServerName::WildcardEnd(p) => format!("{p}*"),
        ServerName::Regex(r) => format!("~{}", r.as_str()),
    }
}

/// The answer of a `metrics on` location: its content handler is the
/// scrape (core ran the phases to find the location; what they produced
/// is dropped, keeping the server block for the logs).
fn scrape(req: &Request, mut resp: Response, cx: &mut Ctx) -> Response {
    let Some(conf) = resp.conf.clone() else {
        return resp;
    };
    let method = match req.method() {
        peregrine_codec::Method::Get => peregrine_core::Method::Get,
        peregrine_codec::Method::Head => peregrine_core::Method::Head,
        _ => peregrine_core::Method::Other,
    };
    let snap = cx.stats.metrics();
    let server = resp.server.take();
    let mut out = cx.core.metrics_response(&conf, method, &snap);
    out.server = server;
    out
}

/// How a queued response goes out and what follows it.
struct Plan {
    /// `Connection: keep-alive` in the head.
    keepalive: bool,
    /// `100 Continue` first.
    expect: bool,
    /// Lingering close afterwards.
    linger: bool,
    /// A request body to discard.
    body: Option<BodyDecoder>,
    /// The body goes through an encoder.
    comp: Option<Box<crate::compress::Compressing>>,
}

fn body_pending(kind: BodyKind) -> bool {
    match kind {
        BodyKind::None | BodyKind::Length(0) => false,
        BodyKind::Length(_) | BodyKind::Chunked => true,
    }
}

impl Conn {
    /// A head was parsed into `ex`: ask core, then queue the response.
    pub fn start_exchange(&mut self, mut ex: Box<Exchange>, cx: &mut Ctx) -> Step {
        self.set_gauge(Gauge::Writing, cx);
        cx.timers.disarm(self.key);
        ex.parsed = true;
        let note = self.answer(&mut ex, cx);
        let Exchange { req, resp, .. } = &mut *ex;
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
        // The connection's age (`keepalive_time`) from the timers' clock:
        // the turn's `Instant` subtraction is already made for them.
        let age = Duration::from_nanos(cx.timers.nanos(cx.now).saturating_sub(self.born));
        let mut plan = self.plan(req, resp, cx, age);
        let (consumed, bad_body) = if plan.body.is_some() && self.buffered() > 0 {
            self.read_buffered_body(&mut plan, resp, cx)
        } else {
            (0, None)
        };
        let step = self.queue(ex, plan, cx);
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
        step
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

    /// How `resp`, core's answer to `req`, goes out (the compression
    /// filter may rewrite its head).
    fn plan(&self, req: &Request, resp: &mut Response, cx: &Ctx, age: Duration) -> Plan {
        let comp = crate::compress::apply(req, resp, cx.wall);
        let kind = req.body_kind();
        let pending = body_pending(kind);
        let keepalive = resp.keepalive
            && req.keep_alive()
            && !cx.draining
            && resp.conf.as_ref().is_some_and(|c| {
                !c.keepalive_timeout.is_zero()
                    && self.info.requests < c.keepalive_requests
                    && crate::keepalive::allowed(&c.conn, req, age)
            });
        // nginx sends 100 Continue when it reads or discards the body for a
        // normal response; error pages (special responses) set
        // `expect_tested` first and never send it.
        let expect = req.expect_continue() && pending && (resp.status < 300 || resp.status == 304);
        Plan {
            keepalive,
            expect,
            linger: !resp.keepalive,
            body: pending.then(|| BodyDecoder::new(kind)),
            comp,
        }
    }

    /// Puts in `ex.resp` core's response to `ex`'s request (returning what
    /// to write to the error log about it), or 500 if it panicked, or 413
    /// when the announced body is over `client_max_body_size`, or the
    /// scrape of a `metrics on` location. The response is written where it
    /// stays: a `Response` is a hundred bytes, and returning it through
    /// `catch_unwind` and the callers copied it four times.
    fn answer(&mut self, ex: &mut Exchange, cx: &mut Ctx) -> Option<ErrorNote> {
        let explain = LogLevel::Error >= cx.log_level;
        let Exchange { req, resp, .. } = ex;
        let req: &Request = req;
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
                let why = crate::master::panic_text(&*p);
                self.log(
                    cx,
                    LogLevel::Alert,
                    &format!("request processing panicked: {why}"),
                    "",
                );
                let mut r = cx.core.error_response(500);
                r.keepalive = false;
                *resp = Some(r);
                None
            }
        };
        if let Some(r) =
            resp.take_if(|r| r.conf.as_ref().is_some_and(|c| c.metrics) && r.status != 444)
        {
            *resp = Some(scrape(req, r, cx));
            note = None;
        }
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
    pub fn start_error(&mut self, mut ex: Box<Exchange>, e: HttpError, cx: &mut Ctx) -> Step {
        let doing = if matches!(e.status, 414) || self.buffered() == 0 {
            "while reading client request line"
        } else {
            "while reading client request headers"
        };
        self.log(cx, LogLevel::Info, &e.kind.to_string(), doing);
        self.set_gauge(Gauge::Writing, cx);
        cx.timers.disarm(self.key);
        // Nothing after a bad head can be trusted as the next request.
        if let Some(b) = self.rbuf.as_mut() {
            b.start = b.end;
        }
        // The default server's `error_page` applies (nginx's special
        // response handler); a panic there costs the page, not the worker.
        let default = cx.lctx(self.lst).default_server.clone();
        let (info, wall, status) = (&self.info, cx.wall, e.status);
        let core = &mut cx.core;
        let mut resp = catch_unwind(AssertUnwindSafe(|| {
            core.bad_request_response(info, default.as_ref(), status, wall)
        }))
        .unwrap_or_else(|_| cx.core.error_response(status));
        resp.keepalive = false;
        if let Some(srv) = &cx.lctx(self.lst).default_server {
            resp.conf = resp.conf.or_else(|| Some(srv.conf.clone()));
            resp.server = resp.server.or_else(|| Some(srv.clone()));
        }
        let plan = Plan {
            keepalive: false,
            expect: false,
            linger: true,
            body: None,
            comp: None,
        };
        ex.resp = Some(resp);
        self.queue(ex, plan, cx)
    }

    /// Serializes the head of `ex.resp` and starts its output.
    fn queue(&mut self, mut ex: Box<Exchange>, plan: Plan, cx: &mut Ctx) -> Step {
        let Exchange { resp, out, .. } = &mut *ex;
        let Some(resp) = resp.as_mut() else {
            return Step::Close(Close::Normal);
        };
        resp.status = peregrine_codec::response::wire_status(resp.status);
        let conf = resp.conf.as_deref();
        let ch = ConnHeader {
            keepalive: plan.keepalive,
            keepalive_header: conf.and_then(|c| c.keepalive_header),
        };
        serialize_head(out.head_mut(), resp, &cx.head_start, &ch, plan.expect);
        let sendfile = conf.is_some_and(|c| c.sendfile);
        out.nopush = conf.is_some_and(|c| c.tcp_nopush);
        out.start(&resp.body, resp.header_only, sendfile, plan.comp);
        // With a request body still to discard, the close waits for it
        // (`Phase::Discard`): the final bytes must not wait with it.
        out.last = !plan.keepalive && plan.body.is_none();
        ex.request_length = ex.req().map_or(0, |r| r.head_len() as u64);
        ex.body = plan.body;
        ex.keepalive = plan.keepalive;
        ex.linger = plan.linger;
        self.ex = Some(ex);
        self.phase = Phase::Send;
        Step::Continue
    }

    pub fn step_send(&mut self, key: usize, cx: &mut Ctx) -> Step {
        if self.readable && (self.delayed || !self.writable) {
            if self.client_closed() {
                return self.end_closed(cx);
            }
            if self.delayed {
                // `limit_rate`'s timer is still armed: wait it out.
                return Step::Wait;
            }
        }
        if !self.writable {
            // Keep the body flowing meanwhile: a client that sends its whole
            // body before reading would otherwise deadlock with us.
            return self.discard_while_blocked(cx);
        }
        let Some(ex) = self.ex.as_mut() else {
            return self.complete(key, cx);
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
            match self.rate_gate(key, cx, rate, after) {
                Ok(sent) => {
                    before = sent;
                    self.delayed = false;
                }
                Err(step) => return step,
            }
        }
        let Some(ex) = self.ex.as_mut() else {
            return self.complete(key, cx);
        };
        match ex.out.write(&mut self.stream, &mut cx.pool, chunk) {
            Ok(Progress::Done) => self.finish_output(key, cx),
            Ok(Progress::Limited) => self.rate_pause(key, cx, rate, after, before),
            Ok(Progress::Blocked) => {
                self.writable = false;
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

    #[inline(never)]
    /// nginx's `ngx_http_test_reading`: while a response is held back
    /// (paused by `limit_rate`, or blocked on a full send buffer), a
    /// readable event may be the client's close. A one-byte `MSG_PEEK`
    /// tells, and leaves any pipelined byte where it is.
    fn client_closed(&mut self) -> bool {
        match peregrine_sys::peek(&self.stream) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                self.readable = false;
                false
            }
            Err(e) => e.kind() != std::io::ErrorKind::Interrupted,
        }
    }

    /// The client went away mid-response: nginx logs it at `info` and
    /// finalizes with 499 (`NGX_HTTP_CLIENT_CLOSED_REQUEST`), which becomes
    /// the logged status only when nothing was sent yet
    /// (`ngx_http_terminate_request`). The access log line follows at close.
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

    fn discard_while_blocked(&mut self, cx: &mut Ctx) -> Step {
        let pending = self.ex.as_ref().is_some_and(|e| e.body.is_some());
        if !pending || !self.readable {
            return Step::Wait;
        }
        if self.discard_buffered().is_err() {
            return Step::Close(Close::Normal);
        }
        if self.ex.as_ref().is_some_and(|e| e.body.is_none()) {
            return Step::Wait;
        }
        match self.fill(cx, crate::pool::READ_BUF_SIZE) {
            Ok(0) => Step::Close(Close::Normal),
            Ok(_) => Step::Continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                self.readable = false;
                Step::Wait
            }
            Err(_) => Step::Close(Close::Normal),
        }
    }

    /// The whole response is in the kernel.
    fn finish_output(&mut self, key: usize, cx: &mut Ctx) -> Step {
        cx.timers.disarm(self.key);
        match self.discard_buffered() {
            Ok(true) => self.complete(key, cx),
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
                self.start_linger(key, cx, l)
            }
        }
    }

    /// The exchange is over (body discarded too): log, then keep alive or close.
    pub fn complete(&mut self, key: usize, cx: &mut Ctx) -> Step {
        self.log_access(cx);
        let Some(mut ex) = self.ex.take() else {
            return Step::Close(Close::Normal);
        };
        let (keepalive, linger, held) = (ex.keepalive, ex.linger, ex.out.last);
        let conf = ex.conf().map(|c| (c.tcp_nodelay, c.keepalive_timeout));
        if !keepalive || cx.draining {
            return self.close_after(key, cx, ex, linger, held);
        }
        ex.reset(&mut cx.pool);
        cx.pool.put_exchange(ex);
        cx.timers.disarm(self.key);
        let Some((tcp_nodelay, keepalive_timeout)) = conf else {
            return Step::Close(Close::Normal);
        };
        if tcp_nodelay && !self.nodelay {
            self.nodelay = peregrine_sys::set_tcp_nodelay(&self.stream, true).is_ok();
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
        if self.readable {
            Step::Continue
        } else {
            Step::Wait
        }
    }

    /// The end of a connection's last exchange: lingering close (nginx's
    /// `ngx_http_finalize_connection`: `lingering_close on` lingers when
    /// the client may still be sending) or close.
    #[inline(never)]
    fn close_after(
        &mut self,
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
        cx.pool.put_exchange(ex);
        cx.timers.disarm(self.key);
        let wanted = match mode {
            LingeringClose::Off => false,
            LingeringClose::Always => true,
            LingeringClose::On => linger || self.buffered() > 0 || self.readable,
        };
        if wanted {
            return self.start_linger(key, cx, lingering);
        }
        if held {
            // The tail sent with MSG_MORE is still queued. Bytes the
            // client sent after our last read would make `close` answer
            // with RST, and an RST discards what is queued: the whole
            // response would be lost (tcp_close: unread data → RST).
            // `shutdown` first sends the tail with the FIN, as wanted;
            // a later RST then only follows them.
            let _ = self.stream.shutdown(std::net::Shutdown::Write);
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
        };
        log.log(&entry);
    }
}
