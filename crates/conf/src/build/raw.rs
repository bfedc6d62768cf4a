//! Settings as written at one level (`None` = not set there), and their
//! merging with the enclosing level's merged settings, as nginx's
//! `merge_loc_conf` callbacks do: a value set at a level wins, otherwise the
//! enclosing one is inherited, and at the top nginx's default applies.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::regex::Regex;

use crate::model::*;

/// nginx's built-in types when no `types` block is given anywhere
/// (`ngx_http_core_default_types`).
const NGINX_DEFAULT_TYPES: &[(&str, &str)] = &[
    ("html", "text/html"),
    ("gif", "image/gif"),
    ("jpg", "image/jpeg"),
];

/// nginx's default `charset_types`.
pub const DEFAULT_CHARSET_TYPES: &[&str] = &[
    "text/html",
    "text/xml",
    "text/plain",
    "text/vnd.wap.wml",
    "application/javascript",
    "application/rss+xml",
];

/// Peregrine's default small-file memory cache (`memory_cache`), per worker.
///
/// `max_file` is 16 KiB because above that a copy from user space costs more
/// than `sendfile` from the page cache: measured with bench/compare.sh on a
/// 123,784-byte file, 35 µs per request from memory against 25 µs with
/// sendfile (docs/performance.md). Below it, one `writev` of a cached head
/// and body beats open_file_cache + sendfile's extra system calls.
pub const DEFAULT_MEMORY_CACHE: MemoryCacheConf = MemoryCacheConf {
    size: 64 * 1024 * 1024,
    max_file: 16 * 1024,
};

/// `brotli`/`zstd` settings at one level.
#[derive(Debug, Clone, Default)]
pub struct RawCompress {
    pub on: Option<bool>,
    pub types: Option<Vec<String>>,
    pub comp_level: Option<u32>,
    pub min_length: Option<u64>,
    pub static_: Option<StaticMode>,
}

impl RawCompress {
    fn merge(&self, parent: &CompressConf) -> CompressConf {
        CompressConf {
            on: self.on.unwrap_or(parent.on),
            types: self.types.clone().unwrap_or_else(|| parent.types.clone()),
            comp_level: self.comp_level.unwrap_or(parent.comp_level),
            min_length: self.min_length.unwrap_or(parent.min_length),
            static_: self.static_.unwrap_or(parent.static_),
        }
    }
}

