//! A cache's keys zone (nginx's `ngx_http_file_cache_sh_t` in shared
//! memory): the entries every worker thread sees, by the md5 of their
//! key, behind one mutex taken for a lookup or an update (the file is
//! read and written outside it). Bounded as nginx's slab bounds its nodes:
//! the zone's size over [`NODE_BYTES`]; a new entry that does not fit
//! evicts the least recently used one and its file
//! (`ngx_http_file_cache_forced_expire`). The manager's step
//! ([`CacheZone::manage`]: entries `inactive` too long, then the least
//! recently used while the files exceed `max_size`) runs from a request's
//! lookup at most once per [`MANAGER_PERIOD`], in the worker that takes
//! it, not in a thread of its own. The loader ([`CacheZone::load`]) reads
//! the directory once, when the zone is first made.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use peregrine_conf::cache::CachePathConf;

use super::file;

/// What one entry costs in the zone: nginx's documentation says a 1m
/// keys zone holds about 8,000 keys (`ngx_http_file_cache_node_t` with
/// its rbtree node and slab rounding: 128 bytes).
pub const NODE_BYTES: usize = 128;
/// How often the manager's step runs at most.
pub const MANAGER_PERIOD: Duration = Duration::from_secs(1);

/// One cached key's state.
#[derive(Debug, Clone)]
pub struct Node {
    /// Unix seconds its answer is fresh until (0: no answer on disk).
    pub valid_sec: i64,
    /// Requests for it since it was made (`proxy_cache_min_uses`).
    pub uses: u32,
    /// Its file is complete on disk.
    pub exists: bool,
    /// A request is fetching it from the upstream (since when).
    pub updating: Option<Instant>,
    /// The file's size.
    pub fs_size: u64,
    last_use: Instant,
    tick: u64,
}

/// The entries and their order of use.
#[derive(Debug, Default)]
pub struct Nodes {
    map: HashMap<[u8; 16], Node>,
    lru: BTreeMap<u64, [u8; 16]>,
    tick: u64,
    /// The size of the files on disk.
    pub size: u64,
}

/// A keys zone and its directory.
#[derive(Debug)]
pub struct CacheZone {
    pub conf: CachePathConf,
    nodes: Mutex<Nodes>,
    managed: Mutex<Instant>,
}

type Registry = Mutex<Vec<Weak<CacheZone>>>;
static REGISTRY: Registry = Mutex::new(Vec::new());

/// The zone of `conf`: the one alive already with the same name, size and
/// directory (a reload, another worker), else a new one, loaded.
pub fn zone(conf: &CachePathConf) -> Arc<CacheZone> {
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|w| w.strong_count() > 0);
    for w in reg.iter() {
        if let Some(z) = w.upgrade()
            && z.conf.name == conf.name
            && z.conf.size == conf.size
            && z.conf.path == conf.path
            && z.conf.levels == conf.levels
        {
            return z;
        }
    }
    let z = Arc::new(CacheZone {
        conf: conf.clone(),
        nodes: Mutex::new(Nodes::default()),
        managed: Mutex::new(Instant::now()),
    });
    z.load();
    reg.push(Arc::downgrade(&z));
    z
}

impl Nodes {
    fn touch(&mut self, md5: &[u8; 16], now: Instant) {
        self.tick += 1;
        let tick = self.tick;
        if let Some(n) = self.map.get_mut(md5) {
            self.lru.remove(&n.tick);
            n.tick = tick;
            n.last_use = now;
            self.lru.insert(tick, *md5);
        }
    }

    /// The entry of `md5`, made if new, and marked used.
    pub fn get(&mut self, z: &CachePathConf, md5: &[u8; 16], now: Instant) -> &mut Node {
        if !self.map.contains_key(md5) {
            let cap = (z.size.saturating_sub(4096 + z.size / 64) / NODE_BYTES).max(1);
            while self.map.len() >= cap && self.evict_one(z) {}
            self.map.insert(
                *md5,
                Node {
                    valid_sec: 0,
                    uses: 0,
                    exists: false,
                    updating: None,
                    fs_size: 0,
                    last_use: now,
                    tick: 0,
                },
            );
        }
        self.touch(md5, now);
        self.map.get_mut(md5).expect("inserted above")
    }

    pub fn peek(&mut self, md5: &[u8; 16]) -> Option<&mut Node> {
        self.map.get_mut(md5)
    }

