//! The per-worker open file cache (`open_file_cache`), nginx semantics:
//! descriptors, sizes, mtimes and lookup errors (with
//! `open_file_cache_errors`) are kept per path; an entry younger than
//! `open_file_cache_valid` is used without any system call; an older one is
//! re-checked with `stat` and reopened when the file changed (inode, size or
//! mtime). A descriptor is kept only once the path was used `min_uses`
//! times; entries unused for `inactive` are dropped; at `max` entries the
//! least recently used is dropped (`ngx_expire_old_cached_files`).
//!
//! Owned by one worker (no locks). Without `open_file_cache` core calls
//! [`open_uncached`] per request, as nginx opens and `fstat`s per request.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use peregrine_conf::model::OpenFileCacheConf;

/// What is known about a path after opening it.
#[derive(Debug, Clone)]
pub(crate) struct FileInfo {
    /// `None` for directories and when the descriptor was not kept.
    pub file: Option<Rc<File>>,
    pub is_dir: bool,
    pub is_file: bool,
    pub size: u64,
    /// Seconds since the epoch.
    pub mtime: i64,
    pub ino: u64,
    pub dev: u64,
}

/// An `errno` from open/stat.
pub(crate) type Errno = i32;

/// The system call of a failed lookup, as nginx's error line names it
/// (`of.failed` of `ngx_open_cached_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Call {
    Open,
    /// nginx opens with `openat()` when `disable_symlinks` is on.
    OpenAt,
    Stat,
    Fstat,
}

impl Call {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Call::Open => "open()",
            Call::OpenAt => "openat()",
            Call::Stat => "stat()",
            Call::Fstat => "fstat()",
        }
    }
}

/// Why a lookup failed: the call and its `errno`, kept from the failure
/// itself for the error log (no second look at the path to explain it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenError {
    pub call: Call,
    pub errno: Errno,
}

impl OpenError {
    pub(crate) fn new(call: Call, e: &std::io::Error) -> OpenError {
        OpenError {
            call,
            errno: errno(e),
        }
    }
}

fn errno(e: &std::io::Error) -> Errno {
    e.raw_os_error().unwrap_or(libc::EIO)
}

fn info_from(meta: &std::fs::Metadata, file: Option<Rc<File>>) -> FileInfo {
    FileInfo {
        file: if meta.is_dir() { None } else { file },
        is_dir: meta.is_dir(),
        is_file: meta.is_file(),
        size: meta.len(),
        mtime: meta.mtime(),
        ino: meta.ino(),
        dev: meta.dev(),
    }
}

/// Opens and `fstat`s a path (regular files and directories; a directory's
/// descriptor is not kept). `test_only` stats without opening (try_files).
pub(crate) fn open_uncached(path: &str, test_only: bool) -> Result<FileInfo, OpenError> {
    if test_only {
        let meta = std::fs::metadata(path).map_err(|e| OpenError::new(Call::Stat, &e))?;
        return Ok(info_from(&meta, None));
    }
    // O_NONBLOCK as nginx (`NGX_FILE_NONBLOCK`): opening a FIFO must not
    // block the worker; fstat then shows it is not a regular file (404).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| OpenError::new(Call::Open, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| OpenError::new(Call::Fstat, &e))?;
    Ok(info_from(&meta, Some(Rc::new(file))))
}

/// The lookup settings of the location serving the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    pub conf: OpenFileCacheConf,
    pub valid: Duration,
    pub min_uses: u32,
    pub errors: bool,
}

#[derive(Debug)]
struct Entry {
    key: Box<str>,
    /// A cached error is reported as `open()`'s, as nginx reports it.
    result: Result<FileInfo, Errno>,
    checked: SystemTime,
    accessed: SystemTime,
    uses: u32,
    prev: usize,
    next: usize,
}

/// No neighbour in the LRU list.
const NIL: usize = usize::MAX;

