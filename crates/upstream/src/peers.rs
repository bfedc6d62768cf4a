//! The peers of a group: their configuration (one per address of a
//! `server` line), their state in this worker, and the two tiers (primary,
//! `backup`) nginx keeps as `peers` and `peers->next`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::hash::ChashRing;

/// Attempts in progress on each peer of a tier, counted by every worker:
/// a group with `zone` keeps its peers' state in shared memory
/// (`ngx_http_upstream_zone_module`), so `max_conns`, `least_conn` and
/// `random two` see the connections of all the workers.
pub type SharedConns = Arc<[AtomicU32]>;

/// The shared counters of every zoned group alive, by the group's name,
/// its zone's and its peers' (a reload that changed the peers gets new
/// ones). Entries die with the last worker of their configuration.
type ConnsRegistry = Mutex<Vec<(String, Weak<[AtomicU32]>)>>;
static SHARED_CONNS: ConnsRegistry = Mutex::new(Vec::new());

/// The counters of `key` (made with `n` zeroes when none is alive).
fn shared_conns(key: &str, n: usize) -> SharedConns {
    let mut reg = SHARED_CONNS.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|(_, w)| w.strong_count() > 0);
    if let Some(c) = reg
        .iter()
        .find(|(k, _)| k == key)
        .and_then(|(_, w)| w.upgrade())
        .filter(|c| c.len() == n)
    {
        return c;
    }
    let c: SharedConns = (0..n).map(|_| AtomicU32::new(0)).collect();
    reg.push((key.to_string(), Arc::downgrade(&c)));
    c
}

/// One peer as configured: an address of a `server` line and the line's
/// parameters (nginx's defaults: weight 1, max_fails 1, fail_timeout 10s,
/// max_conns 0 = no limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerConf {
    /// The address, as nginx names the peer in logs (`127.0.0.1:8080`,
    /// `unix:/run/app.sock`).
    pub name: String,
    /// The `server` line's address as written (`backend.example:8080`):
    /// every address a name resolves to shares it, and the consistent hash
    /// places its points by it.
    pub server: String,
    pub weight: u32,
    pub max_fails: u32,
    /// Seconds.
    pub fail_timeout: u64,
    pub max_conns: u32,
    pub down: bool,
    pub backup: bool,
}

impl PeerConf {
    /// A peer with nginx's default parameters.
    pub fn new(name: &str) -> Self {
        PeerConf {
            name: name.to_string(),
            server: name.to_string(),
            weight: 1,
            max_fails: 1,
            fail_timeout: 10,
            max_conns: 0,
            down: false,
            backup: false,
        }
    }
}

/// A peer's state in this worker (`ngx_http_upstream_rr_peer_t`'s
/// counters).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerState {
    pub current_weight: i64,
    pub effective_weight: i64,
    /// Attempts in progress.
    pub conns: u32,
    /// Failures counted since the last success (reset as nginx resets it).
    pub fails: u32,
    /// When the last failure happened (seconds).
    pub accessed: u64,
    /// When the peer was last chosen or failed (seconds): the start of its
    /// `fail_timeout` window.
    pub checked: u64,
}

/// The balancing method of a group (the directive in its block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// No method directive: smooth weighted round robin.
    RoundRobin,
    /// `ip_hash`.
    IpHash,
    /// `hash KEY [consistent]`.
    Hash { consistent: bool },
    /// `least_conn`.
    LeastConn,
    /// `random [two [least_conn]]`.
    Random { two: bool },
}

/// The peers of one tier and what nginx precomputes for them.
#[derive(Debug, Clone)]
pub struct Tier {
    pub conf: Vec<PeerConf>,
    pub state: Vec<PeerState>,
    /// Sum of every peer's weight, `down` ones included (as nginx sums).
    pub total_weight: u64,
    /// Peers not `down`: the attempts this tier allows.
    pub tries: usize,
    /// One peer and no backup tier: nginx's `peers->single` shortcut.
    pub single: bool,
    /// The group's `zone`: the attempts of every worker.
    pub shared: Option<SharedConns>,
}

impl Tier {
    fn new(conf: Vec<PeerConf>) -> Self {
        let state = conf
            .iter()
            .map(|c| PeerState {
                effective_weight: i64::from(c.weight),
                ..PeerState::default()
            })
            .collect();
        Tier {
            total_weight: conf.iter().map(|c| u64::from(c.weight)).sum(),
            tries: conf.iter().filter(|c| !c.down).count(),
            single: conf.len() == 1,
            conf,
            state,
            shared: None,
        }
    }

    /// Attempts in progress on peer `i`: every worker's with a `zone`.
    pub fn conns(&self, i: usize) -> u32 {
        match &self.shared {
            Some(c) => c[i].load(Ordering::Relaxed),
            None => self.state[i].conns,
        }
    }

