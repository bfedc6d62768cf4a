//! The upstream cache (nginx's `ngx_http_file_cache.c` and the cache side
//! of `ngx_http_upstream.c`): which answer a request may take from the
//! cache or give to it. [`decide`] runs when a location's `proxy_pass` (or
//! `fastcgi_pass`...) makes its upstream request: the zone, the method,
//! the key and its md5, `*_cache_bypass` and `*_no_cache`, the entry's
//! state in the shared zone ([`zone`]) and, for a fresh one, its file
//! ([`file`]); the engine serves a hit from that file, or sends the
//! request upstream and writes the answer to the cache as it streams it
//! (`peregrine_engine::upstream::cache_store`), when [`valid`] finds it
//! cacheable.

pub mod file;
pub mod range;
pub mod valid;
pub mod zone;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use md5::{Digest, Md5};
use peregrine_conf::cache::{CacheConf, CacheZoneRef};
use peregrine_conf::model::Config;

pub use file::Cached;
pub use zone::CacheZone;

/// Temporary files' names start with this (nginx writes them in its temp
/// path with numeric names; Peregrine beside the cache files, so the
/// loader can tell and remove one a stop left).
pub const TEMP_PREFIX: &str = ".tmp-";

/// `$upstream_cache_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Miss,
    Bypass,
    Expired,
    Stale,
    Updating,
    Revalidated,
    Hit,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Miss => "MISS",
            Status::Bypass => "BYPASS",
            Status::Expired => "EXPIRED",
            Status::Stale => "STALE",
            Status::Updating => "UPDATING",
            Status::Revalidated => "REVALIDATED",
            Status::Hit => "HIT",
        }
    }
}

/// The configuration's cache zones, shared with the other workers.
#[derive(Debug, Default)]
pub struct Caches {
    zones: Vec<Arc<CacheZone>>,
}

impl Caches {
    pub fn of(conf: &Config) -> Caches {
        let Some(h) = conf.http.as_ref() else {
            return Caches::default();
        };
        Caches {
            zones: h.cache_paths.iter().map(zone::zone).collect(),
        }
    }

    fn find(&self, name: &str) -> Option<&Arc<CacheZone>> {
        self.zones.iter().find(|z| z.conf.name == name)
    }
}

/// One request's use of the cache.
#[derive(Debug)]
pub struct CacheJob {
    pub zone: Arc<CacheZone>,
    pub key: String,
    pub md5: [u8; 16],
    pub status: Status,
    /// nginx's `u->cacheable`: `*_cache_min_uses` reached and no range
    /// beyond `*_cache_max_range_offset`. The upstream request then has
    /// the cache's headers ([`upstream_headers`]).
    pub cacheable: bool,
    /// The upstream's answer may be stored: cacheable, and `*_no_cache`
    /// did not say no.
    pub store: bool,
    /// The file of a hit, or the expired answer kept for
    /// `*_cache_use_stale` and `*_cache_revalidate`.
    pub cached: Option<Cached>,
    pub conf: Arc<CacheConf>,
    /// `*_cache_lock`: another request is fetching the entry; this one
    /// waits for it (since `locked_at`) before going upstream itself.
    pub locked: Option<Instant>,
    /// This request marked the entry as being fetched.
    updating: bool,
    /// `*_cache_background_update`: the stale answer (`cached`) is sent
    /// at once and the job then goes upstream to refresh the entry.
    pub background: bool,
}

/// What a request waiting on `*_cache_lock` finds ([`CacheJob::recheck`]).
#[derive(Debug)]
pub enum Recheck {
    /// The entry is fresh now: a hit.
    Fresh(Cached),
    /// Still being fetched by another request.
    Wait,
    /// Go upstream (the other request ended without storing, or its
    /// `*_cache_lock_age` ran out: this one fetches it now).
    Go,
}

impl CacheJob {
    /// The entry's file.
    pub fn path(&self) -> PathBuf {
        file::path_of(&self.zone.conf.path, &self.zone.conf.levels, &self.md5)
    }

