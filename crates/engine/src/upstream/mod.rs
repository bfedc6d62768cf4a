//! The proxy's upstream side in the worker's own event loop (nginx's
//! `ngx_http_upstream.c`): the client's body read whole, a peer chosen by
//! the group's balancer, a non-blocking connect (or an idle kept-alive
//! connection), the request sent, the answer's head parsed by
//! `codec::upstream`, core asked for the client's response, the body
//! streamed to the client as it arrives (re-chunked when its length is
//! unknown). `proxy_next_upstream` retries the next peer. The upstream
//! socket is registered once, under a token of its own ([`token_of`]),
//! and [`Upstreams::event`] finds its owner: a job, or the keep-alive
//! pool; the connection's one timer is the upstream's timeout while the
//! session waits on the upstream.
//!
//! ```text
//!  Body ─► Connect ─► Send ─► Head ─► Stream ─► done (keep-alive or close)
//!            ▲          │       │
//!            └── next ──┴───────┘ (error, timeout, invalid header, http_5xx)
//! ```

pub mod background;
mod body_out;
pub(crate) mod cache_store;
mod detached;
pub mod gateway;
mod h1;
pub(crate) mod owner;
pub mod peers;
mod resolve;
pub mod sock;
pub mod subrequest;
mod tls_client;

use std::io::{self, Read};
use std::time::{Duration, Instant};

use peregrine_codec::upstream::{self as uc, Framing};
use peregrine_codec::{BodyDecoder, BodyKind};
use peregrine_conf::model::{LogLevel, next};
use peregrine_core::proxy::answer::ClientFraming;
use peregrine_core::proxy::{Proto, ProxyJob, Tried, UpstreamVars};
use peregrine_upstream::{Attempt, Key, PeerId};

use crate::ctx::Ctx;
use crate::errlog;
use crate::exchange::Exchange;
use crate::http1::{Close, Step};
use crate::transport::Transport;
use body_out::BodyOut;
use cache_store::CacheTurns;
use owner::Owner;
use resolve::Resolve;
use sock::Sock;

/// A connect that failed at once (not after `EINPROGRESS`), as nginx's
/// `ngx_event_connect_peer` logs it: `socket() failed` at alert when no
/// descriptor was left, else `connect() to PEER failed`, at error for the
/// errors a peer or the network causes (Linux's EAGAIN for a unix socket
/// whose accept queue is full among them) and at crit for the rest (a
/// socket file that is missing, say). TLS failures keep their own words.
fn sync_connect_failure(peer: &str, e: &io::Error) -> (LogLevel, String) {
    if let Some(text) = tls_client::failure(e) {
        return (LogLevel::Error, text);
    }
    match e.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE) => {
            (LogLevel::Alert, errlog::with_os_error("socket() failed", e))
        }
        Some(n) => {
            let level = if PEER_OR_NETWORK.contains(&n) {
                LogLevel::Error
            } else {
                LogLevel::Crit
            };
            (
                level,
                errlog::with_os_error(&format!("connect() to {peer} failed"), e),
            )
        }
        None => (
            LogLevel::Error,
            errlog::with_os_error("connect() failed", e),
        ),
    }
}

/// The errors a peer or the network causes: nginx logs these at error.
const PEER_OR_NETWORK: [i32; 7] = [
    libc::ECONNREFUSED,
    libc::EAGAIN,
    libc::ECONNRESET,
    libc::ENETDOWN,
    libc::ENETUNREACH,
    libc::EHOSTDOWN,
    libc::EHOSTUNREACH,
];

/// `*_limit_rate` (nginx's `ngx_event_pipe_read_upstream`): by second `t`
/// of reading the answer at most `rate * (t + 1)` bytes may have been
/// read; when more were, the pause until the reading is back at its pace.
/// A buffered answer only, as nginx's pipe (not `*_buffering off`).
fn pace(p: &mut Proxy, now: Instant) -> Option<Duration> {
    p.pacing = false;
    let up = p.job.up();
    if up.limit_rate == 0 || !up.buffering {
        return None;
    }
    let rate = up.limit_rate;
    let since = *p.paced_since.get_or_insert(now);
    let read = p.vars.tries.last().map_or(0, |t| t.received);
    let allowed = crate::rate::allowance(rate, 0, read, now.duration_since(since).as_secs());
    (allowed <= 0).then(|| {
        let ahead = u64::try_from(-allowed).unwrap_or(u64::MAX);
        crate::rate::wait(rate, ahead) + Duration::from_millis(1)
    })
}

/// Added to an upstream socket's descriptor for its token
/// ([`token_of`]); [`Upstreams::event`] finds the job that owns it.
pub const UPSTREAM_FLAG: usize = 1 << 40;
/// The owner of an upstream socket idle in a keep-alive pool.
const POOLED: usize = usize::MAX;

/// An upstream socket's token: its descriptor, not its job's key, so the
/// socket stays registered as it goes from a job to the pool and to the
/// next job (no `epoll_ctl` each time, as nginx's connection keeps its
/// events registered in `ngx_http_upstream_free_keepalive_peer`).
fn token_of(s: &Sock) -> mio::Token {
    mio::Token(UPSTREAM_FLAG + s.fd())
}
/// A job key at or above this is an HTTP/2 stream's (a slot of
/// [`Upstreams::add_stream_job`]); below, it is the HTTP/1 connection's
/// own key. Far above any connection key, below [`UPSTREAM_FLAG`].
pub const STREAM_JOB: usize = 1 << 39;
/// One read from the upstream (nginx's `proxy_buffer_size` default is a
/// page; 16 KiB takes a whole TLS record or most small answers at once).
pub(super) const READ_CHUNK: usize = 16 * 1024;

thread_local! {
    /// The worker's one buffer that an upstream `recv` fills (zeroed once,
    /// reused by every upstream read of the thread, as `h2`'s `SCRATCH`).
    pub(super) static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}
/// Error pages of `error_page` that proxy again, at most (a loop guard).
const MAX_RESTARTS: u8 = 10;

/// A worker's upstream side: the groups and the poll's registry.
pub struct Upstreams {
    pub groups: peers::Groups,
    pub registry: Option<mio::Registry>,
    pub confs: std::sync::Arc<[peregrine_conf::model::UpstreamConf]>,
    /// The monotonic origin of the balancers' seconds.
    pub epoch: Instant,
    /// The proxied requests in flight, by connection key (kept here, not
    /// in the connection's slot: an idle connection stays small).
    live: Vec<Option<Box<Proxy>>>,
    /// The connection key of each HTTP/2 stream's job key (its slot
    /// above [`STREAM_JOB`]), and the free slots.
    stream_jobs: Vec<Option<usize>>,
    free_jobs: Vec<usize>,
    /// The job key (or [`POOLED`]) of each upstream socket, by descriptor.
    /// A closed socket's entry stays until its number is used again: the
    /// kernel drops a closed descriptor from the epoll set, so only an
    /// event already fetched can find a stale entry, and a spurious wake
    /// is harmless (the read finds nothing).
    owners: Vec<usize>,
}

impl Upstreams {
    pub fn active(&self, key: usize) -> bool {
        self.live.get(key).is_some_and(Option::is_some)
    }

    pub fn get_mut(&mut self, key: usize) -> Option<&mut Proxy> {
        self.live.get_mut(key)?.as_deref_mut()
    }

    pub fn take(&mut self, key: usize) -> Option<Box<Proxy>> {
        self.live.get_mut(key)?.take()
    }

    /// A job key for an HTTP/2 stream of connection `conn`: its upstream
    /// socket's token and its resolver wait route to the connection.
    pub fn add_stream_job(&mut self, conn: usize) -> usize {
        let slot = match self.free_jobs.pop() {
            Some(s) => {
                self.stream_jobs[s] = Some(conn);
                s
            }
            None => {
                self.stream_jobs.push(Some(conn));
                self.stream_jobs.len() - 1
            }
        };
        STREAM_JOB + slot
    }

    pub fn remove_stream_job(&mut self, key: usize) {
        if let Some(s) = key.checked_sub(STREAM_JOB)
            && let Some(e) = self.stream_jobs.get_mut(s)
            && e.take().is_some()
        {
            self.free_jobs.push(s);
        }
    }