    /// Removes the least recently used entry no request is fetching, and
    /// its file. False when none could go.
    fn evict_one(&mut self, z: &CachePathConf) -> bool {
        let victim = self
            .lru
            .values()
            .find(|m| self.map.get(*m).is_some_and(|n| n.updating.is_none()))
            .copied();
        match victim {
            Some(m) => {
                self.remove(z, &m);
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, z: &CachePathConf, md5: &[u8; 16]) {
        if let Some(n) = self.map.remove(md5) {
            self.lru.remove(&n.tick);
            if n.exists {
                self.size = self.size.saturating_sub(n.fs_size);
                let _ = std::fs::remove_file(file::path_of(&z.path, &z.levels, md5));
            }
        }
    }

    /// A complete file of `size` bytes is in place for `md5`.
    pub fn stored(&mut self, md5: &[u8; 16], valid_sec: i64, size: u64) {
        if let Some(n) = self.map.get_mut(md5) {
            if n.exists {
                self.size = self.size.saturating_sub(n.fs_size);
            }
            n.exists = true;
            n.valid_sec = valid_sec;
            n.fs_size = size;
            self.size += size;
        }
    }
}

impl CacheZone {
    pub fn lock(&self) -> MutexGuard<'_, Nodes> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The manager's step when it is due: entries unused for `inactive`
    /// go with their files, then the least recently used while the files
    /// take more than `max_size` (`ngx_http_file_cache_manager`).
    pub fn manage(&self, now: Instant) {
        {
            let mut last = self.managed.lock().unwrap_or_else(|e| e.into_inner());
            if now.saturating_duration_since(*last) < MANAGER_PERIOD {
                return;
            }
            *last = now;
        }
        let mut n = self.lock();
        let old: Vec<[u8; 16]> = n
            .lru
            .values()
            .filter(|m| {
                n.map.get(*m).is_some_and(|e| {
                    e.updating.is_none()
                        && now.saturating_duration_since(e.last_use) >= self.conf.inactive
                })
            })
            .copied()
            .collect();
        for m in old {
            n.remove(&self.conf, &m);
        }
        if let Some(max) = self.conf.max_size {
            while n.size > max && n.evict_one(&self.conf) {}
        }
    }

    /// Reads the directory's complete files into the zone (nginx's cache
    /// loader): their validity and size; temporary files left by a stop
    /// are removed.
    fn load(&self) {
        let mut n = self.lock();
        let now = Instant::now();
        walk(&self.conf.path, self.conf.levels.len(), &mut |p| {
            let name = p.file_name().and_then(|s| s.to_str()).unwrap_or("");
            if name.starts_with(super::TEMP_PREFIX) {
                let _ = std::fs::remove_file(p);
                return;
            }
            let Some(md5) = unhex(name) else { return };
            if file::path_of(&self.conf.path, &self.conf.levels, &md5) != p {
                return;
            }
            if let Some((meta, size)) = file::read_meta(p) {
                let e = n.get(&self.conf, &md5, now);
                e.uses = 1;
                n.stored(&md5, meta.valid_sec, size);
            }
        });
    }
}

/// Visits the files `depth` directories below `dir`.
fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        match (depth, is_dir) {
            (0, false) => f(&p),
            (d, true) if d > 0 => walk(&p, d - 1, f),
            (0, true) => {}
            _ => {
                if p.file_name()
                    .and_then(|s| s.to_str())
                    .is_some_and(|s| s.starts_with(super::TEMP_PREFIX))
                {
                    f(&p);
                }
            }
        }
    }
}

fn unhex(s: &str) -> Option<[u8; 16]> {
    if s.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(size: usize) -> CachePathConf {
        CachePathConf {
            name: "t".into(),
            size,
            path: std::env::temp_dir().join("pg-cache-zone-none"),
            levels: vec![],
            use_temp_path: false,
            inactive: Duration::from_secs(600),
            max_size: None,
            min_free: None,
            directive: "proxy_cache_path".into(),
            span: Default::default(),
        }
    }

    #[test]
    fn a_full_zone_evicts_the_least_recently_used() {
        let c = conf(4096 + 8 * 4096);
        let cap = (c.size - 4096 - c.size / 64) / NODE_BYTES;
        let mut n = Nodes::default();
        let now = Instant::now();
        for i in 0..=cap as u32 {
            let mut m = [0u8; 16];
            m[..4].copy_from_slice(&i.to_le_bytes());
            n.get(&c, &m, now);
            if i == 0 {
                continue;
            }
            // The first stays in use: the second is the oldest.
            n.get(&c, &[0u8; 16], now);
        }
        assert_eq!(n.map.len(), cap);
        assert!(n.map.contains_key(&[0u8; 16]));
        let mut second = [0u8; 16];
        second[0] = 1;
        assert!(!n.map.contains_key(&second));
    }
}
