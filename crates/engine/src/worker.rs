//! A worker thread: one `mio` event loop owning its listening sockets, its
//! connections, its `HttpCore`, buffers, timers and counters.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use peregrine_codec::DateCache;
use peregrine_conf::model::{Config, CpuAffinity, LocationConf, LogLevel};
use peregrine_core::{ConnInfo, HttpCore};

use crate::conn::Conn;
use crate::ctx::{Ctx, ListenCtx, listen_ctx};
use crate::exchange::ExchangePool;
use crate::http1::{Close, Phase};
use crate::pool::Pool;
use crate::stats::{Counters, Gauge, Registry};
use crate::timer::Timers;
use crate::transport::Transport;
use crate::write::HeadStart;
use crate::{AccessLog, ErrorLog};

/// Token of the waker the master uses to signal state changes.
const WAKER: Token = Token(0);
/// Connection tokens start here; listener `i` is `Token(1 + i)`.
pub(crate) const CONN_BASE: usize = 1 << 16;
/// Events taken per `epoll_wait`.
const EVENTS_CAPACITY: usize = 1024;
/// Connection ids taken from the shared counter at once, so `$connection`
/// stays unique across workers at one atomic add per this many accepts.
const ID_BLOCK: u64 = 64;
/// Pause of accepting after a resource error (nginx's 500 ms
/// `accept_mutex_delay` default plays this role there).
const ACCEPT_RETRY: Duration = Duration::from_millis(500);
/// How often buffered access logs are flushed.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Idle connections closed at once when `worker_connections` runs out
/// (nginx's `ngx_drain_connections` closes up to 32).
const DRAIN_BATCH: usize = 32;

/// How long a connection accepted but silent when draining starts may
/// still send its request.
const DRAIN_FRESH_GRACE: Duration = Duration::from_secs(1);

pub const RUN: u8 = 0;
pub const DRAIN: u8 = 1;
pub const STOP: u8 = 2;

/// What the master and a worker share: the requested state and the waker.
pub struct Shared {
    pub state: AtomicU8,
    pub waker: Waker,
}

/// Everything a worker starts with.
pub struct Setup {
    pub index: usize,
    pub conf: Arc<Config>,
    pub listeners: Vec<(usize, SocketAddr, std::net::TcpListener)>,
    pub poll: Poll,
    pub shared: Arc<Shared>,
    pub counters: Arc<Counters>,
    pub registry: Arc<Registry>,
    pub errlog: ErrorLog,
    pub access: Option<Box<dyn AccessLog>>,
    pub ids: Arc<AtomicU64>,
    /// The configuration's TLS server blocks (one table for all workers).
    pub tls: Option<Arc<crate::tls::TlsTable>>,
}

struct Listener {
    sock: TcpListener,
    addr_index: usize,
    local: SocketAddr,
    /// A wildcard address: the connection's own local address needs
    /// `getsockname` (nginx does the same for server selection).
    wildcard: bool,
    /// A `listen unix:` socket (see `listen::bind_unix`): accepted by
    /// [`accept_unix`], its clients' address is `UNIX_PEER`.
    unix: bool,
    ready: bool,
}

/// `accept4` on a UNIX-domain listener. mio's `TcpListener::accept` reads
/// the peer as an IP address and drops (closes) a connection whose address
/// is not one; socket2's accepts any family. The stream is held as a
/// `TcpStream`, as the listener is (see `listen::bind_unix`).
fn accept_unix(l: &TcpListener) -> std::io::Result<(TcpStream, SocketAddr)> {
    let (sock, _) = socket2::SockRef::from(l).accept()?;
    sock.set_nonblocking(true)?;
    let std = std::net::TcpStream::from(std::os::fd::OwnedFd::from(sock));
    Ok((TcpStream::from_std(std), peregrine_conf::model::UNIX_PEER))
}

struct Worker {
    cx: Ctx,
    poll: Poll,
    listeners: Vec<Listener>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    live: usize,
    shared: Arc<Shared>,
    conf: Arc<Config>,
    ids: Arc<AtomicU64>,
    id_next: u64,
    id_end: u64,
    drain_deadline: Option<Instant>,
    /// Accepting paused after EMFILE and the like, until then.
    accept_retry: Option<Instant>,
    expired: Vec<usize>,
    last_flush: Instant,
    // stream
    /// The `stream { }` servers' sessions.
    streams: crate::stream::Streams,
    // mail
    /// The `mail { }` servers' sessions (each on a thread of its own).
    mail: crate::mail::Mail,
}

