//! A fast, non-cryptographic hasher (the rustc/Firefox "Fx" hash) for maps
//! whose keys come from the configuration (server names, exact locations)
//! or from files that exist (the memory cache): probing them with request
//! data cannot grow them, so SipHash's flood resistance buys nothing there
//! and its cost shows on every request. A map that requests can fill (the
//! open file cache when some location has `open_file_cache_errors on`,
//! which caches the paths that do not exist) keeps SipHash: [`PathBuild`]
//! picks one of the two when the worker starts.

use std::hash::{BuildHasherDefault, Hasher};

/// The multiplier of rustc's FxHasher.
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The rotation `finish` applies (rustc-hash 2's): the multiply mixes
/// upwards only, and hashbrown picks the bucket from the low bits.
const FINISH_ROTATE: u32 = 26;

#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    pub(crate) fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }

    /// Folds in every byte of `bytes`, not their length (callers add it:
    /// keys of different lengths may fold alike). Eight bytes or more:
    /// the first word, the whole words after it, and the last word,
    /// which overlaps them; so a key of up to 16 bytes (most URIs and
    /// many paths) costs two loads and no loop.
    #[inline]
    pub(crate) fn add_bytes(&mut self, bytes: &[u8]) {
        let (Some(first), Some(last)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) else {
            if !bytes.is_empty() {
                self.add(tail_word(bytes));
            }
            return;
        };
        self.add(u64::from_le_bytes(*first));
        let mut mid = bytes.get(8..).unwrap_or_default();
        while mid.len() > 8 {
            let Some((word, rest)) = mid.split_first_chunk::<8>() else {
                break;
            };
            self.add(u64::from_le_bytes(*word));
            mid = rest;
        }
        self.add(u64::from_le_bytes(*last));
    }
}

/// A key of 1 to 7 bytes as one word, read in place (copying them into a
/// zeroed word costs a `memcpy` call per key): the first and last four
/// bytes overlapping, or for up to three the first, middle and last with
/// the length. Keys of one length never share a word.
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    if let (Some(a), Some(b)) = (rest.first_chunk::<4>(), rest.last_chunk::<4>()) {
        return u64::from(u32::from_le_bytes(*a)) | u64::from(u32::from_le_bytes(*b)) << 32;
    }
    match rest {
        [] => 0,
        [first, ..] => {
            let mid = rest.get(rest.len() / 2).copied().unwrap_or(0);
            let last = rest.last().copied().unwrap_or(0);
            u64::from(*first)
                | u64::from(mid) << 8
                | u64::from(last) << 16
                | (rest.len() as u64) << 24
        }
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.add(bytes.len() as u64);
        self.add_bytes(bytes);
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.hash.rotate_left(FINISH_ROTATE)
    }
}

/// `HashMap<K, V, FxBuild>`.
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
pub(crate) type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;

/// The open file cache's hasher, chosen once from the configuration:
/// `Fx` when only files that exist can become keys, SipHash (randomly
/// keyed, flood resistant) when requests can add keys of their choosing.
/// SipHash costs about 500 instructions on a typical path, Fx about 30.
#[derive(Clone, Debug)]
pub(crate) enum PathBuild {
    Fx,
    Sip(std::hash::RandomState),
}

impl PathBuild {
    pub(crate) fn new(request_filled: bool) -> Self {
        if request_filled {
            PathBuild::Sip(std::hash::RandomState::new())
        } else {
            PathBuild::Fx
        }
    }
}

impl Default for PathBuild {
    /// The safe choice when nothing says otherwise.
    fn default() -> Self {
        PathBuild::new(true)
    }
}

impl std::hash::BuildHasher for PathBuild {
    type Hasher = PathHasher;

    #[inline]
    fn build_hasher(&self) -> PathHasher {
        match self {
            PathBuild::Fx => PathHasher::Fx(FxHasher::default()),
            PathBuild::Sip(s) => PathHasher::Sip(s.build_hasher()),
        }
    }
}

/// The hasher [`PathBuild`] builds.
pub(crate) enum PathHasher {
    Fx(FxHasher),
    Sip(std::hash::DefaultHasher),
}

impl Hasher for PathHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        match self {
            PathHasher::Fx(h) => h.write(bytes),
            PathHasher::Sip(h) => h.write(bytes),
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        match self {
            PathHasher::Fx(h) => h.write_u8(i),
            PathHasher::Sip(h) => h.write_u8(i),
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        match self {
            PathHasher::Fx(h) => h.finish(),
            PathHasher::Sip(h) => h.finish(),
        }
    }
}

/// A hasher for keys that are already hashes ([`KeyMap`]): a `u64` is
/// taken as is. (`write` is the trait's required method; a `u64` key never
/// calls it, and it folds bytes as [`FxHasher`] does.)
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher {
    hash: u64,
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut fx = FxHasher { hash: self.hash };
        fx.write(bytes);
        self.hash = fx.finish();
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.hash = i;
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A map keyed by a precomputed 64-bit hash: a probe compares one word,
/// and the caller checks the entry is the one it meant (two keys may share
/// a hash).
pub(crate) type KeyMap<V> = std::collections::HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> u64 {
        let mut x = FxHasher::default();
        x.write(s.as_bytes());
        x.finish()
    }

    #[test]
    fn distinguishes_keys_and_is_deterministic() {
        let mut m: FxHashMap<String, usize> = FxHashMap::default();
        for i in 0..1000 {
            m.insert(format!("/path/{i}"), i);
        }
        for i in 0..1000 {
            assert_eq!(m.get(format!("/path/{i}").as_str()), Some(&i));
        }
        assert_eq!(h("abc"), h("abc"));
        assert_ne!(h("abc"), h("abd"));
        assert_ne!(h("abcdefgh1"), h("abcdefgh2"));
    }

    /// Every byte counts, at every length around the word sizes, and the
    /// length itself.
    #[test]
    fn every_byte_counts() {
        for len in 1..=40 {
            let base = vec![b'a'; len];
            let whole = h(std::str::from_utf8(&base).unwrap());
            for i in 0..len {
                let mut other = base.clone();
                other[i] = b'b';
                assert_ne!(h(std::str::from_utf8(&other).unwrap()), whole, "{len} {i}");
            }
        }
        assert_ne!(h("a"), h("aa"));
        assert_ne!(h("ab"), h("abb"));
        assert_ne!(h("abcdefgh"), h("abcdefghabcdefgh"));
        assert_ne!(h("aaaaaaaaa"), h("aaaaaaaaaa"));
    }

    #[test]
    fn key_map_takes_the_key_as_its_hash() {
        let mut k = KeyHasher::default();
        k.write_u64(0x1234);
        assert_eq!(k.finish(), 0x1234);
    }
}
