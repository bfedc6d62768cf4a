//! nginx's stream module at run time: TCP and UDP sessions of the
//! `stream { }` servers, in the worker's own event loop beside its HTTP
//! connections (no thread of their own). A worker accepts a stream
//! address's connections as any other and hands them here
//! ([`Streams::accept`]); a `listen ... udp` socket is read here
//! ([`udp`]). Peers are chosen by `peregrine_upstream`'s balancers, the
//! groups built as the HTTP proxy builds them (`upstream::peers`).
//!
//! Hand-written: a session is a small state machine over two non-blocking
//! sockets (`session.rs`), driven by the worker's `mio` events; each
//! session has one timer, in this module's own wheel (`Timers`, the
//! worker's kind), keyed by session.

mod session;
mod udp;
mod vars;

use std::collections::HashMap;
use std::fs::File;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use peregrine_conf::model::{Config, LogLevel, PeerAddr};
use peregrine_conf::stream::{StreamConf, StreamHandler, StreamPass, StreamServer};
use peregrine_upstream::Key;

use crate::ErrorLog;
use crate::listen::Spec;
use crate::timer::Timers;
use crate::upstream::peers::{Group, group_of, implicit};
use crate::upstream::sock::Sock;
use session::{Buf, Phase, Pump, Session};
use vars::{Format, UpstreamVars, Values};

/// Tokens of stream sockets: `STREAM_FLAG + 2 * session + side` (0 the
/// client, 1 the upstream); above every other kind of token the worker has.
pub const STREAM_FLAG: usize = 1 << 42;
/// Tokens of `listen ... udp` sockets: `UDP_FLAG + listener`.
const UDP_FLAG: usize = 1 << 43;
/// nginx's `NGX_PROXY_PROTOCOL_MAX_HEADER`-sized peek for the header.
const PEEK: usize = peregrine_codec::proxy_protocol::MAX_HEADER;

/// The addresses of the stream servers' `listen`s, after http's.
pub fn wanted(conf: &Config) -> Vec<Spec> {
    let Some(stream) = &conf.stream else {
        return Vec::new();
    };
    let mut out: Vec<Spec> = Vec::new();
    for s in &stream.servers {
        for l in &s.listen {
            if out.iter().any(|o| o.addr == l.addr && o.udp == l.udp) {
                continue;
            }
            out.push(Spec {
                addr: l.addr,
                backlog: l.backlog,
                deferred: false,
                unix: l.unix.clone(),
                udp: l.udp,
                ipv6only: true,
            });
        }
    }
    out
}

/// Where a session's peers come from.
#[derive(Clone, Copy)]
enum GroupRef {
    Upstream(usize),
    Implicit(usize),
}

/// A worker's stream side.
pub struct Streams {
    conf: Option<Arc<StreamConf>>,
    /// For each listening address (the worker's address index): its
    /// server, for stream addresses.
    by_addr: Vec<Option<usize>>,
    sessions: Vec<Option<Session>>,
    free: Vec<usize>,
    live: usize,
    timers: Timers,
    expired: Vec<usize>,
    groups: Vec<Option<Group>>,
    implicit: Vec<Option<Group>>,
    formats: Vec<Format>,
    logs: HashMap<std::path::PathBuf, File>,
    time: peregrine_log::TimeCache,
    registry: Option<Registry>,
    errlog: ErrorLog,
    log_level: LogLevel,
    udp: udp::Udp,
    epoch: Instant,
}