/// An LRU map from path to lookup result; slots are reused.
#[derive(Debug, Default)]
pub(crate) struct OpenFileCache {
    map: HashMap<Box<str>, usize, crate::fxhash::PathBuild>,
    slots: Vec<Option<Entry>>,
    free: Vec<usize>,
    /// Most recently used.
    head: Option<usize>,
    /// Least recently used.
    tail: Option<usize>,
    /// Stat/open calls made (for tests: a hit within `valid` makes none).
    pub(crate) syscalls: u64,
    /// Lookups answered from the cache, and not (for the metrics).
    pub(crate) hits: u64,
    pub(crate) misses: u64,
}

fn age(now: SystemTime, then: SystemTime) -> Duration {
    // A clock that went backwards makes everything stale.
    now.duration_since(then).unwrap_or(Duration::MAX)
}

impl OpenFileCache {
    /// An empty cache; `request_filled` when some location caches lookup
    /// errors (`open_file_cache_errors on`), so that requests choose keys
    /// (see [`crate::fxhash::PathBuild`]).
    pub(crate) fn new(request_filled: bool) -> Self {
        OpenFileCache {
            map: HashMap::with_hasher(crate::fxhash::PathBuild::new(request_filled)),
            ..Default::default()
        }
    }

    /// An empty cache keyed as this one.
    pub(crate) fn emptied(&self) -> Self {
        OpenFileCache {
            map: HashMap::with_hasher(self.map.hasher().clone()),
            ..Default::default()
        }
    }

    #[cfg(test)]
    pub(crate) fn hasher(&self) -> &crate::fxhash::PathBuild {
        self.map.hasher()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = match &self.slots[i] {
            Some(e) => (e.prev, e.next),
            None => return,
        };
        if prev != NIL {
            if let Some(p) = self.slots[prev].as_mut() {
                p.next = next;
            }
        } else {
            self.head = (next != NIL).then_some(next);
        }
        if next != NIL {
            if let Some(n) = self.slots[next].as_mut() {
                n.prev = prev;
            }
        } else {
            self.tail = (prev != NIL).then_some(prev);
        }
    }

    fn push_front(&mut self, i: usize) {
        let old = self.head;
        if let Some(e) = self.slots[i].as_mut() {
            e.prev = NIL;
            e.next = old.unwrap_or(NIL);
        }
        if let Some(h) = old
            && let Some(e) = self.slots[h].as_mut()
        {
            e.prev = i;
        }
        self.head = Some(i);
        if self.tail.is_none() {
            self.tail = Some(i);
        }
    }

    fn remove(&mut self, i: usize) {
        self.unlink(i);
        if let Some(e) = self.slots[i].take() {
            self.map.remove(&e.key);
        }
        self.free.push(i);
    }

    /// Drops entries unused for `inactive` from the LRU end (nginx drops at
    /// most two per lookup; dropping all stale ones here is bounded by the
    /// same total work), and the oldest one when `force`.
    fn expire(&mut self, now: SystemTime, inactive: Duration, force: bool) {
        let mut forced = force;
        while let Some(t) = self.tail {
            let stale = self.slots[t]
                .as_ref()
                .is_some_and(|e| age(now, e.accessed) >= inactive);
            if !stale && !forced {
                break;
            }
            forced = false;
            self.remove(t);
        }
    }

    /// Looks `path` up, opening/stat-ing only when the cache cannot answer.
    pub(crate) fn open(
        &mut self,
        path: &str,
        test_only: bool,
        policy: &Policy,
        now: SystemTime,
    ) -> Result<FileInfo, OpenError> {
        self.expire(now, policy.conf.inactive, false);
        if let Some(&i) = self.map.get(path) {
            self.hits += 1;
            return self.hit(i, path, test_only, policy, now);
        }
        self.misses += 1;
        self.syscalls += 1;
        let result = open_uncached(path, test_only);
        if let Err(e) = &result
            && (!policy.errors
                || !matches!(
                    e.errno,
                    libc::ENOENT | libc::ENOTDIR | libc::EACCES | libc::ENAMETOOLONG
                ))
        {
            return result;
        }
        if self.map.len() >= policy.conf.max.max(1) {
            self.expire(now, policy.conf.inactive, true);
        }
        let mut stored = result.clone().map_err(|e| e.errno);
        if policy.min_uses > 1
            && let Ok(info) = stored.as_mut()
        {
            info.file = None;
        }
        let entry = Entry {
            key: path.into(),
            result: stored,
            checked: now,
            accessed: now,
            uses: 1,
            prev: NIL,
            next: NIL,
        };
        let i = crate::slots::put(&mut self.slots, &mut self.free, entry);
        self.map.insert(path.into(), i);
        self.push_front(i);
        result
    }

