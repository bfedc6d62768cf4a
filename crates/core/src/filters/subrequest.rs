//! Subrequests (`ngx_http_subrequest`), run synchronously inside the
//! parent's core call: the subrequest goes through the phases from the
//! server's rewrite phase on (a static file, a `return`, a location with
//! filters of its own, which may make subrequests in turn), and its
//! response's body is handed to the parent, which puts it where its
//! output asked for it (nginx's postpone filter).
//!
//! A subrequest whose location proxies (or passes to FastCGI, uwsgi,
//! SCGI) needs the engine's event loop. Core cannot wait inside a call,
//! so the parent's pass is replayed: the first proxied subrequest without
//! an answer is left for the engine ([`HttpCore::take_subrequest`]), its
//! pass's response is dropped, the engine runs the upstream job, and then
//! runs the request again with the answers so far
//! ([`HttpCore::subrequest_answers`]); the replay meets the same
//! subrequests in the same order and takes their answers from [`Memo`].
//! The parent's output is thus complete, in order, before it goes out,
//! which is what nginx's postpone filter guarantees of a streamed one.

use crate::http::{Ctx, HttpCore, ServerRt};
use crate::proxy::{ProxyJob, UpstreamVars};
use peregrine_codec::fields::FieldList;

/// nginx's `NGX_HTTP_MAX_SUBREQUESTS`: how deep subrequests may nest
/// ("subrequests cycle while processing").
pub const MAX_SUBREQUEST_DEPTH: u8 = 50;
/// Subrequests one main request may make in all (nginx's bound on
/// `r->main->count`, 65535 less its margin of 1000).
pub const MAX_SUBREQUESTS: u32 = 65535 - 1000;
/// Proxied subrequests one main request may make: each runs the request
/// again (see the module's doc), so their cost grows with their square;
/// those past this bound fail (500). nginx has no such bound.
pub const MAX_PROXIED_SUBREQUESTS: usize = 256;

/// What a subrequest gave.
pub(crate) struct SubResponse {
    pub status: u16,
    pub body: Vec<u8>,
    /// A proxied subrequest's `$upstream_*` (auth_request's
    /// `WWW-Authenticate` and `auth_request_set`).
    pub upstream: Option<UpstreamVars>,
    /// The head of a 401 core made (auth_request's challenges).
    pub head: peregrine_codec::fields::FieldList,
}

/// The engine's answer to a proxied subrequest.
#[derive(Debug, Clone, Default)]
pub struct SubAnswer {
    pub status: u16,
    pub body: Vec<u8>,
    pub upstream: UpstreamVars,
}

/// A proxied subrequest the engine is to run, with the answers of those
/// before it (given back with [`HttpCore::subrequest_answers`]).
pub struct PendingSub {
    pub job: Box<ProxyJob>,
    pub answers: Vec<SubAnswer>,
}

/// The proxied subrequests of the request being run.
#[derive(Default)]
pub(crate) struct Memo {
    /// Their answers so far, in the order the request makes them.
    answers: Vec<SubAnswer>,
    /// How many this pass met.
    seen: usize,
    /// The first without an answer.
    pending: Option<Box<ProxyJob>>,
    /// The next pass is a replay: `answers` are for it.
    replaying: bool,
    /// A request's pass is running (`HttpCore::handle`'s phases): the
    /// engine looks for a pending job after it. Subrequests made in
    /// core's other calls (a proxied answer's filters, an upstream's
    /// error page) find none and fail with 502, as before.
    armed: bool,
}

impl HttpCore {
    /// Whether the last request left a proxied subrequest unanswered
    /// (one test on the plain path).
    #[inline(always)]
    pub fn has_subrequest(&self) -> bool {
        self.sub_memo.pending.is_some()
    }

    /// The proxied subrequest the last request left unanswered: its pass's
    /// response is to be dropped, the job run, and the request run again
    /// with [`HttpCore::subrequest_answers`]. The engine takes it after
    /// every request (a stale one would be run for the next).
    pub fn take_subrequest(&mut self) -> Option<PendingSub> {
        let job = self.sub_memo.pending.take()?;
        Some(PendingSub {
            job,
            answers: std::mem::take(&mut self.sub_memo.answers),
        })
    }

