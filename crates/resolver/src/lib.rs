//! nginx's resolver (`ngx_resolver.c`) without I/O: the names that
//! `proxy_pass` builds from variables are looked up here, by the worker's
//! own event loop, as nginx's worker does with its UDP connections to the
//! `resolver` addresses.
//!
//! Owns: the queries (A, and AAAA unless `ipv6=off`; ids random per
//! query), what an answer means (the addresses at the end of a CNAME
//! chain, the smallest TTL, nginx's error codes for a failed name), the
//! cache of one `resolver` directive (a name's addresses until their TTL
//! or `valid=` runs out; a failed name is not kept), the
//! resend of a query that has no answer to the next name server every
//! [`RESEND_TIMEOUT`], and the end of a lookup at its `resolver_timeout`.
//!
//! Does not own: sockets, timers or the connections that wait (the
//! engine sends [`Resolver::transmit`]'s datagrams, feeds the ones that
//! arrive to [`Resolver::on_datagram`] and calls [`Resolver::on_tick`] at
//! [`Resolver::next_deadline`]); the directives' syntax (conf); logging
//! (the caller logs nginx's `NAME could not be resolved (3: Host not
//! found)` with [`ResolveError`]'s text).
//!
//! Hand-written around simple-dns (which parses and builds the messages):
//! resolver crates bring their own runtime and cache semantics, and
//! nginx's are what a drop-in must keep (which server is asked when, what
//! is cached for how long, which datagrams are ignored).

#![forbid(unsafe_code)]

mod answer;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use answer::Answer;

/// nginx's `resolver->resend_timeout`: a query without an answer goes to
/// the next name server after this long (`ngx_resolver_create`).
pub const RESEND_TIMEOUT: Duration = Duration::from_secs(5);
/// CNAMEs followed by new queries, at most, for one lookup (nginx's
/// `NGX_RESOLVER_MAX_RECURSION`).
pub const MAX_RECURSION: u8 = 50;
/// Names cached per resolver, at most: past it the cache is emptied of
/// expired names, then of the oldest half (nginx bounds its cache by
/// expiry alone; a worker resolving names from client headers must not
/// grow without bound).
pub const MAX_CACHED: usize = 4096;
/// The longest name sent (RFC 1035 2.3.4: 255 octets on the wire).
pub const MAX_NAME: usize = 253;

/// Why a name has no address: nginx's resolver codes and words
/// (`ngx_resolver_strerror`), with the DNS RCODE as the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("1: Format error")]
    Format,
    #[error("2: Server failure")]
    ServerFailure,
    #[error("3: Host not found")]
    NotFound,
    #[error("4: Unimplemented")]
    Unimplemented,
    #[error("5: Operation refused")]
    Refused,
    #[error("{0}: Unknown error")]
    Other(u8),
    /// No answer within `resolver_timeout` (nginx: `NGX_ETIMEDOUT`).
    #[error("110: Operation timed out")]
    TimedOut,
}

impl ResolveError {
    fn of_rcode(code: u8) -> ResolveError {
        match code {
            1 => ResolveError::Format,
            2 => ResolveError::ServerFailure,
            3 => ResolveError::NotFound,
            4 => ResolveError::Unimplemented,
            5 => ResolveError::Refused,
            c => ResolveError::Other(c),
        }
    }
}

/// One `resolver` directive's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub servers: Vec<SocketAddr>,
    /// `valid=`: overrides the answers' TTL.
    pub valid: Option<Duration>,
    pub ipv4: bool,
    pub ipv6: bool,
}

/// What a lookup found now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Ready(Arc<[IpAddr]>),
    Failed(ResolveError),
    /// Queried: [`Resolver::on_datagram`] or [`Resolver::on_tick`] will
    /// name it done.
    Pending,
}

/// A name's addresses, or why it has none.
pub type Outcome = Result<Arc<[IpAddr]>, ResolveError>;

/// A lookup that ended, for the connections waiting on `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub name: String,
    pub result: Outcome,
}

struct Cached {
    result: Outcome,
    expires: Instant,
}

