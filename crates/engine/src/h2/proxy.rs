//! A stream whose location proxies (`proxy_pass`, `fastcgi_pass`,
//! `uwsgi_pass`, `scgi_pass`): the stream owns an upstream job of
//! [`crate::upstream`] ([`View`] is its [`Owner`]), as nginx's HTTP/2
//! request runs `ngx_http_upstream` like any other.
//!
//! - The request body comes from DATA frames, kept in [`Job::body`] until
//!   the machine takes it (into the client-body layer, or on to the
//!   upstream unbuffered); the credit goes back as it is taken, so the
//!   client sends at most `http2_body_preread_size` ahead (nginx's
//!   `ngx_http_v2_read_request_body` and its WINDOW_UPDATEs).
//! - The answer goes out as HEADERS (core's head, through the same field
//!   conversion as any response: hop-by-hop fields dropped, RFC 9113
//!   §8.2.2) and DATA within the windows; the job waits while the
//!   window is shut or the connection's output is full.
//! - The job's timer is its own deadline; the connection's one timer is
//!   armed for the earliest ([`H2Session::job_timeouts`]). Its upstream
//!   socket's token and resolver wait use a job key of its own
//!   ([`crate::upstream::Upstreams::add_stream_job`]).
//! - RST_STREAM from the client, or the connection's close, ends the job:
//!   its upstream connection is closed, the request logged (499 when no
//!   head went out, as `ngx_http_terminate_request`).

use std::io;
use std::time::{Duration, Instant, SystemTime};

use peregrine_codec::upstream::Framing;
use peregrine_codec::{BodyDecoder, BodyKind};
use peregrine_conf::model::LogLevel;
use peregrine_core::ConnInfo;
use peregrine_core::proxy::ProxyJob;
use peregrine_core::proxy::answer::ClientFraming;
use peregrine_h2::{Connection, ErrorCode};

use super::stream::{Stream, log_with};
use super::{H2Session, OUT_HIGH, head};
use crate::body::read::{Broken, Pull};
use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::Step;
use crate::transport::Transport;
use crate::upstream::owner::Owner;
use crate::upstream::{Machine, Proxy};

/// A proxied stream's state between turns.
pub(super) struct Job {
    pub ex: Option<Box<Exchange>>,
    /// Core's job, until the first turn starts it.
    pub pending: Option<Box<ProxyJob>>,
    pub p: Option<Box<Proxy>>,
    /// The job key (socket token, resolver wait).
    pub key: usize,
    /// DATA received and not yet taken by the machine.
    pub body: Vec<u8>,
    /// The request body is complete (END_STREAM, or trailers).
    pub body_end: bool,
    pub kind: BodyKind,
    pub deadline: Option<Instant>,
    /// `$request_length`: the head as given to the codec, plus DATA.
    pub request_length: u64,
    pub start: SystemTime,
    /// END_STREAM went out (with the HEADERS of a body-less answer).
    pub end_sent: bool,
    /// The HEADERS of the answer went out.
    pub head_sent: bool,
    /// The body broke its `content-length` (the h2 crate's reason):
    /// the job's next pull fails it with 400, as nginx's.
    pub body_error: Option<&'static str>,
}

impl Job {
    pub(super) fn new(
        ex: Box<Exchange>,
        job: Box<ProxyJob>,
        key: usize,
        kind: BodyKind,
        request_length: u64,
        start: SystemTime,
    ) -> Job {
        Job {
            ex: Some(ex),
            pending: Some(job),
            p: None,
            key,
            body: Vec::new(),
            body_end: kind == BodyKind::None,
            kind,
            deadline: None,
            request_length,
            start,
            end_sent: false,
            head_sent: false,
            body_error: None,
        }
    }
}

/// How a turn ended the job, for the session to act on.
enum Done {
    /// The upstream's answer went whole.
    Complete,
    /// Core's own response (an error page) goes out as any stream's.
    Core(Box<Exchange>),
}

/// A stream's job during one turn: the [`Owner`] the machine answers to.
struct View<'a> {
    j: &'a mut Job,
    conn: &'a mut Connection,
    info: &'a ConnInfo,
    lst: usize,
    id: u32,
    /// A job [`Owner::begin_job`] placed this turn.
    new_job: Option<Box<Proxy>>,
    done: Option<Done>,
    /// A write found the connection's output full.
    out_full: bool,
}