    /// A temporary file's name in the entry's directory (a rename within
    /// one file system makes it the entry).
    pub fn temp_path(&self) -> PathBuf {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut p = self.path();
        p.set_file_name(format!(
            "{TEMP_PREFIX}{}-{}-{n}",
            file::hex(&self.md5),
            std::process::id()
        ));
        p
    }

    /// The entry's file is complete and in place.
    pub fn stored(&mut self, valid_sec: i64, size: u64) {
        let mut n = self.zone.lock();
        n.stored(&self.md5, valid_sec, size);
        if let Some(e) = n.peek(&self.md5) {
            e.updating = None;
        }
        self.updating = false;
    }

    /// A request waiting on `*_cache_lock` looks again.
    pub fn recheck(&mut self, now_sec: i64) -> Recheck {
        let now = Instant::now();
        let fresh = {
            let mut n = self.zone.lock();
            let e = n.get(&self.zone.conf, &self.md5, now);
            let fresh = e.exists && e.valid_sec >= now_sec;
            if !fresh {
                let busy = e
                    .updating
                    .is_some_and(|t| now.saturating_duration_since(t) < self.conf.lock_age);
                if busy {
                    return Recheck::Wait;
                }
                e.updating = Some(now);
                self.updating = true;
            }
            fresh
        };
        self.locked = None;
        match fresh.then(|| file::open(&self.path(), &self.key)).flatten() {
            Some(c) => {
                self.status = Status::Hit;
                Recheck::Fresh(c)
            }
            None => Recheck::Go,
        }
    }

    /// The entry's answer was revalidated (a 304): fresh again until
    /// `valid_sec`.
    pub fn revalidated(&mut self, valid_sec: i64) {
        let mut n = self.zone.lock();
        if let Some(e) = n.peek(&self.md5) {
            e.valid_sec = valid_sec;
        }
    }
}

impl Drop for CacheJob {
    fn drop(&mut self) {
        if self.updating
            && let Some(e) = self.zone.lock().peek(&self.md5)
        {
            e.updating = None;
        }
    }
}

/// A job's cache side. A copy of a job (a new upstream request made from
/// it) does not take part in the cache: the entry's state is the
/// original's to update.
#[derive(Debug, Default)]
pub struct CacheSlot(pub Option<Box<CacheJob>>);

impl Clone for CacheSlot {
    fn clone(&self) -> Self {
        CacheSlot(None)
    }
}

/// A value of `*_cache_bypass` / `*_no_cache` says yes: not empty, not "0"
/// (`ngx_http_test_predicates`).
fn predicate(values: &[String], expand: &dyn Fn(&str) -> String) -> bool {
    values.iter().any(|v| {
        let s = expand(v);
        !s.is_empty() && s != "0"
    })
}