    /// The next request handled is the replay of one whose proxied
    /// subrequests answered `answers`.
    pub fn subrequest_answers(&mut self, answers: Vec<SubAnswer>) {
        self.sub_memo = Memo {
            answers,
            seen: 0,
            pending: None,
            replaying: true,
            armed: false,
        };
    }

    /// A request's pass begins: the answers are its own only on a replay.
    pub(crate) fn begin_pass(&mut self) {
        if std::mem::take(&mut self.sub_memo.replaying) {
            self.sub_memo.seen = 0;
            self.sub_memo.pending = None;
        } else if self.sub_memo.seen > 0 || !self.sub_memo.answers.is_empty() {
            self.sub_memo = Memo::default();
        }
        self.sub_memo.armed = true;
        self.subrequests = 0;
    }

    /// The pass ended: a pending job is the engine's to take now.
    pub(crate) fn end_pass(&mut self) {
        self.sub_memo.armed = false;
    }

    /// A proxied subrequest met: its answer, or (the first without one)
    /// left for the engine, a placeholder for a pass to be dropped.
    fn proxied_sub(&mut self, job: Box<ProxyJob>) -> SubResponse {
        if !self.sub_memo.armed {
            return SubResponse {
                status: 502,
                ..SubResponse::failed()
            };
        }
        let i = self.sub_memo.seen;
        self.sub_memo.seen += 1;
        if i >= MAX_PROXIED_SUBREQUESTS {
            return SubResponse::failed();
        }
        if let Some(a) = self.sub_memo.answers.get(i) {
            return SubResponse {
                status: a.status,
                body: a.body.clone(),
                upstream: Some(a.upstream.clone()),
                head: Default::default(),
            };
        }
        if self.sub_memo.pending.is_none() {
            self.sub_memo.pending = Some(job);
        }
        SubResponse {
            status: 502,
            body: Vec::new(),
            upstream: None,
            head: Default::default(),
        }
    }
}

impl SubResponse {
    fn failed() -> SubResponse {
        SubResponse {
            status: 500,
            body: Vec::new(),
            upstream: None,
            head: Default::default(),
        }
    }
}

/// Runs a subrequest of `parent` to `target` (a URI, maybe with `?args`;
/// relative to the parent's URI's directory unless it starts with `/`,
/// as `ngx_http_ssi_include` resolves it).
pub(crate) fn run(
    core: &mut HttpCore,
    parent: &mut Ctx<'_>,
    servers: &[ServerRt],
    target: &str,
) -> SubResponse {
    if core.sub_depth >= MAX_SUBREQUEST_DEPTH || core.subrequests >= MAX_SUBREQUESTS {
        return SubResponse::failed();
    }
    let (path, args) = match target.split_once('?') {
        Some((p, a)) => (p, Some(a.to_string())),
        None => (target, None),
    };
    // `ngx_http_parse_unsafe_uri`: no `..` segment.
    if path.split('/').any(|seg| seg == "..") {
        return SubResponse::failed();
    }
    let uri = if path.starts_with('/') {
        path.to_string()
    } else {
        let dir = parent.uri.rfind('/').map_or("/", |i| &parent.uri[..=i]);
        format!("{dir}{path}")
    };
    // Unescaped and dot segments resolved (nginx's
    // `ngx_http_parse_unsafe_uri` refuses what would leave the root).
    let mut clean = String::with_capacity(uri.len());
    if peregrine_codec::uri::normalize(uri.as_bytes(), &mut clean).is_err() {
        return SubResponse::failed();
    }
    let uri = clean;
    core.subrequests += 1;
    core.sub_depth += 1;
    let srv = &servers[parent.server];
    let mut sub = HttpCore::sub_ctx(srv, parent, uri, args);
    let step = core.server_rewrite_phase(&mut sub, servers);
    let resp = core.drive(&mut sub, servers, step);
    core.sub_depth -= 1;
    parent.sets.values = std::mem::take(&mut sub.sets.values);
    if let Some(job) = core.proxy_job.take() {
        return core.proxied_sub(job);
    }
    SubResponse {
        status: resp.status,
        body: super::read_body(&resp.body).unwrap_or_default(),
        upstream: None,
        head: if resp.status == 401 {
            FieldList::clone(&resp.head)
        } else {
            Default::default()
        },
    }
}
