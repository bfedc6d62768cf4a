//! One stream: a request handed to core as an exchange, its response's
//! head sent as HEADERS, its body left to send, and its access-log line.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use peregrine_codec::{BodyKind, Parsed};
use peregrine_conf::model::LogLevel;
use peregrine_core::proxy::JobBody;
use peregrine_core::response::ErrorNote;
use peregrine_core::{Body, Response};
use peregrine_h2::{ErrorCode, RequestHead};

use super::{H2Session, head};
use crate::AccessEntry;
use crate::ctx::Ctx;
use crate::errlog::{self, Context};
use crate::exchange::Exchange;
use crate::stats::Gauge;

/// Body bytes in memory, shared with core's caches or made for this
/// response (small pieces joined, see [`coalesce`]).
pub(super) enum Mem {
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
    Owned(Vec<u8>),
}

impl Mem {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Mem::Static(b) => b,
            Mem::Shared(b) => b,
            Mem::Owned(b) => b,
        }
    }
}

/// One leaf of a body still to send.
pub(super) enum Piece {
    Mem {
        data: Mem,
        pos: usize,
    },
    File {
        file: Rc<std::fs::File>,
        offset: u64,
        left: u64,
    },
}

pub(super) struct Stream {
    pub ex: Box<Exchange>,
    pub pieces: VecDeque<Piece>,
    /// `$request_length`: the header block as received, plus DATA.
    pub request_length: u64,
    pub start: SystemTime,
    pub head_bytes: u64,
    pub body_bytes: u64,
    /// `add_trailer`'s fields, sent after the body (HEADERS, END_STREAM).
    pub trailers: Trailers,
}

/// Trailer fields, `(name, value)`, names lowercase (RFC 9113 §8.2.1), as
/// nginx's `ngx_http_v2_create_trailers` sends them.
pub(super) type Trailers = Vec<(Vec<u8>, Vec<u8>)>;

/// The request a refused request's proxied error page is fetched as
/// (core's `bad_request_response` runs it as a GET of `/`).
const STAND_IN: &[u8] = b"GET / HTTP/1.0\r\n\r\n";

/// What a request's HEADERS said, for [`H2Session::dispatch`].
pub(super) struct Arrived {
    pub end_stream: bool,
    pub content_length: Option<u64>,
    /// The header block's length (`$request_length` so far).
    pub request_length: u64,
    pub start: SystemTime,
}

/// Request body that came before the stream was dispatched (while held).
pub(super) struct Pending {
    pub data: Vec<u8>,
    /// The body is complete.
    pub end: bool,
    /// The body broke its `content-length`.
    pub error: Option<&'static str>,
}

fn flatten(body: &Body, out: &mut VecDeque<Piece>) {
    match body {
        Body::Empty => {}
        Body::Static(b) if !b.is_empty() => out.push_back(Piece::Mem {
            data: Mem::Static(b),
            pos: 0,
        }),
        Body::Shared(b) if !b.is_empty() => out.push_back(Piece::Mem {
            data: Mem::Shared(b.clone()),
            pos: 0,
        }),
        Body::File { file, offset, len } if *len > 0 => out.push_back(Piece::File {
            file: file.clone(),
            offset: *offset,
            left: *len,
        }),
        Body::Parts(parts) => parts.iter().for_each(|p| flatten(p, out)),
        _ => {}
    }
}

/// The most bytes of adjacent small memory pieces joined into one.
const COALESCE_MAX: usize = 4096;

/// Joins runs of adjacent memory pieces up to [`COALESCE_MAX`] bytes, so
/// that they go out in one DATA frame: nginx's `ngx_http_v2_send_chain`
/// frames a chain's buffers together, so an error page (its text, the
/// `server_tokens` footer, the MSIE padding) is one frame, not three
/// (clients and nginx's tests read the first DATA frame as the page).
fn coalesce(pieces: &mut VecDeque<Piece>) {
    let small =
        |p: &Piece| matches!(p, Piece::Mem { data, pos: 0 } if data.bytes().len() < COALESCE_MAX);
    if pieces.len() < 2
        || !pieces
            .iter()
            .zip(pieces.iter().skip(1))
            .any(|(a, b)| small(a) && small(b))
    {
        return;
    }
    let mut out = VecDeque::with_capacity(pieces.len());
    for p in pieces.drain(..) {
        if let (Some(Piece::Mem { data, pos: 0 }), Piece::Mem { data: next, pos: 0 }) =
            (out.back_mut(), &p)
            && data.bytes().len() + next.bytes().len() <= COALESCE_MAX
        {
            let mut joined = match std::mem::replace(data, Mem::Static(b"")) {
                Mem::Owned(v) => v,
                other => other.bytes().to_vec(),
            };
            joined.extend_from_slice(next.bytes());
            *data = Mem::Owned(joined);
            continue;
        }
        out.push_back(p);
    }
    *pieces = out;
}

