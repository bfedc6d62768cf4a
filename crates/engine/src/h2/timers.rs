//! Per-stream timers of the session, under the connection's one timer
//! (armed for the earliest, [`H2Session::arm_timer`]):
//!
//! - A stream core delayed (`limit_req`'s burst, `auth_delay`) waits in
//!   [`H2Session::held`] until its time, then its request runs again, as
//!   nginx's delayed request waits on its own timer
//!   (`ngx_http_limit_req_delay`); the others streams go on meanwhile.
//!   Its DATA is kept, its credit not given back, until it runs.
//! - A frame cut short (a header block, or DATA of a stream) waits at most
//!   `client_header_timeout` / `client_body_timeout`: then the stream is
//!   reset with PROTOCOL_ERROR and logged 408, the connection goes on
//!   (nginx's `ngx_http_v2_state_headers_save` timer and the request
//!   body's read timer, ending in `ngx_http_v2_close_stream_handler`).

use std::time::{Instant, SystemTime};

use peregrine_conf::model::LogLevel;
use peregrine_h2::Incomplete;

use super::H2Session;
use super::stream::Stream;
use crate::ctx::Ctx;
use crate::errlog;
use crate::exchange::Exchange;

/// A request core delayed: it runs again at `until`.
pub(super) struct HeldStream {
    pub ex: Box<Exchange>,
    pub until: Instant,
    pub end_stream: bool,
    pub content_length: Option<u64>,
    pub request_length: u64,
    pub start: SystemTime,
    /// DATA received meanwhile (credit not yet given back).
    pub body: Vec<u8>,
    /// The request body is complete.
    pub body_end: bool,
    /// The body broke its `content-length` (the h2 crate's reason).
    pub body_error: Option<&'static str>,
}

/// The frame `inbuf` holds part of, and when its stream times out.
#[derive(Clone, Copy)]
pub(super) struct Partial {
    pub what: Incomplete,
    pub until: Instant,
    /// `inbuf`'s length when armed: DATA arriving re-arms the body's
    /// timer, as each read of nginx's request body does.
    pub len: usize,
}

impl H2Session {
    /// Holds the stream's request for `delay`, its answer unsent.
    pub(super) fn hold(&mut self, id: u32, h: HeldStream) {
        self.held.insert(id, h);
    }

    /// Whether a stream timer is due: the connection is driven, not
    /// closed, when its timer fires for one.
    pub(super) fn stream_timer_due(&self, now: Instant) -> bool {
        self.held.values().any(|h| h.until <= now) || self.partial.is_some_and(|p| p.until <= now)
    }