impl Owner for View<'_> {
    fn ex_slot(&mut self) -> &mut Option<Box<Exchange>> {
        &mut self.j.ex
    }

    fn ex_ref(&self) -> Option<&Exchange> {
        self.j.ex.as_deref()
    }

    fn info(&self) -> &ConnInfo {
        self.info
    }

    fn log(&self, cx: &Ctx, level: LogLevel, text: &str, doing: &str) {
        let text = if doing.is_empty() {
            text.to_string()
        } else {
            format!("{text} {doing}")
        };
        log_with(self.info, self.lst, cx, level, &text, self.j.ex.as_deref());
    }

    fn arm_timer(&mut self, cx: &mut Ctx, d: Duration) {
        self.j.deadline = Some(cx.now + d);
    }

    fn disarm_timer(&mut self, _cx: &mut Ctx) {
        self.j.deadline = None;
    }

    fn body_kind(&self) -> BodyKind {
        self.j.kind
    }

    fn begin_job(&mut self, _t: &mut Transport, p: Box<Proxy>, _continue_100: bool, _cx: &mut Ctx) {
        // No `100 Continue` on HTTP/2: the window asks for the body.
        self.new_job = Some(p);
    }

    fn job_mut<'a>(&'a mut self, _cx: &'a mut Ctx) -> Option<&'a mut Proxy> {
        self.new_job.as_deref_mut()
    }

    fn client_gone(&mut self, _t: &mut Transport) -> bool {
        // The client's RST_STREAM or close ends the job from the session.
        false
    }

    fn pull_body(
        &mut self,
        _dec: &mut BodyDecoder,
        _t: &mut Transport,
        cx: &mut Ctx,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), u16>,
    ) -> (Pull, Option<Broken>) {
        if let Some(why) = self.j.body_error.take() {
            self.log(cx, LogLevel::Info, why, "");
            return (Pull::Fail(400), None);
        }
        let data = std::mem::take(&mut self.j.body);
        if !data.is_empty() {
            if let Err(s) = sink(&data) {
                return (Pull::Fail(s), None);
            }
            // Taken: the client may send as much again.
            let n = u32::try_from(data.len()).unwrap_or(u32::MAX);
            self.conn.release(self.id, n);
        }
        if self.j.body_end {
            (Pull::Done, None)
        } else if data.is_empty() {
            (Pull::Wait, None)
        } else {
            (Pull::More, None)
        }
    }

    fn framing(&self, up: Framing, _p: &Proxy) -> ClientFraming {
        // DATA frames carry the body as it is; END_STREAM ends it.
        match up {
            Framing::None => ClientFraming::None,
            Framing::Length(n) => ClientFraming::Length(n),
            _ => ClientFraming::Close,
        }
    }

    fn queue_head(
        &mut self,
        ex: &mut Exchange,
        mut resp: peregrine_core::Response,
        p: &mut Proxy,
        cx: &mut Ctx,
    ) {
        resp.status = peregrine_codec::response::wire_status(resp.status);
        let mut names = Vec::with_capacity(128);
        let (fields, _) = head::response_fields(&resp, cx.head_start.date(), &mut names);
        if resp.header_only {
            p.framing = ClientFraming::None;
        }
        let end = matches!(p.framing, ClientFraming::None | ClientFraming::Length(0));
        if let Some(c) = resp.conf.as_deref() {
            let chunk = u32::try_from(c.conn.http2_chunk_size).unwrap_or(u32::MAX);
            self.conn.set_chunk_size(self.id, chunk);
        }
        let before = self.conn.output().len();
        let _ = self.conn.send_headers(self.id, resp.status, &fields, end);
        ex.out.head_bytes = self.conn.output().len().saturating_sub(before) as u64;
        self.j.end_sent = end;
        self.j.head_sent = true;
        p.cout.clear();
        p.cpos = 0;
        let (_, slot) = ex.split();
        *slot = Some(resp);
    }

    fn client_write(&mut self, _t: &mut Transport, buf: &[u8]) -> io::Result<usize> {
        if self.j.end_sent {
            // A body-less answer: what came is not sent.
            return Ok(buf.len());
        }
        if self.conn.output().len() >= OUT_HIGH {
            self.out_full = true;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let room = self.conn.sendable(self.id);
        if room == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = room.min(buf.len());
        self.conn
            .send_data(self.id, &buf[..n], false)
            .map_err(io::Error::other)
    }

    fn respond_core(
        &mut self,
        _p: &mut Proxy,
        mut ex: Box<Exchange>,
        resp: peregrine_core::Response,
        _t: &mut Transport,
        _cx: &mut Ctx,
    ) -> Step {
        ex.resp = Some(resp);
        self.done = Some(Done::Core(ex));
        Step::Continue
    }

    fn complete_job(&mut self, _t: &mut Transport, _key: usize, _cx: &mut Ctx) -> Step {
        self.done = Some(Done::Complete);
        Step::Continue
    }
}