    fn hit(
        &mut self,
        i: usize,
        path: &str,
        test_only: bool,
        policy: &Policy,
        now: SystemTime,
    ) -> Result<FileInfo, OpenError> {
        self.unlink(i);
        self.push_front(i);
        let Some(e) = self.slots[i].as_mut() else {
            return Err(OpenError {
                call: Call::Open,
                errno: libc::EIO,
            });
        };
        e.accessed = now;
        e.uses = e.uses.saturating_add(1);
        let fresh = age(now, e.checked) < policy.valid;
        let needs_fd = !test_only && matches!(&e.result, Ok(f) if !f.is_dir && f.file.is_none());
        if fresh && !needs_fd {
            return e.result.clone().map_err(|errno| OpenError {
                call: Call::Open,
                errno,
            });
        }
        // Stale, or a descriptor is wanted that was not kept: look again.
        self.syscalls += 1;
        let result = if fresh || test_only {
            open_uncached(path, test_only)
        } else {
            // Revalidate: keep the descriptor when the file is the same one.
            match (std::fs::metadata(path), &e.result) {
                (Ok(meta), Ok(old))
                    if old.file.is_some()
                        && meta.ino() == old.ino
                        && meta.dev() == old.dev
                        && meta.len() == old.size
                        && meta.mtime() == old.mtime =>
                {
                    Ok(info_from(&meta, old.file.clone()))
                }
                (Ok(_), _) => open_uncached(path, false),
                (Err(err), _) => Err(OpenError::new(Call::Stat, &err)),
            }
        };
        if result.is_err() && !policy.errors {
            self.remove(i);
            return result;
        }
        let keep_fd = e.uses >= policy.min_uses;
        let mut stored = result.clone().map_err(|e| e.errno);
        if let Ok(info) = stored.as_mut()
            && !keep_fd
        {
            info.file = None;
        }
        if !fresh || e.result.is_err() || stored.as_ref().is_ok_and(|f| f.file.is_some()) {
            e.result = stored;
        }
        e.checked = if fresh { e.checked } else { now };
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::TestDir;

    fn policy(max: usize, valid: u64, min_uses: u32, errors: bool) -> Policy {
        Policy {
            conf: OpenFileCacheConf {
                max,
                inactive: Duration::from_secs(100),
            },
            valid: Duration::from_secs(valid),
            min_uses,
            errors,
        }
    }

    #[test]
    fn hit_within_valid_makes_no_syscall_and_revalidates_after() {
        let d = TestDir::new("fcache-valid");
        let p = d.file("a.txt", b"abc");
        let mut c = OpenFileCache::default();
        let pol = policy(10, 60, 1, false);
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let a = c.open(&p, false, &pol, t0).unwrap();
        assert_eq!((a.size, c.syscalls), (3, 1));
        let b = c
            .open(&p, false, &pol, t0 + Duration::from_secs(59))
            .unwrap();
        assert_eq!(c.syscalls, 1, "a hit within valid costs no syscall");
        assert!(Rc::ptr_eq(
            a.file.as_ref().unwrap(),
            b.file.as_ref().unwrap()
        ));
        // Change the file (different size), then revalidate after `valid`.
        std::fs::write(&p, b"abcdef").unwrap();
        let n = c
            .open(&p, false, &pol, t0 + Duration::from_secs(61))
            .unwrap();
        assert_eq!((n.size, c.syscalls), (6, 2));
        assert!(!Rc::ptr_eq(
            a.file.as_ref().unwrap(),
            n.file.as_ref().unwrap()
        ));
        // Unchanged file: revalidation keeps the same descriptor.
        let m = c
            .open(&p, false, &pol, t0 + Duration::from_secs(130))
            .unwrap();
        assert!(Rc::ptr_eq(
            n.file.as_ref().unwrap(),
            m.file.as_ref().unwrap()
        ));
    }

    #[test]
    fn errors_cached_only_with_open_file_cache_errors() {
        let d = TestDir::new("fcache-errors");
        let p = d.path("missing");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut c = OpenFileCache::default();
        let pol = policy(10, 60, 1, false);
        assert_eq!(c.open(&p, false, &pol, t0).unwrap_err().errno, libc::ENOENT);
        assert_eq!(c.open(&p, false, &pol, t0).unwrap_err().errno, libc::ENOENT);
        assert_eq!(c.syscalls, 2);
        let mut c = OpenFileCache::default();
        let pol = policy(10, 60, 1, true);
        assert_eq!(c.open(&p, false, &pol, t0).unwrap_err().errno, libc::ENOENT);
        d.file("missing", b"now here");
        assert_eq!(
            c.open(&p, false, &pol, t0).unwrap_err(),
            OpenError {
                call: Call::Open,
                errno: libc::ENOENT
            },
            "cached error, reported as open()'s"
        );
        assert_eq!(c.syscalls, 1);
        let ok = c
            .open(&p, false, &pol, t0 + Duration::from_secs(61))
            .unwrap();
        assert_eq!(ok.size, 8);
    }

    #[test]
    fn max_evicts_least_recently_used_and_inactive_expires() {
        let d = TestDir::new("fcache-max");
        let (a, b, x) = (d.file("a", b"1"), d.file("b", b"2"), d.file("c", b"3"));
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut c = OpenFileCache::default();
        let pol = policy(2, 60, 1, false);
        c.open(&a, false, &pol, t0).unwrap();
        c.open(&b, false, &pol, t0).unwrap();
        c.open(&a, false, &pol, t0).unwrap();
        c.open(&x, false, &pol, t0).unwrap();
        assert_eq!(c.len(), 2);
        let before = c.syscalls;
        c.open(&a, false, &pol, t0).unwrap();
        assert_eq!(c.syscalls, before, "a stayed (recently used)");
        c.open(&b, false, &pol, t0).unwrap();
        assert_eq!(c.syscalls, before + 1, "b was evicted");
        c.open(&a, false, &pol, t0 + Duration::from_secs(101))
            .unwrap();
        assert_eq!(c.len(), 1, "inactive entries dropped");
    }

    #[test]
    fn min_uses_keeps_descriptor_only_after_enough_uses() {
        let d = TestDir::new("fcache-minuses");
        let p = d.file("a", b"xyz");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut c = OpenFileCache::default();
        let pol = policy(10, 60, 2, false);
        assert!(c.open(&p, false, &pol, t0).unwrap().file.is_some());
        assert!(c.open(&p, false, &pol, t0).unwrap().file.is_some());
        assert_eq!(c.syscalls, 2, "second use reopened: fd was not kept");
        assert!(c.open(&p, false, &pol, t0).unwrap().file.is_some());
        assert_eq!(c.syscalls, 2, "third use is a hit");
    }

    #[test]
    fn fifo_does_not_block_and_is_not_a_file() {
        let d = TestDir::new("fcache-fifo");
        let p = d.path("fifo");
        let status = std::process::Command::new("mkfifo").arg(&p).status();
        if !status.is_ok_and(|s| s.success()) {
            return; // no mkfifo on this system: nothing to check
        }
        let info = open_uncached(&p, false).unwrap();
        assert!(!info.is_file && !info.is_dir);
    }

    #[test]
    fn directories_and_test_only() {
        let d = TestDir::new("fcache-dir");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let mut c = OpenFileCache::default();
        let pol = policy(10, 60, 1, false);
        let info = c.open(d.root(), false, &pol, t0).unwrap();
        assert!(info.is_dir && info.file.is_none());
        let info = c.open(d.root(), true, &pol, t0).unwrap();
        assert!(info.is_dir);
        assert_eq!(c.syscalls, 1);
    }
}
