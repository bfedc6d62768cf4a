//! Peregrine's per-worker memory cache for small static files
//! (`memory_cache size=... max_file=...`): the body as `Arc<[u8]>` and the
//! 200 head's fields (serialized once by the HTTP/1 writer), so a hit costs neither a system call nor an
//! allocation. An entry is trusted for `open_file_cache_valid`, then
//! re-checked with one `stat`: a different inode, size or mtime drops it and
//! the new content is served (and cached again).
//!
//! Eviction is least-recently-used by a scan when an insert overflows
//! `size`: inserts happen only on misses of files no larger than
//! `max_file`, so the scan stays off the hit path.
//!
//! An entry also holds its compressed variants ([`Variant`], made by
//! `compress_variant`): a file is compressed once per coding, level and
//! `Vary`, and the variants live and die with the entry, so a changed file
//! (new inode, size or mtime at revalidation) drops them with its body.
//! Their bytes count against the same `size` budget.

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use peregrine_codec::fields::SharedFields;
use peregrine_compress::Coding;

use crate::fxhash::FxHashMap;

/// A compressed 200 of an entry's body, ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Variant {
    pub coding: Coding,
    pub level: i32,
    /// The head says `Vary: Accept-Encoding`.
    pub vary: bool,
    /// Head fields with `Transfer-Encoding: chunked` (HTTP/1.1 GET).
    pub head_chunked: Arc<SharedFields>,
    /// Head fields without it (HEAD, HTTP/1.0).
    pub head_plain: Arc<SharedFields>,
    /// The compressed body.
    pub body: Arc<[u8]>,
}

/// A cached 200 response for one file under one location's settings.
///
/// `repr(C)`, aligned to a cache line: a hit reads the fields up to `size`
/// (within two lines: the layout test holds it); the rest serves misses
/// and revalidation.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(crate) struct MemEntry {
    /// Which insert made it (unique per cache): a slot index found earlier
    /// (the fast path's routes) still names this entry only if the stamp
    /// matches, as slots are reused.
    pub stamp: u64,
    checked: SystemTime,
    /// `checked` + `valid`, computed when `checked` is set so that a hit
    /// compares two times instead of subtracting them; `None` when the sum
    /// is past what `SystemTime` holds (fresh for as long as the clock
    /// does not go back).
    fresh_until: Option<SystemTime>,
    used: SystemTime,
    /// Head fields for a GET/HEAD 200 (the HTTP/1 writer keeps their
    /// serialization with them).
    pub head: Arc<SharedFields>,
    pub body: Arc<[u8]>,
    pub size: u64,
    /// `body` is the file. `false`: an entry kept only for its compressed
    /// variants (a file above `max_file`; `body` is empty, `size` is the
    /// file's).
    pub whole: bool,
    /// The location settings the head was built with (by address).
    pub conf_id: usize,
    /// The URI extension the head's Content-Type came from: URIs with
    /// other extensions can reach the same file in the same location (a
    /// regex location whose `alias` names one file), and their answers
    /// must carry their own type (nginx's `ngx_http_set_exten`).
    pub exten: Box<str>,
    pub mtime: i64,
    pub ino: u64,
    pub dev: u64,
    pub variants: Vec<Variant>,
    /// The owner's `open_file_cache_valid` (one per entry: the owner's
    /// settings are immutable and held by the worker's configuration).
    valid: Duration,
}