impl H2Session {
    /// Runs each proxied stream's job until it waits; true when one
    /// waits for room in the connection's output (drive again once it
    /// is written).
    pub(super) fn drive_jobs(&mut self, t: &mut Transport, cx: &mut Ctx) -> bool {
        if self.jobs.is_empty() {
            return false;
        }
        let ids: Vec<u32> = self.jobs.keys().copied().collect();
        let mut full = false;
        for id in ids {
            full |= self.drive_job(id, t, cx);
        }
        full
    }

    fn drive_job(&mut self, id: u32, t: &mut Transport, cx: &mut Ctx) -> bool {
        let Some(mut j) = self.jobs.remove(&id) else {
            return false;
        };
        let mut turns = 0;
        loop {
            let mut v = View {
                j: &mut j,
                conn: &mut self.conn,
                info: &self.info,
                lst: self.lst,
                id,
                new_job: None,
                done: None,
                out_full: false,
            };
            let key = v.j.key;
            // `client_body_timeout` ends the stream with PROTOCOL_ERROR
            // and 408, as nginx's timed-out stream (`ngx_http_v2_close_stream`).
            let body_timeout =
                v.j.p.as_ref().is_some_and(|p| {
                    p.timed_out && p.doing() == "while reading client request body"
                });
            let step = if let Some(job) = v.j.pending.take() {
                match v.j.ex.take() {
                    Some(ex) => v.start_proxy_with(t, ex, job, cx, true),
                    None => Step::Close(crate::http1::Close::Normal),
                }
            } else if let Some(mut p) = v.j.p.take() {
                let s = v.proxy_turn(&mut p, t, key, cx);
                let failed = matches!(s, Step::Close(_));
                if v.new_job.is_none() && v.done.is_none() && !failed {
                    v.j.p = Some(p);
                } else {
                    v.end_upstream(&mut p, cx, failed);
                }
                s
            } else {
                Step::Close(crate::http1::Close::Normal)
            };
            if let Some(np) = v.new_job.take() {
                if !v.j.body_end {
                    // The body is wanted now: a buffered one's window opens
                    // wide (it goes to memory or a file as it comes), an
                    // unbuffered one's to its buffer's size.
                    let target = match np.buffering() {
                        true => u32::MAX,
                        false => np.body_buffer_size(),
                    };
                    v.conn.grow_window(id, target);
                }
                v.j.p = Some(np);
            }
            let full = v.out_full;
            match (v.done.take(), step) {
                (Some(Done::Complete), _) => {
                    self.job_complete(id, j, cx);
                    return false;
                }
                (Some(Done::Core(ex)), _) => {
                    self.job_core_answer(id, j, ex, cx);
                    return false;
                }
                (None, Step::Close(_)) => {
                    self.job_failed(id, j, body_timeout, cx);
                    return false;
                }
                (None, Step::Wait) => {
                    self.jobs.insert(id, j);
                    return full;
                }
                (None, Step::Continue) => {
                    turns += 1;
                    if turns > MAX_TURNS {
                        self.jobs.insert(id, j);
                        return true;
                    }
                }
            }
        }
    }

    /// The answer went whole: END_STREAM (unless it went with the
    /// HEADERS), the stream logged.
    fn job_complete(&mut self, id: u32, mut j: Job, cx: &mut Ctx) {
        if !j.end_sent {
            let _ = self.conn.send_data(id, &[], true);
        }
        self.end_job(&mut j, cx);
        if let Some(s) = self.job_stream(j) {
            self.end_stream(id, s, cx);
        }
    }

    /// Core's response instead of the upstream's (502, 504, an error
    /// page): sent as any stream's.
    fn job_core_answer(&mut self, id: u32, mut j: Job, ex: Box<Exchange>, cx: &mut Ctx) {
        self.end_job(&mut j, cx);
        j.ex = Some(ex);
        if j.head_sent {
            // Too late for another head: the stream is reset.
            self.conn.reset(id, ErrorCode::InternalError);
            if let Some(s) = self.job_stream(j) {
                self.finish(s, cx);
            }
            return;
        }
        let Some(mut s) = self.job_stream(j) else {
            return;
        };
        if !self.respond(id, &mut s, false, cx) {
            self.finish(s, cx);
            return;
        }
        self.start_sending(id, s, cx);
    }