impl Streams {
    /// The stream side of a worker: `specs` are the worker's addresses in
    /// order; `udp_socks` its `listen ... udp` sockets (address index, socket).
    pub fn new(
        conf: &Config,
        specs: &[Spec],
        registry: Option<Registry>,
        errlog: ErrorLog,
        log_level: LogLevel,
        udp_socks: Vec<(usize, SocketAddr, std::net::TcpListener)>,
        seed: u64,
    ) -> Streams {
        let stream = conf.stream.clone();
        let by_addr = specs
            .iter()
            .map(|sp| {
                let st = stream.as_ref()?;
                st.servers.iter().position(|s| {
                    s.listen
                        .iter()
                        .any(|l| l.addr == sp.addr && l.udp == sp.udp)
                })
            })
            .collect();
        let (mut groups, mut imp, mut formats) = (Vec::new(), Vec::new(), Vec::new());
        let mut logs = HashMap::new();
        if let Some(st) = &stream {
            groups = st.upstreams.iter().map(|u| group_of(u, seed)).collect();
            imp = st
                .servers
                .iter()
                .map(|s| match &s.handler {
                    StreamHandler::Proxy(StreamPass::Addrs { name, addrs }) => {
                        implicit(name, addrs.clone(), seed)
                    }
                    _ => None,
                })
                .collect();
            formats = st.log_formats.iter().map(Format::compile).collect();
            for s in &st.servers {
                for l in &s.access_log {
                    if logs.contains_key(&l.path) {
                        continue;
                    }
                    match std::fs::OpenOptions::new()
                        .append(true)
                        .create(true)
                        .open(&l.path)
                    {
                        Ok(f) => {
                            logs.insert(l.path.clone(), f);
                        }
                        Err(e) => errlog(
                            LogLevel::Alert,
                            &crate::errlog::with_os_error(
                                &format!("open() \"{}\" failed", l.path.display()),
                                &e,
                            ),
                        ),
                    }
                }
            }
        }
        let udp = udp::Udp::new(udp_socks, registry.as_ref(), UDP_FLAG, &errlog);
        Streams {
            conf: stream,
            by_addr,
            sessions: Vec::new(),
            free: Vec::new(),
            live: 0,
            timers: Timers::default(),
            expired: Vec::new(),
            groups,
            implicit: imp,
            formats,
            logs,
            time: peregrine_log::TimeCache::new(),
            registry,
            errlog,
            log_level,
            udp,
            epoch: Instant::now(),
        }
    }

    /// Whether address `lst` is a stream server's.
    pub fn serves(&self, lst: usize) -> bool {
        self.by_addr.get(lst).is_some_and(Option::is_some)
    }

    /// Sessions in progress (a draining worker waits for them).
    pub fn live(&self) -> usize {
        self.live + self.udp.live()
    }

