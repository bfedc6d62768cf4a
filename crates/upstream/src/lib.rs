//! Which upstream server (peer) gets the next attempt of a proxied request,
//! as nginx's `ngx_http_upstream_round_robin.c` and its balancer modules
//! (`ip_hash`, `hash`, `hash ... consistent`, `least_conn`, `random`)
//! choose it, and how an attempt's outcome counts against the peer
//! (`max_fails`, `fail_timeout`, `max_conns`, `backup`, `down`).
//!
//! Owns: the peers of one `upstream { }` group and their per-worker state
//! ([`Upstream`]); the per-request state of its attempts ([`Attempt`]: the
//! peers tried, the tries left, the hash state); the methods' arithmetic,
//! kept as nginx's so that a group balances the same keys to the same
//! servers after a move from nginx (ip_hash's 113/6271 hash, `hash`'s
//! Cache::Memcached formula, the consistent hash's 160 points per weight
//! with Cache::Memcached::Fast's point hashes, the smooth weighted round
//! robin).
//!
//! Does not own: connections, timers or DNS (the engine), the directives'
//! syntax (conf), computing a `hash` key from variables (core), logging
//! (the caller logs nginx's `upstream server temporarily disabled` when
//! [`Freed::disabled`] says so).
//!
//! State is per worker, as nginx's is per worker process without a `zone`:
//! an `Upstream` is owned by one event loop, and nothing here is shared or
//! locked. Time is given by the caller in whole seconds (nginx's
//! `ngx_time()`), so the crate is pure and its tests run without a clock.
//!
//! Hand-written: balancing crates do not reproduce nginx's choices, and a
//! drop-in must (consistent hashing that moved keys after a migration
//! would empty every cache behind it).

#![forbid(unsafe_code)]

mod hash;
mod methods;
mod peers;

pub use methods::{Attempt, Freed, Key};
pub use peers::Method;
pub use peers::{PeerConf, PeerId, PeerState, Tier, Upstream, UpstreamError};

/// After this many picks that land on unusable peers, the hash, ip_hash
/// and random methods fall back to round robin (nginx's literal 20 in each
/// of those modules).
pub const HASH_TRIES: u32 = 20;

/// Points on the consistent-hash ring per unit of weight
/// (`ngx_http_upstream_update_chash`: `weight * 160`, as
/// Cache::Memcached::Fast).
pub const CHASH_POINTS_PER_WEIGHT: u32 = 160;