impl Stream {
    pub(super) fn send_timeout(&self) -> Option<Duration> {
        Some(self.ex.conf()?.send_timeout)
    }

    /// Sends the trailers, if any (they end the stream).
    pub(super) fn send_trailers(&mut self, conn: &mut peregrine_h2::Connection, id: u32) {
        if self.trailers.is_empty() {
            return;
        }
        let fields: Vec<(&[u8], &[u8])> = self
            .trailers
            .iter()
            .map(|(n, v)| (n.as_slice(), v.as_slice()))
            .collect();
        let before = conn.output().len();
        if conn.send_trailers(id, &fields).is_ok() {
            self.head_bytes += conn.output().len().saturating_sub(before) as u64;
        }
        self.trailers.clear();
    }

    /// The connection closes under the stream: nginx logs 499 when
    /// nothing was sent (`ngx_http_terminate_request`).
    pub(super) fn closed_early(&mut self) {
        if self.head_bytes == 0
            && let Some(r) = self.ex.resp.as_mut()
        {
            r.status = 499;
        }
    }
}

impl H2Session {
    /// A request arrived on `id`: core answers it, the head goes out, the
    /// body waits its turn.
    pub(super) fn on_request(
        &mut self,
        id: u32,
        req: &RequestHead,
        end_stream: bool,
        key: usize,
        cx: &mut Ctx,
    ) {
        self.info.requests += 1;
        cx.stats.request();
        self.set_gauge(Gauge::Writing, cx);
        let start = cx.wall;
        let mut ex = cx.exchanges.take();
        let made_host = head::request_text(req, &mut self.headbuf);
        let limits = &cx.lctx(self.lst).limits;
        let parsed = if made_host {
            // `max_headers` counts the fields the client sent: nginx keeps
            // `:authority` apart from them (h2_max_headers.t).
            let mut limits = limits.clone();
            limits.max_headers = limits.max_headers.saturating_add(1);
            peregrine_codec::parse_request(&self.headbuf, &limits, ex.req_mut())
        } else {
            peregrine_codec::parse_request(&self.headbuf, limits, ex.req_mut())
        };
        let mut note = None;
        match parsed {
            // A head the h2 crate found malformed: nginx's 400 (405 for
            // CONNECT), logged at info as nginx logs it.
            _ if req.bad.is_some() => {
                let (status, why) = req.bad.unwrap_or((400, ""));
                self.log(cx, LogLevel::Info, why);
                ex.resp = Some(self.error_page(status, cx));
            }
            Ok(Parsed::Complete(_)) => {
                ex.set_parsed();
                ex.req_mut().mark_http2();
                ex.req_mut().set_head_len(req.block_len);
                if self.protocol_disabled(&mut ex, cx) {
                    let why = "client attempted to request the server name \
                               for which the negotiated protocol is disabled";
                    self.log(cx, LogLevel::Info, why);
                    ex.resp = Some(self.error_page(421, cx));
                } else {
                    note = self.answer(&mut ex, req.content_length, cx);
                }
            }
            Ok(Parsed::Partial) => ex.resp = Some(self.error_page(400, cx)),
            Err(e) => {
                self.log(cx, LogLevel::Info, &e.kind.to_string());
                ex.resp = Some(self.error_page(e.status, cx));
            }
        }
        if let Some(status) = self.refuse {
            ex.resp = Some(self.error_page(status, cx));
        }
        let arrived = Arrived {
            end_stream,
            content_length: req.content_length,
            request_length: req.block_len as u64,
            start,
        };
        let body = Pending {
            data: Vec::new(),
            end: end_stream,
            error: None,
        };
        self.dispatch(id, ex, note, arrived, body, key, cx);
    }