    pub fn next_deadline(&mut self) -> Option<Instant> {
        let a = self.timers.next_deadline();
        let b = self.udp.next_deadline();
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Seconds since the worker started, the balancers' clock.
    fn secs(&self, now: Instant) -> u64 {
        now.duration_since(self.epoch).as_secs()
    }

    /// A connection accepted on stream address `lst`.
    pub fn accept(
        &mut self,
        lst: usize,
        client: TcpStream,
        peer: SocketAddr,
        local: SocketAddr,
        id: u64,
        now: Instant,
    ) {
        let Some(Some(si)) = self.by_addr.get(lst).copied() else {
            return;
        };
        let srv = server_of(&self.conf, si);
        let listen = srv
            .listen
            .iter()
            .find(|l| !l.udp && (l.addr == local || l.addr.ip().is_unspecified()))
            .or_else(|| srv.listen.first())
            .expect("a server has a listen");
        let key = self.free.pop().unwrap_or_else(|| {
            self.sessions.push(None);
            self.sessions.len() - 1
        });
        let mut s = Session {
            server: si,
            client,
            upstream: None,
            peer,
            local,
            listen_text: Arc::from(listen.display()),
            id,
            start: now,
            start_wall: SystemTime::now(),
            phase: Phase::ProxyProtocol,
            header: None,
            attempt: None,
            tries_start: now,
            peer_name: None,
            connect_start: now,
            up: UpstreamVars::default(),
            received: 0,
            sent: 0,
            up_received: 0,
            up_sent: 0,
            to_up: Buf::new(srv.buffer_size),
            to_client: Buf::new(srv.buffer_size),
            c_eof: false,
            u_eof: false,
            c_readable: true,
            c_writable: true,
            u_readable: false,
            u_writable: false,
            half_closed: false,
        };
        if srv.tcp_nodelay && !peregrine_conf::model::is_unix(peer) {
            let _ = s.client.set_nodelay(true);
        }
        if let Some(r) = &self.registry
            && let Err(e) = r.register(
                &mut s.client,
                Token(STREAM_FLAG + 2 * key),
                Interest::READABLE | Interest::WRITABLE,
            )
        {
            log(
                &self.errlog,
                self.log_level,
                LogLevel::Alert,
                &crate::errlog::with_os_error("epoll_ctl() failed", &e),
            );
            self.free.push(key);
            return;
        }
        self.live += 1;
        self.sessions[key] = Some(s);
        if listen.proxy_protocol {
            self.timers.arm(key, now, srv.proxy_protocol_timeout);
            self.drive(key, now);
        } else {
            self.begin(key, now);
        }
    }

    /// An event on a stream token.
    pub fn event(&mut self, token: usize, readable: bool, writable: bool, now: Instant) {
        if token >= UDP_FLAG {
            let conf = self.conf.clone();
            if let Some(c) = conf {
                self.udp_event(token - UDP_FLAG, readable, &c, now);
            }
            return;
        }
        let t = token - STREAM_FLAG;
        let (key, side) = (t / 2, t % 2);
        if t >= 2 * udp::SESSION_BASE {
            let conf = self.conf.clone();
            if let Some(c) = conf {
                self.udp_upstream_event(key - udp::SESSION_BASE, &c, now);
            }
            return;
        }
        let Some(Some(s)) = self.sessions.get_mut(key) else {
            return;
        };
        if side == 0 {
            s.c_readable |= readable;
            s.c_writable |= writable;
        } else {
            s.u_readable |= readable;
            s.u_writable |= writable;
        }
        self.drive(key, now);
    }

    /// Runs a session as far as its sockets allow.
    fn drive(&mut self, key: usize, now: Instant) {
        let Some(Some(s)) = self.sessions.get_mut(key) else {
            return;
        };
        let srv = server_of(&self.conf, s.server);
        match s.phase {
            Phase::ProxyProtocol => match read_header(s) {
                Ok(true) => self.begin(key, now),
                Ok(false) => {}
                Err(Some(text)) => {
                    let ctx = context(s, false);
                    log(
                        &self.errlog,
                        self.log_level,
                        LogLevel::Error,
                        &format!("{text}{ctx}"),
                    );
                    self.close_silently(key);
                }
                Err(None) => self.close_silently(key),
            },
            Phase::Returning => match s.flush_return() {
                Ok(false) => {}
                _ => self.finalize(key, 200),
            },
            Phase::Connecting => {
                if !(s.u_writable || s.u_readable) {
                    return;
                }
                let Some(up) = s.upstream.as_mut() else {
                    return;
                };
                match up.connected() {
                    Ok(false) => {}
                    Ok(true) => self.connected(key, &srv, now),
                    Err(e) => {
                        let text = crate::errlog::with_os_error("connect() failed", &e);
                        self.attempt_failed(key, &text, now);
                    }
                }
            }
            Phase::Proxying => match s.pump(srv.half_close) {
                Pump::Wait(moved) => {
                    if moved {
                        self.timers.arm(key, now, srv.timeout);
                    }
                }
                Pump::Done(side) => {
                    let text = format!(
                        "{side} disconnected, bytes from/to client:{}/{}, bytes from/to upstream:{}/{}",
                        s.received, s.sent, s.up_received, s.up_sent
                    );
                    log(&self.errlog, self.log_level, LogLevel::Info, &text);
                    self.finalize(key, 200);
                }
            },
        }
    }

    /// The session's handler starts (after the PROXY protocol header):
    /// the access phase, then `return` or the proxy.
    fn begin(&mut self, key: usize, now: Instant) {
        let Some(Some(s)) = self.sessions.get_mut(key) else {
            return;
        };
        let srv = server_of(&self.conf, s.server);
        if !allowed(&srv, s.peer) {
            let ctx = context(s, false);
            log(
                &self.errlog,
                self.log_level,
                LogLevel::Error,
                &format!("access forbidden by rule{ctx}"),
            );
            self.finalize(key, 403);
            return;
        }
        match &srv.handler {
            StreamHandler::Return(v) => {
                let value = {
                    let up = UpstreamVars::default();
                    let mut vals = values(s, 200, &up, &mut self.time);
                    vars::expand(v, &mut vals)
                };
                s.to_client.push(&value);
                s.phase = Phase::Returning;
                self.drive(key, now);
            }
            StreamHandler::Proxy(pass) => {
                let g = match pass {
                    StreamPass::Upstream(i) => GroupRef::Upstream(*i),
                    StreamPass::Addrs { .. } => GroupRef::Implicit(s.server),
                };
                let hash_key = match g {
                    GroupRef::Upstream(i) => self
                        .conf
                        .as_ref()
                        .and_then(|c| c.upstreams[i].hash_key.clone()),
                    GroupRef::Implicit(_) => None,
                };
                let key_bytes = hash_key.map(|k| {
                    let up = UpstreamVars::default();
                    let mut vals = values(s, 0, &up, &mut self.time);
                    vars::expand(&k, &mut vals)
                });
                let Some(group) = self.group(g) else {
                    self.finalize(key, 502);
                    return;
                };
                let k = match &key_bytes {
                    Some(b) => Key::Bytes(b),
                    None => Key::None,
                };
                let mut a = group.up.start(k);
                a.limit_tries(srv.next_upstream_tries as usize);
                let Some(Some(s)) = self.sessions.get_mut(key) else {
                    return;
                };
                s.attempt = Some(a);
                s.tries_start = now;
                self.connect(key, now);
            }
        }
    }

    fn group(&mut self, g: GroupRef) -> Option<&mut Group> {
        match g {
            GroupRef::Upstream(i) => self.groups.get_mut(i)?.as_mut(),
            GroupRef::Implicit(i) => self.implicit.get_mut(i)?.as_mut(),
        }
    }

    /// A connect to the next peer (`ngx_stream_proxy_connect`).
    fn connect(&mut self, key: usize, now: Instant) {
        let Some(Some(s)) = self.sessions.get_mut(key) else {
            return;
        };
        let g = group_ref(&self.conf, s.server);
        let secs = self.secs(now);
        let Some(s) = self.sessions.get_mut(key).and_then(Option::as_mut) else {
            return;
        };
        let mut attempt = s.attempt.take();
        let picked = match (self.group(g), attempt.as_mut()) {
            (Some(group), Some(a)) => group
                .up
                .get(a, secs)
                .and_then(|id| group.addr(id).cloned().map(|addr| (id, addr))),
            _ => None,
        };
        let Some(s) = self.sessions.get_mut(key).and_then(Option::as_mut) else {
            return;
        };
        s.attempt = attempt;
        let Some((_, addr)) = picked else {
            let ctx = context(s, false);
            log(
                &self.errlog,
                self.log_level,
                LogLevel::Error,
                &format!("no live upstreams while connecting to upstream{ctx}"),
            );
            self.finalize(key, 502);
            return;
        };
        let name = match &addr {
            PeerAddr::Inet(a) => a.to_string(),
            PeerAddr::Unix(p) => format!("unix:{}", p.display()),
        };
        s.up.addrs.push(name.clone());
        s.up.connect.push(None);
        s.up.first_byte.push(None);
        s.up.session.push(None);
        s.up.bytes_sent.push(0);
        s.up.bytes_received.push(0);
        s.peer_name = Some(name);
        s.connect_start = now;
        s.u_readable = false;
        s.u_writable = false;
        let srv = server_of(&self.conf, s.server);
        match Sock::connect(&addr) {
            Ok(mut sock) => {
                if let Some(r) = &self.registry
                    && let Err(e) = sock.register(r, Token(STREAM_FLAG + 2 * key + 1))
                {
                    let text = crate::errlog::with_os_error("epoll_ctl() failed", &e);
                    log(&self.errlog, self.log_level, LogLevel::Alert, &text);
                    self.finalize(key, 500);
                    return;
                }
                s.upstream = Some(sock);
                s.phase = Phase::Connecting;
                self.timers.arm(key, now, srv.connect_timeout);
            }
            Err(e) => {
                let text = crate::errlog::with_os_error("connect() failed", &e);
                self.attempt_failed(key, &text, now);
            }
        }
    }

    /// The peer answered the connect.
    fn connected(&mut self, key: usize, srv: &StreamServer, now: Instant) {
        let Some(Some(s)) = self.sessions.get_mut(key) else {
            return;
        };
        if let Some(c) = s.up.connect.last_mut() {
            *c = Some(now.duration_since(s.connect_start));
        }
        if let Some(Sock::Tcp(t)) = &s.upstream
            && srv.tcp_nodelay
        {
            let _ = t.set_nodelay(true);
        }
        if srv.proxy_protocol {
            let line = session::proxy_line(s.peer, s.local);
            let mut pending = Buf::new(srv.buffer_size.max(line.len()));
            pending.push(&line);
            // The header goes before anything the client already sent.
            std::mem::swap(&mut pending, &mut s.to_up);
            let rest = pending.take_all();
            s.to_up.push(&rest);
            s.up_sent = 0;
        }
        s.phase = Phase::Proxying;
        s.u_writable = true;
        s.u_readable = true;
        s.c_readable = true;
        self.timers.arm(key, now, srv.timeout);
        self.drive(key, now);
    }

    /// The attempt at the current peer failed: `text` is logged, the peer
    /// marked, and the next one tried or the session ends with 502
    /// (`ngx_stream_proxy_next_upstream`).
    fn attempt_failed(&mut self, key: usize, text: &str, now: Instant) {
        let Some(Some(s)) = self.sessions.get_mut(key) else {
            return;
        };
        let srv = server_of(&self.conf, s.server);
        let ctx = context(s, true);
        log(
            &self.errlog,
            self.log_level,
            LogLevel::Error,
            &format!("{text} while connecting to upstream{ctx}"),
        );
        let g = group_ref(&self.conf, s.server);
        let secs = self.secs(now);
        let Some(s) = self.sessions.get_mut(key).and_then(Option::as_mut) else {
            return;
        };
        if let Some(mut sock) = s.upstream.take()
            && let Some(r) = &self.registry
        {
            sock.deregister(r);
        }
        let mut attempt = s.attempt.take();
        let mut disabled = None;
        if let (Some(group), Some(a)) = (self.group(g), attempt.as_mut()) {
            let id = a.current();
            if group.up.free(a, true, secs).disabled
                && let Some(id) = id
            {
                disabled = group.addr(id).cloned();
            }
        }
        if let Some(addr) = disabled {
            let name = match addr {
                PeerAddr::Inet(a) => a.to_string(),
                PeerAddr::Unix(p) => format!("unix:{}", p.display()),
            };
            let Some(s) = self.sessions.get(key).and_then(Option::as_ref) else {
                return;
            };
            let ctx = context(s, true);
            log(
                &self.errlog,
                self.log_level,
                LogLevel::Warn,
                &format!("upstream server temporarily disabled while connecting to upstream{ctx}"),
            );
            let _ = name;
        }
        let Some(s) = self.sessions.get_mut(key).and_then(Option::as_mut) else {
            return;
        };
        let tries = attempt.as_ref().map_or(0, |a| a.tries());
        s.attempt = attempt;
        let timeout = srv.next_upstream_timeout;
        let expired = !timeout.is_zero() && now.duration_since(s.tries_start) >= timeout;
        if tries == 0 || !srv.next_upstream || expired {
            self.finalize(key, 502);
            return;
        }
        self.connect(key, now);
    }

    /// Timers that expired.
    pub fn expire(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.expired);
        self.timers.expire(now, &mut due);
        for &key in &due {
            let Some(Some(s)) = self.sessions.get(key) else {
                continue;
            };
            match s.phase {
                Phase::ProxyProtocol => {
                    let ctx = context(s, false);
                    log(
                        &self.errlog,
                        self.log_level,
                        LogLevel::Info,
                        &format!("client timed out (110: Connection timed out){ctx}"),
                    );
                    self.close_silently(key);
                }
                Phase::Connecting => {
                    self.attempt_failed(key, "upstream timed out (110: Connection timed out)", now)
                }
                Phase::Proxying | Phase::Returning => {
                    let ctx = context(s, true);
                    log(
                        &self.errlog,
                        self.log_level,
                        LogLevel::Info,
                        &format!(
                            "connection timed out (110: Connection timed out) while proxying connection{ctx}"
                        ),
                    );
                    self.finalize(key, 200);
                }
            }
        }
        due.clear();
        self.expired = due;
        let conf = self.conf.clone();
        if let Some(c) = conf {
            self.udp_expire(&c, now);
        }
    }