    /// The connection a job key belongs to (the key itself for HTTP/1),
    /// if its job is in flight.
    pub fn conn_of(&self, key: usize) -> Option<usize> {
        match key.checked_sub(STREAM_JOB) {
            Some(s) => self.stream_jobs.get(s).copied().flatten(),
            None => self.active(key).then_some(key),
        }
    }

    /// Routes the event of an upstream socket's token: the connection to
    /// drive, if a job owns it (an HTTP/1 job's readiness noted); an idle
    /// pooled connection with something to read is dropped.
    pub fn event(&mut self, token: usize, readable: bool, writable: bool) -> Option<usize> {
        let fd = token - UPSTREAM_FLAG;
        let key = *self.owners.get(fd)?;
        if key == POOLED {
            if readable {
                self.groups.idle_event(fd);
            }
            return None;
        }
        if key >= STREAM_JOB {
            // An HTTP/2 stream's job: its session drives it.
            return self.conn_of(key);
        }
        let p = self.get_mut(key)?;
        upstream_ready(p, readable, writable);
        Some(key)
    }

    pub fn set(&mut self, key: usize, p: Box<Proxy>) {
        if self.live.len() <= key {
            self.live.resize_with(key + 1, || None);
        }
        self.live[key] = Some(p);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Body,
    Connect,
    Send,
    Head,
    Stream,
    /// After `101 Switching Protocols`: bytes both ways.
    Tunnel,
    /// Waiting on `*_cache_lock` (`cache_store`).
    CacheLock,
}

/// One proxied request in flight.
pub struct Proxy {
    job: Box<ProxyJob>,
    state: State,
    sock: Option<Sock>,
    /// Readiness from the socket's events: reads wait for `readable`
    /// when `gated` (an HTTP/1 job, whose events set it; an HTTP/2
    /// stream's job is driven by its session and reads on every turn).
    pub readable: bool,
    pub writable: bool,
    gated: bool,
    /// The last read left nothing in the socket (it returned less than
    /// it asked for): no look is needed before pooling the connection.
    drained: bool,
    pub timed_out: bool,
    attempt: Option<Attempt>,
    peer: Option<PeerId>,
    peer_name: String,
    /// The request bytes and how many were sent.
    out: Vec<u8>,
    sent: usize,
    /// The client's body (the body layer), its decoder while it is read,
    /// its `Content-Length`, and what the request's send takes next.
    body: crate::body::ClientBody,
    body_dec: Option<BodyDecoder>,
    client_len: Option<u64>,
    feed: body_out::Feed,
    /// `*_request_buffering off`: the body goes on as it arrives.
    unbuffered: bool,
    inb: Vec<u8>,
    vars: UpstreamVars,
    started: Instant,
    first: Instant,
    requests: u64,
    dec: Option<BodyDecoder>,
    pub(crate) framing: ClientFraming,
    up_framing: Framing,
    reusable: bool,
    /// Bytes for the client and how many went.
    pub(crate) cout: Vec<u8>,
    pub(crate) cpos: usize,
    up_done: bool,
    restarts: u8,
    /// A pooled connection failed before answering: the same peer again on
    /// a new connection, not counted as a try (nginx's `peer.cached`).
    fresh_peer: bool,
    /// When the upstream connection was made (`keepalive_time`).
    born: Instant,
    /// A gateway's answer state (FastCGI, uwsgi, SCGI): `None` for HTTP.
    gw: Option<Box<gateway::Gw>>,
    /// The client's response held back while its body is read whole for
    /// the location's body filters (SSI, sub, addition).
    held: Option<Box<peregrine_core::Response>>,
    /// The held answer's upstream closed before its end: what came goes
    /// out filtered, unended, and the client's connection closes
    /// (nginx sends what its filters passed, then no last chunk).
    cut: bool,
    /// The upstream closed while bytes were held ([`holding`]).
    up_eof: bool,
    /// The answer being written to the cache (`cache_store`).
    cache_w: Option<Box<cache_store::Writer>>,
    /// `*_limit_rate`: when the answer's reading began, and whether the
    /// timer armed is its pause (not a timeout).
    paced_since: Option<Instant>,
    pacing: bool,
    /// After `101`: the client's head bytes still to write in the tunnel.
    tunnel_head: usize,
    /// The compression filter's encoder for the client's body, when the
    /// answer is compressed on its way (`gzip` on a proxied answer).
    pub(crate) comp: Option<Box<crate::compress::Compressing>>,
}

impl Proxy {
    /// The `$upstream_*` of a job ended from the client's side (its last
    /// try's time closed), for the access log.
    pub(crate) fn take_vars(&mut self, now: Instant) -> UpstreamVars {
        if let Some(tr) = self.vars.tries.last_mut()
            && tr.response.is_none()
        {
            tr.response = Some(now - self.started);
        }
        std::mem::take(&mut self.vars)
    }

    /// The client's body is read whole before the upstream has it.
    pub(crate) fn buffering(&self) -> bool {
        !self.unbuffered
    }

    /// `client_body_buffer_size` of the job's location.
    pub(crate) fn body_buffer_size(&self) -> u32 {
        u32::try_from(self.job.conf.client_body_buffer_size).unwrap_or(u32::MAX)
    }

    /// nginx's "while ..." of the job's state, for the error log.
    pub(crate) fn doing(&self) -> &'static str {
        match self.state {
            State::Body => "while reading client request body",
            State::Connect if self.sock.as_ref().is_some_and(Sock::handshaking) => {
                "while SSL handshaking to upstream"
            }
            State::Connect => "while connecting to upstream",
            State::Send => "while sending request to upstream",
            State::Head => "while reading response header from upstream",
            State::Stream => "while reading upstream",
            State::Tunnel => "while proxying upgraded connection",
            State::CacheLock => "",
        }
    }

    fn upstream_url(&self) -> String {
        if self.job.proto != Proto::Http {
            return gateway::upstream_url(self);
        }
        let uri = self
            .job
            .head
            .split(|&b| b == b' ')
            .nth(1)
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let scheme = if self.job.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}{}", self.peer_name, uri)
    }
}

/// Why an attempt failed (nginx's `NGX_HTTP_UPSTREAM_FT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fail {
    Error,
    Timeout,
    InvalidHeader,
    Status(u16),
    /// The client's body failed (400, 413, 500): no next peer.
    Client(u16),
    /// No peer left to try, or the name did not resolve: 502 and no next
    /// peer, whatever `proxy_next_upstream` says (nginx's
    /// `NGX_HTTP_UPSTREAM_FT_NOLIVE`, a bit no directive can set). As
    /// `Status(502)` it looped for ever when `http_502` was listed.
    NoLive,
}

impl Fail {
    fn bit(self) -> u32 {
        match self {
            Fail::Error => next::ERROR,
            Fail::Timeout => next::TIMEOUT,
            Fail::InvalidHeader => next::INVALID_HEADER,
            Fail::Status(500) => next::HTTP_500,
            Fail::Status(502) => next::HTTP_502,
            Fail::Status(503) => next::HTTP_503,
            Fail::Status(504) => next::HTTP_504,
            Fail::Status(403) => next::HTTP_403,
            Fail::Status(404) => next::HTTP_404,
            Fail::Status(429) => next::HTTP_429,
            Fail::Status(_) | Fail::Client(_) | Fail::NoLive => 0,
        }
    }

    fn status(self) -> u16 {
        match self {
            Fail::Timeout => 504,
            Fail::Status(s) | Fail::Client(s) => s,
            _ => 502,
        }
    }
}

pub(crate) enum Io {
    Done,
    Wait,
    Fail(Fail),
}

