//! The merged settings of the upstream cache (`ngx_http_file_cache.c` and
//! the `*_cache*` directives of the proxy and the gateway modules): the
//! cache directories `proxy_cache_path` and its twins define at the `http`
//! level, and per location which one a request uses and how (its key,
//! validity, bypass, stale answers, lock, revalidation). Read by
//! `crate::build::cache`; the run-time side is `peregrine_core::cache`
//! (keys, validity, the shared zone, the file format) and the engine's
//! `upstream::cache_store` (the writing).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::model::Span;

/// One `proxy_cache_path` (or `fastcgi_`, `uwsgi_`, `scgi_cache_path`).
#[derive(Debug, Clone, PartialEq)]
pub struct CachePathConf {
    /// `keys_zone=NAME:SIZE`.
    pub name: String,
    pub size: usize,
    /// The directory, absolute (relative to the prefix as nginx's).
    pub path: PathBuf,
    /// `levels=1:2`: the length of each directory level's name, taken from
    /// the end of the key's md5 (at most 3 levels of 1 or 2).
    pub levels: Vec<u8>,
    /// `use_temp_path`: off writes temporary files in the cache directory
    /// itself; on (nginx's default) in `proxy_temp_path`. Peregrine writes
    /// them beside the cache either way (a rename must not cross file
    /// systems) and keeps the setting for its documentation.
    pub use_temp_path: bool,
    /// `inactive`: an entry not used for this long is removed (10m).
    pub inactive: Duration,
    /// `max_size`: the cache's size on disk is kept under this.
    pub max_size: Option<u64>,
    /// `min_free`: the free space the manager keeps on the file system.
    pub min_free: Option<u64>,
    /// The directive that defined it (`proxy_cache_path`...), and where.
    pub directive: String,
    pub span: Span,
}

/// `proxy_cache`'s value.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheZoneRef {
    /// `off` (or not set).
    Off,
    /// A zone named at load; where, for nginx's "zone is unknown".
    Zone(String, Span),
    /// A name with variables, evaluated per request.
    Vars(String),
}

/// `proxy_cache_use_stale` bits: nginx's `NGX_HTTP_UPSTREAM_FT_*`, as
/// [`crate::model::next`], plus `updating`.
pub use crate::model::next as stale;

/// One location's merged cache settings.
#[derive(Debug, Clone)]
pub struct CacheConf {
    pub zone: CacheZoneRef,
    /// `proxy_cache_key` (with variables); `None`: the module's default
    /// (`$scheme$proxy_host$request_uri` for the proxy, "" for the
    /// gateways, which nginx warns about).
    pub key: Option<String>,
    /// `proxy_cache_valid [CODE...] TIME`: status 0 is `any`.
    pub valid: Arc<[(u16, Duration)]>,
    /// `proxy_cache_methods`: GET and HEAD always, plus these.
    pub methods: Arc<[String]>,
    pub min_uses: u32,
    /// `proxy_cache_bypass` and `proxy_no_cache`: values with variables;
    /// one not empty and not "0" bypasses (does not store).
    pub bypass: Arc<[String]>,
    pub no_cache: Arc<[String]>,
    /// `proxy_cache_use_stale` as [`stale`] bits (`off`: 0).
    pub use_stale: u32,
    pub lock: bool,
    pub lock_timeout: Duration,
    pub lock_age: Duration,
    pub revalidate: bool,
    pub background_update: bool,
    pub convert_head: bool,
    /// `proxy_cache_max_range_offset`: a range starting beyond is not
    /// cached (the request goes upstream with its Range).
    pub max_range_offset: Option<u64>,
}

impl Default for CacheConf {
    /// nginx's defaults (`ngx_http_proxy_merge_loc_conf`).
    fn default() -> Self {
        CacheConf {
            zone: CacheZoneRef::Off,
            key: None,
            valid: Arc::from(Vec::new()),
            methods: Arc::from(Vec::new()),
            min_uses: 1,
            bypass: Arc::from(Vec::new()),
            no_cache: Arc::from(Vec::new()),
            use_stale: 0,
            lock: false,
            lock_timeout: Duration::from_secs(5),
            lock_age: Duration::from_secs(5),
            revalidate: false,
            background_update: false,
            convert_head: true,
            max_range_offset: None,
        }
    }
}

impl CacheConf {
    /// Whether the location caches at all.
    pub fn on(&self) -> bool {
        self.zone != CacheZoneRef::Off
    }
}