/// One query (a name's A and AAAA) in flight.
struct Query {
    /// The name asked now (the lookup's own name, or a CNAME's target).
    asking: String,
    ids: [Option<u16>; 2],
    /// Addresses of the answered families, and the smallest TTL.
    got: Vec<IpAddr>,
    ttl: u32,
    answered: [bool; 2],
    error: Option<ResolveError>,
    server: usize,
    resend_at: Instant,
    deadline: Instant,
    recursion: u8,
}

/// One `resolver` directive's state in one worker.
pub struct Resolver {
    settings: Settings,
    cache: HashMap<String, Cached>,
    queries: HashMap<String, Query>,
    /// Query id to the name it belongs to.
    ids: HashMap<u16, String>,
    next_server: usize,
    rng: u64,
    out: Vec<(usize, Vec<u8>)>,
}

impl Resolver {
    /// `seed` varies the query ids between workers and runs (nginx draws
    /// them from `ngx_random`: an id an off-path attacker cannot guess is
    /// the only defence of plain DNS against forged answers).
    pub fn new(settings: Settings, seed: u64) -> Resolver {
        Resolver {
            settings,
            cache: HashMap::new(),
            queries: HashMap::new(),
            ids: HashMap::new(),
            next_server: 0,
            rng: seed | 1,
            out: Vec::new(),
        }
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The addresses of `name` (lowercased here, a trailing dot cut), from
    /// the cache or by a new query that ends by `timeout` from `now`.
    pub fn lookup(&mut self, name: &str, now: Instant, timeout: Duration) -> Lookup {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if let Some(c) = self.cache.get(&name) {
            if c.expires > now {
                return match &c.result {
                    Ok(a) => Lookup::Ready(a.clone()),
                    Err(e) => Lookup::Failed(*e),
                };
            }
            self.cache.remove(&name);
        }
        if let Some(q) = self.queries.get_mut(&name) {
            q.deadline = q.deadline.max(now + timeout);
            return Lookup::Pending;
        }
        if name.is_empty() || name.len() > MAX_NAME || self.settings.servers.is_empty() {
            return Lookup::Failed(ResolveError::Format);
        }
        let server = self.next_server % self.settings.servers.len();
        self.next_server = self.next_server.wrapping_add(1);
        let q = Query {
            asking: name.clone(),
            ids: [None, None],
            got: Vec::new(),
            ttl: u32::MAX,
            answered: [!self.settings.ipv4, !self.settings.ipv6],
            error: None,
            server,
            resend_at: now + RESEND_TIMEOUT,
            deadline: now + timeout,
            recursion: 0,
        };
        self.queries.insert(name.clone(), q);
        self.send(&name);
        Lookup::Pending
    }

    /// The datagrams to send: (index of the name server in
    /// [`Settings::servers`], bytes).
    pub fn transmit(&mut self) -> std::vec::Drain<'_, (usize, Vec<u8>)> {
        self.out.drain(..)
    }