    /// Closes a session that never reached its handler (no log line, as
    /// nginx's `ngx_stream_close_connection` there).
    fn close_silently(&mut self, key: usize) {
        self.timers.disarm(key);
        if let Some(slot) = self.sessions.get_mut(key)
            && slot.take().is_some()
        {
            self.free.push(key);
            self.live -= 1;
        }
    }

    /// The end of a session (`ngx_stream_proxy_finalize`): the peer
    /// freed, the access log lines, the sockets closed.
    fn finalize(&mut self, key: usize, status: u16) {
        self.timers.disarm(key);
        let Some(mut s) = self.sessions.get_mut(key).and_then(Option::take) else {
            return;
        };
        self.free.push(key);
        self.live -= 1;
        if let Some(i) = s.up.addrs.len().checked_sub(1) {
            s.up.bytes_sent[i] = s.up_sent;
            s.up.bytes_received[i] = s.up_received;
            if s.up.connect[i].is_some() {
                s.up.session[i] = Some(s.connect_start.elapsed());
            }
        }
        let g = group_ref(&self.conf, s.server);
        let secs = self.secs(Instant::now());
        if let Some(mut a) = s.attempt.take()
            && a.current().is_some()
            && let Some(group) = self.group(g)
        {
            group.up.free(&mut a, false, secs);
        }
        if let Some(mut up) = s.upstream.take()
            && let Some(r) = &self.registry
        {
            up.deregister(r);
        }
        let srv = server_of(&self.conf, s.server);
        let mut vals = values(&s, status, &s.up, &mut self.time);
        write_logs(&srv, &self.formats, &mut self.logs, &mut vals);
    }
}

