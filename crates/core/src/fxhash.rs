//! A fast, non-cryptographic hasher (the rustc/Firefox "Fx" hash) for maps
//! whose keys come from the configuration (server names, exact locations)
//! or from files that exist (the memory cache): probing them with request
//! data cannot grow them, so SipHash's flood resistance buys nothing there
//! and its cost shows on every request. Maps that requests can fill (the
//! open file cache with `open_file_cache_errors`) keep SipHash.

use std::hash::{BuildHasherDefault, Hasher};

/// The multiplier of rustc's FxHasher.
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `HashMap<K, V, FxBuild>`.
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
pub(crate) type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinguishes_keys_and_is_deterministic() {
        let mut m: FxHashMap<String, usize> = FxHashMap::default();
        for i in 0..1000 {
            m.insert(format!("/path/{i}"), i);
        }
        for i in 0..1000 {
            assert_eq!(m.get(format!("/path/{i}").as_str()), Some(&i));
        }
        let h = |s: &str| {
            let mut x = FxHasher::default();
            x.write(s.as_bytes());
            x.finish()
        };
        assert_eq!(h("abc"), h("abc"));
        assert_ne!(h("abc"), h("abd"));
        assert_ne!(h("abcdefgh1"), h("abcdefgh2"));
    }
}