/// The CPU mask for worker `index`, as nginx's `worker_cpu_affinity`.
pub fn affinity_mask(aff: &CpuAffinity, index: usize) -> Option<Vec<u64>> {
    match aff {
        CpuAffinity::Masks(masks) => masks.get(index).or(masks.last()).map(|m| m.0.clone()),
        CpuAffinity::Auto(mask) => {
            let cpus: Vec<usize> = match mask {
                Some(m) => (0..m.0.len() * 64)
                    .filter(|&c| m.0[c / 64] & (1 << (c % 64)) != 0)
                    .collect(),
                None => peregrine_sys::allowed_cpus().ok()?,
            };
            if cpus.is_empty() {
                return None;
            }
            let cpu = cpus[index % cpus.len()];
            let mut out = vec![0u64; cpu / 64 + 1];
            out[cpu / 64] |= 1 << (cpu % 64);
            Some(out)
        }
    }
}

/// Runs a worker until it is told to stop or has drained.
pub fn run(setup: Setup) {
    let errlog = setup.errlog.clone();
    if let Some(aff) = &setup.conf.main.worker_cpu_affinity
        && let Some(mask) = affinity_mask(aff, setup.index)
        && let Err(e) = peregrine_sys::set_thread_affinity(&mask)
    {
        errlog(
            LogLevel::Alert,
            &crate::errlog::with_os_error("sched_setaffinity() failed", &e),
        );
    }
    let mut w = match Worker::new(setup) {
        Ok(w) => w,
        Err(e) => {
            errlog(LogLevel::Alert, &format!("worker start failed: {e}"));
            return;
        }
    };
    w.event_loop();
    w.shutdown();
}

fn register_listeners(
    poll: &Poll,
    socks: Vec<(usize, SocketAddr, std::net::TcpListener)>,
) -> std::io::Result<Vec<Listener>> {
    let mut out = Vec::with_capacity(socks.len());
    for (i, (addr_index, local, sock)) in socks.into_iter().enumerate() {
        let mut sock = TcpListener::from_std(sock);
        poll.registry()
            .register(&mut sock, Token(1 + i), Interest::READABLE)?;
        out.push(Listener {
            sock,
            addr_index,
            local,
            wildcard: local.ip().is_unspecified(),
            unix: peregrine_conf::model::is_unix(local),
            ready: false,
        });
    }
    Ok(out)
}

/// Whether any location of `conf` answers with the metrics
/// scrape. Without one the request counters, byte counts and duration
/// histogram have no reader, and keeping them is work on every request
/// (stub_status's counters are kept regardless).
pub fn scraped(conf: &Config) -> bool {
    fn any(locs: &[Arc<LocationConf>]) -> bool {
        locs.iter().any(|l| l.conf.metrics || any(&l.locations))
    }
    conf.http
        .as_ref()
        .is_some_and(|h| h.servers.iter().any(|s| any(&s.locations)))
}