impl MemEntry {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        body: Arc<[u8]>,
        head: Arc<SharedFields>,
        owner: Owner<'_>,
        mtime: i64,
        ino: u64,
        dev: u64,
        now: SystemTime,
        valid: Duration,
    ) -> MemEntry {
        MemEntry {
            size: body.len() as u64,
            body,
            head,
            conf_id: owner.conf_id,
            exten: owner.exten.into(),
            mtime,
            ino,
            dev,
            variants: Vec::new(),
            whole: true,
            stamp: 0,
            checked: now,
            fresh_until: now.checked_add(valid),
            valid,
            used: now,
        }
    }

    /// Trusted without a `stat` at `now`: less than `valid` after the last
    /// check, and not before it (a clock that went back revalidates).
    /// Equal to `now - checked < valid`, without the subtraction.
    #[inline]
    fn fresh(&self, now: SystemTime) -> bool {
        now >= self.checked && self.fresh_until.is_none_or(|until| now < until)
    }

    /// Checked (and found unchanged) at `now`.
    fn checked_at(&mut self, now: SystemTime) {
        self.checked = now;
        self.fresh_until = now.checked_add(self.valid);
    }

    /// The file at `path` is still the one this entry holds.
    fn same_file(&self, path: &str) -> bool {
        std::fs::metadata(path).is_ok_and(|m| {
            m.is_file()
                && m.ino() == self.ino
                && m.dev() == self.dev
                && m.len() == self.size
                && m.mtime() == self.mtime
        })
    }

    /// The bytes this entry holds: the body and every variant's body.
    fn bytes(&self) -> usize {
        self.body.len() + self.variants.iter().map(|v| v.body.len()).sum::<usize>()
    }

    /// The variant for `coding` at `level` with or without `Vary`.
    pub(crate) fn variant(&self, coding: Coding, level: i32, vary: bool) -> Option<&Variant> {
        self.variants
            .iter()
            .find(|v| v.coding == coding && v.level == level && v.vary == vary)
    }
}

/// Who an entry's head was built for: the location settings (by address)
/// and the URI's extension (which chose the Content-Type).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner<'a> {
    pub conf_id: usize,
    pub exten: &'a str,
}

impl Owner<'_> {
    /// Types are looked up by the lowercased extension, so the case of the
    /// extension does not change the head.
    fn owns(&self, e: &MemEntry) -> bool {
        e.conf_id == self.conf_id && e.exten.eq_ignore_ascii_case(self.exten)
    }
}

/// `repr(C)`: a route's hit reads `slots` and `hits` only (first, see
/// [`crate::HttpCore`]).
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct MemCache {
    slots: Vec<Option<MemEntry>>,
    /// Lookups answered from memory, and not (for the metrics).
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    /// Path → index in `slots`. The entries live beside the map so that a
    /// hit is one hash probe: the index is a copy, and the entry can then be
    /// updated and returned (a borrow taken from the map itself and returned
    /// on one path only keeps the map borrowed on the others, so the stale
    /// path's removal forced a second probe).
    map: FxHashMap<Box<str>, usize>,
    /// Indices of empty slots.
    free: Vec<usize>,
    total: usize,
    /// The stamp of the next insert.
    next_stamp: u64,
    /// `stat` calls made to revalidate (tests: a fresh hit makes none).
    pub(crate) syscalls: u64,
    /// Bodies compressed into variants (tests: a cached variant is made
    /// once).
    pub(crate) compressions: u64,
}

impl MemCache {
    /// A usable entry for `path` built for `owner`, revalidating it with a
    /// `stat` when older than its `valid`.
    pub(crate) fn get(
        &mut self,
        path: &str,
        owner: Owner<'_>,
        now: SystemTime,
    ) -> Option<&MemEntry> {
        let found = self.map.get(path).copied();
        let Some(i) = found.filter(|&i| self.entry(i).is_some_and(|e| owner.owns(e))) else {
            self.misses += 1;
            return None;
        };
        if self.use_slot(i, path, now).is_none() {
            self.misses += 1;
            return None;
        }
        self.entry(i)
    }

    /// The entry in slot `i` if it is still the one stamped `stamp` (for
    /// `path`), revalidated as [`MemCache::get`] does. A miss is not
    /// counted: the caller then asks [`MemCache::get`], which counts it.
    #[inline]
    pub(crate) fn get_slot(
        &mut self,
        i: usize,
        stamp: u64,
        path: &str,
        now: SystemTime,
    ) -> Option<&MemEntry> {
        self.entry(i).filter(|e| e.stamp == stamp)?;
        self.use_slot(i, path, now)
    }

    /// Slot `i` (and the stamp of its entry) if `path` is cached.
    pub(crate) fn slot(&self, path: &str) -> Option<(usize, u64)> {
        let i = *self.map.get(path)?;
        Some((i, self.entry(i)?.stamp))
    }