fn server_of(conf: &Option<Arc<StreamConf>>, i: usize) -> Arc<StreamServer> {
    conf.as_ref()
        .expect("a stream address has a stream block")
        .servers[i]
        .clone()
}

fn group_ref(conf: &Option<Arc<StreamConf>>, server: usize) -> GroupRef {
    match &server_of(conf, server).handler {
        StreamHandler::Proxy(StreamPass::Upstream(i)) => GroupRef::Upstream(*i),
        _ => GroupRef::Implicit(server),
    }
}

/// Logs `text` when `level` is at least the most verbose level configured
/// (`LogLevel` orders `Debug` first).
fn log(errlog: &ErrorLog, min: LogLevel, level: LogLevel, text: &str) {
    if level >= min {
        errlog(level, text);
    }
}

/// Writes a session's access log lines.
fn write_logs(
    srv: &StreamServer,
    formats: &[Format],
    logs: &mut HashMap<std::path::PathBuf, File>,
    vals: &mut Values<'_>,
) {
    for l in &srv.access_log {
        if let Some(c) = &l.condition {
            let v = vars::expand(c, vals);
            if v.is_empty() || v == b"0" {
                continue;
            }
        }
        let Some(f) = formats.get(l.format) else {
            continue;
        };
        let mut line = Vec::new();
        f.render(vals, &mut line);
        if let Some(file) = logs.get_mut(&l.path) {
            let _ = file.write_all(&line);
        }
    }
}