/// Location-level settings (also written at http and server level).
#[derive(Debug, Clone, Default)]
pub struct RawLoc {
    pub root: Option<DocRoot>,
    pub index: Option<Vec<String>>,
    pub autoindex: Option<bool>,
    pub try_files: Option<Vec<String>>,
    pub error_pages: Option<Vec<ErrorPageConf>>,
    pub stub_status: Option<bool>,
    pub metrics: Option<bool>,
    pub health_status: Option<bool>,
    pub types: Option<MimeTypes>,
    pub default_type: Option<String>,
    pub charset: Option<Option<String>>,
    pub charset_types: Option<Vec<String>>,
    pub sendfile: Option<bool>,
    pub tcp_nopush: Option<bool>,
    pub tcp_nodelay: Option<bool>,
    pub keepalive: Option<(Duration, Option<Duration>)>,
    pub keepalive_requests: Option<u64>,
    pub reset_timedout_connection: Option<bool>,
    pub client_body_timeout: Option<Duration>,
    pub send_timeout: Option<Duration>,
    pub client_max_body_size: Option<u64>,
    pub client_body_buffer_size: Option<usize>,
    pub client_body_in_file_only: Option<InFileOnly>,
    pub client_body_in_single_buffer: Option<bool>,
    pub client_body_temp_path: Option<Arc<TempPath>>,
    pub open_file_cache: Option<Option<OpenFileCacheConf>>,
    pub open_file_cache_valid: Option<Duration>,
    pub open_file_cache_min_uses: Option<u32>,
    pub open_file_cache_errors: Option<bool>,
    pub memory_cache: Option<Option<MemoryCacheConf>>,
    /// The logs written at this level; `access_log_off` wins over them.
    pub access_log: Option<Vec<AccessLogConf>>,
    pub access_log_off: bool,
    pub gzip: Option<bool>,
    pub gzip_types: Option<Vec<String>>,
    pub gzip_min_length: Option<u64>,
    pub gzip_comp_level: Option<u32>,
    pub gzip_proxied: Option<GzipProxied>,
    /// `gzip_disable`: (regexes, msie6).
    pub gzip_disable: Option<(Vec<Regex>, bool)>,
    pub gzip_vary: Option<bool>,
    pub gzip_http_version: Option<(u8, u8)>,
    pub gzip_buffers: Option<(usize, usize)>,
    pub gzip_static: Option<StaticMode>,
    pub brotli: RawCompress,
    pub zstd: RawCompress,
    pub proxy_buffers: Option<(usize, usize)>,
    pub proxy_busy_buffers_size: Option<usize>,
    // modules
    pub empty_gif: Option<bool>,
    pub random_index: Option<bool>,
    pub referer: Option<RefererConf>,
    pub secure_link: super::modules::RawSecureLink,
    pub userid: super::modules::RawUserid,
    /// `open_log_file_cache`: `Some(None)` is `off`.
    pub open_log_file_cache: Option<Option<OpenLogFileCacheConf>>,
    // request
    pub request: super::request::RawRequest,
    // headers
    pub add_headers: Option<Vec<AddHeader>>,
    pub add_trailers: Option<Vec<AddHeader>>,
    pub add_header_inherit: Option<HeadersInherit>,
    pub add_trailer_inherit: Option<HeadersInherit>,
    pub expires: Option<Expires>,
    pub server_tokens: Option<ServerTokens>,
    pub etag: Option<bool>,
    pub if_modified_since: Option<IfModifiedSince>,
    // conn
    pub conn: super::conn::RawConn,
    // vars2
    /// `error_log` at this level (several add up, as nginx's).
    pub error_log: Option<Vec<crate::model::ErrorLogConf>>,
    // fastpath
    /// The fast-path verdicts of the directives written at this level.
    pub fast: crate::fast::FastChain,
    // rewrite
    pub rewrite: super::rewrite::RawRewrite,
    // access
    pub access: Option<Vec<crate::model::AccessRule>>,
    // auth_basic
    pub auth_basic: Option<String>,
    pub auth_basic_user_file: Option<crate::model::UserFile>,
    // auth_request
    /// `auth_request` (`Some(None)`: `off`).
    pub auth_request: Option<Option<String>>,
    pub auth_request_set: Option<Vec<crate::model::AuthRequestSet>>,
    // proxy
    pub proxy: super::proxy::RawProxy,
    // resolver
    pub resolver: super::resolver::RawResolver,
    // gateways: fastcgi, uwsgi, scgi (boxed: a level is on the stack
    // per nesting depth while a configuration is read)
    pub fastcgi: Box<super::cgi::RawCgi>,
    pub uwsgi: Box<super::cgi::RawCgi>,
    pub scgi: Box<super::cgi::RawCgi>,
    // ssi, addition, sub
    pub filters: Box<super::filters::RawFilters>,
    // limits
    pub limit_req: super::limit_zone::RawLimit<crate::model::LimitReqRule>,
    pub limit_conn: super::limit_zone::RawLimit<crate::model::LimitConnRule>,
    pub realip: super::realip::RawRealIp,
    /// `limit_req_zone`/`limit_conn_zone` (http level only).
    pub zones: super::limit_zone::RawZones,
    /// `proxy_cache_path` and its twins (http level only).
    pub cache_paths: Vec<crate::cache::CachePathConf>,
    pub auth_delay: Option<std::time::Duration>,
    pub satisfy_any: Option<bool>,
    // limit_except
    /// The methods and the block's own settings.
    pub limit_except: Option<Box<(Vec<String>, RawLoc)>>,
    // proxy_ssl
    pub proxy_ssl: Box<super::proxy_ssl::RawProxySsl>,
}

/// Resolves a path as `ngx_conf_full_name(cycle, name, 0)`: relative paths are
/// relative to the prefix.
pub fn full_name(prefix: &Path, name: &str) -> String {
    if name.starts_with('/') {
        name.to_string()
    } else {
        prefix.join(name).to_string_lossy().into_owned()
    }
}