    /// The earliest stream timer.
    pub(super) fn next_stream_timer(&self) -> Option<Instant> {
        let held = self.held.values().map(|h| h.until).min();
        let partial = self.partial.map(|p| p.until);
        match (held, partial) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs what is due: delayed requests again, incomplete frames' streams
    /// reset.
    pub(super) fn run_stream_timers(&mut self, key: usize, cx: &mut Ctx) {
        if let Some(p) = self.partial
            && p.until <= cx.now
        {
            self.partial = None;
            self.time_out(p.what, cx);
        }
        if self.held.is_empty() {
            return;
        }
        let mut due: Vec<u32> = self
            .held
            .iter()
            .filter(|(_, h)| h.until <= cx.now)
            .map(|(&id, _)| id)
            .collect();
        due.sort_unstable();
        for id in due {
            if let Some(h) = self.held.remove(&id) {
                self.resume_held(id, h, key, cx);
            }
        }
    }

    /// A delayed request's time came: core answers it again, and it goes
    /// on as any stream's.
    fn resume_held(&mut self, id: u32, h: HeldStream, key: usize, cx: &mut Ctx) {
        let HeldStream { mut ex, .. } = h;
        if let Some(r) = ex.held.take().and_then(|held| held.resume) {
            cx.core.resume(r, h.start);
        }
        ex.resp = None;
        let note = self.answer(&mut ex, h.content_length, cx);
        let body = super::stream::Pending {
            data: h.body,
            end: h.body_end,
            error: h.body_error,
        };
        let req = super::stream::Arrived {
            end_stream: h.end_stream,
            content_length: h.content_length,
            request_length: h.request_length,
            start: h.start,
        };
        self.dispatch(id, ex, note, req, body, key, cx);
    }

    /// After input was processed: the timer of the frame left incomplete
    /// (kept while the same frame waits, re-armed as DATA arrives).
    pub(super) fn track_partial(&mut self, cx: &Ctx) {
        // A proxied stream's body has the job's own timer.
        let what = self
            .conn
            .incomplete(&self.inbuf)
            .filter(|w| !matches!(w, Incomplete::Data(id) if self.jobs.contains_key(id)));
        let Some(what) = what else {
            self.partial = None;
            return;
        };
        let len = self.inbuf.len();
        if let Some(p) = self.partial
            && p.what == what
            && (matches!(what, Incomplete::Headers(_)) || p.len == len)
        {
            return;
        }
        let d = match what {
            Incomplete::Headers(_) => cx.lctx(self.lst).header_timeout,
            Incomplete::Data(id) => self.body_timeout(id, cx),
        };
        self.partial = Some(Partial {
            what,
            until: cx.now + d,
            len,
        });
    }

    /// `client_body_timeout` of the stream's location (of the default
    /// server before one is known).
    fn body_timeout(&self, id: u32, cx: &Ctx) -> std::time::Duration {
        let ex = self
            .jobs
            .get(&id)
            .and_then(|j| j.ex.as_deref())
            .or_else(|| self.streams.get(&id).map(|s| &*s.ex))
            .or_else(|| self.held.get(&id).map(|h| &*h.ex));
        ex.and_then(|e| e.conf())
            .map(|c| c.client_body_timeout)
            .or_else(|| {
                cx.lctx(self.lst)
                    .default_server
                    .as_ref()
                    .map(|s| s.conf.client_body_timeout)
            })
            .unwrap_or(peregrine_conf::build::raw::DEFAULT_SEND_TIMEOUT)
    }

    /// A stream's frame did not complete in time: RST_STREAM
    /// PROTOCOL_ERROR, the request logged 408 ("client timed out").
    fn time_out(&mut self, what: Incomplete, cx: &mut Ctx) {
        let (id, doing) = match what {
            Incomplete::Headers(id) => (id, "while reading client request headers"),
            Incomplete::Data(id) => (id, "while reading client request body"),
        };
        if !self.conn.time_out(id) {
            return;
        }
        let timedout = std::io::Error::from_raw_os_error(libc::ETIMEDOUT);
        let text = errlog::with_os_error("client timed out", &timedout);
        self.log(cx, LogLevel::Info, &format!("{text} {doing}"));
        let s = match self.held.remove(&id) {
            Some(h) => Some(h.into_stream()),
            None => self.streams.remove(&id),
        };
        if let Some(mut s) = s {
            if s.head_bytes == 0
                && let Some(r) = s.ex.resp.as_mut()
            {
                r.status = 408;
            }
            self.finish(s, cx);
        }
    }

    /// A held stream the client reset, or whose connection closes: logged
    /// 499 (nginx's `ngx_http_test_reading` during the delay).
    pub(super) fn drop_held(&mut self, id: u32, cx: &mut Ctx) -> bool {
        let Some(h) = self.held.remove(&id) else {
            return false;
        };
        let mut s = h.into_stream();
        s.closed_early();
        self.finish(s, cx);
        true
    }

    /// A held stream's DATA: kept until it runs. False: not held.
    pub(super) fn held_data(&mut self, id: u32, data: &[u8], end: bool) -> bool {
        let Some(h) = self.held.get_mut(&id) else {
            return false;
        };
        h.body.extend_from_slice(data);
        h.body_end |= end;
        h.request_length += data.len() as u64;
        true
    }

    /// A held stream's trailers or broken body. False: not held.
    pub(super) fn held_body_end(&mut self, id: u32, error: Option<&'static str>) -> bool {
        let Some(h) = self.held.get_mut(&id) else {
            return false;
        };
        h.body_end = true;
        if error.is_some() {
            h.body_error = error;
        }
        true
    }
}

impl HeldStream {
    fn into_stream(self) -> Stream {
        Stream {
            ex: self.ex,
            pieces: Default::default(),
            request_length: self.request_length,
            start: self.start,
            head_bytes: 0,
            body_bytes: 0,
            trailers: Vec::new(),
        }
    }
}
