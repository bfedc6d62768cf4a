//! A worker's upstream groups: each `upstream { }` block and each implicit
//! group (`proxy_pass http://host:port`, every address of the host a peer)
//! as a `peregrine_upstream::Upstream` with the peers' addresses, and its
//! `keepalive` pool of idle connections. Per worker, no lock (nginx keeps
//! the same state per worker process without `zone`); with `zone`, the
//! peers' attempts in progress are counted across the workers
//! (`Upstream::share`).

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use peregrine_conf::model::{BalanceMethod, PeerAddr, UpstreamConf};
use peregrine_core::proxy::Target;
use peregrine_upstream::{Method, PeerConf, PeerId, Upstream};

use super::sock::Sock;

/// nginx's defaults for an implicit group's peer (`max_fails=1
/// fail_timeout=10`).
const IMPLICIT_FAIL_TIMEOUT: u64 = 10;

/// An idle kept-alive connection.
pub struct Idle {
    pub sock: Sock,
    pub peer: PeerId,
    pub since: Instant,
    /// Requests it carried so far (`keepalive_requests`).
    pub requests: u64,
    /// When it was connected (`keepalive_time`).
    pub born: Instant,
}

/// One group in one worker.
pub struct Group {
    pub up: Upstream,
    primary: Vec<PeerAddr>,
    backup: Vec<PeerAddr>,
    /// `keepalive N` and its limits; `None`: no pool.
    pub keepalive: Option<usize>,
    pub keepalive_timeout: Duration,
    pub keepalive_requests: u64,
    pub keepalive_time: Duration,
    pub idle: Vec<Idle>,
}

impl Group {
    pub fn addr(&self, id: PeerId) -> Option<&PeerAddr> {
        if id.backup {
            self.backup.get(id.index)
        } else {
            self.primary.get(id.index)
        }
    }

    /// An idle connection to `peer` with nothing to read (nginx's
    /// `ngx_http_upstream_get_keepalive_peer`; a connection that closed
    /// or sent bytes while idle is dropped).
    pub fn take_idle(&mut self, peer: PeerId, now: Instant) -> Option<Idle> {
        while let Some(i) = self.idle.iter().rposition(|c| c.peer == peer) {
            let c = self.idle.swap_remove(i);
            // A TCP connection that closed or sent bytes while idle was
            // dropped on its event (`drop_idle`): no `recv(MSG_PEEK)` here.
            if now.duration_since(c.since) < self.keepalive_timeout
                && (c.sock.watched_idle() || c.sock.idle_clean())
            {
                return Some(c);
            }
        }
        None
    }

    /// An event on the idle connection `fd` while in this pool: dropped
    /// (closed) when it has bytes or its close to read, as nginx's
    /// `ngx_http_upstream_keepalive_close_handler`. `true`: it was here.
    pub fn drop_idle(&mut self, fd: usize) -> bool {
        let Some(i) = self.idle.iter().position(|c| c.sock.fd() == fd) else {
            return false;
        };
        if !self.idle[i].sock.idle_clean() {
            self.idle.swap_remove(i);
        }
        true
    }

    /// Keeps a connection for the next request (oldest dropped when full).
    pub fn put_idle(&mut self, c: Idle) {
        let Some(max) = self.keepalive else { return };
        if c.requests >= self.keepalive_requests
            || max == 0
            || c.since.duration_since(c.born) > self.keepalive_time
        {
            return;
        }
        if self.idle.len() >= max {
            self.idle.remove(0);
        }
        self.idle.push(c);
    }
}

fn method_of(m: BalanceMethod) -> Method {
    match m {
        BalanceMethod::RoundRobin => Method::RoundRobin,
        BalanceMethod::IpHash => Method::IpHash,
        BalanceMethod::Hash { consistent } => Method::Hash { consistent },
        BalanceMethod::LeastConn => Method::LeastConn,
        BalanceMethod::Random { two } => Method::Random { two },
    }
}

pub(crate) fn group_of(u: &UpstreamConf, seed: u64) -> Option<Group> {
    let mut peers = Vec::new();
    let (mut primary, mut backup) = (Vec::new(), Vec::new());
    for s in &u.servers {
        for a in &s.addrs {
            let name = match a {
                PeerAddr::Inet(sa) => sa.to_string(),
                PeerAddr::Unix(p) => format!("unix:{}", p.display()),
            };
            let mut p = PeerConf::new(&name);
            p.server = s.name.clone();
            p.weight = s.weight;
            p.max_fails = s.max_fails;
            p.fail_timeout = s.fail_timeout.as_secs();
            p.max_conns = s.max_conns;
            p.down = s.down;
            p.backup = s.backup;
            peers.push(p);
            if s.backup {
                backup.push(a.clone());
            } else {
                primary.push(a.clone());
            }
        }
    }
    let mut up = Upstream::new(&u.name, peers, method_of(u.method), seed).ok()?;
    if let Some((zone, _)) = &u.zone {
        up.share(zone);
    }
    Some(Group {
        up,
        primary,
        backup,
        keepalive: u.keepalive.map(|n| n as usize),
        keepalive_timeout: u.keepalive_timeout,
        keepalive_requests: u.keepalive_requests,
        keepalive_time: u.keepalive_time,
        idle: Vec::new(),
    })
}