impl Worker {
    fn new(s: Setup) -> std::io::Result<Worker> {
        let mut core = HttpCore::new(s.conf.clone());
        core.set_status_source(Box::new(crate::stats::View(s.registry.clone())));
        let log_level = s
            .conf
            .main
            .error_log
            .iter()
            .map(|l| l.level)
            .min()
            .unwrap_or(LogLevel::Error);
        // Address indexes follow `wanted` order, as the master binds them.
        let specs = crate::listen::wanted(&s.conf);
        let listen_table: Vec<ListenCtx> = specs
            .iter()
            .map(|sp| listen_ctx(&s.conf, sp.addr, s.tls.as_ref()))
            .collect();
        // stream: `listen ... udp` sockets are read by the stream side.
        let (udp, tcp): (Vec<_>, Vec<_>) = s
            .listeners
            .into_iter()
            .partition(|(ai, _, _)| specs.get(*ai).is_some_and(|sp| sp.udp));
        let streams = crate::stream::Streams::new(
            &s.conf,
            &specs,
            s.poll.registry().try_clone().ok(),
            s.errlog.clone(),
            log_level,
            udp,
            s.index as u64 + 1,
        );
        let mail = crate::mail::Mail::new(&s.conf, &specs, s.errlog.clone());
        let listeners = register_listeners(&s.poll, tcp)?;
        let now = Instant::now();
        let date = DateCache::new();
        Ok(Worker {
            cx: Ctx {
                core,
                pool: Pool::default(),
                exchanges: ExchangePool::default(),
                timers: Timers::default(),
                stats: s.counters,
                head_start: HeadStart::new(date.current()),
                date,
                metrics: scraped(&s.conf),
                now,
                wall: SystemTime::now(),
                errlog: s.errlog,
                log_level,
                access: s.access.filter(|a| !a.logs_nothing()),
                listen: listen_table,
                listen_fallback: listen_ctx(&s.conf, SocketAddr::from(([0, 0, 0, 0], 0)), None),
                draining: false,
                loc_errlogs: crate::loc_errlog::LocErrLogs::open_all(&s.conf),
                upstreams: crate::upstream::Upstreams::new(
                    &s.conf,
                    s.poll.registry().try_clone().ok(),
                    s.index as u64 + 1,
                ),
                resolvers: crate::resolver::Resolvers::new(s.index as u64 + 1),
            },
            poll: s.poll,
            listeners,
            conns: Vec::new(),
            free: Vec::new(),
            live: 0,
            shared: s.shared,
            conf: s.conf,
            ids: s.ids,
            id_next: 0,
            id_end: 0,
            drain_deadline: None,
            accept_retry: None,
            expired: Vec::new(),
            last_flush: now,
            streams,
            mail,
        })
    }