    /// Core answered `ex`: a delay holds it ([`super::timers`]), a proxy
    /// makes it a job, else its response goes out. `body`: what of the
    /// request body came while it was held.
    #[allow(clippy::too_many_arguments)] // one call per path, all needed
    pub(super) fn dispatch(
        &mut self,
        id: u32,
        mut ex: Box<Exchange>,
        mut note: Option<ErrorNote>,
        req: Arrived,
        body: Pending,
        key: usize,
        cx: &mut Ctx,
    ) {
        let held = cx.core.take_held();
        if let Some(held) = held {
            if let Some(delay) = held.delay.filter(|_| held.resume.is_some()) {
                // A delay (limit_req's burst, auth_delay): the answer is
                // not sent; the request runs again when it is over.
                self.log_notes(&mut note, &ex, cx);
                drop(cx.core.take_subrequest());
                drop(cx.core.take_proxy());
                ex.held = Some(held);
                let h = super::timers::HeldStream {
                    ex,
                    until: cx.now + delay,
                    end_stream: req.end_stream,
                    content_length: req.content_length,
                    request_length: req.request_length,
                    start: req.start,
                    body: body.data,
                    body_end: body.end,
                    body_error: body.error,
                };
                self.hold(id, h);
                return;
            }
            // limit_conn's slots go with the exchange.
            ex.held = Some(held);
        }
        if cx.core.has_subrequest() {
            // A proxied subrequest is run on HTTP/1 only
            // (`upstream::subrequest`): here it answers 502, as before.
            drop(cx.core.take_subrequest());
        }
        let mut job = if cx.core.has_proxy() {
            cx.core.take_proxy()
        } else {
            None
        };
        if self.refuse.is_some() || ex.resp.as_ref().is_some_and(|r| r.status == 413) {
            // The request was answered already (ssl_verify_client's
            // refusal, a Content-Length over client_max_body_size).
            job = None;
        }
        self.log_notes(&mut note, &ex, cx);
        if job.is_some() && ex.req().is_none() {
            // A request refused before it parsed whose `error_page` goes
            // to a proxied location: the job gets the stand-in request
            // nginx's error page is fetched as (a GET of `/`).
            let limits = &cx.lctx(self.lst).limits;
            if peregrine_codec::parse_request(STAND_IN, limits, ex.req_mut()).is_ok() {
                ex.set_parsed();
            }
        }
        if let Some(mut job) = job {
            // A gateway's end-of-body record waits for END_STREAM even
            // after `content-length: 0`: nginx reads an HTTP/2 body until
            // the stream's end whatever its length
            // (`ngx_http_v2_read_request_body`), and sends the empty
            // STDIN record then.
            let gateway = job.proto != peregrine_core::proxy::Proto::Http;
            let kind = match (req.end_stream, req.content_length) {
                (false, Some(0)) if gateway => BodyKind::Length(0),
                (true, _) | (false, Some(0)) => BodyKind::None,
                (false, Some(n)) => BodyKind::Length(n),
                // The length is known at END_STREAM only.
                (false, None) => BodyKind::Chunked,
            };
            // Without a `content-length` core sees no body: the body comes
            // in DATA all the same (its length is sent once known).
            if kind != BodyKind::None
                && matches!(job.body, JobBody::None)
                && job.up().pass_request_body
            {
                job.body = JobBody::Client;
            }
            let jk = cx.upstreams.add_stream_job(key);
            let mut j = super::proxy::Job::new(ex, job, jk, kind, req.request_length, req.start);
            // What came while the request was held.
            j.request_length += body.data.len() as u64;
            j.body = body.data;
            j.body_end |= body.end;
            j.body_error = body.error;
            self.jobs.insert(id, j);
            return;
        }
        if !body.data.is_empty() {
            // Kept while held, not wanted: the credit comes back.
            let n = u32::try_from(body.data.len()).unwrap_or(u32::MAX);
            self.conn.release(id, n);
        }
        let mut s = Stream {
            ex,
            pieces: VecDeque::new(),
            request_length: req.request_length + body.data.len() as u64,
            start: req.start,
            head_bytes: 0,
            body_bytes: 0,
            trailers: Vec::new(),
        };
        if !self.respond(id, &mut s, req.end_stream, cx) {
            self.finish(s, cx);
            return;
        }
        self.start_sending(id, s, cx);
    }