    /// The job failed after its head went out (the upstream closed early,
    /// sent a broken body): the stream is reset, as nginx does.
    /// `body_timeout`: the request body did not come in time (PROTOCOL_ERROR,
    /// logged 408).
    fn job_failed(&mut self, id: u32, mut j: Job, body_timeout: bool, cx: &mut Ctx) {
        self.end_job(&mut j, cx);
        let code = match body_timeout {
            true => ErrorCode::ProtocolError,
            false => ErrorCode::InternalError,
        };
        self.conn.reset(id, code);
        if let Some(mut s) = self.job_stream(j) {
            if body_timeout && s.ex.resp.is_none() {
                s.ex.resp = Some(cx.core.error_response(408));
            }
            s.closed_early();
            if body_timeout && let Some(r) = s.ex.resp.as_mut() {
                r.status = 408;
            }
            self.finish(s, cx);
        }
    }

    /// The client reset the stream, or the connection closes: the
    /// upstream connection is closed with the job.
    pub(super) fn abort_job(&mut self, id: u32, cx: &mut Ctx) {
        let Some(mut j) = self.jobs.remove(&id) else {
            return;
        };
        if let Some(mut p) = j.p.take() {
            let mut v = View {
                j: &mut j,
                conn: &mut self.conn,
                info: &self.info,
                lst: self.lst,
                id,
                new_job: None,
                done: None,
                out_full: false,
            };
            v.log(
                cx,
                LogLevel::Info,
                "client prematurely closed stream",
                p.doing(),
            );
            v.end_upstream(&mut p, cx, false);
            let vars = p.take_vars(cx.now);
            if let Some(ex) = v.j.ex.as_mut() {
                ex.upstream = Some(Box::new(vars));
            }
        }
        self.end_job(&mut j, cx);
        if let Some(mut s) = self.job_stream(j) {
            if s.ex.resp.is_none() {
                s.ex.resp = Some(cx.core.error_response(499));
            }
            s.closed_early();
            self.finish(s, cx);
        }
    }

    /// The job's key and resolver wait given back.
    fn end_job(&mut self, j: &mut Job, cx: &mut Ctx) {
        cx.upstreams.remove_stream_job(j.key);
        cx.resolvers.forget(j.key);
        j.deadline = None;
    }

    /// The job's exchange as a stream, for the access log and for core's
    /// answer.
    fn job_stream(&mut self, j: Job) -> Option<Stream> {
        let ex = j.ex?;
        Some(Stream {
            request_length: j.request_length,
            start: j.start,
            head_bytes: ex.out.head_bytes,
            body_bytes: ex.out.body_bytes,
            ex,
            pieces: Default::default(),
            trailers: Vec::new(),
        })
    }

    /// Marks the jobs whose deadline passed; true when one did, or a
    /// stream timer is due ([`super::timers`]): the connection is driven,
    /// not closed.
    pub fn job_timeouts(&mut self, now: Instant) -> bool {
        let mut any = self.stream_timer_due(now);
        for j in self.jobs.values_mut() {
            if j.deadline.is_some_and(|d| d <= now) {
                j.deadline = None;
                if let Some(p) = j.p.as_mut() {
                    p.timed_out = true;
                    any = true;
                }
            }
        }
        any
    }

    /// The earliest job deadline.
    pub(super) fn next_job_deadline(&self) -> Option<Instant> {
        self.jobs.values().filter_map(|j| j.deadline).min()
    }

    /// A proxied stream's DATA: kept for the job (the credit comes back
    /// as the job takes it). False: not a proxied stream.
    pub(super) fn job_data(&mut self, id: u32, data: &[u8], end: bool) -> bool {
        let Some(j) = self.jobs.get_mut(&id) else {
            return false;
        };
        j.body.extend_from_slice(data);
        j.body_end |= end;
        j.request_length += data.len() as u64;
        true
    }

    /// The body broke its `content-length`: a proxied stream's job fails
    /// it with 400 when it next reads it (nginx finalizes the request
    /// with 400); any other stream was answered already and its body
    /// discarded, so only the log line remains.
    pub(super) fn bad_body(&mut self, id: u32, why: &'static str, cx: &mut Ctx) {
        match self.jobs.get_mut(&id) {
            Some(j) => {
                let n = u32::try_from(j.body.len()).unwrap_or(u32::MAX);
                j.body.clear();
                j.body_error = Some(why);
                self.conn.release(id, n);
            }
            None => self.log(cx, LogLevel::Info, why),
        }
    }

    /// A proxied stream's trailers: its body is complete.
    pub(super) fn job_trailers(&mut self, id: u32) {
        if let Some(j) = self.jobs.get_mut(&id) {
            j.body_end = true;
        }
    }
}

/// Turns of one job in a row before the others get theirs (a job that
/// keeps making progress, e.g. restarting through error pages).
const MAX_TURNS: u32 = 64;