impl LocConf {
    /// nginx's defaults for every location-level setting: what a location
    /// gets when nothing is set at http, server or location level (relative
    /// paths resolved with `prefix`). The base of every merge (the http
    /// level merges onto it), so the defaults are written only here.
    pub fn nginx_default(prefix: &Path) -> LocConf {
        let types = NGINX_DEFAULT_TYPES
            .iter()
            .map(|(e, t)| (e.to_string(), t.to_string()))
            .collect();
        let compress = |comp_level| CompressConf {
            on: false,
            types: vec!["text/html".into()],
            comp_level,
            min_length: 20,
            static_: StaticMode::Off,
        };
        LocConf {
            root: DocRoot::Root(full_name(prefix, "html")),
            index: vec!["index.html".into()],
            autoindex: false,
            try_files: Vec::new(),
            error_pages: Vec::new(),
            stub_status: false,
            metrics: false,
            health_status: false,
            types: Arc::new(MimeTypes { by_ext: types }),
            default_type: "text/plain".into(),
            charset: None,
            charset_types: DEFAULT_CHARSET_TYPES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            sendfile: false,
            tcp_nopush: false,
            tcp_nodelay: true,
            keepalive_timeout: Duration::from_secs(75),
            keepalive_header: None,
            keepalive_requests: 1000,
            reset_timedout_connection: false,
            client_body_timeout: Duration::from_secs(60),
            send_timeout: DEFAULT_SEND_TIMEOUT,
            client_max_body_size: 1024 * 1024,
            // nginx: 2 pages (16k on x86-64).
            client_body_buffer_size: 16 * 1024,
            client_body: ClientBodyConf {
                in_file_only: InFileOnly::Off,
                single_buffer: false,
                // nginx's NGX_HTTP_CLIENT_TEMP_PATH.
                temp_path: Arc::new(TempPath {
                    dir: prefix.join("client_body_temp"),
                    levels: Vec::new(),
                }),
            },
            open_file_cache: None,
            open_file_cache_valid: Duration::from_secs(60),
            open_file_cache_min_uses: 1,
            open_file_cache_errors: false,
            memory_cache: Some(DEFAULT_MEMORY_CACHE),
            access_log: vec![AccessLogConf {
                cache: None,
                userid: None,
                target: LogTarget::File(prefix.join("logs/access.log")),
                format: "combined".into(),
                buffer: None,
                flush: None,
                gzip: None,
                condition: None,
                span: Span::default(),
            }],
            gzip: GzipConf {
                on: false,
                types: vec!["text/html".into()],
                min_length: 20,
                comp_level: 1,
                proxied: GzipProxied::default(),
                disable: Vec::new(),
                disable_msie6: false,
                vary: false,
                http_version: (1, 1),
                buffers: (32, 4096),
                static_: StaticMode::Off,
            },
            brotli: compress(6),
            zstd: compress(1),
            proxy_buffers: None,
            proxy_busy_buffers_size: None,
            empty_gif: false,
            random_index: false,
            referer: None,
            secure_link: Arc::default(),
            userid: Arc::default(),
            open_log_file_cache: None,
            request: RequestConf::default(),
            add_headers: Arc::from([]),
            add_trailers: Arc::from([]),
            add_header_inherit: HeadersInherit::On,
            add_trailer_inherit: HeadersInherit::On,
            expires: Expires::Off,
            server_tokens: ServerTokens::On,
            etag: true,
            if_modified_since: IfModifiedSince::Exact,
            conn: ConnConf::default(),
            error_log: None,
            fast_chain: Default::default(),
            fast_eligible: true,
            rewrite: RewriteConf {
                uninitialized_warn: true,
                ..RewriteConf::default()
            },
            root_has_vars: false,
            access: Arc::from([]),
            auth_basic: None,
            auth_basic_user_file: None,
            auth_request: None,
            auth_request_set: Arc::from([]),
            proxy: Arc::default(),
            resolver: None,
            resolver_timeout: super::resolver::DEFAULT_TIMEOUT,
            fastcgi: Arc::default(),
            uwsgi: Arc::default(),
            scgi: Arc::default(),
            filters: Arc::default(),
            limit_req: Default::default(),
            limit_conn: Default::default(),
            realip: Default::default(),
            auth_delay: std::time::Duration::ZERO,
            satisfy_any: false,
            limit_except: None,
            proxy_ssl: Arc::new(super::proxy_ssl::nginx_default(prefix)),
        }
    }
}