    /// Logs core's note on the request and the lines it left.
    fn log_notes(&mut self, note: &mut Option<ErrorNote>, ex: &Exchange, cx: &mut Ctx) {
        if let Some(note) = note.take() {
            self.log_ex(cx, LogLevel::Error, &note.to_string(), ex);
        }
        if cx.core.has_log_lines() {
            for line in cx.core.take_log_lines() {
                self.log_ex(cx, line.level, &line.text, ex);
            }
        }
    }

    /// A stream whose head went out: ended when it has no body, else its
    /// body waits its turn.
    pub(super) fn start_sending(&mut self, id: u32, mut s: Stream, cx: &mut Ctx) {
        if s.pieces.is_empty() {
            s.send_trailers(&mut self.conn, id);
            self.end_stream(id, s, cx);
        } else {
            self.streams.insert(id, s);
            self.sending.push_back(id);
        }
    }

    /// Sends the response's head and queues its body; false when the
    /// stream ended instead (`return 444`: reset, as nginx does).
    pub(super) fn respond(
        &mut self,
        id: u32,
        s: &mut Stream,
        _end_stream: bool,
        cx: &mut Ctx,
    ) -> bool {
        let Some(resp) = s.ex.resp.as_mut() else {
            self.conn.reset(id, ErrorCode::InternalError);
            return false;
        };
        if resp.status == 444 {
            self.conn.reset(id, ErrorCode::InternalError);
            return false;
        }
        resp.status = peregrine_codec::response::wire_status(resp.status);
        let age_ns = cx
            .wall
            .duration_since(self.info.accepted)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        if let Some(c) = resp.conf.as_deref()
            && (self.info.requests >= c.keepalive_requests || age_ns > c.conn.keepalive_time_ns)
            && !self.going
        {
            // nginx's HTTP/2 `keepalive_requests` and `keepalive_time`:
            // the stream is served, a GOAWAY tells the client to go
            // elsewhere.
            self.going = true;
            self.conn.shutdown();
        }
        let mut names = Vec::with_capacity(128);
        // A `chunked` body is the payload alone (only the HTTP/1 writer
        // frames chunks): DATA as it is, the trailers as HEADERS after it.
        let (fields, _) = head::response_fields(resp, cx.head_start.date(), &mut names);
        if !resp.header_only {
            flatten(&resp.body, &mut s.pieces);
            if let Some(t) = resp.trailers.as_deref() {
                s.trailers = t
                    .fields()
                    .iter()
                    .map(|f| (f.name.to_ascii_lowercase(), f.value.to_vec()))
                    .collect();
            }
        }
        coalesce(&mut s.pieces);
        if let Some(c) = resp.conf.as_deref() {
            let chunk = u32::try_from(c.conn.http2_chunk_size).unwrap_or(u32::MAX);
            self.conn.set_chunk_size(id, chunk);
        }
        let before = self.conn.output().len();
        let end = s.pieces.is_empty() && s.trailers.is_empty();
        let sent = self.conn.send_headers(id, resp.status, &fields, end);
        s.head_bytes = (self.conn.output().len().saturating_sub(before)) as u64;
        sent.is_ok()
    }

    /// The response is complete: a request body still coming is not
    /// wanted (RST_STREAM NO_ERROR, RFC 9113 §8.1, after
    /// [`super::timers::DISCARD_GRACE`]), and the stream is logged.
    pub(super) fn end_stream(&mut self, id: u32, s: Stream, cx: &mut Ctx) {
        if self.conn.stream_state(id).is_some() {
            self.discard_then_reset(id, cx.now);
        }
        self.finish(s, cx);
    }

    /// The peer reset the stream (or we did for a stream error).
    pub(super) fn on_reset(&mut self, id: u32, cx: &mut Ctx) {
        if self.jobs.contains_key(&id) {
            return self.abort_job(id, cx);
        }
        if self.drop_held(id, cx) {
            return;
        }
        if let Some(mut s) = self.streams.remove(&id) {
            s.closed_early();
            self.finish(s, cx);
        }
    }

