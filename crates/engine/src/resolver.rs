//! The worker's resolvers (nginx's `ngx_resolver_t` per `resolver`
//! directive, driven by the worker's own event loop): one
//! `peregrine_resolver::Resolver` per directive seen, a UDP socket per
//! name server opened on first use and registered under
//! [`RESOLVER_FLAG`], and the connections waiting on each name. A proxied
//! request whose `proxy_pass` names a host from variables asks here
//! (`Resolvers::lookup`); when its name is answered or times out, its
//! connection key is put in [`Resolvers::woken`] and the worker drives it
//! again, and the next lookup hands over the outcome.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::UdpSocket;
use peregrine_conf::model::ResolverConf;
use peregrine_resolver::{Done, Lookup, Outcome, Resolver, Settings};

/// Added to a name server's index for its socket's token (above the
/// upstream sockets' [`crate::upstream::UPSTREAM_FLAG`]).
pub const RESOLVER_FLAG: usize = 1 << 41;
/// The largest DNS answer over UDP without EDNS (RFC 1035 4.2.1).
const MAX_DATAGRAM: usize = 512;
/// Name servers of all resolvers of a worker, at most (their tokens).
const MAX_SERVERS: usize = 1 << 16;

/// One directive's resolver and its sockets.
struct Entry {
    conf: Arc<ResolverConf>,
    resolver: Resolver,
    /// By server index: the socket, once opened.
    socks: Vec<Option<UdpSocket>>,
    /// The first token of this entry's servers.
    base: usize,
    waiting: HashMap<String, Vec<usize>>,
}

/// A worker's resolvers.
#[derive(Default)]
pub struct Resolvers {
    entries: Vec<Entry>,
    /// Names answered for connections that have not looked again yet:
    /// by connection key, the name and its outcome.
    done: HashMap<usize, (String, Outcome)>,
    next_token: usize,
    /// The connections to drive again: their name has an outcome.
    pub woken: Vec<usize>,
    seed: u64,
}

impl Resolvers {
    pub fn new(seed: u64) -> Resolvers {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Resolvers {
            seed: seed ^ nanos ^ u64::from(std::process::id()).rotate_left(32),
            ..Resolvers::default()
        }
    }

    /// The addresses of `name` for connection `key`: now, or `Pending`
    /// (the key is woken when the name has an outcome).
    pub fn lookup(
        &mut self,
        conf: &Arc<ResolverConf>,
        name: &str,
        key: usize,
        now: Instant,
        timeout: Duration,
        registry: Option<&mio::Registry>,
    ) -> Lookup {
        if let Some((n, r)) = self.done.remove(&key)
            && n.eq_ignore_ascii_case(name)
        {
            return match r {
                Ok(a) => Lookup::Ready(a),
                Err(e) => Lookup::Failed(e),
            };
        }
        let i = self.entry(conf);
        let e = &mut self.entries[i];
        let got = e.resolver.lookup(name, now, timeout);
        if got == Lookup::Pending {
            let list = e
                .waiting
                .entry(name.trim_end_matches('.').to_ascii_lowercase())
                .or_default();
            if !list.contains(&key) {
                list.push(key);
            }
            self.flush(i, registry);
        }
        got
    }

    /// Connection `key` no longer waits (it closed or gave up).
    pub fn forget(&mut self, key: usize) {
        self.done.remove(&key);
        for e in &mut self.entries {
            for list in e.waiting.values_mut() {
                list.retain(|k| *k != key);
            }
        }
    }

    /// When a resend or a timeout is due next.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.entries
            .iter()
            .filter_map(|e| e.resolver.next_deadline())
            .min()
    }

    /// Nothing to tick or wake: no `resolver` is in use by this worker and
    /// no connection waits for a name (the worker skips its per-turn step).
    pub fn idle(&self) -> bool {
        self.entries.is_empty() && self.woken.is_empty()
    }

    /// Resends and timeouts due by `now`.
    pub fn tick(&mut self, now: Instant, registry: Option<&mio::Registry>) {
        for i in 0..self.entries.len() {
            if self.entries[i]
                .resolver
                .next_deadline()
                .is_none_or(|d| d > now)
            {
                continue;
            }
            let done = self.entries[i].resolver.on_tick(now);
            for d in done {
                self.complete(i, d);
            }
            self.flush(i, registry);
        }
    }

    /// A name server's socket is readable: its answers.
    pub fn readable(&mut self, token: usize, now: Instant, registry: Option<&mio::Registry>) {
        let Some(i) = self
            .entries
            .iter()
            .rposition(|e| token >= e.base && token < e.base + e.socks.len())
        else {
            return;
        };
        let server = token - self.entries[i].base;
        let mut buf = [0u8; MAX_DATAGRAM];
        loop {
            let e = &mut self.entries[i];
            let Some(Some(sock)) = e.socks.get(server) else {
                return;
            };
            let n = match sock.recv(&mut buf) {
                Ok(n) => n,
                // WouldBlock ends the turn; a refused port (ICMP) or any
                // other error leaves the query to its resend, as nginx.
                Err(_) => break,
            };
            if let Some(d) = e.resolver.on_datagram(server, &buf[..n], now) {
                self.complete(i, d);
            }
        }
        self.flush(i, registry);
    }

    fn complete(&mut self, i: usize, d: Done) {
        let keys = self.entries[i].waiting.remove(&d.name).unwrap_or_default();
        for k in keys {
            self.done.insert(k, (d.name.clone(), d.result.clone()));
            self.woken.push(k);
        }
    }

    /// The entry of `conf` (by identity: one per directive, as nginx).
    fn entry(&mut self, conf: &Arc<ResolverConf>) -> usize {
        if let Some(i) = self.entries.iter().position(|e| Arc::ptr_eq(&e.conf, conf)) {
            return i;
        }
        self.seed = self.seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let n = conf.servers.len();
        let base = RESOLVER_FLAG + self.next_token;
        self.next_token = (self.next_token + n) % MAX_SERVERS;
        self.entries.push(Entry {
            conf: conf.clone(),
            resolver: Resolver::new(
                Settings {
                    servers: conf.servers.clone(),
                    valid: conf.valid,
                    ipv4: conf.ipv4,
                    ipv6: conf.ipv6,
                },
                self.seed,
            ),
            socks: (0..n).map(|_| None).collect(),
            base,
            waiting: HashMap::new(),
        });
        self.entries.len() - 1
    }

    /// Sends entry `i`'s queued queries, opening sockets as needed. A
    /// datagram that cannot be sent is left to the resend.
    fn flush(&mut self, i: usize, registry: Option<&mio::Registry>) {
        let e = &mut self.entries[i];
        let out: Vec<(usize, Vec<u8>)> = e.resolver.transmit().collect();
        for (server, bytes) in out {
            if e.socks[server].is_none() {
                e.socks[server] = open(e.conf.servers[server], e.base + server, registry);
            }
            if let Some(s) = &e.socks[server] {
                let _ = s.send(&bytes);
            }
        }
    }
}

/// A UDP socket connected to `server` (nginx's `ngx_udp_connect`), in the
/// worker's poll under `token`.
fn open(server: SocketAddr, token: usize, registry: Option<&mio::Registry>) -> Option<UdpSocket> {
    let any: SocketAddr = if server.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let mut s = UdpSocket::bind(any).ok()?;
    s.connect(server).ok()?;
    registry?
        .register(&mut s, mio::Token(token), mio::Interest::READABLE)
        .ok()?;
    Some(s)
}
