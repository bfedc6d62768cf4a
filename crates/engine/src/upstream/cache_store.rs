//! The engine's side of the upstream cache (`peregrine_core::cache`):
//! a hit answered from its file as a static file is (the body sent from
//! the file, ranges as nginx's range filter answers a cached 200), and an
//! upstream answer written to the cache while it streams to the client
//! (nginx's `ngx_http_upstream_process_request` → `ngx_http_file_cache_update`):
//! a temporary file beside the entry gets the header, the key, the head
//! and the body as it is decoded; it is renamed into place only when the
//! answer is complete, and removed otherwise (a [`Writer`] dropped
//! before [`Writer::commit`]: the client left, the upstream failed).

use super::Machine;
use super::owner::Owner;
use crate::http1::{Close, Step};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

use peregrine_codec::upstream as uc;
use peregrine_core::cache::{self, Cached, Status, file, valid};
use peregrine_core::proxy::answer::ClientFraming;
use peregrine_core::proxy::{ProxyJob, UpstreamVars};
use peregrine_core::{Body, ConnInfo, Response};

use crate::ctx::Ctx;
use crate::exchange::Exchange;

/// A cache file being written.
pub struct Writer {
    file: File,
    temp: PathBuf,
    size: u64,
    valid_sec: i64,
    failed: bool,
    committed: bool,
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// The stored head's fields, by name, for [`valid::valid_until`].
struct HeadOf<'a>(&'a UpstreamVars);

impl valid::Headers for HeadOf<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.headers.iter().find_map(|(n, v)| {
            let hn = self.0.head.get(n.clone())?;
            if hn.eq_ignore_ascii_case(name.as_bytes()) {
                std::str::from_utf8(self.0.head.get(v.clone())?).ok()
            } else {
                None
            }
        })
    }
}

impl Writer {
    /// The answer's head came: a writer when the answer is to be stored
    /// (the request may store, the answer is cacheable and its head fits).
    pub fn begin(
        job: &ProxyJob,
        status: u16,
        vars: &UpstreamVars,
        now: i64,
    ) -> Option<Box<Writer>> {
        let c = job.cache.0.as_ref()?;
        if !c.store || vars.head.len() > file::MAX_HEAD {
            return None;
        }
        let h = HeadOf(vars);
        let valid_sec =
            valid::valid_until(status, &h, job.up().ignore_headers, &c.conf.valid, now)?;
        use valid::Headers;
        let date = |n: &str| {
            h.get(n)
                .and_then(|v| peregrine_codec::date::parse_http_date(v.trim()))
                .unwrap_or(0)
        };
        let meta = file::Meta {
            valid_sec,
            date: date("date"),
            last_modified: date("last-modified"),
            etag: h
                .get("etag")
                .map(|e| e.trim().as_bytes().to_vec())
                .unwrap_or_default(),
        };
        let temp = c.temp_path();
        if let Some(dir) = temp.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut f = File::create(&temp).ok()?;
        let prefix = file::prefix(&meta, &c.key, &vars.head);
        let mut w = Box::new(Writer {
            file: File::create("/dev/null").ok()?,
            temp,
            size: prefix.len() as u64,
            valid_sec,
            failed: false,
            committed: false,
        });
        w.failed = f.write_all(&prefix).is_err();
        w.file = f;
        Some(w)
    }

    /// Body bytes as decoded from the upstream.
    pub fn write(&mut self, bytes: &[u8]) {
        if !self.failed {
            self.failed = self.file.write_all(bytes).is_err();
            self.size += bytes.len() as u64;
        }
    }

    /// The answer is complete: the file becomes the entry.
    pub fn commit(mut self, job: &mut ProxyJob) {
        let Some(c) = job.cache.0.as_mut() else {
            return;
        };
        if self.failed || std::fs::rename(&self.temp, c.path()).is_err() {
            return;
        }
        self.committed = true;
        c.stored(self.valid_sec, self.size);
    }
}

/// `$upstream_cache_status` of a job, for its upstream variables.
pub fn status_of(job: &ProxyJob) -> Option<&'static str> {
    job.cache.0.as_ref().map(|c| c.status.as_str())
}

