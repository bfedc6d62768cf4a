//! `$request_id` when the engine gives none: nginx prints 16 random bytes
//! as 32 lowercase hex digits (`RAND_bytes`). Ids only need to be unique
//! and unpredictable enough to correlate lines, not secret: a per-worker
//! xorshift generator seeded from the kernel's random source.

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes read from `/dev/urandom` for the seed.
const SEED_BYTES: usize = 16;

/// A worker's id generator (xorshift128+).
#[derive(Debug, Clone)]
pub(crate) struct RequestIds {
    s: [u64; 2],
}

impl RequestIds {
    pub(crate) fn new() -> RequestIds {
        let mut seed = [0u8; SEED_BYTES];
        let ok = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut seed))
            .is_ok();
        if !ok {
            // No urandom (chroot): time and thread id still differ per worker.
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            seed = (t ^ (u128::from(crate::errlog::thread_id()) << 64)).to_le_bytes();
        }
        let (a, b) = seed.split_at(8);
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        // xorshift must not start from all zeros.
        RequestIds {
            s: [word(a) | 1, word(b)],
        }
    }

    fn next_u64(&mut self) -> u64 {
        let [mut x, y] = self.s;
        self.s[0] = y;
        x ^= x << 23;
        self.s[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
        self.s[1].wrapping_add(y)
    }

    /// Fills `out` with a fresh id.
    pub(crate) fn next_hex(&mut self, out: &mut [u8; 32]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bytes = [self.next_u64().to_le_bytes(), self.next_u64().to_le_bytes()];
        for (i, b) in bytes.iter().flatten().enumerate() {
            out[2 * i] = HEX[usize::from(b >> 4)];
            out[2 * i + 1] = HEX[usize::from(b & 15)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_hex_and_distinct() {
        let mut g = RequestIds::new();
        let mut seen = HashSet::new();
        for _ in 0..10_000 {
            let mut id = [0u8; 32];
            g.next_hex(&mut id);
            assert!(
                id.iter()
                    .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
            );
            assert!(seen.insert(id));
        }
        // Two workers do not repeat each other.
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        RequestIds::new().next_hex(&mut a);
        RequestIds::new().next_hex(&mut b);
        assert_ne!(a, b);
    }
}