fn values<'a>(
    s: &'a Session,
    status: u16,
    up: &'a UpstreamVars,
    time: &'a mut peregrine_log::TimeCache,
) -> Values<'a> {
    Values {
        peer: s.peer,
        local: s.local,
        udp: false,
        status,
        id: s.id,
        start: s.start_wall,
        now: SystemTime::now(),
        received: s.received,
        sent: s.sent,
        proxy: s.header.as_deref(),
        upstream: up,
        time,
    }
}

/// nginx's stream log context (`ngx_stream_log_error`, and the proxy's
/// `ngx_stream_proxy_log_error` once there is an upstream).
fn context(s: &Session, upstream: bool) -> String {
    let client = if peregrine_conf::model::is_unix(s.peer) {
        "unix:".to_string()
    } else {
        s.peer.ip().to_string()
    };
    let mut out = format!(", client: {client}, server: {}", s.listen_text);
    if upstream {
        if let Some(p) = &s.peer_name {
            out.push_str(&format!(", upstream: \"{p}\""));
        }
        out.push_str(&format!(
            ", bytes from/to client:{}/{}, bytes from/to upstream:{}/{}",
            s.received, s.sent, s.up_received, s.up_sent
        ));
    }
    out
}

/// `allow`/`deny` (`ngx_stream_access_module`): the first matching rule.
fn allowed(srv: &StreamServer, peer: SocketAddr) -> bool {
    srv.access
        .iter()
        .find(|r| peregrine_core::access_net_matches(&r.net, peer))
        .is_none_or(|r| !r.deny)
}