/// A fresh hit (or a stale answer while another request updates it) is
/// answered from its file: `ex.resp` becomes the cached answer and
/// `None` is returned. Otherwise the job goes upstream.
pub(crate) fn hit(
    ex: &mut Exchange,
    mut job: Box<ProxyJob>,
    info: &ConnInfo,
    cx: &mut Ctx,
) -> Option<Box<ProxyJob>> {
    let Some(c) = job.cache.0.as_mut() else {
        return Some(job);
    };
    if !matches!(c.status, Status::Hit | Status::Updating) && !c.background {
        return Some(job);
    }
    let Some(cached) = c.cached.take() else {
        return Some(job);
    };
    let vars = UpstreamVars {
        cache_status: Some(c.status.as_str()),
        proxy_host: job.proxy_host.clone(),
        proxy_port: job.proxy_port.clone(),
        ..UpstreamVars::default()
    };
    let resp = {
        let req = ex.req()?;
        respond(&job, cached, &vars, req, info, cx)
    };
    match resp {
        Some(r) => {
            ex.resp = Some(r);
            ex.upstream = Some(Box::new(vars));
            if job.cache.0.as_ref().is_some_and(|c| c.background) {
                // Refreshed once the stale answer is written
                // (`upstream::background`).
                ex.bg = super::background::Background::Pending(job);
            }
            None
        }
        None => {
            if let Some(c) = job.cache.0.as_mut() {
                c.status = Status::Miss;
            }
            Some(job)
        }
    }
}

/// The client's response for a stored answer: its head through the
/// proxy's header handling as an upstream's would go, its body from the
/// file.
pub(crate) fn respond(
    job: &ProxyJob,
    cached: Cached,
    vars: &UpstreamVars,
    req: &peregrine_codec::Request,
    info: &ConnInfo,
    cx: &mut Ctx,
) -> Option<Response> {
    let h = match uc::parse_head(&cached.head, file::MAX_HEAD) {
        Ok(uc::Parsed::Head(h)) => h,
        _ => return None,
    };
    let mut vars = vars.clone();
    vars.head = cached.head.clone();
    vars.headers = h.headers.clone();
    let framing = ClientFraming::Length(cached.body_len);
    let mut resp = cx
        .core
        .proxied(job, info, req, cx.wall, &vars, &h, &cached.head, framing);
    // A stored answer is sent as it was stored (not compressed again).
    resp.compressible = false;
    if !resp.header_only && resp.content_length == Some(cached.body_len) {
        resp.body = Body::File {
            file: Rc::new(cached.file),
            offset: cached.body_start,
            len: cached.body_len,
        };
        cache::range::apply(
            &mut resp,
            req.header("Range"),
            req.header("If-Range"),
            job.conf.request.max_ranges,
        );
    }
    Some(resp)
}

/// The stale answer of a failed upstream request, when
/// `*_cache_use_stale` allows it for the failure's `bit`.
pub(crate) fn stale(
    job: &mut ProxyJob,
    bit: u32,
    vars: &mut UpstreamVars,
    req: &peregrine_codec::Request,
    info: &ConnInfo,
    cx: &mut Ctx,
) -> Option<Response> {
    let c = job.cache.0.as_mut()?;
    if c.conf.use_stale & bit == 0 || c.cached.is_none() {
        return None;
    }
    let cached = c.cached.take()?;
    c.status = Status::Stale;
    vars.cache_status = Some(Status::Stale.as_str());
    let _ = cache::TEMP_PREFIX;
    respond(job, cached, vars, req, info, cx)
}

