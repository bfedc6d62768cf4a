//! The balancing methods and a request's attempts: nginx's `get` and
//! `free` peer functions. Each method picks among the peers its own way
//! and falls back to round robin where nginx's does (after
//! [`HASH_TRIES`] unusable picks, or with fewer than two peers).

use crate::HASH_TRIES;
use crate::hash::{IP_HASH_START, crc32, ip_hash_round, memcached_hash};
use crate::peers::{Method, PeerId, Tier, Upstream};

/// What a request balances by.
#[derive(Debug, Clone, Copy)]
pub enum Key<'a> {
    /// Round robin, least_conn, random.
    None,
    /// ip_hash: the client's address bytes (4 for IPv4, of which nginx
    /// uses 3; 16 for IPv6; empty for a UNIX-socket client, which nginx
    /// hashes as three zero bytes).
    Addr(&'a [u8]),
    /// hash: the key's value (an empty key balances by round robin).
    Bytes(&'a [u8]),
}

/// A request's attempts at one group (`ngx_http_upstream_rr_peer_data_t`
/// and the hash modules' peer data).
#[derive(Debug, Clone)]
pub struct Attempt {
    /// Trying the backup tier (the primary one had no peer left).
    backup: bool,
    /// The peers of the current tier tried so far.
    tried: Vec<u64>,
    current: Option<PeerId>,
    /// Attempts left (`pc->tries`).
    tries: usize,
    /// ip_hash: the address bytes hashed (3 or 16).
    addr: [u8; 16],
    addr_len: usize,
    /// hash: the key (copied: an attempt outlives the request's buffers).
    key: Vec<u8>,
    hash: u64,
    rehash: u32,
    /// Unusable picks so far (`hp->tries`, `iphp->tries`, `rp->tries`).
    picks: u32,
}

/// What freeing an attempt's peer found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Freed {
    /// The failure reached the peer's `max_fails`: nginx logs `upstream
    /// server temporarily disabled` (warn).
    pub disabled: bool,
}

fn bit(i: usize) -> (usize, u64) {
    (i / 64, 1u64 << (i % 64))
}

impl Attempt {
    fn is_tried(&self, i: usize) -> bool {
        let (w, m) = bit(i);
        self.tried.get(w).is_some_and(|x| x & m != 0)
    }

    fn mark(&mut self, i: usize) {
        let (w, m) = bit(i);
        if self.tried.len() <= w {
            self.tried.resize(w + 1, 0);
        }
        self.tried[w] |= m;
    }

    /// Attempts left: when 0, nginx stops trying (`proxy_next_upstream`).
    pub fn tries(&self) -> usize {
        self.tries
    }

    /// Caps the attempts (`proxy_next_upstream_tries`, 0 = no cap).
    pub fn limit_tries(&mut self, n: usize) {
        if n > 0 {
            self.tries = self.tries.min(n);
        }
    }

    /// The peer of the attempt in progress.
    pub fn current(&self) -> Option<PeerId> {
        self.current
    }
}

impl Upstream {
    /// A request's first attempt (`init_peer`).
    pub fn start(&self, key: Key<'_>) -> Attempt {
        let mut a = Attempt {
            backup: false,
            tried: Vec::new(),
            current: None,
            tries: self.tries(),
            addr: [0; 16],
            addr_len: 3,
            key: Vec::new(),
            hash: 0,
            rehash: 0,
            picks: 0,
        };
        match key {
            Key::Addr(b) => {
                a.addr_len = match b.len() {
                    16 => 16,
                    _ => 3,
                };
                let n = b.len().min(a.addr_len);
                a.addr[..n].copy_from_slice(&b[..n]);
                a.hash = IP_HASH_START;
            }
            Key::Bytes(k) => {
                a.key = k.to_vec();
                if let Method::Hash { consistent: true } = self.method
                    && !self.ring.points.is_empty()
                {
                    a.hash = self.ring.find(crc32(k)) as u64;
                }
            }
            Key::None => {}
        }
        a
    }