/// The upstream machine, for any [`Owner`] (written once, monomorphized).
pub(crate) trait Machine: Owner + Sized {
    /// `first`: the request's first upstream request (an error page that
    /// proxies again does not answer `Expect` twice).
    fn start_proxy_with(
        &mut self,
        t: &mut Transport,
        ex: Box<Exchange>,
        job: Box<ProxyJob>,
        cx: &mut Ctx,
        first: bool,
    ) -> Step {
        *self.ex_slot() = Some(ex);
        let body_kind = self.body_kind();
        let unbuffered = body_out::unbuffered(&job, body_kind);
        let body_dec = body_decoder(&job, body_kind);
        let expect = self
            .ex_ref()
            .and_then(|e| e.req())
            .is_some_and(|r| r.expect_continue());
        let now = cx.now;
        let locked = job.cache.0.as_ref().is_some_and(|c| c.locked.is_some());
        let mut p = Box::new(Proxy {
            job,
            state: if locked {
                State::CacheLock
            } else if unbuffered {
                State::Connect
            } else {
                State::Body
            },
            sock: None,
            readable: false,
            writable: false,
            gated: false,
            drained: false,
            timed_out: false,
            attempt: None,
            peer: None,
            peer_name: String::new(),
            out: Vec::new(),
            sent: 0,
            body: crate::body::ClientBody::default(),
            body_dec,
            client_len: match body_kind {
                BodyKind::Length(n) => Some(n),
                _ => None,
            },
            feed: body_out::Feed::Done,
            unbuffered,
            inb: Vec::new(),
            vars: UpstreamVars::default(),
            started: now,
            first: now,
            requests: 0,
            dec: None,
            framing: ClientFraming::None,
            up_framing: Framing::None,
            reusable: false,
            cout: Vec::new(),
            cpos: 0,
            up_done: false,
            restarts: 0,
            fresh_peer: false,
            born: now,
            gw: None,
            held: None,
            cut: false,
            up_eof: false,
            cache_w: None,
            paced_since: None,
            pacing: false,
            tunnel_head: 0,
            comp: None,
        });
        p.vars.proxy_host = p.job.proxy_host.clone();
        p.vars.proxy_port = p.job.proxy_port.clone();
        p.vars.cache_status = cache_store::status_of(&p.job);
        // nginx answers `Expect: 100-continue` when it reads the body,
        // which the proxy always does (`ngx_http_test_expect`).
        self.begin_job(t, p, expect && first, cx);
        Step::Continue
    }

    fn proxy_turn(&mut self, p: &mut Proxy, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        if p.state == State::CacheLock {
            return self.cache_lock_turn(p, t, key, cx);
        }
        if std::mem::take(&mut p.timed_out) && !std::mem::take(&mut p.pacing) {
            return self.on_proxy_timeout(p, t, key, cx);
        }
        // `*_ignore_client_abort on`: nginx does not watch the client while
        // the upstream works (`ngx_http_upstream_init_request` sets no
        // broken-connection handlers); the answer's write finds it gone.
        if matches!(p.state, State::Connect | State::Send | State::Head)
            && !p.job.up().ignore_client_abort
            && self.client_gone(t)
        {
            // The client went away first: 499 (`ngx_http_upstream_check_broken_connection`).
            self.log(
                cx,
                LogLevel::Info,
                "client prematurely closed connection",
                p.doing(),
            );
            if let Some(tr) = p.vars.tries.last_mut() {
                tr.response = Some(cx.now - p.started);
            }
            if let Some(ex) = self.ex_slot().as_mut() {
                ex.upstream = Some(Box::new(p.vars.clone()));
                if let Some(r) = ex.resp.as_mut() {
                    r.status = 499;
                }
            }
            self.end_upstream(p, cx, true);
            return Step::Close(Close::Normal);
        }
        loop {
            let io = match p.state {
                State::Body => self.read_client_body(p, t, cx),
                State::Connect => self.connect_step(p, key, cx),
                State::Send => self.send_step(p, t, cx),
                State::Head => return self.head_step(p, t, key, cx),
                State::Stream => return self.stream_step(p, t, key, cx),
                State::Tunnel => return self.tunnel_step(p, t, key, cx),
                State::CacheLock => return self.cache_lock_turn(p, t, key, cx),
            };
            match io {
                Io::Done => {}
                Io::Wait => {
                    let d = match p.state {
                        State::Body => self
                            .conf_of(cx)
                            .map_or(Duration::from_secs(60), |c| c.client_body_timeout),
                        State::Connect => p.job.up().connect_timeout,
                        State::Send => p.job.up().send_timeout,
                        _ => p.job.up().read_timeout,
                    };
                    self.arm_timer(cx, d);
                    return Step::Wait;
                }
                Io::Fail(f) => {
                    if let Some(s) = self.next_or_fail(p, f, t, key, cx) {
                        return s;
                    }
                }
            }
        }
    }

    fn conf_of(&self, _cx: &Ctx) -> Option<std::sync::Arc<peregrine_conf::model::LocConf>> {
        self.ex_ref().and_then(|e| e.conf().cloned())
    }

    /// Picks a peer and connects (or takes an idle connection).
    fn connect_step(&mut self, p: &mut Proxy, key: usize, cx: &mut Ctx) -> Io {
        if p.sock.is_some() {
            let Some(s) = p.sock.as_mut() else {
                return Io::Wait;
            };
            return match s.connected() {
                Ok(true) => {
                    if let Some(t) = p.vars.tries.last_mut() {
                        t.connect = Some(cx.now - p.started);
                    }
                    p.state = State::Send;
                    Io::Done
                }
                Ok(false) => Io::Wait,
                Err(e) => {
                    let text = tls_client::failure(&e)
                        .unwrap_or_else(|| errlog::with_os_error("connect() failed", &e));
                    self.log_upstream(p, cx, LogLevel::Error, &text);
                    Io::Fail(Fail::Error)
                }
            };
        }
        let secs = cx.now.duration_since(cx.upstreams.epoch).as_secs();
        let confs = cx.upstreams.confs.clone();
        // Once per request: the retries use the group its lookup built.
        if p.attempt.is_none()
            && let peregrine_core::proxy::Target::Resolve(name, port) = &p.job.target
        {
            match self.resolve(p, name.clone(), *port, key, cx) {
                Io::Done => {}
                other => return other,
            }
        }
        let crate::upstream::Upstreams {
            groups,
            registry,
            owners,
            ..
        } = &mut cx.upstreams;
        let Some(g) = groups.get(&p.job.target, &confs) else {
            self.log_upstream(p, cx, LogLevel::Error, "no live upstreams");
            return Io::Fail(Fail::NoLive);
        };
        if std::mem::take(&mut p.fresh_peer)
            && let Some(peer) = p.peer
            && let Some(addr) = g.addr(peer).cloned()
        {
            p.requests = 0;
            p.started = cx.now;
            build_request(p);
            let r = start_connect(p, &addr, registry.as_ref(), owners, key);
            return match r {
                Ok(()) => connect_started(p, cx.now),
                Err(e) => {
                    let (level, text) = sync_connect_failure(&p.peer_name, &e);
                    self.log_upstream(p, cx, level, &text);
                    Io::Fail(Fail::Error)
                }
            };
        }
        if p.attempt.is_none() {
            let peer_ip;
            let k = match (&p.job.hash_key, g.up.method) {
                (Some(k), _) => Key::Bytes(k),
                (None, peregrine_upstream::Method::IpHash) => {
                    peer_ip = match self.info().peer.ip() {
                        std::net::IpAddr::V4(a) => a.octets().to_vec(),
                        std::net::IpAddr::V6(a) => a.octets().to_vec(),
                    };
                    Key::Addr(&peer_ip)
                }
                _ => Key::None,
            };
            let mut a = g.up.start(k);
            a.limit_tries(p.job.up().next_upstream_tries as usize);
            p.attempt = Some(a);
        }
        let Some(a) = p.attempt.as_mut() else {
            return Io::Fail(Fail::Error);
        };
        let Some(peer) = g.up.get(a, secs) else {
            p.vars.tries.push(Tried {
                addr: g.up.name.clone(),
                status: Some(502),
                ..Tried::default()
            });
            self.log_upstream(p, cx, LogLevel::Error, "no live upstreams");
            return Io::Fail(Fail::NoLive);
        };
        p.peer = Some(peer);
        p.peer_name = g.up.peer(peer).0.name.clone();
        p.started = cx.now;
        p.vars.tries.push(Tried {
            addr: p.peer_name.clone(),
            ..Tried::default()
        });
        build_request(p);
        if let Some(idle) = g
            .take_idle(peer, cx.now)
            .filter(|i| i.sock.is_tls() == p.job.tls.is_some())
        {
            // Still registered (under its own token): only its owner
            // changes. Drained when pooled, so no byte waits to be read.
            set_owner(owners, &idle.sock, key);
            p.sock = Some(idle.sock);
            p.requests = idle.requests;
            p.born = idle.born;
            p.writable = true;
            p.readable = false;
            p.drained = false;
            p.gated = key < STREAM_JOB;
            if let Some(t) = p.vars.tries.last_mut() {
                t.connect = Some(Duration::ZERO);
            }
            p.state = State::Send;
            return Io::Done;
        }
        let Some(addr) = g.addr(peer).cloned() else {
            return Io::Fail(Fail::Error);
        };
        p.requests = 0;
        match start_connect(p, &addr, registry.as_ref(), owners, key) {
            Ok(()) => connect_started(p, cx.now),
            Err(e) => {
                let (level, text) = sync_connect_failure(&p.peer_name, &e);
                self.log_upstream(p, cx, level, &text);
                Io::Fail(Fail::Error)
            }
        }
    }