    /// One more attempt on peer `i`.
    pub(crate) fn add_conn(&mut self, i: usize) {
        self.state[i].conns += 1;
        if let Some(c) = &self.shared {
            c[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// An attempt on peer `i` ended.
    pub(crate) fn sub_conn(&mut self, i: usize) {
        let s = &mut self.state[i];
        // Only one this worker counted leaves the shared count.
        if s.conns > 0
            && let Some(c) = &self.shared
        {
            c[i].fetch_sub(1, Ordering::Relaxed);
        }
        s.conns = s.conns.saturating_sub(1);
    }

    pub fn len(&self) -> usize {
        self.conf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.conf.is_empty()
    }

    /// Whether peer `i` may be tried now: not `down`, not failed
    /// `max_fails` times within its `fail_timeout`, under its `max_conns`
    /// (the tests every method makes, in nginx's order).
    pub(crate) fn usable(&self, i: usize, now: u64) -> bool {
        let (c, s) = (&self.conf[i], &self.state[i]);
        let resting = c.max_fails > 0
            && s.fails >= c.max_fails
            && now.saturating_sub(s.checked) <= c.fail_timeout;
        let full = c.max_conns > 0 && self.conns(i) >= c.max_conns;
        !c.down && !resting && !full
    }

    /// Peer `i` is chosen: one more attempt in progress, and the start of
    /// a new `fail_timeout` window once the old one is over.
    pub(crate) fn take(&mut self, i: usize, now: u64) {
        self.add_conn(i);
        let (c, s) = (&self.conf[i], &mut self.state[i]);
        if now.saturating_sub(s.checked) > c.fail_timeout {
            s.checked = now;
        }
    }
}

/// Which tier and which peer in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerId {
    pub backup: bool,
    pub index: usize,
}

/// A configuration the balancer cannot work with, in nginx's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// `ngx_http_upstream_init_round_robin`.
    #[error("no servers in upstream \"{0}\"")]
    NoServers(String),
    #[error("invalid parameter \"{0}\"")]
    Invalid(String),
}

/// One `upstream { }` group in one worker.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub name: String,
    pub method: Method,
    pub primary: Tier,
    /// The `backup` peers (round robin and least_conn only).
    pub backup: Option<Tier>,
    pub(crate) ring: ChashRing,
    /// Random's cumulative weights (`ngx_http_upstream_update_random`).
    pub(crate) ranges: Vec<u64>,
    pub(crate) rng: u64,
}

impl Upstream {
    /// The group of `peers` balanced by `method`; `seed` starts random's
    /// generator (give each worker its own).
    pub fn new(
        name: &str,
        peers: Vec<PeerConf>,
        method: Method,
        seed: u64,
    ) -> Result<Self, UpstreamError> {
        // `backup` with a hash method is refused by the configuration only
        // when the method comes first (nginx checks the flags as it reads
        // each `server`); otherwise the backups serve the method's round
        // robin fallback, as nginx's `peers->next`.
        if peers.iter().any(|p| p.weight == 0) {
            return Err(UpstreamError::Invalid("weight=0".into()));
        }
        let (backup, primary): (Vec<_>, Vec<_>) = peers.into_iter().partition(|p| p.backup);
        if primary.is_empty() {
            return Err(UpstreamError::NoServers(name.to_string()));
        }
        let mut primary = Tier::new(primary);
        // nginx clears `single` on both tiers when there is a backup one.
        let backup = (!backup.is_empty()).then(|| Tier {
            single: false,
            ..Tier::new(backup)
        });
        if backup.is_some() {
            primary.single = false;
        }
        let ring = match method {
            Method::Hash { consistent: true } => ChashRing::new(&primary.conf),
            _ => ChashRing::default(),
        };
        let ranges = primary
            .conf
            .iter()
            .scan(0u64, |acc, c| {
                let start = *acc;
                *acc += u64::from(c.weight);
                Some(start)
            })
            .collect();
        Ok(Upstream {
            name: name.to_string(),
            method,
            primary,
            backup,
            ring,
            ranges,
            rng: seed | 1,
        })
    }

    /// The attempts a request may make: every peer not `down`, in both
    /// tiers (`ngx_http_upstream_tries`).
    /// Counts the peers' attempts with every other worker's group of the
    /// same `zone` (`zone` is the zone's name).
    pub fn share(&mut self, zone: &str) {
        let name = self.name.clone();
        let key = |t: &Tier, tier: &str| {
            let names: Vec<&str> = t.conf.iter().map(|c| c.name.as_str()).collect();
            format!("{zone}\0{name}\0{tier}\0{}", names.join(" "))
        };
        let k = key(&self.primary, "primary");
        self.primary.shared = Some(shared_conns(&k, self.primary.len()));
        if let Some(b) = &self.backup {
            let k = key(b, "backup");
            let c = shared_conns(&k, b.len());
            if let Some(b) = self.backup.as_mut() {
                b.shared = Some(c);
            }
        }
    }

    pub fn tries(&self) -> usize {
        self.primary.tries + self.backup.as_ref().map_or(0, |b| b.tries)
    }

    pub fn tier(&self, backup: bool) -> &Tier {
        match (backup, &self.backup) {
            (true, Some(b)) => b,
            _ => &self.primary,
        }
    }

    pub(crate) fn tier_mut(&mut self, backup: bool) -> &mut Tier {
        match (backup, &mut self.backup) {
            (true, Some(b)) => b,
            _ => &mut self.primary,
        }
    }

    pub fn peer(&self, id: PeerId) -> (&PeerConf, &PeerState) {
        let t = self.tier(id.backup);
        (&t.conf[id.index], &t.state[id.index])
    }
}