pub(crate) fn implicit(name: &str, addrs: Vec<PeerAddr>, seed: u64) -> Option<Group> {
    let peers = addrs
        .iter()
        .map(|a| {
            let mut p = PeerConf::new(&match a {
                PeerAddr::Inet(sa) => sa.to_string(),
                PeerAddr::Unix(p) => format!("unix:{}", p.display()),
            });
            p.server = name.to_string();
            p.fail_timeout = IMPLICIT_FAIL_TIMEOUT;
            p
        })
        .collect();
    let up = Upstream::new(name, peers, Method::RoundRobin, seed).ok()?;
    Some(Group {
        up,
        primary: addrs,
        backup: Vec::new(),
        keepalive: None,
        keepalive_timeout: Duration::ZERO,
        keepalive_requests: 0,
        keepalive_time: Duration::ZERO,
        idle: Vec::new(),
    })
}

/// Groups of names from variables a worker keeps, at most: the names
/// come from requests (a `Host` header), so past it they are all dropped
/// and rebuilt on use.
const MAX_RESOLVED_GROUPS: usize = 1024;

/// Every group a worker's requests used so far, built on first use.
#[derive(Default)]
pub struct Groups {
    groups: HashMap<Target, Group>,
    pub seed: u64,
}

impl Groups {
    /// The group of a name the resolver answered, new for each request as
    /// nginx's (`ngx_http_upstream_create_round_robin_peer`): a peer that
    /// failed one request is tried again by the next.
    pub fn set_resolved(&mut self, t: &Target, ips: &[std::net::IpAddr]) {
        let Target::Resolve(h, port) = t else {
            return;
        };
        let addrs: Vec<PeerAddr> = ips
            .iter()
            .map(|ip| PeerAddr::Inet(SocketAddr::new(*ip, *port)))
            .collect();
        let resolved = |t: &Target| matches!(t, Target::Resolve(..));
        if self.groups.keys().filter(|k| resolved(k)).count() >= MAX_RESOLVED_GROUPS {
            self.groups.retain(|k, _| !resolved(k));
        }
        self.seed = self.seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let name = if *port == 80 {
            h.clone()
        } else {
            format!("{h}:{port}")
        };
        if let Some(g) = implicit(&name, addrs, self.seed) {
            self.groups.insert(t.clone(), g);
        }
    }

    /// The group of `t` (`None`: its host no longer resolves).
    pub fn get(&mut self, t: &Target, confs: &[UpstreamConf]) -> Option<&mut Group> {
        if !self.groups.contains_key(t) {
            self.seed = self.seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let g = match t {
                Target::Group(i) => group_of(confs.get(*i)?, self.seed)?,
                Target::Host(h, port) => {
                    let literal = h.trim_start_matches('[').trim_end_matches(']');
                    let addrs: Vec<PeerAddr> = match literal.parse::<std::net::IpAddr>() {
                        Ok(ip) => vec![PeerAddr::Inet(SocketAddr::new(ip, *port))],
                        Err(_) => (h.as_str(), *port)
                            .to_socket_addrs()
                            .ok()?
                            .map(PeerAddr::Inet)
                            .collect(),
                    };
                    let name = if *port == 80 {
                        h.clone()
                    } else {
                        format!("{h}:{port}")
                    };
                    implicit(&name, addrs, self.seed)?
                }
                Target::Unix(p) => implicit(
                    &format!("unix:{}", p.display()),
                    vec![PeerAddr::Unix(p.clone())],
                    self.seed,
                )?,
                // Built by `set_resolved` once the resolver answered.
                Target::Resolve(..) => return None,
            };
            self.groups.insert(t.clone(), g);
        }
        self.groups.get_mut(t)
    }
}

impl Groups {
    /// An event on the pooled connection `fd` ([`Group::drop_idle`]).
    pub fn idle_event(&mut self, fd: usize) {
        for g in self.groups.values_mut() {
            if g.drop_idle(fd) {
                return;
            }
        }
    }
}
