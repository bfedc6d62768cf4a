//! `listen ... udp`: a datagram session per client address and listening
//! socket (nginx's per-client UDP "connection"), each with its own
//! connected socket to the peer chosen for it. A client's datagrams go to
//! the peer; the peer's go back to the client from the listening socket.
//! The session ends when the peer sent `proxy_responses` datagrams per
//! request, or at `proxy_timeout` without traffic (nginx's
//! `ngx_stream_proxy_process_connection` on a `SOCK_DGRAM` session).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::time::{Instant, SystemTime};

use mio::net::UdpSocket;
use mio::{Interest, Registry, Token};
use peregrine_conf::model::{LogLevel, PeerAddr};
use peregrine_conf::stream::{StreamConf, StreamHandler, StreamPass};
use peregrine_upstream::{Attempt, Key};

use super::vars::{self, UpstreamVars, Values};
use super::{GroupRef, STREAM_FLAG, Streams, write_logs};
use crate::ErrorLog;
use crate::timer::Timers;

/// UDP sessions' tokens: `STREAM_FLAG + 2 * (SESSION_BASE + key)`, above
/// every TCP session's.
pub const SESSION_BASE: usize = 1 << 30;
/// The largest datagram read (UDP's own limit).
const MAX_DATAGRAM: usize = 65535;

struct Listener {
    sock: UdpSocket,
    addr_index: usize,
    local: SocketAddr,
}

struct Session {
    listener: usize,
    server: usize,
    client: SocketAddr,
    upstream: UdpSocket,
    attempt: Attempt,
    group: GroupRef,
    id: u64,
    start: Instant,
    start_wall: SystemTime,
    requests: u32,
    responses: u32,
    received: u64,
    sent: u64,
    up_sent: u64,
    up_received: u64,
    up: UpstreamVars,
}

/// A worker's UDP side.
pub struct Udp {
    listeners: Vec<Listener>,
    sessions: Vec<Option<Session>>,
    free: Vec<usize>,
    by_client: HashMap<(usize, SocketAddr), usize>,
    timers: Timers,
    expired: Vec<usize>,
    buf: Vec<u8>,
    ids: u64,
}

impl Udp {
    pub fn new(
        socks: Vec<(usize, SocketAddr, std::net::TcpListener)>,
        registry: Option<&Registry>,
        flag: usize,
        errlog: &ErrorLog,
    ) -> Udp {
        let mut listeners = Vec::new();
        for (addr_index, local, sock) in socks {
            let std = std::net::UdpSocket::from(OwnedFd::from(sock));
            let mut sock = UdpSocket::from_std(std);
            if let Some(r) = registry {
                let t = Token(flag + listeners.len());
                if let Err(e) = r.register(&mut sock, t, Interest::READABLE) {
                    errlog(
                        LogLevel::Alert,
                        &crate::errlog::with_os_error("epoll_ctl() failed", &e),
                    );
                    continue;
                }
            }
            listeners.push(Listener {
                sock,
                addr_index,
                local,
            });
        }
        Udp {
            listeners,
            sessions: Vec::new(),
            free: Vec::new(),
            by_client: HashMap::new(),
            timers: Timers::default(),
            expired: Vec::new(),
            buf: vec![0; MAX_DATAGRAM],
            ids: 0,
        }
    }

    pub fn live(&self) -> usize {
        self.by_client.len()
    }

    pub fn next_deadline(&mut self) -> Option<Instant> {
        self.timers.next_deadline()
    }
}