macro_rules! inherit {
    ($own:expr, $parent:expr) => {
        match &$own {
            Some(v) => v.clone(),
            None => $parent.clone(),
        }
    };
}

impl RawLoc {
    /// Merges with the enclosing level. `try_files`, `return`, `stub_status`
    /// and `metrics` are not inherited: in nginx they belong to the block
    /// they are written in (a server-level `return` runs before location
    /// selection; a handler is not copied into locations).
    pub fn merge(&self, p: &LocConf) -> LocConf {
        let mut gzip_types = inherit!(self.gzip_types, p.gzip.types);
        // nginx: "text/html" is always compressed when gzip is on.
        if !gzip_types.iter().any(|t| t == "text/html") {
            gzip_types.insert(0, "text/html".into());
        }
        let (disable, disable_msie6) = match &self.gzip_disable {
            Some((re, msie6)) => (re.clone(), *msie6),
            None => (p.gzip.disable.clone(), p.gzip.disable_msie6),
        };
        let (keepalive_timeout, keepalive_header) = match self.keepalive {
            Some(k) => k,
            None => (p.keepalive_timeout, p.keepalive_header),
        };
        let open_log_file_cache = self.open_log_file_cache.unwrap_or(p.open_log_file_cache);
        let mut access_log = if self.access_log_off {
            Vec::new()
        } else {
            inherit!(self.access_log, p.access_log)
        };
        let userid = self.userid.merge(&p.userid);
        // nginx's log handler consults the current location's cache, and
        // the log's variables the current location's userid settings.
        for a in &mut access_log {
            a.cache = open_log_file_cache;
            a.userid = (userid.mode != UseridMode::Off).then(|| Arc::clone(&userid));
        }
        let add_header_inherit = self.add_header_inherit.unwrap_or(p.add_header_inherit);
        let add_trailer_inherit = self.add_trailer_inherit.unwrap_or(p.add_trailer_inherit);
        let mut conf = LocConf {
            root: inherit!(self.root, p.root),
            index: inherit!(self.index, p.index),
            autoindex: self.autoindex.unwrap_or(p.autoindex),
            try_files: self.try_files.clone().unwrap_or_default(),
            error_pages: inherit!(self.error_pages, p.error_pages),
            stub_status: self.stub_status.unwrap_or(false),
            metrics: self.metrics.unwrap_or(false),
            health_status: self.health_status.unwrap_or(false),
            types: match &self.types {
                Some(t) => Arc::new(t.clone()),
                None => Arc::clone(&p.types),
            },
            default_type: inherit!(self.default_type, p.default_type),
            charset: inherit!(self.charset, p.charset),
            charset_types: inherit!(self.charset_types, p.charset_types),
            sendfile: self.sendfile.unwrap_or(p.sendfile),
            tcp_nopush: self.tcp_nopush.unwrap_or(p.tcp_nopush),
            tcp_nodelay: self.tcp_nodelay.unwrap_or(p.tcp_nodelay),
            keepalive_timeout,
            keepalive_header,
            keepalive_requests: self.keepalive_requests.unwrap_or(p.keepalive_requests),
            reset_timedout_connection: self
                .reset_timedout_connection
                .unwrap_or(p.reset_timedout_connection),
            client_body_timeout: self.client_body_timeout.unwrap_or(p.client_body_timeout),
            send_timeout: self.send_timeout.unwrap_or(p.send_timeout),
            client_max_body_size: self.client_max_body_size.unwrap_or(p.client_max_body_size),
            client_body_buffer_size: self
                .client_body_buffer_size
                .unwrap_or(p.client_body_buffer_size),
            client_body: ClientBodyConf {
                in_file_only: self
                    .client_body_in_file_only
                    .unwrap_or(p.client_body.in_file_only),
                single_buffer: self
                    .client_body_in_single_buffer
                    .unwrap_or(p.client_body.single_buffer),
                temp_path: inherit!(self.client_body_temp_path, p.client_body.temp_path),
            },
            open_file_cache: self.open_file_cache.unwrap_or(p.open_file_cache),
            open_file_cache_valid: self
                .open_file_cache_valid
                .unwrap_or(p.open_file_cache_valid),
            open_file_cache_min_uses: self
                .open_file_cache_min_uses
                .unwrap_or(p.open_file_cache_min_uses),
            open_file_cache_errors: self
                .open_file_cache_errors
                .unwrap_or(p.open_file_cache_errors),
            memory_cache: self.memory_cache.unwrap_or(p.memory_cache),
            access_log,
            gzip: GzipConf {
                on: self.gzip.unwrap_or(p.gzip.on),
                types: gzip_types,
                min_length: self.gzip_min_length.unwrap_or(p.gzip.min_length),
                comp_level: self.gzip_comp_level.unwrap_or(p.gzip.comp_level),
                proxied: self.gzip_proxied.unwrap_or(p.gzip.proxied),
                disable,
                disable_msie6,
                vary: self.gzip_vary.unwrap_or(p.gzip.vary),
                http_version: self.gzip_http_version.unwrap_or(p.gzip.http_version),
                buffers: self.gzip_buffers.unwrap_or(p.gzip.buffers),
                static_: self.gzip_static.unwrap_or(p.gzip.static_),
            },
            brotli: self.brotli.merge(&p.brotli),
            zstd: self.zstd.merge(&p.zstd),
            proxy_buffers: self.proxy_buffers.or(p.proxy_buffers),
            proxy_busy_buffers_size: self.proxy_busy_buffers_size.or(p.proxy_busy_buffers_size),
            empty_gif: self.empty_gif.unwrap_or(false),
            random_index: self.random_index.unwrap_or(p.random_index),
            referer: match &self.referer {
                Some(r) => Some(Arc::new(r.clone())),
                None => p.referer.clone(),
            },
            secure_link: self.secure_link.merge(&p.secure_link),
            userid,
            open_log_file_cache,
            request: self.request.merge(&p.request),
            add_headers: merge_headers(&self.add_headers, add_header_inherit, &p.add_headers),
            add_trailers: merge_headers(&self.add_trailers, add_trailer_inherit, &p.add_trailers),
            add_header_inherit,
            add_trailer_inherit,
            expires: inherit!(self.expires, p.expires),
            server_tokens: self.server_tokens.unwrap_or(p.server_tokens),
            etag: self.etag.unwrap_or(p.etag),
            if_modified_since: self.if_modified_since.unwrap_or(p.if_modified_since),
            conn: self.conn.merge(&p.conn),
            error_log: match &self.error_log {
                Some(v) => Some(Arc::from(v.as_slice())),
                None => p.error_log.clone(),
            },
            fast_chain: self.fast.under(&p.fast_chain),
            fast_eligible: false,
            rewrite: RewriteConf::default(),
            root_has_vars: false,
            access: match &self.access {
                Some(v) => Arc::from(v.as_slice()),
                None => p.access.clone(),
            },
            auth_basic: self.auth_basic.clone().or_else(|| p.auth_basic.clone()),
            auth_basic_user_file: self
                .auth_basic_user_file
                .clone()
                .or_else(|| p.auth_basic_user_file.clone()),
            auth_request: match &self.auth_request {
                Some(uri) => uri.clone(),
                None => p.auth_request.clone(),
            },
            auth_request_set: match &self.auth_request_set {
                Some(v) => Arc::from(v.as_slice()),
                None => p.auth_request_set.clone(),
            },
            proxy: Arc::new(self.proxy.merge(&p.proxy)),
            resolver: self.resolver.servers.clone().or_else(|| p.resolver.clone()),
            resolver_timeout: self.resolver.timeout.unwrap_or(p.resolver_timeout),
            fastcgi: Arc::new(self.fastcgi.merge(&p.fastcgi)),
            uwsgi: Arc::new(self.uwsgi.merge(&p.uwsgi)),
            scgi: Arc::new(self.scgi.merge(&p.scgi)),
            filters: Arc::new(self.filters.merge(&p.filters)),
            limit_req: self.limit_req.merge(&p.limit_req),
            limit_conn: self.limit_conn.merge(&p.limit_conn),
            realip: self.realip.merge(&p.realip),
            auth_delay: self.auth_delay.unwrap_or(p.auth_delay),
            satisfy_any: self.satisfy_any.unwrap_or(p.satisfy_any),
            // Not inherited: a location's own (nginx merges no
            // `limit_except`).
            limit_except: None,
            proxy_ssl: self.proxy_ssl.merge(&p.proxy_ssl),
        };
        conf.root_has_vars = match &conf.root {
            DocRoot::Root(r) | DocRoot::Alias(r) => r.contains('$'),
        };
        conf.rewrite = super::rewrite::merge(&self.rewrite, &conf, p);
        conf.fast_eligible = conf.fast_chain.admits(&conf);
        if let Some(le) = &self.limit_except {
            let inner = le.1.merge(&conf);
            conf.limit_except = Some(Arc::new(crate::model::LimitExceptConf {
                methods: le.0.clone(),
                conf: Arc::new(inner),
            }));
        }
        conf
    }
}