/// What the cache does for a request of `method` in a location with
/// `cc` (`ngx_http_upstream_cache`): `None` when it does not take part
/// (caching off, a method not cached, an unknown zone by variables).
/// `default_key` is the module's key when `*_cache_key` is not set.
pub fn decide(
    caches: &Caches,
    cc: &Arc<CacheConf>,
    method: &str,
    range: Option<&str>,
    default_key: &str,
    expand: &dyn Fn(&str) -> String,
    now_sec: i64,
) -> Option<Box<CacheJob>> {
    let name = match &cc.zone {
        CacheZoneRef::Off => return None,
        CacheZoneRef::Zone(n, _) => n.clone(),
        CacheZoneRef::Vars(v) => expand(v),
    };
    let zone = caches.find(&name)?.clone();
    if !matches!(method, "GET" | "HEAD") && !cc.methods.iter().any(|m| m == method) {
        return None;
    }
    let key = cc
        .key
        .as_deref()
        .map_or_else(|| expand(default_key), expand);
    let md5: [u8; 16] = Md5::digest(key.as_bytes()).into();
    let no_cache = predicate(&cc.no_cache, expand);
    let now = Instant::now();
    zone.manage(now);
    let mut job = Box::new(CacheJob {
        zone,
        key,
        md5,
        status: Status::Miss,
        cacheable: true,
        store: !no_cache,
        cached: None,
        conf: cc.clone(),
        locked: None,
        updating: false,
        background: false,
    });
    if predicate(&cc.bypass, expand) {
        job.status = Status::Bypass;
        return Some(job);
    }
    let (exists, fresh) = {
        let mut nodes = job.zone.lock();
        let e = nodes.get(&job.zone.conf, &md5, now);
        e.uses = e.uses.saturating_add(1);
        if e.uses < cc.min_uses {
            job.cacheable = false;
        }
        let fresh = e.exists && e.valid_sec >= now_sec;
        let held = e.updating;
        if !fresh {
            // `ngx_http_file_cache_read` and `ngx_http_file_cache_lock`.
            if e.exists
                && held.is_some()
                && cc.use_stale & peregrine_conf::cache::stale::UPDATING != 0
            {
                job.status = Status::Updating;
            } else if e.exists
                && held.is_none()
                && cc.background_update
                && cc.use_stale & peregrine_conf::cache::stale::UPDATING != 0
            {
                // `ngx_http_upstream_cache_background_update`: STALE now,
                // this request's job refreshes the entry afterwards.
                job.status = Status::Stale;
                job.background = true;
                e.updating = Some(now);
                job.updating = true;
            } else {
                if e.exists {
                    job.status = Status::Expired;
                }
                let lock_busy =
                    held.is_some_and(|t| now.saturating_duration_since(t) < cc.lock_age);
                if cc.lock && lock_busy {
                    job.locked = Some(now);
                } else if held.is_none() || cc.lock {
                    e.updating = Some(now);
                    job.updating = true;
                }
            }
        }
        (e.exists, fresh)
    };
    if range.is_some_and(|r| beyond_offset(r, cc.max_range_offset)) {
        job.cacheable = false;
    }
    job.store &= job.cacheable;
    if exists {
        job.cached = file::open(&job.path(), &job.key);
        match (&job.cached, fresh) {
            (Some(_), true) => job.status = Status::Hit,
            (None, _) => {
                job.status = Status::Miss;
                if let Some(e) = job.zone.lock().peek(&md5) {
                    e.exists = false;
                }
            }
            _ => {}
        }
    }
    Some(job)
}

/// A `Range` starting at or beyond `*_cache_max_range_offset` (or a
/// suffix range, whose start is unknown): the answer is not cached
/// (`ngx_http_upstream_cache_check_range`).
fn beyond_offset(range: &str, max: Option<u64>) -> bool {
    let Some(max) = max else { return false };
    if max == 0 {
        return true;
    }
    let Some(spec) = range
        .get(..6)
        .filter(|p| p.eq_ignore_ascii_case("bytes="))
        .map(|_| range[6..].trim_start_matches(' '))
    else {
        return false;
    };
    if spec.starts_with('-') {
        return true;
    }
    let digits: String = spec.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<u64>().unwrap_or(0) >= max
}

/// The request headers a caching location sends upstream instead of the
/// client's (`ngx_http_proxy_cache_headers`): no range and no client
/// preconditions (the cache stores whole answers), and, revalidating an
/// expired answer (`*_cache_revalidate`), its `Last-Modified` and `ETag`
/// as `If-Modified-Since` and `If-None-Match`. An empty value drops the
/// header; `proxy_set_header` of the same name wins, as in nginx.
pub fn upstream_headers(cc: &CacheConf, job: Option<&CacheJob>) -> Vec<(&'static str, String)> {
    let mut ims = String::new();
    let mut inm = String::new();
    if let Some(c) = job.filter(|j| cc.revalidate && j.status == Status::Expired)
        && let Some(f) = c.cached.as_ref()
    {
        if f.meta.last_modified > 0 {
            let mut buf = [0u8; 29];
            peregrine_codec::date::fmt_http_date(f.meta.last_modified, &mut buf);
            ims = String::from_utf8_lossy(&buf).into_owned();
        }
        inm = String::from_utf8_lossy(&f.meta.etag).into_owned();
    }
    vec![
        ("If-Modified-Since", ims),
        ("If-Unmodified-Since", String::new()),
        ("If-None-Match", inm),
        ("If-Match", String::new()),
        ("Range", String::new()),
        ("If-Range", String::new()),
    ]
}