    /// Reads the answer's head; on a whole one, core makes the response.
    fn head_step(&mut self, p: &mut Proxy, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        loop {
            if let Some(s) = self.gateway_head(p, t, key, cx) {
                return s;
            }
            let max = p.job.up().buffer_size;
            let parsed = match p.gw.as_ref() {
                Some(_) if !gateway::head_ready(p) => Ok(uc::Parsed::Partial),
                _ => uc::parse_head(&p.inb, max),
            };
            let head = match parsed {
                Ok(uc::Parsed::Partial) => None,
                Ok(uc::Parsed::Head(h)) if h.status == uc::EARLY_HINTS => {
                    p.inb.drain(..h.len);
                    continue;
                }
                Ok(uc::Parsed::Head(h)) => Some(h),
                Ok(uc::Parsed::Http09(h)) => {
                    self.log_upstream(
                        p,
                        cx,
                        LogLevel::Error,
                        "upstream sent no valid HTTP/1.0 header",
                    );
                    Some(h)
                }
                Err(e) => {
                    self.log_upstream(p, cx, LogLevel::Error, &e.to_string());
                    match self.next_or_fail(p, Fail::InvalidHeader, t, key, cx) {
                        Some(s) => return s,
                        None => return Step::Continue,
                    }
                }
            };
            if let Some(h) = head {
                return self.got_head(p, h, t, key, cx);
            }
            let r = read_up(p);
            if self.log_stderr(p, cx) {
                self.log_upstream(p, cx, LogLevel::Error, "upstream sent invalid header");
                return match self.next_or_fail(p, Fail::InvalidHeader, t, key, cx) {
                    Some(s) => s,
                    None => Step::Continue,
                };
            }
            match r {
                Ok(0) if p.gw.as_ref().is_some_and(|g| g.ended) => {
                    self.log_upstream(
                        p,
                        cx,
                        LogLevel::Error,
                        "upstream prematurely closed FastCGI stdout",
                    );
                    return match self.next_or_fail(p, Fail::Error, t, key, cx) {
                        Some(s) => s,
                        None => Step::Continue,
                    };
                }
                Ok(0) => {
                    self.log_upstream(
                        p,
                        cx,
                        LogLevel::Error,
                        "upstream prematurely closed connection",
                    );
                    return match self.next_or_fail(p, Fail::Error, t, key, cx) {
                        Some(s) => s,
                        None => Step::Continue,
                    };
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.arm_timer(cx, p.job.up().read_timeout);
                    return Step::Wait;
                }
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    self.log_upstream(p, cx, LogLevel::Error, &e.to_string());
                    return match self.next_or_fail(p, Fail::InvalidHeader, t, key, cx) {
                        Some(s) => s,
                        None => Step::Continue,
                    };
                }
                Err(e) => {
                    let text = errlog::with_os_error("recv() failed", &e);
                    self.log_upstream(p, cx, LogLevel::Error, &text);
                    return match self.next_or_fail(p, Fail::Error, t, key, cx) {
                        Some(s) => s,
                        None => Step::Continue,
                    };
                }
            }
        }
    }

    fn got_head(
        &mut self,
        p: &mut Proxy,
        h: uc::UpstreamHead,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Step {
        if let Some(tr) = p.vars.tries.last_mut() {
            tr.status = Some(h.status);
            tr.header = Some(cx.now - p.started);
        }
        let f = Fail::Status(h.status);
        let more = p.attempt.as_ref().is_some_and(|a| a.tries() > 1)
            && (p.job.idempotent || p.job.up().next_upstream & next::NON_IDEMPOTENT != 0);
        if f.bit() & p.job.up().next_upstream != 0 && more {
            return match self.next_or_fail(p, f, t, key, cx) {
                Some(s) => s,
                None => Step::Continue,
            };
        }
        p.vars.head = p.inb[..h.len].to_vec();
        p.vars.headers = h.headers.clone();
        let ign = p.job.up().ignore_headers;
        if ign & peregrine_conf::model::ignore::X_ACCEL_REDIRECT == 0
            && let Some(to) = p.vars.header("x_accel_redirect").map(str::to_string)
            && !to.is_empty()
        {
            self.free_peer(p, cx, false);
            return self.accel_redirect(p, &to, t, key, cx);
        }
        if p.job.up().intercept_errors
            && h.status >= 300
            && p.job
                .conf
                .error_pages
                .iter()
                .any(|e| e.codes.contains(&h.status))
        {
            self.free_peer(p, cx, false);
            return self.error_page(p, h.status, t, key, cx);
        }
        let upgrade = h.status == 101
            && self
                .ex_ref()
                .and_then(|e| e.req())
                .is_some_and(|r| r.header("Upgrade").is_some());
        if upgrade && let Some(s) = self.start_tunnel(p, &h, t, key, cx) {
            return s;
        }
        p.up_framing = h.framing(p.job.head_request);
        p.framing = self.framing(p.up_framing, p);
        if h.status < 200 && p.framing == ClientFraming::Chunked {
            // nginx's chunked filter leaves a 1xx alone (a `101` to a
            // request without `Upgrade`): its body runs to the close.
            p.framing = ClientFraming::Close;
        }
        p.reusable = h.reusable(p.job.head_request);
        p.dec = match p.up_framing {
            Framing::Length(n) => Some(BodyDecoder::new(BodyKind::Length(n))),
            Framing::Chunked => Some(BodyDecoder::new(BodyKind::Chunked)),
            _ => None,
        };
        p.up_done = matches!(p.up_framing, Framing::None | Framing::Length(0));
        if let Some(s) = self.serve_stale(p, f.bit(), t, key, cx) {
            return s;
        }
        if let Some(s) = self.revalidated(p, h.status, t, key, cx) {
            return s;
        }
        p.cache_w = cache_store::Writer::begin(
            &p.job,
            h.status,
            &p.vars,
            peregrine_codec::date::unix_secs(cx.wall),
        );
        let Some(mut ex) = self.ex_slot().take() else {
            return Step::Close(Close::Normal);
        };
        let resp = {
            let Some(req) = ex.req() else {
                return Step::Close(Close::Normal);
            };
            cx.core.proxied(
                &p.job,
                self.info(),
                req,
                cx.wall,
                &p.vars,
                &h,
                &p.inb[..h.len],
                p.framing,
            )
        };
        // The body bytes read with the head stay, in the same buffer.
        p.inb.drain(..h.len);
        let hold = p.framing != ClientFraming::None
            && ex
                .req()
                .is_some_and(|req| cx.core.holds_proxied(&p.job, req, &resp));
        if hold {
            // The body is read whole, unframed, then filtered
            // (`Proxy::held`, `release_held`).
            p.framing = ClientFraming::Close;
            p.held = Some(Box::new(resp));
        } else {
            self.queue_head(&mut ex, resp, p, cx);
        }
        *self.ex_slot() = Some(ex);
        p.state = State::Stream;
        self.stream_step(p, t, key, cx)
    }

    /// Reads more of a held response's body into `p.cout` (nothing goes
    /// to the client yet). `Err`: the step to return (wait or fail).
    fn read_held(&mut self, p: &mut Proxy, _key: usize, cx: &mut Ctx) -> Result<(), Step> {
        if p.inb.is_empty() {
            let r = read_up(p);
            self.log_stderr(p, cx);
            match r {
                Ok(0) if p.up_framing == Framing::UntilClose => {
                    p.up_done = true;
                    p.reusable = p.job.proto != Proto::Http && gateway::reusable(p);
                    return Ok(());
                }
                Ok(0) => {
                    self.log_upstream(
                        p,
                        cx,
                        LogLevel::Error,
                        "upstream prematurely closed connection",
                    );
                    self.end_upstream(p, cx, true);
                    // What came still goes out (`release_held`).
                    p.cut = true;
                    p.up_done = true;
                    p.cache_w = None;
                    return Ok(());
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.arm_timer(cx, p.job.up().read_timeout);
                    return Err(Step::Wait);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
                Err(_) => {
                    self.end_upstream(p, cx, true);
                    return Err(Step::Close(Close::Normal));
                }
            }
        }
        if frame_body(p).is_err() {
            self.log_upstream(
                p,
                cx,
                LogLevel::Error,
                "upstream sent invalid chunked response",
            );
            self.end_upstream(p, cx, true);
            return Err(Step::Close(Close::Normal));
        }
        Ok(())
    }

    /// The held response's body is all read: filtered, it goes out with
    /// its head and a Content-Length, compressed, or framed with its
    /// trailers.
    fn release_held(&mut self, p: &mut Proxy, cx: &mut Ctx) -> bool {
        let Some(mut resp) = p.held.take() else {
            return true;
        };
        let body = std::mem::take(&mut p.cout);
        // How the session frames a body of unknown length: chunks for an
        // HTTP/1.1 client, else until the close (HTTP/1.0; HTTP/2's DATA).
        // Asked while the session still holds the exchange.
        let unknown = self.framing(Framing::UntilClose, p);
        let Some(mut ex) = self.ex_slot().take() else {
            return false;
        };
        if let Some(req) = ex.req() {
            let (job, whole) = (&p.job, !p.cut);
            cx.core.filter_proxied_body(
                job,
                self.info(),
                req,
                cx.wall,
                &p.vars,
                &mut resp,
                body,
                whole,
            );
        }
        p.framing = ClientFraming::Length(resp.content_length.unwrap_or(0));
        if p.cut {
            // No length for a cut answer, and no last chunk after it.
            p.framing = unknown;
            if p.framing == ClientFraming::Chunked {
                resp.head.to_mut().set("Transfer-Encoding", "chunked");
                resp.chunked = true;
            } else {
                resp.keepalive = false;
            }
        }
        self.queue_head(&mut ex, *resp, p, cx);
        let head = p.cout.len();
        let mut bytes = Vec::new();
        let mut trailers = None;
        if let Some(r) = ex.resp.as_ref() {
            flatten_memory(&r.body, &mut bytes);
            if r.chunked && p.comp.is_none() && !p.cut {
                // `add_trailer`'s answer: chunked where the session frames
                // chunks (HTTP/1.1), its trailers after the last.
                p.framing = unknown;
                trailers = r.trailers.as_deref();
            }
        }
        // Compressed (the framing the compression filter chose), chunked,
        // or as it is, with its length.
        push_body(p, &bytes);
        match trailers {
            _ if p.cut => {}
            Some(t) if p.framing == ClientFraming::Chunked => {
                crate::write::push_last_chunk(&mut p.cout, Some(t));
            }
            _ => push_end(p),
        }
        ex.out.body_bytes += (p.cout.len() - head) as u64;
        *self.ex_slot() = Some(ex);
        true
    }

    /// Streams the body: writes what is pending to the client, then reads
    /// more from the upstream.
    fn stream_step(&mut self, p: &mut Proxy, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        loop {
            if p.held.is_some() {
                if p.cout.len() as u64 > peregrine_core::filters::MAX_FILTERED_BODY {
                    self.end_upstream(p, cx, true);
                    return Step::Close(Close::Normal);
                }
                if !p.up_done {
                    if let Err(s) = self.read_held(p, key, cx) {
                        return s;
                    }
                    continue;
                }
                if !self.release_held(p, cx) {
                    return Step::Close(Close::Normal);
                }
            }
            // Body bytes already read (with the head, or a FastCGI answer's
            // STDOUT and END_REQUEST in one read) join what is still to be
            // written, so a small answer leaves in one write as in nginx's
            // one writev of head and body: each separate write costs the
            // client a segment and a wake-up.
            if p.cpos == 0
                && !p.inb.is_empty()
                && !p.up_done
                && !holding(p)
                && let Err(s) = self.frame_step(p, cx)
            {
                // The head and the valid body before the broken framing
                // still go out, as when they were written before the
                // body was framed.
                let _ = self.client_write(t, &p.cout);
                return s;
            }
            if p.cpos < p.cout.len() {
                match self.client_write(t, &p.cout[p.cpos..]) {
                    Ok(0) => return Step::Close(Close::Normal),
                    Ok(n) => {
                        p.cpos += n;
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        let d = p.job.conf.send_timeout;
                        self.arm_timer(cx, d);
                        return Step::Wait;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.log(
                            cx,
                            LogLevel::Info,
                            &errlog::with_os_error("writev() failed", &e),
                            "while sending to client",
                        );
                        // The access log still shows the upstream's try.
                        if let Some(ex) = self.ex_slot().as_mut() {
                            ex.upstream = Some(Box::new(p.take_vars(cx.now)));
                        }
                        self.end_upstream(p, cx, true);
                        return Step::Close(Close::Normal);
                    }
                }
            }
            let head_len = self.ex_ref().map_or(0, |e| e.out.head_bytes);
            p.cout.clear();
            p.cpos = 0;
            if p.up_done {
                if p.cut {
                    if let Some(ex) = self.ex_slot().as_mut() {
                        ex.upstream = Some(Box::new(p.take_vars(cx.now)));
                    }
                    return Step::Close(Close::Normal);
                }
                if p.comp.is_some() {
                    // An answer that ended with no body to decode (an
                    // empty one): the encoder's end still goes out.
                    push_end(p);
                    continue;
                }
                return self.finish_proxy(p, t, key, cx);
            }
            // Bytes already read (after the head) first, then the socket.
            if p.inb.is_empty() || holding(p) {
                if let Some(d) = pace(p, cx.now) {
                    p.pacing = true;
                    self.arm_timer(cx, d);
                    return Step::Wait;
                }
                let r = read_up(p);
                self.log_stderr(p, cx);
                match r {
                    Ok(0)
                        if p.job.proto == Proto::FastCgi
                            && !p.gw.as_ref().is_some_and(|g| g.ended) =>
                    {
                        self.log_upstream(
                            p,
                            cx,
                            LogLevel::Error,
                            "upstream prematurely closed FastCGI stdout",
                        );
                        self.end_upstream(p, cx, true);
                        return Step::Close(Close::Normal);
                    }
                    Ok(0) if !p.inb.is_empty() => {
                        // What was held goes first; the next read finds
                        // the close again.
                        p.up_eof = true;
                    }
                    Ok(0) => {
                        if p.up_framing == Framing::UntilClose {
                            p.up_done = true;
                            // The end of a FastCGI answer is END_REQUEST,
                            // not the connection's close.
                            p.reusable = p.job.proto != Proto::Http && gateway::reusable(p);
                            push_end(p);
                            continue;
                        }
                        self.log_upstream(
                            p,
                            cx,
                            LogLevel::Error,
                            "upstream prematurely closed connection",
                        );
                        self.end_upstream(p, cx, true);
                        return Step::Close(Close::Normal);
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        self.arm_timer(cx, p.job.up().read_timeout);
                        return Step::Wait;
                    }
                    Err(_) => {
                        self.end_upstream(p, cx, true);
                        return Step::Close(Close::Normal);
                    }
                }
            }
            let _ = head_len;
            if !holding(p)
                && let Err(s) = self.frame_step(p, cx)
            {
                return s;
            }
        }
    }

    /// Frames `p.inb` onto `p.cout` (counted as body bytes; the last chunk
    /// is not, as on the `Ok(0)` read's path), and ends a
    /// FastCGI answer at once when its END_REQUEST was in the bytes
    /// decoded, so the last chunk joins the body's write instead of
    /// waiting for one more read (which would find the end anyway).
    fn frame_step(&mut self, p: &mut Proxy, cx: &mut Ctx) -> Result<(), Step> {
        let before = p.cout.len();
        if let Err(()) = frame_body(p) {
            self.log_upstream(
                p,
                cx,
                LogLevel::Error,
                "upstream sent invalid chunked response",
            );
            self.end_upstream(p, cx, true);
            return Err(Step::Close(Close::Normal));
        }
        if let Some(ex) = self.ex_slot().as_mut() {
            ex.out.body_bytes += (p.cout.len() - before) as u64;
        }
        if p.job.proto == Proto::FastCgi
            && !p.up_done
            && p.inb.is_empty()
            && p.up_framing == Framing::UntilClose
            && p.gw.as_ref().is_some_and(|g| g.ended)
        {
            // What the `Ok(0)` read of `stream_step` does for an ended answer.
            p.up_done = true;
            p.reusable = gateway::reusable(p);
            if p.framing == ClientFraming::Chunked {
                crate::write::push_last_chunk(&mut p.cout, None);
            }
        }
        Ok(())
    }

    /// The answer went whole to the client: the upstream connection back
    /// to its pool, the exchange completes as any other.
    fn finish_proxy(&mut self, p: &mut Proxy, t: &mut Transport, key: usize, cx: &mut Ctx) -> Step {
        if let Some(w) = p.cache_w.take() {
            w.commit(&mut p.job);
        }
        if let Some(tr) = p.vars.tries.last_mut() {
            tr.response = Some(cx.now - p.started);
        }
        self.end_upstream(p, cx, false);
        self.disarm_timer(cx);
        if let Some(ex) = self.ex_slot().as_mut() {
            ex.upstream = Some(Box::new(std::mem::take(&mut p.vars)));
        }
        self.complete_job(t, key, cx)
    }

    /// Frees the attempt's peer and keeps or drops its connection.
    fn end_upstream(&mut self, p: &mut Proxy, cx: &mut Ctx, failed: bool) {
        let keep = !failed
            && p.up_done
            && p.reusable
            && p.state == State::Stream
            && (p.job.proto == Proto::Http || gateway::reusable(p));
        let peer = p.peer;
        self.free_peer(p, cx, failed);
        // Not deregistered: closing the descriptor takes it out of the
        // epoll set (nginx's `ngx_close_connection` skips the `epoll_ctl`
        // too), and a pooled one stays registered under its own token.
        let Some(s) = p.sock.take() else { return };
        // Bytes may be left when the last read filled its buffer: a look
        // then, as nginx's `c->read->ready` test before pooling.
        let keep = keep && (p.drained || s.idle_clean());
        if keep
            && let Some(peer) = peer
            && let Some(g) = cx
                .upstreams
                .groups
                .get(&p.job.target, &cx.upstreams.confs.clone())
        {
            set_owner(&mut cx.upstreams.owners, &s, POOLED);
            g.put_idle(peers::Idle {
                sock: s,
                peer,
                since: cx.now,
                requests: p.requests + 1,
                born: p.born,
            });
        }
    }

    fn free_peer(&mut self, p: &mut Proxy, cx: &mut Ctx, failed: bool) {
        let secs = cx.now.duration_since(cx.upstreams.epoch).as_secs();
        let confs = cx.upstreams.confs.clone();
        if let (Some(a), Some(g)) = (
            p.attempt.as_mut(),
            cx.upstreams.groups.get(&p.job.target, &confs),
        ) && a.current().is_some()
        {
            let freed = g.up.free(a, failed, secs);
            if freed.disabled {
                self.log_upstream(
                    p,
                    cx,
                    LogLevel::Warn,
                    "upstream server temporarily disabled",
                );
            }
        }
        p.peer = None;
    }

    /// `ngx_http_upstream_next`: the next peer, or the error page.
    fn next_or_fail(
        &mut self,
        p: &mut Proxy,
        f: Fail,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Option<Step> {
        if let Some(tr) = p.vars.tries.last_mut() {
            tr.response = Some(cx.now - p.started);
            if tr.status.is_none() {
                tr.status = Some(f.status());
            }
        }
        if p.requests > 0 && f == Fail::Error && p.inb.is_empty() && p.peer.is_some() {
            // A kept-alive connection the upstream closed meanwhile.
            if let Some(mut s) = p.sock.take()
                && let Some(r) = cx.upstreams.registry.as_ref()
            {
                s.deregister(r);
            }
            p.vars.tries.pop();
            p.vars.tries.push(Tried {
                addr: p.peer_name.clone(),
                ..Tried::default()
            });
            p.fresh_peer = true;
            p.state = State::Connect;
            p.sent = 0;
            return None;
        }
        let counts = !matches!(f, Fail::Status(403 | 404));
        let was_sent = p.state == State::Head || p.sent > 0;
        let fresh = p.state == State::Body;
        if let Some(mut s) = p.sock.take()
            && let Some(r) = cx.upstreams.registry.as_ref()
        {
            s.deregister(r);
        }
        if fresh || matches!(f, Fail::Status(400 | 413) | Fail::Client(_)) {
            return Some(self.error_page(p, f.status(), t, key, cx));
        }
        self.free_peer(p, cx, counts);
        let conf = p.job.up();
        let tries = p.attempt.as_ref().map_or(0, |a| a.tries());
        let timeout = conf.next_upstream_timeout;
        let non_idem =
            was_sent && !p.job.idempotent && conf.next_upstream & next::NON_IDEMPOTENT == 0;
        let allowed = f.bit() & conf.next_upstream != 0
            && conf.next_upstream & next::OFF == 0
            && tries > 0
            && !non_idem
            && (timeout.is_zero() || cx.now - p.first < timeout);
        if allowed {
            p.state = State::Connect;
            p.inb.clear();
            p.sent = 0;
            return None;
        }
        if let Some(s) = self.serve_stale(p, f.bit(), t, key, cx) {
            return Some(s);
        }
        Some(self.error_page(p, f.status(), t, key, cx))
    }

    /// The response for a failed request: core's error page (error_page
    /// applying); a page that proxies again starts over.
    fn error_page(
        &mut self,
        p: &mut Proxy,
        status: u16,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Step {
        self.disarm_timer(cx);
        let Some(ex) = self.ex_slot().take() else {
            return Step::Close(Close::Normal);
        };
        let resp = {
            let Some(req) = ex.req() else {
                return Step::Close(Close::Normal);
            };
            cx.core
                .upstream_error(&p.job, self.info(), req, cx.wall, &p.vars, status)
        };
        self.after_core(p, ex, resp, t, key, cx)
    }

    /// Core's response after the upstream: queued, or (a location that
    /// proxies again) a new upstream request.
    fn after_core(
        &mut self,
        p: &mut Proxy,
        mut ex: Box<Exchange>,
        resp: peregrine_core::Response,
        t: &mut Transport,
        _key: usize,
        cx: &mut Ctx,
    ) -> Step {
        if let Some(job) = cx.core.take_proxy()
            && p.restarts < MAX_RESTARTS
        {
            let restarts = p.restarts + 1;
            let step = self.start_proxy_with(t, ex, job, cx, false);
            if let Some(np) = self.job_mut(cx) {
                np.restarts = restarts;
                np.vars.tries = std::mem::take(&mut p.vars.tries);
                carry_body(p, np);
            }
            return step;
        }
        ex.upstream = Some(Box::new(p.vars.clone()));
        self.respond_core(p, ex, resp, t, cx)
    }

    /// `X-Accel-Redirect`: core redirects internally; the result may
    /// proxy again.
    fn accel_redirect(
        &mut self,
        p: &mut Proxy,
        to: &str,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Step {
        self.disarm_timer(cx);
        if let Some(mut s) = p.sock.take()
            && let Some(r) = cx.upstreams.registry.as_ref()
        {
            s.deregister(r);
        }
        let Some(ex) = self.ex_slot().take() else {
            return Step::Close(Close::Normal);
        };
        let resp = {
            let Some(req) = ex.req() else {
                return Step::Close(Close::Normal);
            };
            cx.core
                .accel_redirect(&p.job, self.info(), req, cx.wall, &p.vars, to)
        };
        self.after_core(p, ex, resp, t, key, cx)
    }

    fn on_proxy_timeout(
        &mut self,
        p: &mut Proxy,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Step {
        let e = io::Error::from_raw_os_error(libc::ETIMEDOUT);
        match p.state {
            State::Body => {
                self.log(
                    cx,
                    LogLevel::Info,
                    &errlog::with_os_error("client timed out", &e),
                    p.doing(),
                );
                Step::Close(Close::Normal)
            }
            State::Tunnel => {
                self.log_upstream(
                    p,
                    cx,
                    LogLevel::Error,
                    &errlog::with_os_error("upstream timed out", &e),
                );
                self.end_tunnel(p, t, key, cx)
            }
            State::Stream if p.cpos < p.cout.len() => {
                self.log(
                    cx,
                    LogLevel::Info,
                    &errlog::with_os_error("client timed out", &e),
                    "while sending to client",
                );
                self.end_upstream(p, cx, true);
                Step::Close(Close::Normal)
            }
            State::Stream => {
                self.log_upstream(
                    p,
                    cx,
                    LogLevel::Error,
                    &errlog::with_os_error("upstream timed out", &e),
                );
                self.end_upstream(p, cx, true);
                Step::Close(Close::Normal)
            }
            _ => {
                self.log_upstream(
                    p,
                    cx,
                    LogLevel::Error,
                    &errlog::with_os_error("upstream timed out", &e),
                );
                match self.next_or_fail(p, Fail::Timeout, t, key, cx) {
                    Some(s) => s,
                    None => Step::Continue,
                }
            }
        }
    }

    /// An error line with nginx's `upstream: "http://..."` context
    /// (between `request:` and `host:`, as `ngx_http_log_error_handler`).
    fn log_upstream(&self, p: &Proxy, cx: &Ctx, level: LogLevel, text: &str) {
        let loc_log = p.job.conf.error_log.as_ref();
        if level < cx.log_level && loc_log.is_none() {
            return;
        }
        let req = self.ex_ref().and_then(|e| e.req());
        let server = p
            .job
            .server
            .server_names
            .first()
            .map(errlog::server_name_text)
            .unwrap_or_default();
        let ctx = errlog::Context {
            id: self.info().id,
            peer: self.info().peer,
            server: &server,
            request: req.map(|r| r.request_line()),
            host: None,
        };
        let mut line = errlog::conn_message(&ctx, &format!("{text} {}", p.doing()));
        if !p.peer_name.is_empty() {
            line.push_str(&format!(", upstream: \"{}\"", p.upstream_url()));
        }
        if let Some(h) = req.and_then(|r| r.header("Host")) {
            line.push_str(&format!(", host: \"{h}\""));
        }
        match loc_log {
            Some(confs) => cx.loc_errlogs.write(confs, level, &line),
            None => (cx.errlog)(level, &line),
        }
    }

    /// A gateway's CGI head rewritten before the HTTP/1 parse; `Some` when
    /// the answer is invalid (logged, next peer or error page).
    fn gateway_head(
        &mut self,
        p: &mut Proxy,
        t: &mut Transport,
        key: usize,
        cx: &mut Ctx,
    ) -> Option<Step> {
        p.gw.as_ref()?;
        match gateway::cgi_head(p) {
            gateway::HeadStep::Ready | gateway::HeadStep::More => None,
            gateway::HeadStep::Invalid(text) => {
                self.log_upstream(p, cx, LogLevel::Error, &text);
                Some(
                    self.next_or_fail(p, Fail::InvalidHeader, t, key, cx)
                        .unwrap_or(Step::Continue),
                )
            }
        }
    }

    /// FastCGI's `STDERR` texts as nginx logs them (`FastCGI sent in
    /// stderr: "..."`, level error); `true` when one holds a
    /// `fastcgi_catch_stderr` string while the head is read.
    fn log_stderr(&mut self, p: &mut Proxy, cx: &mut Ctx) -> bool {
        let Some(gw) = p.gw.as_mut() else {
            return false;
        };
        if gw.stderr.is_empty() {
            return false;
        }
        let texts = std::mem::take(&mut gw.stderr);
        let catch = &p.job.conf.fastcgi.catch_stderr;
        let mut caught = false;
        for piece in &texts {
            let text = peregrine_fastcgi::stderr_text(piece);
            if text.is_empty() {
                continue;
            }
            let s = String::from_utf8_lossy(text);
            self.log_upstream(
                p,
                cx,
                LogLevel::Error,
                &format!("FastCGI sent in stderr: \"{s}\""),
            );
            caught |= p.state == State::Head && catch.iter().any(|c| s.contains(c.as_str()));
        }
        caught
    }
}

impl<T: Owner> Machine for T {}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// An error page or `X-Accel-Redirect` that proxies again sends the body
/// already read (nginx keeps `r->request_body` across internal redirects).
fn carry_body(from: &mut Proxy, to: &mut Proxy) {
    to.body = std::mem::take(&mut from.body);
    to.body_dec = from.body_dec.take();
    to.client_len = from.client_len;
    to.unbuffered = from.unbuffered && to.unbuffered && to.body_dec.is_some();
    to.vars.request_body = from.vars.request_body.take();
    to.vars.request_body_file = from.vars.request_body_file.take();
    if to.state == State::Body && to.body_dec.is_none() {
        to.state = State::Connect;
    }
}

/// A non-blocking connect to `addr`, registered under the client's key.
fn start_connect(
    p: &mut Proxy,
    addr: &peregrine_conf::model::PeerAddr,
    registry: Option<&mio::Registry>,
    owners: &mut Vec<usize>,
    key: usize,
) -> io::Result<()> {
    let mut s = tls_client::wrap(Sock::connect(addr)?, &p.job)?;
    if let Some(r) = registry {
        s.register(r, token_of(&s))?;
    }
    set_owner(owners, &s, key);
    p.sock = Some(s);
    p.readable = false;
    p.writable = false;
    p.drained = false;
    p.gated = key < STREAM_JOB;
    p.born = p.started;
    Ok(())
}

/// After [`start_connect`]: a UNIX-domain connect that returned 0 is
/// made (Linux's `unix_stream_connect` never answers `EINPROGRESS`, and
/// its `EAGAIN` for a full backlog came back from mio as an error), so
/// the request goes out now, as `ngx_http_upstream_connect` sends at
/// once when `ngx_event_connect_peer` returns `NGX_OK`: no
/// `SO_ERROR`/`getpeername` check and no turn of the event loop. A TCP
/// connect waits for writability.
fn connect_started(p: &mut Proxy, now: Instant) -> Io {
    if !p.sock.as_ref().is_some_and(Sock::connected_at_once) {
        return Io::Wait;
    }
    if let Some(t) = p.vars.tries.last_mut() {
        t.connect = Some(now - p.started);
    }
    p.writable = true;
    p.state = State::Send;
    Io::Done
}

/// The client body's decoder, when a body is to be read. A gateway's
/// job with an empty body still reads one (and waits for its end) when
/// the owner made it a client body: an HTTP/2 stream's `content-length:
/// 0` before END_STREAM, whose end-of-body record nginx sends only at
/// the stream's end (`ngx_http_v2_read_request_body`).
fn body_decoder(job: &ProxyJob, kind: BodyKind) -> Option<BodyDecoder> {
    let waits =
        job.proto != Proto::Http && matches!(job.body, peregrine_core::proxy::JobBody::Client);
    match kind {
        BodyKind::None => None,
        BodyKind::Length(0) if !waits => None,
        k => Some(BodyDecoder::new(k)),
    }
}

/// Notes that `key` (or [`POOLED`]) owns the socket `s` ([`Upstreams::owners`]).
fn set_owner(owners: &mut Vec<usize>, s: &Sock, key: usize) {
    let fd = s.fd();
    if owners.len() <= fd {
        owners.resize(fd + 1, POOLED);
    }
    owners[fd] = key;
}

/// The request bytes: head, `Content-Length` of the body, blank line, body.
fn build_request(p: &mut Proxy) {
    if p.job.proto != Proto::Http {
        return gateway::build_request(p);
    }
    p.out.clear();
    p.out.extend_from_slice(&p.job.head);
    let (len, feed) = body_out::plan(p);
    p.feed = feed;
    match (len, feed) {
        (Some(n), _) => {
            p.out
                .extend_from_slice(format!("Content-Length: {n}\r\n").as_bytes());
        }
        (None, body_out::Feed::Client { chunked: true }) => {
            p.out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        }
        (None, _) => {}
    }
    p.out.extend_from_slice(b"\r\n");
    p.out
        .extend_from_slice(body_out::inline(&p.job.body, p.feed, &p.vars));
    p.sent = 0;
}

fn read_up(p: &mut Proxy) -> io::Result<usize> {
    // Edge-triggered readiness: after a read found nothing, the next bytes
    // come with an event; until it, a read would only find nothing again
    // (the `recv` right after sending the request, say). TLS may hold
    // records read already, so it reads on every turn.
    if p.gated && !p.readable && !p.sock.as_ref().is_some_and(Sock::is_tls) {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    let r = read_sock(p);
    match &r {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => p.readable = false,
        _ => {}
    }
    r
}

fn read_sock(p: &mut Proxy) -> io::Result<usize> {
    if p.job.proto == Proto::FastCgi {
        return gateway::read_fcgi(p);
    }
    let Some(s) = p.sock.as_mut() else {
        return Ok(0);
    };
    // The kernel copies into a buffer zeroed once per thread, then the
    // bytes join `p.inb`, whose capacity stays across reads: zeroing 16 KiB
    // for each read (and each read that finds nothing) cost more than the
    // copy of what arrived.
    let tls = s.is_tls();
    let r = SCRATCH.with_borrow_mut(|buf| {
        if buf.is_empty() {
            buf.resize(READ_CHUNK, 0);
        }
        let r = s.read(buf);
        if let Ok(n) = r {
            p.inb.extend_from_slice(&buf[..n]);
            p.drained = n < buf.len() && !tls;
        }
        r
    });
    let n = *r.as_ref().unwrap_or(&0);
    if let Some(t) = p.vars.tries.last_mut() {
        t.received += n as u64;
    }
    r
}

/// Whether the body bytes read are held back for more: nginx's pipe
/// (`*_buffering on`) passes a read buffer on only once it is full or
/// the upstream ended (`ngx_event_pipe_read_upstream`), so a body that
/// runs to the close comes in pieces of `*_buffer_size`, and what a
/// timed out upstream left in a partial one never goes out (a `101` to
/// a request without `Upgrade`: the head alone). Answers with a length
/// or chunks go on as they come.
fn holding(p: &Proxy) -> bool {
    p.up_framing == Framing::UntilClose
        && !p.up_done
        && !p.up_eof
        && p.held.is_none()
        && p.job.proto == Proto::Http
        && p.job.up().buffering
        && p.inb.len() < p.job.up().buffer_size
}

/// Moves the body bytes of `p.inb` to `p.cout`, framed for the client.
fn frame_body(p: &mut Proxy) -> Result<(), ()> {
    let mut data = std::mem::take(&mut p.inb);
    let mut pos = 0;
    while pos < data.len() && !p.up_done {
        let (piece, used, done) = match p.dec.as_mut() {
            Some(d) => {
                let pr = d.decode(&data[pos..]).map_err(|_| ())?;
                (pos + pr.data.start..pos + pr.data.end, pr.consumed, pr.done)
            }
            None => (pos..data.len(), data.len() - pos, false),
        };
        if !piece.is_empty() {
            if let Some(w) = p.cache_w.as_mut() {
                w.write(&data[piece.clone()]);
            }
            if let Some(t) = p.vars.tries.last_mut() {
                t.length += piece.len() as u64;
            }
            push_body(p, &data[piece]);
        }
        pos += used;
        if done {
            p.up_done = true;
            push_end(p);
        }
        if used == 0 {
            break;
        }
    }
    if pos < data.len() && p.up_done {
        // Extra bytes after the answer: the connection cannot be reused.
        p.reusable = false;
    }
    // The buffer goes back with its capacity (the next read fills it
    // without allocating); what was not framed yet stays at its start.
    if p.up_done {
        data.clear();
    } else {
        data.drain(..pos);
    }
    p.inb = data;
    Ok(())
}

/// The bytes of a body made in memory (a filtered answer's), appended.
fn flatten_memory(body: &peregrine_core::Body, out: &mut Vec<u8>) {
    match body {
        peregrine_core::Body::Static(b) => out.extend_from_slice(b),
        peregrine_core::Body::Shared(b) => out.extend_from_slice(b),
        peregrine_core::Body::Parts(parts) => {
            for b in parts {
                flatten_memory(b, out);
            }
        }
        peregrine_core::Body::Empty | peregrine_core::Body::File { .. } => {}
    }
}

/// Puts `data`, a piece of the answer's body, in `p.cout` as the client's
/// framing wants it: through the compression filter's encoder first when
/// the answer is compressed.
fn push_body(p: &mut Proxy, data: &[u8]) {
    if p.framing == ClientFraming::None {
        return;
    }
    match p.comp.as_deref_mut() {
        Some(c) => {
            let mut z = Vec::new();
            // An encoder fails only once finished, which it is only by
            // `push_end`: nothing comes after that.
            if c.encoder.write(data, &mut z).is_ok() {
                push_framed(&mut p.cout, p.framing, &z);
            }
        }
        None => push_framed(&mut p.cout, p.framing, data),
    }
}

/// The end of the client's body: the encoder's rest, then the last chunk.
fn push_end(p: &mut Proxy) {
    if let Some(mut c) = p.comp.take() {
        let mut z = Vec::new();
        if c.encoder.finish(&mut z).is_ok() {
            push_framed(&mut p.cout, p.framing, &z);
        }
    }
    if p.framing == ClientFraming::Chunked {
        crate::write::push_last_chunk(&mut p.cout, None);
    }
}

/// `data` in `framing`: a chunk, or the bytes as they are.
fn push_framed(out: &mut Vec<u8>, framing: ClientFraming, data: &[u8]) {
    if data.is_empty() || framing == ClientFraming::None {
        return;
    }
    if framing == ClientFraming::Chunked {
        crate::write::push_chunk(out, data);
    } else {
        out.extend_from_slice(data);
    }
}

/// The log's view of `$upstream_*`.
pub struct LogVars<'a>(pub &'a UpstreamVars);

impl peregrine_log::UpstreamValues for LogVars<'_> {
    fn value(&self, name: &str) -> Option<String> {
        if name == "upstream_cache_status" {
            return self.0.cache_status.map(str::to_string);
        }
        if self.0.tries.is_empty() {
            return None;
        }
        let mut s = String::new();
        self.0.push(&mut s, name);
        Some(s)
    }
}

/// Routes an upstream socket's readiness to its connection.
pub fn upstream_ready(p: &mut Proxy, readable: bool, writable: bool) {
    p.readable |= readable;
    p.writable |= writable;
}

impl Upstreams {
    pub fn new(
        conf: &peregrine_conf::model::Config,
        registry: Option<mio::Registry>,
        seed: u64,
    ) -> Upstreams {
        Upstreams {
            groups: {
                let mut g = peers::Groups::default();
                g.seed = seed;
                g
            },
            registry,
            confs: conf
                .http
                .as_ref()
                .map(|h| h.upstreams.clone())
                .unwrap_or_default()
                .into(),
            epoch: Instant::now(),
            live: Vec::new(),
            stream_jobs: Vec::new(),
            free_jobs: Vec::new(),
            owners: Vec::new(),
        }
    }
}