    fn event_loop(&mut self) {
        let mut events = Events::with_capacity(EVENTS_CAPACITY);
        loop {
            match self.shared.state.load(Ordering::Acquire) {
                STOP => return,
                DRAIN if !self.cx.draining => self.start_drain(),
                _ => {}
            }
            if self.cx.draining
                && (self.live + self.streams.live() == 0
                    || self.drain_deadline.is_some_and(|d| self.cx.now >= d))
            {
                return;
            }
            let timeout = self.poll_timeout();
            if let Err(e) = self.poll.poll(&mut events, timeout)
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                (self.cx.errlog)(
                    LogLevel::Alert,
                    &crate::errlog::with_os_error("epoll_wait() failed", &e),
                );
                return;
            }
            self.cx.now = Instant::now();
            self.cx.wall = SystemTime::now();
            self.cx.refresh_date();
            for ev in events.iter() {
                match ev.token() {
                    WAKER => {}
                    Token(t) if t >= crate::stream::STREAM_FLAG => {
                        let readable = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                        let writable = ev.is_writable() || ev.is_write_closed() || ev.is_error();
                        self.streams.event(t, readable, writable, self.cx.now);
                    }
                    Token(t) if t >= crate::resolver::RESOLVER_FLAG => {
                        let r = self.cx.upstreams.registry.as_ref();
                        self.cx.resolvers.readable(t, self.cx.now, r);
                    }
                    Token(t) if t >= crate::upstream::UPSTREAM_FLAG => {
                        let readable = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                        let writable = ev.is_writable() || ev.is_write_closed() || ev.is_error();
                        if let Some(conn) = self.cx.upstreams.event(t, readable, writable) {
                            self.conn_event(conn, false, false);
                        }
                    }
                    Token(t) if t >= CONN_BASE => {
                        let readable = ev.is_readable() || ev.is_read_closed() || ev.is_error();
                        let writable = ev.is_writable() || ev.is_write_closed() || ev.is_error();
                        self.conn_event(t - CONN_BASE, readable, writable);
                    }
                    Token(t) => {
                        if let Some(l) = self.listeners.get_mut(t - 1) {
                            l.ready = true;
                        }
                    }
                }
            }
            self.accept_ready();
            self.expire_timers();
            self.resolved();
            if let Some(a) = self.cx.access.as_mut()
                && self.cx.now.duration_since(self.last_flush) >= FLUSH_EVERY
            {
                self.last_flush = self.cx.now;
                a.flush();
            }
        }
    }

    fn poll_timeout(&mut self) -> Option<Duration> {
        let mut next = self.cx.timers.next_deadline();
        if self.listeners.iter().any(|l| l.ready) {
            match self.accept_retry {
                Some(t) => next = Some(next.map_or(t, |n| n.min(t))),
                None => return Some(Duration::ZERO),
            }
        }
        if let Some(d) = self.drain_deadline {
            next = Some(next.map_or(d, |n| n.min(d)));
        }
        if let Some(d) = self.cx.resolvers.next_deadline() {
            next = Some(next.map_or(d, |n| n.min(d)));
        }
        if let Some(d) = self.streams.next_deadline() {
            next = Some(next.map_or(d, |n| n.min(d)));
        }
        if self.cx.access.is_some() {
            let f = self.last_flush + FLUSH_EVERY;
            next = Some(next.map_or(f, |n| n.min(f)));
        }
        next.map(|n| n.saturating_duration_since(Instant::now()))
    }

    /// Always inlined into the loop (it has a second caller, the upstream
    /// side's events, since the proxy).
    #[inline(always)]
    fn conn_event(&mut self, key: usize, readable: bool, writable: bool) {
        let Some(Some(conn)) = self.conns.get_mut(key) else {
            return;
        };
        let t = &mut conn.transport;
        t.readable |= readable;
        t.writable |= writable;
        match conn.drive(key, &mut self.cx) {
            Some(how) => self.close(key, how),
            None if conn.transport.needs_write_interest() => {
                let t = &mut conn.transport;
                let r = self.poll.registry().reregister(
                    &mut t.sock,
                    Token(CONN_BASE + key),
                    Interest::READABLE | Interest::WRITABLE,
                );
                t.write_interest = true;
                if let Err(e) = r {
                    self.epoll_failed(&e);
                    self.close(key, Close::Normal);
                }
            }
            None => {}
        }
    }

    fn epoll_failed(&self, e: &std::io::Error) {
        (self.cx.errlog)(
            LogLevel::Alert,
            &crate::errlog::with_os_error("epoll_ctl() failed", e),
        );
    }

    fn next_id(&mut self) -> u64 {
        if self.id_next == self.id_end {
            self.id_next = self.ids.fetch_add(ID_BLOCK, Ordering::Relaxed) + 1;
            self.id_end = self.id_next + ID_BLOCK;
        }
        let id = self.id_next;
        self.id_next += 1;
        id
    }

    fn accept_ready(&mut self) {
        if self.accept_retry.is_some_and(|t| self.cx.now < t) {
            return;
        }
        self.accept_retry = None;
        let multi = self.conf.events.multi_accept;
        for li in 0..self.listeners.len() {
            while self.listeners[li].ready {
                let l = &self.listeners[li];
                let accepted = if l.unix {
                    accept_unix(&l.sock)
                } else {
                    l.sock.accept()
                };
                match accepted {
                    Ok((stream, peer)) => self.accepted(li, stream, peer),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        self.listeners[li].ready = false
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => {}
                    Err(e) => {
                        // EMFILE/ENFILE/ENOBUFS: nginx logs and stops
                        // accepting for a while (`ngx_event_accept`); the
                        // queue is kept, `ready` too, and retried later.
                        (self.cx.errlog)(
                            LogLevel::Alert,
                            &crate::errlog::with_os_error("accept4() failed", &e),
                        );
                        self.accept_retry = Some(self.cx.now + ACCEPT_RETRY);
                        return;
                    }
                }
                if !multi {
                    // nginx's `multi_accept off`: one accept per listener per
                    // loop turn; `ready` stays set so the next turn polls
                    // without waiting and accepts the next one.
                    break;
                }
            }
        }
    }

    fn accepted(&mut self, li: usize, stream: TcpStream, peer: SocketAddr) {
        let limit = self.conf.events.worker_connections;
        if self.live + self.listeners.len() >= limit && !self.reclaim_idle(limit) {
            self.cx.stats.accepted(false);
            let msg = format!("{limit} worker_connections are not enough");
            (self.cx.errlog)(LogLevel::Alert, &msg);
            return;
        }
        self.cx.stats.accepted(true);
        let l = &self.listeners[li];
        let local = if l.wildcard {
            stream.local_addr().unwrap_or(l.local)
        } else {
            l.local
        };
        let lst = l.addr_index;
        let id = self.next_id();
        if self.streams.serves(lst) {
            self.streams
                .accept(lst, stream, peer, local, id, self.cx.now);
            return;
        }
        if self.mail.serves(lst) {
            self.mail.accept(lst, stream, peer, id);
            return;
        }
        let info = ConnInfo {
            local,
            peer,
            id,
            requests: 0,
            accepted: self.cx.wall,
            ssl: self.cx.lctx(lst).tls.as_ref().map(|t| t.unset_vars()),
            proxy: None,
            http2: false,
        };
        let key = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let born = self.cx.timers.nanos(self.cx.now);
        let transport = match &self.cx.lctx(lst).tls {
            None => Transport::plain(stream),
            Some(table) => Transport::tls(stream, table.clone(), local, peer),
        };
        let mut conn = Conn::new(transport, key, info, lst, (self.cx.wall, born));
        conn.set_gauge(Gauge::Waiting, &self.cx);
        let d = self.cx.lctx(lst).header_timeout;
        self.cx.timers.arm(key, self.cx.now, d);
        // Try the request before registering: by the time a busy worker
        // accepts, the client has often sent it, and a short exchange
        // (`Connection: close`) then completes without any epoll_ctl. When
        // nothing is there yet this costs one recv returning EAGAIN.
        conn.transport.readable = true;
        self.live += 1;
        let outcome = conn.drive(key, &mut self.cx);
        let t = &mut conn.transport;
        let interest = if t.writable {
            Interest::READABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        };
        t.write_interest = !t.writable;
        if let Some(how) = outcome {
            // Closing drops the only descriptor: it never entered epoll.
            // Closed from here, the connection is never moved into its
            // slot and out again (two copies of it, for a `Connection:
            // close` exchange that completed in this first drive). Ended
            // by reference and dropped where it is: passed by value it was
            // copied once more (~50 instructions).
            end_conn(&mut conn, &mut self.cx, key, how);
            drop(conn);
            self.free.push(key);
            self.live -= 1;
            return;
        }
        self.conns[key] = Some(conn);
        let Some(Some(conn)) = self.conns.get_mut(key) else {
            return;
        };
        if let Err(e) = self.poll.registry().register(
            &mut conn.transport.sock,
            Token(CONN_BASE + key),
            interest,
        ) {
            self.epoll_failed(&e);
            self.close(key, Close::Normal);
        }
    }

    /// At the connection limit: close idle connections (nginx reuses
    /// "reusable" ones, logging a warning). True if room was made.
    fn reclaim_idle(&mut self, limit: usize) -> bool {
        let idle: Vec<usize> = self
            .conns
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.as_ref()
                    .is_some_and(|c| matches!(c.phase(), Phase::Idle { .. }))
            })
            .map(|(k, _)| k)
            .take(DRAIN_BATCH)
            .collect();
        if idle.is_empty() {
            return false;
        }
        let msg = format!("{limit} worker_connections are not enough, reusing connections");
        (self.cx.errlog)(LogLevel::Warn, &msg);
        for k in idle {
            self.close(k, Close::Normal);
        }
        true
    }

    /// The resolvers' resends and timeouts, then the connections whose
    /// name has an outcome, driven again.
    fn resolved(&mut self) {
        if self.cx.resolvers.idle() {
            // The common case, every loop turn: no resolver in use.
            return;
        }
        let r = self.cx.upstreams.registry.as_ref();
        self.cx.resolvers.tick(self.cx.now, r);
        let woken = std::mem::take(&mut self.cx.resolvers.woken);
        for &key in &woken {
            if let Some(conn) = self.cx.upstreams.conn_of(key) {
                self.conn_event(conn, false, false);
            }
        }
    }

    fn expire_timers(&mut self) {
        self.streams.expire(self.cx.now);
        let mut due = std::mem::take(&mut self.expired);
        self.cx.timers.expire(self.cx.now, &mut due);
        for &key in &due {
            let Some(Some(conn)) = self.conns.get_mut(key) else {
                continue;
            };
            if let Some(p) = self.cx.upstreams.get_mut(key) {
                // An upstream timeout: the proxy answers 504 or retries.
                p.timed_out = true;
                self.conn_event(key, false, false);
                continue;
            }
            if conn.take_delayed() || conn.take_job_timeouts(self.cx.now) {
                // `limit_rate`'s pause is over: write on.
                self.conn_event(key, false, false);
                continue;
            }
            let how = conn.on_timeout(&mut self.cx);
            self.close(key, how);
        }
        due.clear();
        self.expired = due;
    }

    fn close(&mut self, key: usize, how: Close) {
        let Some(slot) = self.conns.get_mut(key) else {
            return;
        };
        let Some(conn) = slot.as_mut() else { return };
        end_conn(conn, &mut self.cx, key, how);
        // Dropped in its slot (no copy of the `Conn` out of it, a few
        // hundred bytes); dropping the stream closes its only descriptor,
        // which removes it from the epoll set: no deregister call needed.
        *slot = None;
        self.free.push(key);
        self.live -= 1;
    }

    fn start_drain(&mut self) {
        self.cx.draining = true;
        for mut l in std::mem::take(&mut self.listeners) {
            // The socket is a dup shared with the master and new workers:
            // it must leave this epoll set explicitly (closing one dup
            // does not remove the registration).
            let _ = self.poll.registry().deregister(&mut l.sock);
        }
        // Kept-alive idle connections close now (nginx's
        // ngx_close_idle_connections). A fresh connection's request is most
        // likely in flight: it gets a short grace instead of a reset that
        // would fail a request the client already sent.
        for key in 0..self.conns.len() {
            let Some(Some(c)) = self.conns.get_mut(key) else {
                continue;
            };
            if c.is_http2() {
                // http2: the graceful GOAWAY, then close once idle.
                if let Some(how) = c.drain(key, &mut self.cx) {
                    self.close(key, how);
                }
                continue;
            }
            match c.phase() {
                Phase::Idle { keepalive: true } => self.close(key, Close::Normal),
                Phase::Idle { keepalive: false } => {
                    self.cx.timers.arm(key, self.cx.now, DRAIN_FRESH_GRACE);
                }
                _ => {}
            }
        }
        self.drain_deadline = self
            .conf
            .main
            .worker_shutdown_timeout
            .map(|d| self.cx.now + d);
    }

    fn shutdown(&mut self) {
        for key in 0..self.conns.len() {
            self.close(key, Close::Normal);
        }
        for mut l in std::mem::take(&mut self.listeners) {
            let _ = self.poll.registry().deregister(&mut l.sock);
        }
        if let Some(a) = self.cx.access.as_mut() {
            a.flush();
        }
    }
}