/// `ngx_http_headers_merge_conf`: a level's own list, else the enclosing
/// one; with `add_header_inherit merge` (itself inherited) its own list and
/// then the enclosing one; with `off`, only its own.
fn merge_headers(
    own: &Option<Vec<AddHeader>>,
    inherit: HeadersInherit,
    parent: &Arc<[AddHeader]>,
) -> Arc<[AddHeader]> {
    match (own, inherit) {
        (None, HeadersInherit::Off) => Arc::from([]),
        (None, _) => parent.clone(),
        (Some(v), HeadersInherit::Merge) => v.iter().chain(parent.iter()).cloned().collect(),
        (Some(v), _) => v.iter().cloned().collect(),
    }
}

/// Server-level settings (also written at http level).
#[derive(Debug, Clone, Default)]
pub struct RawSrv {
    pub client_header_timeout: Option<Duration>,
    pub client_header_buffer_size: Option<usize>,
    pub large_client_header_buffers: Option<(usize, usize)>,
    // request
    pub merge_slashes: Option<bool>,
    // conn
    pub headers: super::conn::RawHeaderRules,
    // ssl
    pub ssl: super::ssl::RawSsl,
    // http2
    pub http2: super::http2::RawHttp2,
}

/// nginx's defaults for the server-level settings.
pub const DEFAULT_CLIENT_HEADER_TIMEOUT: Duration = Duration::from_secs(60);
/// nginx's `send_timeout` default.
pub const DEFAULT_SEND_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_CLIENT_HEADER_BUFFER_SIZE: usize = 1024;
pub const DEFAULT_LARGE_CLIENT_HEADER_BUFFERS: (usize, usize) = (4, 8 * 1024);