    /// Marks the entry in slot `i` used, after a `stat` of `path` when it
    /// is older than its `valid`; drops it (`None`) when the file changed.
    #[inline]
    fn use_slot(&mut self, i: usize, path: &str, now: SystemTime) -> Option<&MemEntry> {
        // Indexing, not hashing: the slot is read, then written.
        if !self.entry(i)?.fresh(now) && !self.revalidate(i, path, now) {
            return None;
        }
        let e = self.slots.get_mut(i)?.as_mut()?;
        e.used = now;
        self.hits += 1;
        Some(e)
    }

    /// The `stat` of a stale entry: `true` (and checked again) when the
    /// file is unchanged, else the entry is dropped.
    #[cold]
    fn revalidate(&mut self, i: usize, path: &str, now: SystemTime) -> bool {
        self.syscalls += 1;
        let Some(e) = self.slots.get_mut(i).and_then(Option::as_mut) else {
            return false;
        };
        if e.same_file(path) {
            e.checked_at(now);
            return true;
        }
        self.remove(path);
        false
    }

    fn entry(&self, i: usize) -> Option<&MemEntry> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    /// An entry for `path` built for `conf_id` is held (not revalidated:
    /// for after a [`MemCache::get`] that declined to answer).
    pub(crate) fn holds(&self, path: &str, owner: Owner<'_>) -> bool {
        self.map
            .get(path)
            .and_then(|&i| self.entry(i))
            .is_some_and(|e| owner.owns(e))
    }

    fn remove(&mut self, path: &str) {
        if let Some(i) = self.map.remove(path)
            && let Some(old) = self.slots.get_mut(i).and_then(Option::take)
        {
            self.total -= old.bytes();
            self.free.push(i);
        }
    }

    /// Evicts least recently used entries other than `keep` until `len`
    /// more bytes fit within `limit`; `false` when they cannot.
    fn make_room(&mut self, len: usize, limit: usize, keep: &str) -> bool {
        while self.total + len > limit {
            let Some(oldest) = self
                .map
                .iter()
                .filter(|(k, _)| &***k != keep)
                .filter_map(|(k, &i)| Some((k, self.entry(i)?.used)))
                .min_by_key(|&(_, used)| used)
                .map(|(k, _)| k.clone())
            else {
                return false;
            };
            self.remove(&oldest);
        }
        true
    }

    /// Inserts, evicting least recently used entries to stay within `limit`.
    pub(crate) fn insert(&mut self, path: &str, mut entry: MemEntry, limit: usize) {
        let len = entry.bytes();
        entry.stamp = self.next_stamp;
        self.next_stamp += 1;
        self.remove(path);
        if len > limit || !self.make_room(len, limit, path) {
            return;
        }
        self.total += len;
        let i = crate::slots::put(&mut self.slots, &mut self.free, entry);
        self.map.insert(path.into(), i);
    }

    /// Adds a compressed variant to `path`'s entry (if it is still cached),
    /// evicting other entries to stay within `limit`.
    pub(crate) fn add_variant(&mut self, path: &str, variant: Variant, limit: usize) {
        let len = variant.body.len();
        if !self.map.contains_key(path) || !self.make_room(len, limit, path) {
            return;
        }
        if let Some(&i) = self.map.get(path)
            && let Some(e) = self.slots.get_mut(i).and_then(Option::as_mut)
        {
            e.variants.push(variant);
            self.total += len;
        }
    }

    #[cfg(test)]
    pub(crate) fn total(&self) -> usize {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::TestDir;

    /// The entries' `open_file_cache_valid`.
    const VALID: Duration = Duration::from_secs(60);

    fn own(conf_id: usize) -> Owner<'static> {
        Owner {
            conf_id,
            exten: "txt",
        }
    }

    fn entry(path: &str, body: &[u8], now: SystemTime) -> MemEntry {
        let m = std::fs::metadata(path).unwrap();
        MemEntry::new(
            body.into(),
            Arc::new(SharedFields::default()),
            Owner {
                conf_id: 7,
                exten: "txt",
            },
            m.mtime(),
            m.ino(),
            m.dev(),
            now,
            VALID,
        )
    }