/// Reads the PROXY protocol header: `Ok(true)` read, `Ok(false)` more
/// is needed, `Err(Some(text))` a broken header (logged), `Err(None)`
/// the client went away.
fn read_header(s: &mut Session) -> Result<bool, Option<String>> {
    use peregrine_codec::proxy_protocol::{Parsed, parse};
    use std::io::Read as _;
    if !s.c_readable {
        return Ok(false);
    }
    let mut buf = [0u8; PEEK];
    let n = match s.client.peek(&mut buf) {
        Ok(0) => return Err(None),
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            s.c_readable = false;
            return Ok(false);
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(false),
        Err(_) => return Err(None),
    };
    match parse(&buf[..n], PEEK) {
        Ok(Parsed::Partial) => {
            s.c_readable = false;
            Ok(false)
        }
        Ok(Parsed::Header(h)) => {
            let mut got = 0;
            while got < h.len {
                match s.client.read(&mut buf[got..h.len]) {
                    Ok(0) => return Err(None),
                    Ok(k) => got += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return Err(None),
                }
            }
            s.header = Some(Arc::new(h));
            s.c_readable = true;
            Ok(true)
        }
        Err(e) if e.is_logged() => Err(Some(e.to_string())),
        Err(_) => Err(None),
    }
}

impl Buf {
    /// Every pending byte, leaving the buffer empty.
    fn take_all(&mut self) -> Vec<u8> {
        let v = self.pending().to_vec();
        *self = Buf::new(self.capacity());
        v
    }
}