impl RawSrv {
    /// Merges with the http level (`None` fields there fall to nginx's defaults).
    pub fn merge(&self, http: &RawSrv) -> RawSrv {
        RawSrv {
            client_header_timeout: self
                .client_header_timeout
                .or(http.client_header_timeout)
                .or(Some(DEFAULT_CLIENT_HEADER_TIMEOUT)),
            client_header_buffer_size: self
                .client_header_buffer_size
                .or(http.client_header_buffer_size)
                .or(Some(DEFAULT_CLIENT_HEADER_BUFFER_SIZE)),
            large_client_header_buffers: self
                .large_client_header_buffers
                .or(http.large_client_header_buffers)
                .or(Some(DEFAULT_LARGE_CLIENT_HEADER_BUFFERS)),
            merge_slashes: self.merge_slashes.or(http.merge_slashes).or(Some(true)),
            headers: self.headers.merge(&http.headers),
            ssl: self.ssl.merge(&http.ssl),
            http2: self.http2.merge(&http.http2),
        }
    }
}

/// The main context as written.
#[derive(Debug, Clone, Default)]
pub struct RawMain {
    pub worker_processes: Option<WorkerProcesses>,
    pub worker_cpu_affinity: Option<CpuAffinity>,
    pub worker_rlimit_nofile: Option<u64>,
    pub error_log: Vec<ErrorLogConf>,
    pub pid: Option<PathBuf>,
    pub daemon: Option<bool>,
    pub user: Option<UserConf>,
    pub worker_shutdown_timeout: Option<Duration>,
    pub shutdown_delay: Option<Duration>,
    pub config_watch: Option<Option<Duration>>,
    pub events: Option<RawEvents>,
    pub http: Option<HttpConf>,
    // stream
    pub stream: Option<std::sync::Arc<crate::stream::StreamConf>>,
    /// `mail { }`.
    pub mail: Option<std::sync::Arc<crate::mail::MailConf>>,
}

use std::path::PathBuf;

