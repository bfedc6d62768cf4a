//! The hashes of the hash methods, bit for bit as nginx computes them:
//! `ip_hash`'s (`ngx_http_upstream_get_ip_hash_peer`), `hash`'s
//! Cache::Memcached-compatible rehashing and the consistent hash's ring
//! (`ngx_http_upstream_update_chash`, Cache::Memcached::Fast's points).
//! nginx's `ngx_crc32_*` is the IEEE CRC-32 crc32fast computes.

use crate::CHASH_POINTS_PER_WEIGHT;

/// ip_hash's starting value and its two constants.
pub(crate) const IP_HASH_START: u64 = 89;
const IP_HASH_MUL: u64 = 113;
const IP_HASH_MOD: u64 = 6271;

/// One round of ip_hash over the address bytes (the first three octets of
/// an IPv4 address, all sixteen of an IPv6 one).
pub(crate) fn ip_hash_round(mut hash: u64, addr: &[u8]) -> u64 {
    for &b in addr {
        hash = (hash * IP_HASH_MUL + u64::from(b)) % IP_HASH_MOD;
    }
    hash
}

/// `hash`'s value for round `rehash` of `key`:
/// `(crc32([REHASH] KEY) >> 16) & 0x7fff`, with REHASH (its decimal text)
/// omitted in round 0; the caller adds it to the previous value.
pub(crate) fn memcached_hash(rehash: u32, key: &[u8]) -> u64 {
    let mut h = crc32fast::Hasher::new();
    if rehash > 0 {
        h.update(rehash.to_string().as_bytes());
    }
    h.update(key);
    u64::from((h.finalize() >> 16) & 0x7fff)
}

/// The CRC-32 of a key (`ngx_crc32_long`): where on the ring it lands.
pub(crate) fn crc32(key: &[u8]) -> u32 {
    crc32fast::hash(key)
}

/// The consistent hash's ring: every `server` line's points, sorted, one
/// point per hash value (see `new` for which of two colliding points).
#[derive(Debug, Clone, Default)]
pub(crate) struct ChashRing {
    /// (point hash, index into `servers`), sorted by hash.
    pub points: Vec<(u32, usize)>,
    /// The distinct `server` texts the points name.
    pub servers: Vec<String>,
}

/// A `server` line's address split as nginx splits it for the ring: a
/// `unix:` path whole, else a trailing `:digits` is the port.
fn host_port(server: &str) -> (&str, &str) {
    if server.len() >= 5 && server[..5].eq_ignore_ascii_case("unix:") {
        return (&server[5..], "");
    }
    let digits = server.bytes().rev().take_while(u8::is_ascii_digit).count();
    let cut = server.len() - digits;
    if cut > 0 && server.as_bytes()[cut - 1] == b':' {
        return (&server[..cut - 1], &server[cut..]);
    }
    (server, "")
}

impl ChashRing {
    /// `weight * 160` points per peer: point `j` is
    /// `crc32(HOST \0 PORT PREV)`, PREV the previous point's hash as four
    /// little-endian bytes (0 for the first).
    pub(crate) fn new(peers: &[crate::PeerConf]) -> Self {
        let mut ring = ChashRing::default();
        for c in peers {
            let id = match ring.servers.iter().position(|s| *s == c.server) {
                Some(i) => i,
                None => {
                    ring.servers.push(c.server.clone());
                    ring.servers.len() - 1
                }
            };
            let (host, port) = host_port(&c.server);
            let mut base = crc32fast::Hasher::new();
            base.update(host.as_bytes());
            base.update(b"\0");
            base.update(port.as_bytes());
            let mut prev = 0u32;
            for _ in 0..c.weight * CHASH_POINTS_PER_WEIGHT {
                let mut h = base.clone();
                h.update(&prev.to_le_bytes());
                prev = h.finalize();
                ring.points.push((prev, id));
            }
        }
        // nginx sorts by hash (ngx_qsort, not stable) and keeps the first
        // of equal hashes, whichever that is; sorting by (hash, server)
        // makes the choice among colliding points deterministic.
        ring.points.sort_unstable();
        ring.points.dedup_by_key(|p| p.0);
        ring
    }

    /// The index of the first point at or after `hash`
    /// (`ngx_http_upstream_find_chash_point`; may be `points.len()`, which
    /// the caller wraps).
    pub(crate) fn find(&self, hash: u32) -> usize {
        self.points.partition_point(|p| p.0 < hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_hash_of_loopback_by_hand() {
        // 89 -> (89*113+127) % 6271 = 3913 -> 3913*113 % 6271 = 3199
        //    -> 3199*113 % 6271 = 4040.
        assert_eq!(ip_hash_round(IP_HASH_START, &[127, 0, 0]), 4040);
    }

    #[test]
    fn memcached_hash_is_the_top_bits_of_crc32() {
        // crc32("abc") = 0x352441c2 (the CRC-32 check value of "abc").
        assert_eq!(crc32(b"abc"), 0x3524_41c2);
        assert_eq!(memcached_hash(0, b"abc"), 0x3524 & 0x7fff);
        // Round 1 hashes "1abc".
        assert_eq!(
            memcached_hash(1, b"abc"),
            u64::from((crc32(b"1abc") >> 16) & 0x7fff)
        );
    }

    #[test]
    fn host_port_as_nginx_splits() {
        assert_eq!(host_port("10.0.0.1:8080"), ("10.0.0.1", "8080"));
        assert_eq!(host_port("backend"), ("backend", ""));
        assert_eq!(host_port("unix:/run/a.sock"), ("/run/a.sock", ""));
        assert_eq!(host_port("[::1]:81"), ("[::1]", "81"));
        assert_eq!(host_port("host:"), ("host", ""));
    }
}