    /// Logs the stream and gives its exchange back.
    pub(super) fn finish(&mut self, mut s: Stream, cx: &mut Ctx) {
        if cx.access.is_some()
            && let Some(resp) = s.ex.resp.as_ref()
        {
            let entry = AccessEntry {
                conn: &self.info,
                request: s.ex.req(),
                response: resp,
                status: resp.status,
                bytes_sent: s.head_bytes + s.body_bytes,
                body_bytes_sent: s.body_bytes,
                request_length: s.request_length,
                start: s.start,
                end: cx.wall,
                pipelined: false,
                upstream: s.ex.upstream.as_deref(),
                conn_peer: s.ex.held.as_ref().and_then(|h| h.conn_peer),
                core: Some(&cx.core),
            };
            if let Some(log) = cx.access.as_mut() {
                log.log(&entry);
            }
        }
        s.ex.reset(&mut cx.pool);
        cx.exchanges.put(s.ex);
        if self.is_idle() {
            self.set_gauge(Gauge::Waiting, cx);
        }
    }

    /// Core's answer, or 500 if it panicked, or 413 over
    /// `client_max_body_size` (as the HTTP/1 session's `answer`).
    pub(super) fn answer(
        &mut self,
        ex: &mut Exchange,
        length: Option<u64>,
        cx: &mut Ctx,
    ) -> Option<ErrorNote> {
        let explain = LogLevel::Error >= cx.log_level;
        let wall = cx.wall;
        let (req, resp) = ex.split();
        let info = &self.info;
        let core = &mut cx.core;
        let caught = catch_unwind(AssertUnwindSafe(|| {
            let (r, note) = core.handle_explained(info, req, wall, explain);
            *resp = Some(r);
            note
        }));
        let mut note = match caught {
            Ok(note) => note,
            Err(p) => {
                cx.core.drop_caches();
                let why = errlog::panic_text(&*p);
                self.log(
                    cx,
                    LogLevel::Alert,
                    &format!("request processing panicked: {why}; the worker's caches are dropped"),
                );
                *resp = Some(cx.core.error_response(500));
                None
            }
        };
        if let Some(r) = resp.as_mut()
            && let (Some(c), Some(n)) = (&r.conf, length)
            && c.client_max_body_size > 0
            && n > c.client_max_body_size
            && r.status != 413
        {
            let conf = r.conf.clone();
            let server = r.server.clone();
            *r = cx.core.error_response(413);
            note = explain.then_some(ErrorNote::TooLargeBody { length: n });
            r.conf = r.conf.take().or(conf);
            r.server = r.server.take().or(server);
        }
        note
    }

    /// The server the request's Host chooses says `http2 off` and no
    /// `listen` of the address says `http2`: nginx answers 421
    /// (`ngx_http_v2_run_request`), the client having reached it through
    /// another server's ALPN `h2`.
    fn protocol_disabled(&self, ex: &mut Exchange, cx: &Ctx) -> bool {
        if cx.lctx(self.lst).http2_listen {
            return false;
        }
        let host = ex.req_mut().host();
        cx.core
            .select(self.info.local, host, "/")
            .is_some_and(|(srv, _)| !srv.http2.on)
    }

    /// The default server's page for a request that could not be taken.
    fn error_page(&mut self, status: u16, cx: &mut Ctx) -> Response {
        crate::ctx::default_server_page(cx, self.lst, &self.info, status)
    }

    /// Logs `text` with the stream's request in the context.
    fn log_ex(&self, cx: &Ctx, level: LogLevel, text: &str, ex: &Exchange) {
        log_with(&self.info, self.lst, cx, level, text, Some(ex));
    }
}

/// Logs `text` with nginx's context of a stream's request (`ex`), on the
/// location's `error_log` when it has one.
pub(super) fn log_with(
    info: &peregrine_core::ConnInfo,
    lst: usize,
    cx: &Ctx,
    level: LogLevel,
    text: &str,
    ex: Option<&Exchange>,
) {
    let loc_log = ex.and_then(|e| e.conf()).and_then(|c| c.error_log.as_ref());
    if level < cx.log_level && loc_log.is_none() {
        return;
    }
    let req = ex.and_then(|e| e.req());
    let server = ex
        .and_then(|e| e.resp.as_ref())
        .and_then(|r| r.server.as_ref())
        .and_then(|s| s.server_names.first())
        .map(errlog::server_name_text)
        .unwrap_or_else(|| cx.lctx(lst).server_name.clone());
    let ctx = Context {
        id: info.id,
        peer: info.peer,
        server: &server,
        request: req.map(|r| r.request_line()),
        host: req.and_then(|r| r.host()),
    };
    let line = errlog::conn_message(&ctx, text);
    match loc_log {
        Some(confs) => cx.loc_errlogs.write(confs, level, &line),
        None => (cx.errlog)(level, &line),
    }
}