    #[test]
    fn fresh_hit_no_syscall_then_revalidate_and_drop_on_change() {
        let d = TestDir::new("mcache");
        let p = d.file("a", b"abc");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut c = MemCache::default();
        c.insert(&p, entry(&p, b"abc", t0), 100);
        assert_eq!(&*c.get(&p, own(7), t0).unwrap().body, b"abc");
        assert!(c.get(&p, own(8), t0).is_none(), "other location settings");
        assert_eq!(c.syscalls, 0);
        assert!(c.get(&p, own(7), t0 + Duration::from_secs(61)).is_some());
        assert_eq!(c.syscalls, 1);
        std::fs::write(&p, b"abcd").unwrap();
        assert!(c.get(&p, own(7), t0 + Duration::from_secs(200)).is_none());
        assert_eq!(c.total(), 0);
    }

    #[test]
    fn size_limit_evicts_lru() {
        let d = TestDir::new("mcache-lru");
        let (a, b, x) = (d.file("a", b"11"), d.file("b", b"22"), d.file("c", b"33"));
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut c = MemCache::default();
        c.insert(&a, entry(&a, b"11", t0), 4);
        c.insert(&b, entry(&b, b"22", t0 + Duration::from_secs(1)), 4);
        assert!(c.get(&a, own(7), t0 + Duration::from_secs(2)).is_some());
        c.insert(&x, entry(&x, b"33", t0 + Duration::from_secs(3)), 4);
        assert_eq!(c.total(), 4);
        assert!(c.get(&b, own(7), t0 + Duration::from_secs(3)).is_none());
        // `c` took the slot `b` left: each path still finds its own body.
        let later = t0 + Duration::from_secs(3);
        assert_eq!(&*c.get(&a, own(7), later).unwrap().body, b"11");
        assert_eq!(&*c.get(&x, own(7), later).unwrap().body, b"33");
        assert_eq!((c.slots.len(), c.free.len()), (2, 0));
        c.insert(&a, entry(&a, b"11111", t0), 4);
        assert!(
            c.get(&a, own(7), t0 + Duration::from_secs(3)).is_none(),
            "too big"
        );
    }

    /// The deadline kept per entry answers as `now - checked < valid`
    /// did: fresh until the last nanosecond before `checked + valid`
    /// (from the last check, not the insert), stale from then on and
    /// whenever the clock reads before the last check; an unrepresentable
    /// deadline never expires.
    #[test]
    fn freshness_ends_exactly_valid_after_the_last_check() {
        let d = TestDir::new("mcache-deadline");
        let p = d.file("a", b"abc");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ns = Duration::from_nanos(1);
        let mut c = MemCache::default();
        c.insert(&p, entry(&p, b"abc", t0), 100);
        let stats = |c: &mut MemCache, at| (c.get(&p, own(7), at).is_some(), c.syscalls);
        assert_eq!(stats(&mut c, t0 + VALID - ns), (true, 0));
        assert_eq!(stats(&mut c, t0 + VALID), (true, 1), "stale: a stat");
        // Checked again at t0 + VALID: the next deadline counts from there.
        assert_eq!(stats(&mut c, t0 + VALID + VALID - ns), (true, 1));
        assert_eq!(stats(&mut c, t0 + VALID + VALID), (true, 2));
        assert_eq!(stats(&mut c, t0), (true, 3), "the clock went back");
        let mut forever = entry(&p, b"abc", t0);
        forever.valid = Duration::MAX;
        forever.checked_at(t0);
        assert!(forever.fresh_until.is_none());
        assert!(forever.fresh(t0 + Duration::from_secs(u64::from(u32::MAX))));
        assert!(!forever.fresh(t0 - ns));
    }

    /// What a hit reads stays within an entry's first two cache lines.
    #[test]
    fn a_hit_reads_two_lines() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<MemEntry>(), 64);
        assert!(offset_of!(MemEntry, size) + size_of::<u64>() <= 128);
        assert_eq!(size_of::<Option<MemEntry>>(), size_of::<MemEntry>());
    }
}