/// The events context as written.
#[derive(Debug, Clone, Default)]
pub struct RawEvents {
    pub worker_connections: Option<usize>,
    pub multi_accept: Option<bool>,
    pub use_method: Option<String>,
}

/// The http context as written.
#[derive(Debug, Clone, Default)]
pub struct RawHttp {
    pub srv: RawSrv,
    pub loc: RawLoc,
    pub servers: Vec<RawServer>,
    // request
    pub charset_maps: Vec<CharsetMap>,
    // upstream
    pub upstreams: Vec<crate::model::UpstreamConf>,
    // map
    pub maps: Vec<crate::model::MapConf>,
    // split_clients
    pub split_clients: Vec<crate::model::SplitClientsConf>,
    // geo
    pub geos: Vec<crate::model::GeoConf>,
}

/// One `server { }` as written.
#[derive(Debug, Clone, Default)]
pub struct RawServer {
    pub listen: Vec<ListenConf>,
    pub server_names: Vec<ServerName>,
    pub srv: RawSrv,
    pub loc: RawLoc,
    pub locations: Vec<RawLocation>,
    pub span: Span,
}

/// One `location { }` as written.
#[derive(Debug, Clone)]
pub struct RawLocation {
    pub matcher: LocationMatch,
    /// The name as nginx prints it in messages (`/x`, `@n`, the regex).
    pub name: String,
    pub loc: RawLoc,
    pub locations: Vec<RawLocation>,
    pub span: Span,
}

impl RawLocation {
    /// Merges with the enclosing level, recursively.
    pub fn merge(&self, parent: &LocConf) -> LocationConf {
        let conf = self.loc.merge(parent);
        let locations = self
            .locations
            .iter()
            .map(|l| Arc::new(l.merge(&conf)))
            .collect();
        LocationConf {
            matcher: self.matcher.clone(),
            conf: Arc::new(conf),
            locations,
            span: self.span.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_values_win_and_others_are_inherited() {
        let prefix = Path::new("/p");
        let base = LocConf::nginx_default(prefix);
        let http = RawLoc {
            sendfile: Some(true),
            keepalive: Some((Duration::from_secs(30), None)),
            gzip: Some(true),
            ..Default::default()
        }
        .merge(&base);
        let srv = RawLoc {
            keepalive: Some((Duration::from_secs(5), Some(Duration::from_secs(4)))),
            gzip_types: Some(vec!["text/css".into()]),
            rewrite: super::super::rewrite::RawRewrite {
                ops: vec![super::super::rewrite::RawOp::Op(Op::Break)],
                ..Default::default()
            },
            ..Default::default()
        }
        .merge(&http);
        let loc = RawLoc {
            sendfile: Some(false),
            ..Default::default()
        }
        .merge(&srv);
        assert!(http.sendfile && srv.sendfile && !loc.sendfile);
        assert_eq!(loc.keepalive_timeout, Duration::from_secs(5));
        assert_eq!(loc.keepalive_header, Some(Duration::from_secs(4)));
        assert!(loc.gzip.on);
        assert_eq!(loc.gzip.types, vec!["text/html", "text/css"]);
        assert!(srv.rewrite.script.is_some() && loc.rewrite.script.is_none());
        assert!(loc.rewrite.outer_script && !loc.rewrite.is_none());
        assert_eq!(loc.root, DocRoot::Root("/p/html".into()));
        assert!(!base.sendfile && base.tcp_nodelay);
    }

    #[test]
    fn access_log_off_and_replacement() {
        let base = LocConf::nginx_default(Path::new("/p"));
        assert_eq!(base.access_log.len(), 1);
        let off = RawLoc {
            access_log_off: true,
            ..Default::default()
        }
        .merge(&base);
        assert!(off.access_log.is_empty());
        let inner = RawLoc::default().merge(&off);
        assert!(inner.access_log.is_empty());
    }

    #[test]
    fn srv_defaults() {
        let m = RawSrv::default().merge(&RawSrv {
            client_header_buffer_size: Some(4096),
            ..Default::default()
        });
        assert_eq!(m.client_header_buffer_size, Some(4096));
        assert_eq!(m.client_header_timeout, Some(DEFAULT_CLIENT_HEADER_TIMEOUT));
        assert_eq!(m.large_client_header_buffers, Some((4, 8192)));
    }
}
