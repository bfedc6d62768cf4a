//! `open_log_file_cache` for `access_log` paths with variables: the
//! descriptors of the files used most, kept open between requests, as
//! nginx's `ngx_open_cached_file` keeps them for the log module.
//!
//! What nginx does, and this does: an entry is made on a file's first use
//! (counting towards `max`, its descriptor closed after the write while
//! the file has fewer than `min_uses` uses); once used `min_uses` times the
//! descriptor stays open. A full cache drops its least recently used entry
//! (and up to two more unused for `inactive`) before adding one. An open
//! descriptor older than `valid` is checked against the path again (the
//! path reopened). A failed open removes the entry. So after the log
//! directory moves, files held open are still written, others are not.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use peregrine_conf::model::OpenLogFileCacheConf;

use crate::sink::open_append;

/// nginx's `ngx_expire_old_cached_files`: besides the oldest entry when
/// the cache is full, at most this many inactive ones go at once.
const EXTRA_EXPIRED_PER_ADD: usize = 2;

#[derive(Debug)]
struct Entry {
    path: PathBuf,
    file: Option<File>,
    uses: u32,
    /// When the descriptor was opened or last checked (`valid`).
    created: Instant,
    accessed: Instant,
}

/// One location's cache (per worker).
#[derive(Debug)]
pub(crate) struct LogFileCache {
    conf: OpenLogFileCacheConf,
    /// Most recently used last.
    entries: Vec<Entry>,
}

impl LogFileCache {
    pub(crate) fn new(conf: OpenLogFileCacheConf) -> LogFileCache {
        LogFileCache {
            conf,
            entries: Vec::new(),
        }
    }

    /// Runs `write` on the file at `path`, opened or taken from the cache.
    pub(crate) fn with_file(
        &mut self,
        path: &Path,
        now: Instant,
        write: impl FnOnce(&File) -> io::Result<()>,
    ) -> Result<io::Result<()>, io::Error> {
        let i = match self.entries.iter().position(|e| e.path == path) {
            Some(i) => {
                let mut e = self.entries.remove(i);
                e.uses += 1;
                let stale = now.duration_since(e.created) >= self.conf.valid;
                if e.file.is_none() || stale {
                    // Not used enough to be kept open, or to be checked
                    // again: open the path (a failure drops the entry).
                    e.file = Some(open_append(path)?);
                    e.created = now;
                }
                e.accessed = now;
                self.entries.push(e);
                self.entries.len() - 1
            }
            None => {
                let file = open_append(path)?;
                self.expire(now);
                self.entries.push(Entry {
                    path: path.to_path_buf(),
                    file: Some(file),
                    uses: 1,
                    created: now,
                    accessed: now,
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[i];
        let r = e.file.as_ref().map_or(Ok(()), write);
        if e.uses < self.conf.min_uses {
            e.file = None;
        }
        // ngx_open_file_cleanup: after each use, up to two inactive go.
        self.expire_inactive(now);
        Ok(r)
    }

    /// Makes room for one entry (`ngx_expire_old_cached_files(cache, 0)`):
    /// the oldest goes when the cache is full, and a few inactive ones.
    fn expire(&mut self, now: Instant) {
        if self.entries.len() >= self.conf.max && !self.entries.is_empty() {
            self.entries.remove(0);
        }
        self.expire_inactive(now);
    }

    /// Drops up to [`EXTRA_EXPIRED_PER_ADD`] of the least recently used
    /// entries unused for longer than `inactive`.
    fn expire_inactive(&mut self, now: Instant) {
        for _ in 0..EXTRA_EXPIRED_PER_ADD {
            match self.entries.first() {
                Some(e) if now.duration_since(e.accessed) > self.conf.inactive => {
                    self.entries.remove(0);
                }
                _ => return,
            }
        }
    }

    #[cfg(test)]
    fn open_count(&self) -> usize {
        self.entries.iter().filter(|e| e.file.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;
    use std::time::Duration;

    use super::*;

    fn conf(max: usize, min_uses: u32) -> OpenLogFileCacheConf {
        OpenLogFileCacheConf {
            max,
            inactive: Duration::from_secs(20),
            min_uses,
            valid: Duration::from_secs(60),
        }
    }

    fn line(c: &mut LogFileCache, p: &Path, now: Instant) -> bool {
        c.with_file(p, now, |mut f| f.write_all(b"x\n")).is_ok()
    }

    /// The sequence of nginx's own test: max=3, min_uses=2, then the
    /// directory moves away.
    #[test]
    fn held_descriptors_survive_a_moved_directory() {
        let t = crate::testutil::TempDir::new("logcache");
        let dir = t.path().join("dir");
        std::fs::create_dir(&dir).expect("mkdir");
        let now = Instant::now();
        let mut c = LogFileCache::new(conf(3, 2));
        for name in ["lru", "lru", "once", "first", "first", "second", "second"] {
            assert!(line(&mut c, &dir.join(name), now), "{name}");
        }
        assert_eq!(c.open_count(), 2, "first and second held; lru evicted");
        let moved = t.path().join("moved");
        std::fs::rename(&dir, &moved).expect("rename");
        let results: Vec<bool> = ["lru", "once", "first", "second"]
            .iter()
            .map(|n| line(&mut c, &dir.join(n), now))
            .collect();
        assert_eq!(results, [false, false, true, true]);
        let count = |n: &str| {
            std::fs::read_to_string(moved.join(n))
                .expect("log")
                .lines()
                .count()
        };
        assert_eq!(
            [count("lru"), count("once"), count("first"), count("second")],
            [2, 1, 3, 3]
        );
    }

    #[test]
    fn inactive_entries_go() {
        let t = crate::testutil::TempDir::new("logcache-inactive");
        let now = Instant::now();
        let mut c = LogFileCache::new(conf(10, 1));
        assert!(line(&mut c, &t.path().join("a"), now));
        assert!(line(&mut c, &t.path().join("b"), now));
        assert_eq!(c.open_count(), 2);
        // 20 s is not yet "more than inactive"; 21 s is.
        assert!(line(
            &mut c,
            &t.path().join("c"),
            now + Duration::from_secs(20)
        ));
        assert_eq!(c.open_count(), 3);
        assert!(line(
            &mut c,
            &t.path().join("c"),
            now + Duration::from_secs(21)
        ));
        assert_eq!(c.open_count(), 1, "a and b expired");
    }

    #[test]
    fn stale_descriptors_are_reopened() {
        let t = crate::testutil::TempDir::new("logcache");
        let p = t.path().join("a");
        let now = Instant::now();
        let mut c = LogFileCache::new(conf(4, 1));
        assert!(line(&mut c, &p, now));
        std::fs::rename(&p, t.path().join("b")).expect("rename");
        // Within `valid` the old descriptor is written; after it, the path.
        assert!(line(&mut c, &p, now + Duration::from_secs(1)));
        assert!(!p.exists());
        assert!(line(&mut c, &p, now + Duration::from_secs(61)));
        assert!(p.exists());
    }
}