    /// When [`Resolver::on_tick`] has work next.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.queries
            .values()
            .map(|q| q.resend_at.min(q.deadline))
            .min()
    }

    /// Resends queries whose server did not answer in time, and ends the
    /// lookups past their timeout.
    pub fn on_tick(&mut self, now: Instant) -> Vec<Done> {
        let mut done = Vec::new();
        let names: Vec<String> = self.queries.keys().cloned().collect();
        for name in names {
            let Some(q) = self.queries.get_mut(&name) else {
                continue;
            };
            if q.deadline <= now {
                done.push(self.finish(&name, Err(ResolveError::TimedOut), 0, now));
            } else if q.resend_at <= now {
                q.server = (q.server + 1) % self.settings.servers.len();
                q.resend_at = now + RESEND_TIMEOUT;
                self.send(&name);
            }
        }
        done
    }

    /// An answer from name server `server`: the lookup it ends, if any.
    /// Datagrams that answer no query of ours (a wrong id, a question that
    /// is not ours, not a response, not parseable) are ignored as nginx
    /// ignores them, and the query waits for its resend.
    pub fn on_datagram(&mut self, _server: usize, data: &[u8], now: Instant) -> Option<Done> {
        let id = u16::from_be_bytes([*data.first()?, *data.get(1)?]);
        let name = self.ids.get(&id)?.clone();
        // An answer from any server asked counts (a late one from the
        // server asked before a resend too, as in nginx): `_server` is
        // not checked.
        let q = self.queries.get_mut(&name)?;
        let family = q.ids.iter().position(|i| *i == Some(id))?;
        let answer = answer::read(data, &q.asking, family == 1)?;
        self.ids.remove(&id);
        let q = self.queries.get_mut(&name)?;
        q.ids[family] = None;
        q.answered[family] = true;
        match answer {
            Answer::Error(e) => q.error = q.error.or(Some(e)),
            Answer::Addrs { addrs, ttl } => {
                q.got.extend(addrs);
                q.ttl = q.ttl.min(ttl);
            }
            Answer::Alias { target, ttl } => {
                q.ttl = q.ttl.min(ttl);
                if q.recursion >= MAX_RECURSION {
                    q.error = Some(ResolveError::ServerFailure);
                } else if q.got.is_empty() && q.ids.iter().all(Option::is_none) {
                    q.recursion += 1;
                    q.asking = target;
                    q.answered = [!self.settings.ipv4, !self.settings.ipv6];
                    self.send(&name);
                    return None;
                }
            }
        }
        if !q.answered.iter().all(|a| *a) {
            return None;
        }
        let ttl = q.ttl;
        // An error of either family fails the name, whatever the other
        // found (nginx keeps the first family's code until both answered).
        let result = match q.error {
            Some(e) => Err(e),
            None if q.got.is_empty() => Err(ResolveError::NotFound),
            None => Ok(Arc::from(std::mem::take(&mut q.got))),
        };
        Some(self.finish(&name, result, ttl, now))
    }

    fn finish(&mut self, name: &str, result: Outcome, ttl: u32, now: Instant) -> Done {
        if let Some(q) = self.queries.remove(name) {
            for id in q.ids.into_iter().flatten() {
                self.ids.remove(&id);
            }
        }
        // Failures are not kept: nginx frees the name's node on an error
        // code (`ngx_resolver_process_a`), so the next lookup asks again,
        // of the next server.
        let valid = match (&result, self.settings.valid) {
            (Err(_), _) => Duration::ZERO,
            (Ok(_), Some(v)) => v,
            (Ok(_), None) => Duration::from_secs(u64::from(ttl)),
        };
        if !valid.is_zero() {
            self.bound_cache(now);
            self.cache.insert(
                name.to_string(),
                Cached {
                    result: result.clone(),
                    expires: now + valid,
                },
            );
        }
        Done {
            name: name.to_string(),
            result,
        }
    }

    fn bound_cache(&mut self, now: Instant) {
        if self.cache.len() < MAX_CACHED {
            return;
        }
        self.cache.retain(|_, c| c.expires > now);
        if self.cache.len() >= MAX_CACHED {
            let mut by_expiry: Vec<Instant> = self.cache.values().map(|c| c.expires).collect();
            by_expiry.sort_unstable();
            let cut = by_expiry[by_expiry.len() / 2];
            self.cache.retain(|_, c| c.expires > cut);
        }
    }

    /// Queues the query of `name` (its still unanswered families) to its
    /// current server, with fresh ids.
    fn send(&mut self, name: &str) {
        let mut fresh = [None, None];
        let Some(q) = self.queries.get(name) else {
            return;
        };
        let (server, asking, answered, old) = (q.server, q.asking.clone(), q.answered, q.ids);
        for id in old.into_iter().flatten() {
            self.ids.remove(&id);
        }
        for (family, slot) in fresh.iter_mut().enumerate() {
            if answered[family] {
                continue;
            }
            let id = self.fresh_id();
            if let Some(bytes) = answer::query(id, &asking, family == 1) {
                self.out.push((server, bytes));
                self.ids.insert(id, name.to_string());
                *slot = Some(id);
            }
        }
        if let Some(q) = self.queries.get_mut(name) {
            q.ids = fresh;
        }
    }

    fn fresh_id(&mut self) -> u16 {
        loop {
            // xorshift64*: ids spread over 16 bits, never one in use.
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            let id = (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 48) as u16;
            if !self.ids.contains_key(&id) {
                return id;
            }
        }
    }
}