/// The end of connection `key` but for freeing its storage: the session's
/// close (logs, TLS alert, lingering), the counters, its timer. Always
/// inlined into its two callers (a close after an event, the close of an
/// exchange answered at accept), which then drop the `Conn` in place.
#[inline(always)]
fn end_conn(conn: &mut Conn, cx: &mut Ctx, key: usize, how: Close) {
    conn.closing(how, cx);
    cx.stats.closed();
    cx.timers.disarm(key);
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_conf::model::CpuMask;

    #[test]
    fn metrics_are_kept_when_some_location_scrapes() {
        let conf = |text: &str| {
            peregrine_conf::parse_str(text, "/tmp/peregrine-worker-test/nginx.conf").unwrap()
        };
        assert!(!scraped(&conf(
            "events {} http { server { listen 8080; location / { } } }"
        )));
        assert!(scraped(&conf(
            "events {} http { server { listen 8080; location /a { location /a/m { metrics on; } } } }"
        )));
        assert!(!scraped(&conf("events {}")));
    }

    #[test]
    fn affinity_masks_repeat_the_last() {
        let aff = CpuAffinity::Masks(vec![CpuMask(vec![0b01]), CpuMask(vec![0b10])]);
        assert_eq!(affinity_mask(&aff, 0), Some(vec![0b01]));
        assert_eq!(affinity_mask(&aff, 1), Some(vec![0b10]));
        assert_eq!(affinity_mask(&aff, 5), Some(vec![0b10]));
        assert_eq!(affinity_mask(&CpuAffinity::Masks(vec![]), 0), None);
    }

    #[test]
    fn affinity_auto_walks_the_mask() {
        let aff = CpuAffinity::Auto(Some(CpuMask(vec![0b1010])));
        assert_eq!(affinity_mask(&aff, 0), Some(vec![0b0010]));
        assert_eq!(affinity_mask(&aff, 1), Some(vec![0b1000]));
        assert_eq!(affinity_mask(&aff, 2), Some(vec![0b0010]));
        assert_eq!(
            affinity_mask(&CpuAffinity::Auto(Some(CpuMask(vec![0]))), 0),
            None
        );
        assert!(affinity_mask(&CpuAffinity::Auto(None), 0).is_some());
    }
}