    /// The peer for the next attempt, or `None` when every peer is down,
    /// failed or at its `max_conns` (nginx's `NGX_BUSY`: `no live
    /// upstreams`). `now` in seconds.
    pub fn get(&mut self, a: &mut Attempt, now: u64) -> Option<PeerId> {
        let id = match self.method {
            Method::RoundRobin => self.get_rr(a, now),
            Method::LeastConn => self.get_least_conn(a, now),
            Method::IpHash => self.get_ip_hash(a, now),
            Method::Hash { consistent: false } => self.get_hash(a, now),
            Method::Hash { consistent: true } => self.get_chash(a, now),
            Method::Random { two } => self.get_random(a, now, two),
        }?;
        a.current = Some(id);
        Some(id)
    }

    /// The attempt on its current peer ended (`free_round_robin_peer`):
    /// `failed` counts against the peer (connection refused, timeout, an
    /// answer `proxy_next_upstream` names); a success clears its failures.
    pub fn free(&mut self, a: &mut Attempt, failed: bool, now: u64) -> Freed {
        let Some(id) = a.current.take() else {
            return Freed::default();
        };
        let t = self.tier_mut(id.backup);
        t.sub_conn(id.index);
        let (c, s) = (&t.conf[id.index], &mut t.state[id.index]);
        if t.single {
            s.fails = 0;
            a.tries = 0;
            return Freed::default();
        }
        let mut freed = Freed::default();
        if failed {
            s.fails += 1;
            s.accessed = now;
            s.checked = now;
            // max_fails=0 counts nothing against the peer.
            if let Some(step) = c.weight.checked_div(c.max_fails) {
                s.effective_weight -= i64::from(step);
                freed.disabled = s.fails >= c.max_fails;
            }
            s.effective_weight = s.effective_weight.max(0);
        } else if s.accessed < s.checked {
            // A success after the failure window opened: the peer is live.
            s.fails = 0;
        }
        a.tries = a.tries.saturating_sub(1);
        freed
    }

    /// Round robin (`ngx_http_upstream_get_round_robin_peer`), then the
    /// backup tier when the primary has no peer left.
    fn get_rr(&mut self, a: &mut Attempt, now: u64) -> Option<PeerId> {
        loop {
            let backup = a.backup;
            let t = self.tier_mut(backup);
            let found = if t.single {
                (t.usable_single()).then_some(0)
            } else {
                smooth_pick(t, a, now, |_, _| true)
            };
            if let Some(i) = found {
                let t = self.tier_mut(backup);
                if t.single {
                    // nginx's shortcut: no window, no tried bit.
                    t.add_conn(i);
                } else {
                    t.take(i, now);
                    a.mark(i);
                }
                return Some(PeerId { backup, index: i });
            }
            if !self.next_tier(a) {
                return None;
            }
        }
    }

    /// Moves `a` to the backup tier, if there is one it has not tried.
    fn next_tier(&self, a: &mut Attempt) -> bool {
        if a.backup || self.backup.is_none() {
            return false;
        }
        a.backup = true;
        a.tried.clear();
        true
    }

    /// least_conn: the fewest attempts in progress per unit of weight, ties
    /// broken by smooth weighted round robin among the tied peers
    /// (`ngx_http_upstream_get_least_conn_peer`).
    fn get_least_conn(&mut self, a: &mut Attempt, now: u64) -> Option<PeerId> {
        if self.primary.single {
            return self.get_rr(a, now);
        }
        loop {
            let backup = a.backup;
            let t = self.tier_mut(backup);
            if let Some(i) = least_conn_pick(t, a, now) {
                t.take(i, now);
                a.mark(i);
                return Some(PeerId { backup, index: i });
            }
            if !self.next_tier(a) {
                return None;
            }
        }
    }