impl Streams {
    /// Datagrams from clients on UDP listener `li`.
    pub(super) fn udp_event(&mut self, li: usize, readable: bool, conf: &StreamConf, now: Instant) {
        if !readable {
            return;
        }
        loop {
            let Some(l) = self.udp.listeners.get(li) else {
                return;
            };
            let (n, client) = match l.sock.recv_from(&mut self.udp.buf) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let text = crate::errlog::with_os_error("recvmsg() failed", &e);
                    super::log(&self.errlog, self.log_level, LogLevel::Alert, &text);
                    return;
                }
            };
            let key = match self.udp.by_client.get(&(li, client)) {
                Some(&k) => k,
                None => match self.udp_open(li, client, conf, now) {
                    Some(k) => k,
                    None => continue,
                },
            };
            let Some(Some(s)) = self.udp.sessions.get_mut(key) else {
                continue;
            };
            s.requests += 1;
            s.received += n as u64;
            match s.upstream.send(&self.udp.buf[..n]) {
                Ok(k) => s.up_sent += k as u64,
                Err(e) => {
                    let text = crate::errlog::with_os_error("send() failed", &e);
                    let ctx = udp_context(s, &self.udp.listeners);
                    super::log(
                        &self.errlog,
                        self.log_level,
                        LogLevel::Error,
                        &format!("{text} while proxying connection{ctx}"),
                    );
                }
            }
            let srv = &conf.servers[s.server];
            self.udp.timers.arm(key, now, srv.timeout);
        }
    }

    /// A new client: its session and a socket connected to its peer.
    fn udp_open(
        &mut self,
        li: usize,
        client: SocketAddr,
        conf: &StreamConf,
        now: Instant,
    ) -> Option<usize> {
        let addr_index = self.udp.listeners[li].addr_index;
        let si = (*self.by_addr.get(addr_index)?)?;
        let srv = conf.servers[si].clone();
        if !super::allowed(&srv, client) {
            return None;
        }
        let group = match &srv.handler {
            StreamHandler::Proxy(StreamPass::Upstream(i)) => GroupRef::Upstream(*i),
            StreamHandler::Proxy(StreamPass::Addrs { .. }) => GroupRef::Implicit(si),
            StreamHandler::Return(v) => {
                self.udp_return(li, client, v, conf, now);
                return None;
            }
        };
        let hash_key = match group {
            GroupRef::Upstream(i) => conf.upstreams[i].hash_key.clone(),
            GroupRef::Implicit(_) => None,
        };
        let local = self.udp.listeners[li].local;
        let key_bytes = hash_key.map(|k| {
            let up = UpstreamVars::default();
            let mut v = udp_values(client, local, 0, 0, now, &up, &mut self.time);
            vars::expand(&k, &mut v)
        });
        let secs = self.secs(now);
        let g = self.group(group)?;
        let mut attempt = g.up.start(match &key_bytes {
            Some(b) => Key::Bytes(b),
            None => Key::None,
        });
        let id = g.up.get(&mut attempt, secs)?;
        let addr = match g.addr(id)? {
            PeerAddr::Inet(a) => *a,
            PeerAddr::Unix(_) => return None,
        };
        let bind: SocketAddr = if addr.is_ipv4() {
            "0.0.0.0:0".parse().ok()?
        } else {
            "[::]:0".parse().ok()?
        };
        let mut up = UdpSocket::bind(bind).ok()?;
        up.connect(addr).ok()?;
        let key = self.udp.free.pop().unwrap_or_else(|| {
            self.udp.sessions.push(None);
            self.udp.sessions.len() - 1
        });
        if let Some(r) = &self.registry {
            let t = Token(STREAM_FLAG + 2 * (SESSION_BASE + key));
            r.register(&mut up, t, Interest::READABLE).ok()?;
        }
        self.udp.ids += 1;
        let mut upv = UpstreamVars::default();
        upv.addrs.push(addr.to_string());
        upv.connect.push(Some(std::time::Duration::ZERO));
        upv.first_byte.push(None);
        upv.session.push(None);
        self.udp.sessions[key] = Some(Session {
            listener: li,
            server: si,
            client,
            upstream: up,
            attempt,
            group,
            id: self.udp.ids,
            start: now,
            start_wall: SystemTime::now(),
            requests: 0,
            responses: 0,
            received: 0,
            sent: 0,
            up_sent: 0,
            up_received: 0,
            up: upv,
        });
        self.udp.by_client.insert((li, client), key);
        Some(key)
    }

    /// `return` on a UDP server: one datagram back, then the log line.
    fn udp_return(
        &mut self,
        li: usize,
        client: SocketAddr,
        v: &str,
        conf: &StreamConf,
        now: Instant,
    ) {
        let local = self.udp.listeners[li].local;
        let up = UpstreamVars::default();
        let value = {
            let mut vals = udp_values(client, local, 0, 0, now, &up, &mut self.time);
            vars::expand(v, &mut vals)
        };
        let sent = self.udp.listeners[li]
            .sock
            .send_to(&value, client)
            .map_or(0, |n| n as u64);
        let Some(Some(si)) = self.by_addr.get(self.udp.listeners[li].addr_index).copied() else {
            return;
        };
        let mut vals = udp_values(client, local, 0, sent, now, &up, &mut self.time);
        vals.status = 200;
        write_logs(&conf.servers[si], &self.formats, &mut self.logs, &mut vals);
    }

    /// Datagrams from a session's peer, back to its client.
    pub(super) fn udp_upstream_event(&mut self, key: usize, conf: &StreamConf, now: Instant) {
        loop {
            let Some(Some(s)) = self.udp.sessions.get_mut(key) else {
                return;
            };
            let n = match s.upstream.recv(&mut self.udp.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let text = crate::errlog::with_os_error("recv() failed", &e);
                    let ctx = udp_context(s, &self.udp.listeners);
                    super::log(
                        &self.errlog,
                        self.log_level,
                        LogLevel::Error,
                        &format!("{text} while proxying connection{ctx}"),
                    );
                    self.udp_finalize(key, 502, conf);
                    return;
                }
            };
            if s.up_received == 0
                && let Some(f) = s.up.first_byte.last_mut()
            {
                *f = Some(now.duration_since(s.start));
            }
            s.up_received += n as u64;
            s.responses += 1;
            let l = &self.udp.listeners[s.listener];
            if let Ok(k) = l.sock.send_to(&self.udp.buf[..n], s.client) {
                s.sent += k as u64;
            }
            let srv = &conf.servers[s.server];
            self.udp.timers.arm(key, now, srv.timeout);
            if let Some(r) = srv.responses
                && s.responses >= r.saturating_mul(s.requests)
            {
                self.udp_finalize(key, 200, conf);
                return;
            }
        }
    }

    /// `proxy_timeout` of UDP sessions.
    pub(super) fn udp_expire(&mut self, conf: &StreamConf, now: Instant) {
        let mut due = std::mem::take(&mut self.udp.expired);
        self.udp.timers.expire(now, &mut due);
        for &key in &due {
            let Some(Some(s)) = self.udp.sessions.get(key) else {
                continue;
            };
            let srv = &conf.servers[s.server];
            let done = srv
                .responses
                .is_none_or(|r| s.responses >= r.saturating_mul(s.requests));
            if done {
                self.udp_finalize(key, 200, conf);
            } else {
                let ctx = udp_context(s, &self.udp.listeners);
                super::log(
                    &self.errlog,
                    self.log_level,
                    LogLevel::Error,
                    &format!(
                        "upstream timed out (110: Connection timed out) while proxying connection{ctx}"
                    ),
                );
                self.udp_finalize(key, 502, conf);
            }
        }
        due.clear();
        self.udp.expired = due;
    }

    fn udp_finalize(&mut self, key: usize, status: u16, conf: &StreamConf) {
        self.udp.timers.disarm(key);
        let Some(mut s) = self.udp.sessions.get_mut(key).and_then(Option::take) else {
            return;
        };
        self.udp.free.push(key);
        self.udp.by_client.remove(&(s.listener, s.client));
        if let Some(r) = &self.registry {
            let _ = r.deregister(&mut s.upstream);
        }
        let secs = self.secs(Instant::now());
        let failed = status == 502;
        if let Some(g) = self.group(s.group) {
            g.up.free(&mut s.attempt, failed, secs);
        }
        s.up.bytes_sent.push(s.up_sent);
        s.up.bytes_received.push(s.up_received);
        if let Some(x) = s.up.session.last_mut() {
            *x = Some(s.start.elapsed());
        }
        let local = self.udp.listeners[s.listener].local;
        let mut vals = Values {
            peer: s.client,
            local,
            udp: true,
            status,
            id: s.id,
            start: s.start_wall,
            now: SystemTime::now(),
            received: s.received,
            sent: s.sent,
            proxy: None,
            upstream: &s.up,
            time: &mut self.time,
        };
        write_logs(
            &conf.servers[s.server],
            &self.formats,
            &mut self.logs,
            &mut vals,
        );
    }
}

fn udp_values<'a>(
    client: SocketAddr,
    local: SocketAddr,
    received: u64,
    sent: u64,
    _now: Instant,
    up: &'a UpstreamVars,
    time: &'a mut peregrine_log::TimeCache,
) -> Values<'a> {
    Values {
        peer: client,
        local,
        udp: true,
        status: 0,
        id: 0,
        start: SystemTime::now(),
        now: SystemTime::now(),
        received,
        sent,
        proxy: None,
        upstream: up,
        time,
    }
}

/// nginx's `, udp client: ..., server: ..., upstream: "..."`.
fn udp_context(s: &Session, listeners: &[Listener]) -> String {
    let server = listeners
        .get(s.listener)
        .map(|l| l.local.to_string())
        .unwrap_or_default();
    let up = s.up.addrs.last().cloned().unwrap_or_default();
    format!(
        ", udp client: {}, server: {server}, upstream: \"{up}\", bytes from/to client:{}/{}, bytes from/to upstream:{}/{}",
        s.client.ip(),
        s.received,
        s.sent,
        s.up_received,
        s.up_sent
    )
}