/// How often a request waiting on `*_cache_lock` looks again
/// (`ngx_http_file_cache_lock_wait`'s 500 ms timer).
const LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// The cache's turns of the upstream machine, for any owner of a job (an
/// HTTP/1 exchange or an HTTP/2 stream).
pub(super) trait CacheTurns: Machine {
    /// `*_cache_use_stale`: the failure (its `next` bit) is answered with
    /// the expired answer kept for it, when there is one.
    fn serve_stale(
        &mut self,
        p: &mut super::Proxy,
        bit: u32,
        t: &mut crate::transport::Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Option<Step> {
        let usable = p
            .job
            .cache
            .0
            .as_ref()
            .is_some_and(|c| c.conf.use_stale & bit != 0 && c.cached.is_some());
        if !usable {
            return None;
        }
        let ex = self.ex_slot().take()?;
        let resp = match ex.req() {
            Some(req) => stale(&mut p.job, bit, &mut p.vars, req, self.info(), cx),
            None => None,
        };
        let Some(resp) = resp else {
            *self.ex_slot() = Some(ex);
            return None;
        };
        p.cache_w = None;
        self.disarm_timer(cx);
        Some(self.after_core(p, ex, resp, t, key, cx))
    }

    /// `*_cache_revalidate`: a 304 to the expired answer's validators
    /// makes it fresh again, for the 304's own validity or else
    /// `*_cache_valid`'s for the stored status, and answers from it
    /// (`REVALIDATED`; nginx's `ngx_http_upstream_test_next`).
    fn revalidated(
        &mut self,
        p: &mut super::Proxy,
        status: u16,
        t: &mut crate::transport::Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Option<Step> {
        let c = p.job.cache.0.as_mut()?;
        if status != 304 || c.status != Status::Expired || !c.conf.revalidate || c.cached.is_none()
        {
            return None;
        }
        let stored = match c
            .cached
            .as_ref()
            .map(|f| uc::parse_head(&f.head, file::MAX_HEAD))
        {
            Some(Ok(uc::Parsed::Head(h))) => h.status,
            _ => return None,
        };
        let now = peregrine_codec::date::unix_secs(cx.wall);
        let ign = p.job.up().ignore_headers;
        let c = p.job.cache.0.as_mut()?;
        if let Some(v) = valid::valid_until(stored, &HeadOf(&p.vars), ign, &c.conf.valid, now)
            && file::set_valid(&c.path(), v).is_ok()
        {
            c.revalidated(v);
        }
        c.status = Status::Revalidated;
        let cached = c.cached.take()?;
        p.vars.cache_status = Some(Status::Revalidated.as_str());
        let ex = self.ex_slot().take()?;
        let resp = match ex.req() {
            Some(req) => respond(&p.job, cached, &p.vars, req, self.info(), cx),
            None => None,
        };
        let Some(resp) = resp else {
            *self.ex_slot() = Some(ex);
            return None;
        };
        self.disarm_timer(cx);
        Some(self.after_core(p, ex, resp, t, key, cx))
    }

    /// A turn of a request waiting on `*_cache_lock`: a hit once the other
    /// request stored the answer; upstream (storing) once it ended without;
    /// upstream without storing once `*_cache_lock_timeout` ran out.
    fn cache_lock_turn(
        &mut self,
        p: &mut super::Proxy,
        t: &mut crate::transport::Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Step {
        p.timed_out = false;
        let now_sec = peregrine_codec::date::unix_secs(cx.wall);
        let Some(c) = p.job.cache.0.as_mut() else {
            return self.leave_lock(p);
        };
        let since = c.locked.unwrap_or_else(std::time::Instant::now);
        match c.recheck(now_sec) {
            cache::Recheck::Fresh(cached) => {
                p.vars.cache_status = Some(Status::Hit.as_str());
                let Some(ex) = self.ex_slot().take() else {
                    return Step::Close(Close::Normal);
                };
                let resp = ex
                    .req()
                    .and_then(|req| respond(&p.job, cached, &p.vars, req, self.info(), cx));
                match resp {
                    Some(r) => {
                        self.disarm_timer(cx);
                        self.after_core(p, ex, r, t, key, cx)
                    }
                    None => {
                        *self.ex_slot() = Some(ex);
                        self.leave_lock(p)
                    }
                }
            }
            cache::Recheck::Go => self.leave_lock(p),
            cache::Recheck::Wait => {
                let waited = since.elapsed();
                if waited >= c.conf.lock_timeout {
                    // nginx: "the request will be passed to the proxied
                    // server, however, the response will not be cached".
                    c.store = false;
                    c.locked = None;
                    return self.leave_lock(p);
                }
                let d = LOCK_POLL.min(c.conf.lock_timeout - waited);
                self.arm_timer(cx, d);
                Step::Wait
            }
        }
    }

    /// The wait is over: the request goes upstream.
    fn leave_lock(&mut self, p: &mut super::Proxy) -> Step {
        p.state = if p.unbuffered {
            super::State::Connect
        } else {
            super::State::Body
        };
        Step::Continue
    }
}

impl<T: Owner> CacheTurns for T {}