    /// ip_hash: a peer by the client's network (/24 for IPv4), rehashed on
    /// an unusable pick.
    fn get_ip_hash(&mut self, a: &mut Attempt, now: u64) -> Option<PeerId> {
        if a.picks > HASH_TRIES || self.primary.len() < 2 {
            return self.get_rr(a, now);
        }
        loop {
            a.hash = ip_hash_round(a.hash, &a.addr[..a.addr_len]);
            let i = by_weight(&self.primary, a.hash);
            if !a.is_tried(i) && self.primary.usable(i, now) {
                return Some(self.take_primary(a, i, now));
            }
            a.picks += 1;
            if a.picks > HASH_TRIES {
                return self.get_rr(a, now);
            }
        }
    }

    /// hash: Cache::Memcached's `((crc32([REHASH] KEY) >> 16) & 0x7fff) +
    /// PREV` modulo the total weight.
    fn get_hash(&mut self, a: &mut Attempt, now: u64) -> Option<PeerId> {
        if a.picks > HASH_TRIES || self.primary.len() < 2 || a.key.is_empty() {
            return self.get_rr(a, now);
        }
        loop {
            a.hash += memcached_hash(a.rehash, &a.key);
            a.rehash += 1;
            let i = by_weight(&self.primary, a.hash);
            if !a.is_tried(i) && self.primary.usable(i, now) {
                return Some(self.take_primary(a, i, now));
            }
            a.picks += 1;
            if a.picks > HASH_TRIES {
                return self.get_rr(a, now);
            }
        }
    }

    /// hash ... consistent: the ring's next point after the key's CRC-32;
    /// among the peers of that point's `server` line, smooth weighted round
    /// robin; an unusable point moves to the next one.
    fn get_chash(&mut self, a: &mut Attempt, now: u64) -> Option<PeerId> {
        if a.picks > HASH_TRIES || self.primary.single || a.key.is_empty() {
            return self.get_rr(a, now);
        }
        if self.ring.points.is_empty() {
            return None;
        }
        loop {
            let point = self.ring.points[(a.hash % self.ring.points.len() as u64) as usize];
            let server = &self.ring.servers[point.1];
            let t = &mut self.primary;
            if let Some(i) = smooth_pick(t, a, now, |c, _| c.server == *server) {
                return Some(self.take_primary(a, i, now));
            }
            a.hash += 1;
            a.picks += 1;
            if a.picks > HASH_TRIES {
                return self.get_rr(a, now);
            }
        }
    }

    /// random: a peer by weight at random; `two`: the less loaded (per
    /// weight) of two distinct random picks.
    fn get_random(&mut self, a: &mut Attempt, now: u64, two: bool) -> Option<PeerId> {
        if a.picks > HASH_TRIES || self.primary.len() < 2 {
            return self.get_rr(a, now);
        }
        let mut first: Option<usize> = None;
        loop {
            let i = self.peek_random();
            let fresh = first != Some(i) && !a.is_tried(i) && self.primary.usable(i, now);
            if fresh {
                match first {
                    Some(p) if two => {
                        let t = &self.primary;
                        let (cp, ci) = (t.conns(p), t.conns(i));
                        let (wp, wi) = (u64::from(t.conf[p].weight), u64::from(t.conf[i].weight));
                        let pick = if u64::from(ci) * wp > u64::from(cp) * wi {
                            p
                        } else {
                            i
                        };
                        return Some(self.take_primary(a, pick, now));
                    }
                    _ if !two => return Some(self.take_primary(a, i, now)),
                    _ => first = Some(i),
                }
            }
            a.picks += 1;
            if a.picks > HASH_TRIES {
                return self.get_rr(a, now);
            }
        }
    }

    fn take_primary(&mut self, a: &mut Attempt, i: usize, now: u64) -> PeerId {
        self.primary.take(i, now);
        a.mark(i);
        PeerId {
            backup: false,
            index: i,
        }
    }

    /// `ngx_http_upstream_peek_random_peer`: a random point of the total
    /// weight, found in the cumulative ranges.
    fn peek_random(&mut self) -> usize {
        // xorshift64: nginx uses random(3); any uniform source will do.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        let point = x % self.primary.total_weight.max(1);
        self.ranges
            .partition_point(|&r| r <= point)
            .saturating_sub(1)
    }
}

impl Tier {
    /// nginx's single-peer shortcut checks only `down` and `max_conns`.
    fn usable_single(&self) -> bool {
        let c = &self.conf[0];
        let full = c.max_conns > 0 && self.conns(0) >= c.max_conns;
        !c.down && !full
    }
}

/// The peer that total weight `hash` lands on, counting configured weights
/// in order (ip_hash and hash: `w = hash % total_weight`).
fn by_weight(t: &Tier, hash: u64) -> usize {
    let mut w = hash % t.total_weight.max(1);
    for (i, c) in t.conf.iter().enumerate() {
        let cw = u64::from(c.weight);
        if w < cw {
            return i;
        }
        w -= cw;
    }
    t.conf.len() - 1
}

/// nginx's smooth weighted round robin (`ngx_http_upstream_get_peer`) over
/// the usable, untried peers `keep` accepts: each adds its effective weight
/// to its current weight, the highest wins and gives back the total.
fn smooth_pick(
    t: &mut Tier,
    a: &Attempt,
    now: u64,
    keep: impl Fn(&crate::PeerConf, &crate::PeerState) -> bool,
) -> Option<usize> {
    let mut best: Option<(usize, i64)> = None;
    let mut total = 0i64;
    for i in 0..t.len() {
        if a.is_tried(i) || !t.usable(i, now) || !keep(&t.conf[i], &t.state[i]) {
            continue;
        }
        let current = reweigh(t, i, &mut total);
        if best.is_none_or(|(_, w)| current > w) {
            best = Some((i, current));
        }
    }
    let (b, _) = best?;
    t.state[b].current_weight -= total;
    Some(b)
}

/// One peer's step of the smooth weighted round robin: its current weight
/// grows by its effective weight (added to `total`), and a lowered
/// effective weight recovers by one towards the configured weight.
fn reweigh(t: &mut Tier, i: usize, total: &mut i64) -> i64 {
    let weight = i64::from(t.conf[i].weight);
    let s = &mut t.state[i];
    s.current_weight += s.effective_weight;
    *total += s.effective_weight;
    if s.effective_weight < weight {
        s.effective_weight += 1;
    }
    s.current_weight
}

/// least_conn's choice (see [`Upstream::get_least_conn`]).
fn least_conn_pick(t: &mut Tier, a: &Attempt, now: u64) -> Option<usize> {
    // conns_a / weight_a < conns_b / weight_b, without division.
    let less = |t: &Tier, x: usize, y: usize| {
        u64::from(t.conns(x)) * u64::from(t.conf[y].weight)
            < u64::from(t.conns(y)) * u64::from(t.conf[x].weight)
    };
    let same = |t: &Tier, x: usize, y: usize| !less(t, x, y) && !less(t, y, x);
    let mut best: Option<usize> = None;
    let mut many = false;
    for i in 0..t.len() {
        if a.is_tried(i) || !t.usable(i, now) {
            continue;
        }
        match best {
            Some(b) if !less(t, i, b) => many |= same(t, i, b),
            _ => {
                best = Some(i);
                many = false;
            }
        }
    }
    let mut b = best?;
    if many {
        // Round robin among the tied peers, from the first of them (its
        // weight counted too, as nginx's loop starts at `best`).
        let first = b;
        let mut total = 0i64;
        for i in first..t.len() {
            if a.is_tried(i) || !t.usable(i, now) || !same(t, i, first) {
                continue;
            }
            let current = reweigh(t, i, &mut total);
            if current > t.state[b].current_weight {
                b = i;
            }
        }
        t.state[b].current_weight -= total;
    }
    Some(b)
}

#[cfg(test)]
mod tests;
