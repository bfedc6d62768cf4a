//! The typed, merged configuration: what the rest of Peregrine reads.
//!
//! This file is the contract between the configuration crate and its users
//! (core, engine, log, compress, tune, the binary). Every value here is already
//! validated, defaulted as nginx defaults it, and inherited http → server →
//! location as nginx inherits it: a consumer never looks at the syntax tree.
//!
//! Fields may be added; renaming or removing one is a change to every crate.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use crate::regex::Regex;

/// A position in a configuration file, for messages (`in FILE:LINE`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Span {
    pub file: Arc<PathBuf>,
    pub line: u32,
}

/// One file read while loading (the main file and every include), for `-T`.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// The whole configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The prefix (`-p`), absolute, with which relative paths were resolved.
    pub prefix: PathBuf,
    /// The main configuration file, absolute.
    pub conf_file: PathBuf,
    pub main: MainConf,
    pub events: EventsConf,
    /// `None` when the file has no `http { }` block (nginx then serves nothing).
    pub http: Option<HttpConf>,
    /// `stream { }` (`None` without one).
    pub stream: Option<Arc<crate::stream::StreamConf>>,
    /// `mail { }` (`None` without one).
    pub mail: Option<Arc<crate::mail::MailConf>>,
    /// Every file read, in order of reading, for `-T`.
    pub files: Vec<SourceFile>,
    /// The `*_temp_path` directories named, absolute: created at start as
    /// nginx's `ngx_create_paths` does (Peregrine stores nothing in them
    /// yet: request bodies are not buffered to disk until issue 19).
    pub temp_paths: Vec<PathBuf>,
    /// Notices for accepted tuning hints with no effect here, then nginx's
    /// `[warn]`s about an accepted configuration (logged at start and by `-t`).
    pub notices: Vec<String>,
}

/// The main (top-level) context.
#[derive(Debug, Clone)]
pub struct MainConf {
    pub worker_processes: WorkerProcesses,
    pub worker_cpu_affinity: Option<CpuAffinity>,
    pub worker_rlimit_nofile: Option<u64>,
    /// Default when absent: `logs/error.log` at `error`, resolved with the prefix.
    pub error_log: Vec<ErrorLogConf>,
    /// Default `logs/peregrine.pid`, resolved with the prefix.
    pub pid: Option<PathBuf>,
    /// Peregrine's default is `off` (foreground), see README; `daemon on` forks.
    pub daemon: bool,
    pub user: Option<UserConf>,
    pub worker_shutdown_timeout: Option<Duration>,
    /// `shutdown_delay` (Peregrine's; default 0): QUIT keeps accepting this
    /// long, `health_status` answering 503, before the workers drain.
    pub shutdown_delay: Duration,
    /// `config_watch` (Peregrine's; default off): how often the master
    /// looks for a changed configuration file to reload.
    pub config_watch: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerProcesses {
    Auto,
    Count(usize),
}

/// A set of CPUs, bit N = CPU N (nginx's masks are written with CPU 0 rightmost).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuMask(pub Vec<u64>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuAffinity {
    /// One mask per worker, in order; the last repeats when workers outnumber masks.
    Masks(Vec<CpuMask>),
    /// `auto [mask]`: worker N on the Nth CPU of the mask (all CPUs when absent).
    Auto(Option<CpuMask>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warn,
    Error,
    Crit,
    Alert,
    Emerg,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    Stderr,
    File(PathBuf),
    /// `syslog:server=...` (`error_log` only): UDP datagrams to a syslog
    /// server in nginx's RFC 3164 form.
    Syslog(SyslogConf),
    /// `memory:SIZE` (`error_log` only): nginx's cyclic buffer for
    /// debuggers; the last SIZE bytes of the log are kept in memory.
    Memory(usize),
}

/// The parameters of a `syslog:` target (`ngx_syslog_parse_args`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyslogConf {
    pub server: SocketAddr,
    /// The text after `server=`, for messages.
    pub server_name: String,
    /// 0 (`kern`) .. 23 (`local7`, the default).
    pub facility: u8,
    /// 0 (`emerg`) .. 7 (`debug`); default 6 (`info`). An error log sends
    /// each message at its own level, as nginx's syslog writer does.
    pub severity: u8,
    /// Default `nginx`, as nginx (so that existing syslog filters match).
    pub tag: String,
    pub nohostname: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLogConf {
    pub target: LogTarget,
    pub level: LogLevel,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserConf {
    pub user: String,
    pub group: Option<String>,
}

/// The events context.
#[derive(Debug, Clone)]
pub struct EventsConf {
    /// Default 512 (nginx's).
    pub worker_connections: usize,
    pub multi_accept: bool,
    /// `use METHOD;` as written; only `epoll` is meaningful on Linux.
    pub use_method: Option<String>,
}

/// The http context, after merging.
#[derive(Debug, Clone)]
pub struct HttpConf {
    pub servers: Vec<Arc<ServerConf>>,
    /// `log_format` definitions by name, `combined` always present.
    pub log_formats: Vec<LogFormatConf>,
    // request
    /// `charset_map` blocks, in configuration order.
    pub charset_maps: Vec<CharsetMap>,
    // upstream
    /// `upstream { }` groups, in configuration order.
    pub upstreams: Vec<UpstreamConf>,
    // map
    /// `map` blocks, in configuration order (a variable names one).
    pub maps: Vec<MapConf>,
    // split_clients
    pub split_clients: Vec<SplitClientsConf>,
    // limits
    /// `limit_req_zone`s, then `limit_conn_zone`s (`rate` 0), in order.
    pub limit_req_zones: Vec<LimitZoneConf>,
    pub limit_conn_zones: Vec<LimitZoneConf>,
    /// `proxy_cache_path` and its twins.
    pub cache_paths: Vec<crate::cache::CachePathConf>,
    // geo
    pub geos: Vec<GeoConf>,
    // variables
    /// The variables the configuration defines, by index.
    pub variables: Arc<VarTable>,
}

/// The variables a configuration defines (`set`, `map`, `geo`,
/// `split_clients`, a regex's named groups), each by the index nginx's
/// `ngx_http_get_variable_index` would give it: a compiled value names
/// one as [`Part::Set`], a request keeps their values in a table of that
/// length (`set` writes it; a map's value is cached in it), and what
/// gives each its value is known at load ([`VarDef`]), not looked up by
/// name per request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VarTable {
    /// Lowercase names, by index.
    pub names: Vec<String>,
    /// What defines each, by the same index.
    pub defs: Vec<VarDef>,
    /// Some name has a family's prefix (`set $http_connection bar;`): once
    /// `set` gave it a value, that value is the variable's, not the
    /// family's (nginx's `ngx_http_rewrite_set` keeps the prefix's handler
    /// for an unset one).
    pub shadows_family: bool,
}

/// What gives a configuration's variable its value when `set` has not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarDef {
    /// The request's own doing: `set`, `auth_request_set`, or a named
    /// group of a regex that matched (a server name's, a location's, a
    /// rewrite's): empty until one gives it a value.
    Script,
    /// `map ... $name`: the index of [`HttpConf::maps`].
    Map(usize),
    /// `geo ... $name`: the index of [`HttpConf::geos`].
    Geo(usize),
    /// `split_clients ... $name`: the index of [`HttpConf::split_clients`].
    Split(usize),
}

impl VarTable {
    /// The index of `name` (any case).
    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n.eq_ignore_ascii_case(name))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormatConf {
    pub name: String,
    pub escape: LogEscape,
    /// The concatenated format strings, variables unexpanded.
    pub format: String,
    /// The format strings as written: a variable name ends where its string
    /// ends (`'$uri' 'x'` is `$uri` then `x`, not `$urix`), as in nginx.
    pub parts: Vec<String>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogEscape {
    #[default]
    Default,
    Json,
    None,
}

/// One `server { }` block.
#[derive(Debug, Clone)]
pub struct ServerConf {
    /// Default `*:80` when root, `*:8000` otherwise, as nginx.
    pub listen: Vec<ListenConf>,
    /// Default: the single empty name `""`.
    pub server_names: Vec<ServerName>,
    pub client_header_timeout: Duration,
    /// Default 1k.
    pub client_header_buffer_size: usize,
    /// Default 4 8k: (count, size).
    pub large_client_header_buffers: (usize, usize),
    /// Locations in configuration order (the matcher sorts them as it needs).
    pub locations: Vec<Arc<LocationConf>>,
    /// The server-level settings, used when no location matches.
    pub conf: Arc<LocConf>,
    pub span: Span,
    // request
    /// `merge_slashes` (default on), read from the default server of an
    /// address as nginx does (the URI is parsed before `Host` is known).
    pub merge_slashes: bool,
    // conn
    /// `max_headers`, `ignore_invalid_headers`, `underscores_in_headers`.
    pub headers: HeaderRules,
    // ssl
    /// The server's `ssl_*` settings, merged with the http level's.
    pub ssl: SslConf,
    // http2
    /// The server's `http2*` settings, merged with the http level's.
    pub http2: Http2Conf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenConf {
    /// The address, or for `listen unix:PATH` its key ([`unix_key`]).
    pub addr: SocketAddr,
    /// `listen unix:PATH`: the socket's path.
    pub unix: Option<Arc<str>>,
    pub default_server: bool,
    pub reuseport: bool,
    /// `backlog=N`; nginx's default is 511 on Linux.
    pub backlog: i32,
    /// `deferred` (or `deferred=on`): `Some(true)`; Peregrine's
    /// `deferred=off`: `Some(false)`; not said: `None`, and the engine's
    /// default applies (not deferred, as nginx: see `peregrine_engine::listen`).
    pub deferred: Option<bool>,
    pub span: Span,
    // ssl
    /// `ssl`: connections to this address speak TLS (nginx: every
    /// `listen` of an address shares the flag).
    pub ssl: bool,
    // proxy_protocol
    /// `proxy_protocol`: connections to this address start with a PROXY
    /// protocol header (nginx: any `listen` of an address sets it for all).
    pub proxy_protocol: bool,
    // http2
    /// The deprecated `listen ... http2`: HTTP/2 on this address (nginx
    /// 1.25's `http2 on` in every server of it).
    pub http2: bool,
}

impl ListenConf {
    /// The address as nginx prints it (`unix:PATH` for a socket path).
    pub fn display(&self) -> String {
        match &self.unix {
            Some(p) => format!("unix:{p}"),
            None => self.addr.to_string(),
        }
    }
}

/// The prefix of the keys standing for UNIX-domain addresses: 100::/64,
/// IPv6's discard-only prefix (RFC 6666), which no host has as a local or
/// peer address. A `listen unix:PATH` is keyed by an address in it, so
/// that everything that selects by address (servers of an address, their
/// default server, TLS, HTTP/2, PROXY protocol) treats a socket path as
/// one more address without a second kind of key.
const UNIX_PREFIX: u128 = 0x0100_0000_0000_0000 << 64;

/// The key address of `listen unix:PATH`: the prefix and a 64-bit
/// FNV-1a hash of the path (port 0, which no TCP listener has). Distinct
/// paths whose hashes collide are refused at load (`build::listen`).
pub fn unix_key(path: &str) -> SocketAddr {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // The zero hash is the peer key below.
    let h = h.max(1);
    SocketAddr::new(
        std::net::Ipv6Addr::from(UNIX_PREFIX | u128::from(h)).into(),
        0,
    )
}

/// The peer address of a client on a UNIX-domain socket (nginx prints it
/// as `unix:`): the prefix itself, port 0.
pub const UNIX_PEER: SocketAddr = SocketAddr::new(
    std::net::IpAddr::V6(std::net::Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0)),
    0,
);

/// An address as nginx prints a client's or a server's (`$remote_addr`,
/// `client:` in the error log): the IP, or `unix:` for a UNIX-domain one.
pub struct IpText(pub SocketAddr);

impl std::fmt::Display for IpText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if is_unix(self.0) {
            f.write_str("unix:")
        } else {
            self.0.ip().fmt(f)
        }
    }
}

/// Whether an address is a UNIX-domain key ([`unix_key`], [`UNIX_PEER`]).
pub fn is_unix(addr: SocketAddr) -> bool {
    match addr {
        SocketAddr::V6(a) => u128::from(*a.ip()) >> 64 == UNIX_PREFIX >> 64 && a.port() == 0,
        SocketAddr::V4(_) => false,
    }
}

#[derive(Debug, Clone)]
pub enum ServerName {
    /// `example.com` (stored lowercase).
    Exact(String),
    /// `*.example.com` or `.example.com`: stored as the suffix `.example.com`;
    /// `.example.com` also matches `example.com` itself (`also_bare`).
    WildcardStart { suffix: String, also_bare: bool },
    /// `www.example.*`: stored as the prefix `www.example.`.
    WildcardEnd(String),
    /// `~regex`.
    Regex(Regex),
}

/// One `location` block, its settings merged with the enclosing ones.
#[derive(Debug, Clone)]
pub struct LocationConf {
    pub matcher: LocationMatch,
    pub conf: Arc<LocConf>,
    /// Nested locations, in configuration order.
    pub locations: Vec<Arc<LocationConf>>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum LocationMatch {
    /// `location = /uri`
    Exact(String),
    /// `location /uri` or, with `no_regex`, `location ^~ /uri`.
    Prefix { path: String, no_regex: bool },
    /// `location ~ re` or `location ~* re` (case-insensitive).
    Regex {
        regex: Regex,
        case_insensitive: bool,
    },
    /// `location @name`
    Named(String),
}

/// Settings that nginx allows at http, server and location level, after
/// inheritance. Defaults are nginx's unless the field says otherwise;
/// `LocConf::nginx_default` (in `build::raw`) builds them.
#[derive(Debug, Clone)]
pub struct LocConf {
    /// `root` (default `html`, resolved with the prefix) or `alias`.
    pub root: DocRoot,
    /// Default `index.html`.
    pub index: Vec<String>,
    pub autoindex: bool,
    /// `try_files file ... uri|=code`; empty when absent.
    /// Not inherited (nginx: belongs to its block).
    pub try_files: Vec<String>,
    /// Inherited only when the level has none of its own (nginx).
    pub error_pages: Vec<ErrorPageConf>,
    /// Not inherited; at server level it serves requests no location matches.
    pub stub_status: bool,
    /// Peregrine's Prometheus endpoint (`metrics on;`), see docs.
    pub metrics: bool,
    /// Peregrine's drain-aware health endpoint (`health_status;`).
    pub health_status: bool,

    /// Extension (lowercase) → MIME type, from `types { }` / `include mime.types`.
    pub types: Arc<MimeTypes>,
    /// Default `text/plain`.
    pub default_type: String,
    pub charset: Option<String>,
    pub charset_types: Vec<String>,

    pub sendfile: bool,
    pub tcp_nopush: bool,
    /// Default on.
    pub tcp_nodelay: bool,
    /// Default 75s; zero disables keep-alive.
    pub keepalive_timeout: Duration,
    /// The second argument: `Keep-Alive: timeout=N` header.
    pub keepalive_header: Option<Duration>,
    /// Default 1000.
    pub keepalive_requests: u64,
    pub reset_timedout_connection: bool,
    pub client_body_timeout: Duration,
    pub send_timeout: Duration,
    /// Default 1m; 0 disables the check.
    pub client_max_body_size: u64,
    pub client_body_buffer_size: usize,
    /// `client_body_in_file_only`, `client_body_in_single_buffer`,
    /// `client_body_temp_path` (the engine's `body` module).
    pub client_body: ClientBodyConf,

    pub open_file_cache: Option<OpenFileCacheConf>,
    /// Default 60s.
    pub open_file_cache_valid: Duration,
    /// Default 1.
    pub open_file_cache_min_uses: u32,
    pub open_file_cache_errors: bool,
    /// Peregrine's small-file memory cache (`memory_cache`), see docs.
    pub memory_cache: Option<MemoryCacheConf>,

    /// Empty means `access_log off`. Default: `logs/access.log combined`.
    pub access_log: Vec<AccessLogConf>,

    pub gzip: GzipConf,
    pub brotli: CompressConf,
    pub zstd: CompressConf,

    /// `proxy_buffers N size` and `proxy_busy_buffers_size`: accepted, unused.
    pub proxy_buffers: Option<(usize, usize)>,
    pub proxy_busy_buffers_size: Option<usize>,

    // modules: nginx's small stock modules (see `build::modules`).
    /// `empty_gif`: the location's content handler (not inherited).
    pub empty_gif: bool,
    /// `random_index on`.
    pub random_index: bool,
    /// `valid_referers` (`$invalid_referer`); `None`: every referer is valid.
    pub referer: Option<Arc<RefererConf>>,
    /// `secure_link`, `secure_link_md5`, `secure_link_secret`.
    pub secure_link: Arc<SecureLinkConf>,
    /// `userid*` (ngx_http_userid_filter_module).
    pub userid: Arc<UseridConf>,
    /// `open_log_file_cache` for `access_log` paths with variables.
    pub open_log_file_cache: Option<OpenLogFileCacheConf>,
    // request
    pub request: RequestConf,
    // headers
    /// `add_header`s in effect, in order: a level's own, else the enclosing
    /// level's (`add_header_inherit merge`: its own, then the enclosing ones).
    pub add_headers: Arc<[AddHeader]>,
    /// `add_trailer`s in effect, inherited as `add_headers`.
    pub add_trailers: Arc<[AddHeader]>,
    /// `add_header_inherit` / `add_trailer_inherit` (inherited themselves).
    pub add_header_inherit: HeadersInherit,
    pub add_trailer_inherit: HeadersInherit,
    /// `expires`; default `off`.
    pub expires: Expires,
    /// `server_tokens`; default `on`.
    pub server_tokens: ServerTokens,
    /// `etag`; default on.
    pub etag: bool,
    /// `if_modified_since`; default `exact`.
    pub if_modified_since: IfModifiedSince,
    // conn
    /// Connection-level settings: `keepalive_time`, `keepalive_disable`,
    /// `lingering_*`, `sendfile_max_chunk`, `limit_rate*`,
    /// `chunked_transfer_encoding`.
    pub conn: ConnConf,
    // vars2
    /// `error_log` of the http/server/location level in effect (inherited
    /// as nginx's `ngx_http_core_merge_loc_conf`); `None`: the main one.
    pub error_log: Option<Arc<[ErrorLogConf]>>,
    // fastpath
    /// The fast-path verdicts of the directives written in this level's
    /// chain (http, server, enclosing locations, this one), for the levels
    /// inside it ([`crate::fast`]).
    pub fast_chain: crate::fast::FastChain,
    /// Whether core's static fast path may record routes here: no
    /// directive in the chain says otherwise ([`crate::fast::FastChain::admits`]).
    pub fast_eligible: bool,
    // rewrite
    /// The rewrite module's script and flags (`crate::build::rewrite`).
    pub rewrite: RewriteConf,
    /// The `root`/`alias` text has variables (`$`): computed once at load,
    /// so the static path does not scan it per request.
    pub root_has_vars: bool,
    // access
    /// `allow`/`deny` rules in order (a level's own, else its parent's).
    pub access: Arc<[AccessRule]>,
    // auth_basic
    /// `auth_basic` realm (with variables; `off` disables), inherited alone.
    pub auth_basic: Option<String>,
    /// `auth_basic_user_file` (with variables), inherited alone.
    pub auth_basic_user_file: Option<UserFile>,
    // auth_request
    /// `auth_request`'s URI (`None`: off).
    pub auth_request: Option<String>,
    /// `auth_request_set`, in order.
    pub auth_request_set: Arc<[AuthRequestSet]>,
    // proxy
    /// The proxy module's settings (`crate::build::proxy`).
    pub proxy: Arc<ProxyConf>,
    // resolver
    /// `resolver` (inherited): the name servers for names built from
    /// variables; `None`: nginx's `no resolver defined to resolve`.
    pub resolver: Option<Arc<ResolverConf>>,
    /// `resolver_timeout` (inherited, default 30 s).
    pub resolver_timeout: std::time::Duration,
    // gateways
    /// `fastcgi_*`, `uwsgi_*`, `scgi_*` (`crate::cgi`).
    pub fastcgi: Arc<crate::cgi::CgiConf>,
    pub uwsgi: Arc<crate::cgi::CgiConf>,
    pub scgi: Arc<crate::cgi::CgiConf>,
    // ssi, addition, sub
    /// The body filters' settings (`crate::filters`).
    pub filters: Arc<crate::filters::FiltersConf>,
    // limits
    /// `limit_req` and its `limit_req_*` settings.
    pub limit_req: LimitConf<LimitReqRule>,
    /// `limit_conn` and its `limit_conn_*` settings.
    pub limit_conn: LimitConf<LimitConnRule>,
    /// The realip module's settings.
    pub realip: RealIpConf,
    /// `auth_delay` (default 0): how long a 401 of the access phase waits.
    pub auth_delay: Duration,
    /// `satisfy any` (default `all`): one access module allowing suffices.
    pub satisfy_any: bool,
    /// `limit_except METHOD... { }`: the settings for the other methods.
    pub limit_except: Option<Arc<LimitExceptConf>>,
    // proxy_ssl
    /// `proxy_ssl_*` (`build::proxy_ssl`).
    pub proxy_ssl: Arc<ProxySslConf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocRoot {
    /// `root PATH` (absolute after resolving with the prefix).
    Root(String),
    /// `alias PATH`.
    Alias(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorPageConf {
    pub codes: Vec<u16>,
    /// `=` alone: `Some(None)` (the target's status); `=404`: `Some(Some(404))`.
    pub overwrite: Option<Option<u16>>,
    /// A URI or `@name`.
    pub target: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MimeTypes {
    /// (extension lowercase, type), later entries win as in nginx.
    pub by_ext: std::collections::HashMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFileCacheConf {
    pub max: usize,
    /// Default 60s.
    pub inactive: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryCacheConf {
    /// Total bytes held per worker.
    pub size: usize,
    /// Largest file body held.
    pub max_file: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLogConf {
    pub target: LogTarget,
    /// The `open_log_file_cache` of the location using this log (set when
    /// merging: nginx consults the current location's cache).
    pub cache: Option<OpenLogFileCacheConf>,
    /// The userid settings of the location using this log, when `userid`
    /// is not `off` there (`$uid_got`, `$uid_set`; set when merging).
    pub userid: Option<Arc<UseridConf>>,
    /// Format name; `combined` by default.
    pub format: String,
    pub buffer: Option<usize>,
    pub flush: Option<Duration>,
    pub gzip: Option<u32>,
    /// `if=condition` as written (a variable expression).
    pub condition: Option<String>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StaticMode {
    #[default]
    Off,
    On,
    Always,
}

#[derive(Debug, Clone)]
pub struct GzipConf {
    pub on: bool,
    /// MIME types; `text/html` is always included; `*` means any.
    pub types: Vec<String>,
    /// Default 20.
    pub min_length: u64,
    /// Default 1.
    pub comp_level: u32,
    pub proxied: GzipProxied,
    /// `gzip_disable` regexes on User-Agent.
    pub disable: Vec<Regex>,
    /// `gzip_disable msie6`.
    pub disable_msie6: bool,
    pub vary: bool,
    /// Default 1.1: (major, minor).
    pub http_version: (u8, u8),
    /// Default 32 4k: accepted.
    pub buffers: (usize, usize),
    pub static_: StaticMode,
}

/// `gzip_proxied` flags; default `off` (all false).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GzipProxied {
    pub expired: bool,
    pub no_cache: bool,
    pub no_store: bool,
    pub private: bool,
    pub no_last_modified: bool,
    pub no_etag: bool,
    pub auth: bool,
    pub any: bool,
}

/// `brotli*` (ngx_brotli) and `zstd*` (zstd-nginx-module) settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressConf {
    pub on: bool,
    pub types: Vec<String>,
    pub comp_level: u32,
    pub min_length: u64,
    pub static_: StaticMode,
}

// modules

/// One host of `valid_referers` (nginx's combined hash: exact names, then
/// `*.example.com`/`.example.com`, then `www.example.*`), with the URI
/// prefix the referer must continue with after the host (`host/uri`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefererHost {
    /// Lowercase.
    Exact(String, Option<String>),
    /// `*.example.com` stored as `.example.com`; `.example.com` also
    /// matches `example.com` itself (`also_bare`).
    Head {
        suffix: String,
        also_bare: bool,
        uri: Option<String>,
    },
    /// `www.example.*` stored as `www.example.`.
    Tail(String, Option<String>),
}

/// `valid_referers` (ngx_http_referer_module).
#[derive(Debug, Clone)]
pub struct RefererConf {
    pub none: bool,
    pub blocked: bool,
    /// `server_names`: the names of the server the request is in count too.
    pub server_names: bool,
    pub hosts: Vec<RefererHost>,
    /// `~regex` (case-insensitive), matched against the referer without
    /// its scheme.
    pub regex: Vec<Regex>,
}

/// `secure_link*` (ngx_http_secure_link_module): values as written, with
/// variables expanded per request by core.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecureLinkConf {
    /// `secure_link hash[,expires]`.
    pub variable: Option<String>,
    /// `secure_link_md5 expression`.
    pub md5: Option<String>,
    /// `secure_link_secret word` (the older mode: `/prefix/hash/link`).
    pub secret: Option<String>,
}

/// `userid on|v1|log|off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum UseridMode {
    #[default]
    Off,
    Log,
    V1,
    On,
}

/// `userid_flags`: `secure`, `httponly`, `samesite=...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UseridFlags {
    pub secure: bool,
    pub httponly: bool,
    /// `strict`, `lax` or `none`.
    pub samesite: Option<&'static str>,
}

/// The userid filter's settings, after merging (nginx's defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseridConf {
    pub mode: UseridMode,
    pub flags: UseridFlags,
    /// `userid_service`; `None`: the local address (v2) or 0 (v1).
    pub service: Option<u32>,
    /// Default `uid`.
    pub name: String,
    /// `; domain=...` or empty (`none`, the default).
    pub domain: String,
    /// `; path=...` (default `; path=/`).
    pub path: String,
    /// `P3P` header value or empty.
    pub p3p: String,
    /// `userid_expires`: seconds; 0 (`off`, default) is a session cookie.
    pub expires: u64,
    /// `userid_mark`: a byte, or 0 for `off`.
    pub mark: u8,
}

impl Default for UseridConf {
    fn default() -> Self {
        UseridConf {
            mode: UseridMode::Off,
            flags: UseridFlags::default(),
            service: None,
            name: "uid".into(),
            domain: String::new(),
            path: "; path=/".into(),
            p3p: String::new(),
            expires: 0,
            mark: 0,
        }
    }
}

/// nginx's `NGX_HTTP_USERID_MAX_EXPIRES` (31 Dec 2037 23:55:55 GMT): what
/// `userid_expires max` stores.
pub const USERID_MAX_EXPIRES: u64 = 2_145_916_555;

/// `open_log_file_cache max=N [inactive=time] [min_uses=N] [valid=time]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenLogFileCacheConf {
    pub max: usize,
    /// Default 10s.
    pub inactive: Duration,
    /// Default 1.
    pub min_uses: u32,
    /// Default 60s.
    pub valid: Duration,
}
pub use crate::request_model::*;
/// One `add_header` / `add_trailer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddHeader {
    pub name: String,
    /// The value, compiled at load; empty adds nothing.
    pub value: Template,
    /// `always`: also for statuses other than 2xx/3xx ones nginx lists.
    pub always: bool,
}

/// `expires` (ngx_http_headers_filter_module). Times are seconds and may
/// be negative.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Expires {
    #[default]
    Off,
    Epoch,
    Max,
    /// `expires TIME`: from the time of the request.
    Access(i64),
    /// `expires modified TIME`: from the file's modification time.
    Modified(i64),
    /// `expires @TIME`: the next such time of day.
    Daily(i64),
    /// A value with variables, read per request (`modified` was given).
    Variable {
        modified: bool,
        value: String,
    },
}

/// `server_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerTokens {
    #[default]
    On,
    Off,
    Build,
}

/// `if_modified_since`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IfModifiedSince {
    Off,
    #[default]
    Exact,
    Before,
}

/// `add_header_inherit` / `add_trailer_inherit` (nginx 1.29.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeadersInherit {
    #[default]
    On,
    Off,
    Merge,
}
// conn

/// Server-level header rules (nginx's `ngx_http_core_srv_conf_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderRules {
    /// `max_headers` (nginx 1.29; default 1000).
    pub max_headers: usize,
    /// `ignore_invalid_headers` (default on).
    pub ignore_invalid_headers: bool,
    /// `underscores_in_headers` (default off).
    pub underscores_in_headers: bool,
}

impl Default for HeaderRules {
    fn default() -> Self {
        HeaderRules {
            max_headers: 1000,
            ignore_invalid_headers: true,
            underscores_in_headers: false,
        }
    }
}

/// `lingering_close` (nginx's `NGX_HTTP_LINGERING_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LingeringClose {
    Off,
    /// Linger when the client may still be sending (a body, pipelined bytes).
    #[default]
    On,
    Always,
}

/// `keepalive_disable` browsers (default `msie6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepaliveDisable {
    /// MSIE 4 to 6 (before SP2) on POST.
    pub msie6: bool,
    /// Safari on Mac OS X.
    pub safari: bool,
}

/// Connection-level location settings, nginx's defaults in `Default`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnConf {
    /// `keepalive_time` (default 1h): no keep-alive once the connection is
    /// older than this; in nanoseconds, for the per-request comparison
    /// with the connection's age on the timers' clock (no `Duration` built
    /// per request).
    pub keepalive_time_ns: u64,
    pub keepalive_disable: KeepaliveDisable,
    pub lingering_close: LingeringClose,
    /// `lingering_time` (default 30s).
    pub lingering_time: Duration,
    /// `lingering_timeout` (default 5s).
    pub lingering_timeout: Duration,
    /// `sendfile_max_chunk` (default 2m; 0: no limit).
    pub sendfile_max_chunk: usize,
    /// `limit_rate` in bytes per second (0: no limit).
    pub limit_rate: u64,
    /// `limit_rate_after` (default 0).
    pub limit_rate_after: u64,
    /// `limit_rate` / `limit_rate_after` with variables: the value core
    /// evaluates per request (`limit_rate` above is 0 then).
    pub limit_rate_var: Option<Arc<str>>,
    pub limit_rate_after_var: Option<Arc<str>>,
    /// `chunked_transfer_encoding` (default on).
    pub chunked_transfer_encoding: bool,
    /// `http2_chunk_size` (default 8k): the most DATA payload per frame
    /// of a response over HTTP/2, read from the request's location.
    pub http2_chunk_size: usize,
}

impl Default for ConnConf {
    fn default() -> Self {
        ConnConf {
            keepalive_time_ns: 3600 * 1_000_000_000,
            keepalive_disable: KeepaliveDisable {
                msie6: true,
                safari: false,
            },
            lingering_close: LingeringClose::On,
            lingering_time: Duration::from_secs(30),
            lingering_timeout: Duration::from_secs(5),
            sendfile_max_chunk: 2 * 1024 * 1024,
            limit_rate: 0,
            limit_rate_after: 0,
            limit_rate_var: None,
            limit_rate_after_var: None,
            chunked_transfer_encoding: true,
            http2_chunk_size: 8 * 1024,
        }
    }
}

// ssl
/// A server block's `ssl_*` settings (nginx's ngx_http_ssl_srv_conf_t, the
/// part Peregrine implements), merged; nginx's defaults where not set.
/// Turned into a TLS library configuration by the engine (peregrine-tls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslConf {
    /// `ssl_certificate` with the `ssl_certificate_key` of the same rank.
    pub certificates: Vec<(PathBuf, PathBuf)>,
    /// Some certificate or key names variables (nginx's
    /// `certificate_values`): every pair is then kept as written and
    /// expanded at each handshake, with the server name known (a relative
    /// result from the configuration's directory, `data:` inline PEM).
    pub dynamic_certificates: bool,
    /// `ssl_protocols` as written (default `TLSv1.2 TLSv1.3`).
    pub protocols: Vec<String>,
    /// `ssl_ciphers` (OpenSSL's cipher-string language).
    pub ciphers: String,
    pub prefer_server_ciphers: bool,
    pub session_cache: SslSessionCache,
    pub session_timeout: Duration,
    pub session_tickets: bool,
    /// `ssl_session_ticket_key` files (the first seals new tickets).
    pub ticket_keys: Vec<PathBuf>,
    /// `ssl_ecdh_curve` (`auto` or OpenSSL's `:`-separated names).
    pub ecdh_curve: String,
    /// `ssl_buffer_size`: the largest record written.
    pub buffer_size: usize,
    pub stapling: bool,
    /// `ssl_stapling_file`: a DER OCSP response, stapled when `stapling`.
    pub stapling_file: Option<PathBuf>,
    /// `ssl_stapling_responder`: asked instead of the certificate's URL.
    pub stapling_responder: Option<String>,
    /// `ssl_stapling_verify`.
    pub stapling_verify: bool,
    pub verify_client: SslVerifyClient,
    pub verify_depth: u32,
    /// `ssl_client_certificate`: trusted, and named to clients as the CAs.
    pub client_certificate: Option<PathBuf>,
    /// `ssl_trusted_certificate`: trusted, not named.
    pub trusted_certificate: Option<PathBuf>,
    pub crl: Option<PathBuf>,
    pub reject_handshake: bool,
    pub early_data: bool,
    pub password_file: Option<PathBuf>,
    /// The deprecated `ssl on;` (every `listen` of the server speaks TLS).
    pub on: bool,
}

/// `ssl_verify_client`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslVerifyClient {
    Off,
    /// A certificate is asked for, and required (400 without one).
    On,
    /// Asked for; one that is sent must verify.
    Optional,
    /// Asked for; not required to verify (`$ssl_client_verify` tells).
    OptionalNoCa,
}

impl SslVerifyClient {
    /// A certificate is asked for.
    pub fn asks(self) -> bool {
        self != SslVerifyClient::Off
    }
    /// A certificate sent must chain to a trusted one.
    pub fn verifies(self) -> bool {
        matches!(self, SslVerifyClient::On | SslVerifyClient::Optional)
    }
}

/// `ssl_session_cache`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SslSessionCache {
    /// `off`: no session reuse through a cache (nginx's default is `none`,
    /// which tells clients sessions may be reused but stores none: for
    /// rustls both mean no stateful cache).
    Off,
    None,
    /// `builtin[:N]` (OpenSSL's per-process cache; N sessions).
    Builtin(Option<usize>),
    /// `shared:NAME:SIZE` (bytes), possibly with `builtin` as well.
    Shared {
        name: String,
        size: usize,
    },
}

impl Default for SslConf {
    /// nginx's defaults, no certificate.
    fn default() -> Self {
        crate::build::ssl::RawSsl::default().resolve()
    }
}
// upstream

/// One `upstream NAME { }` group (`proxy_pass http://NAME` uses it).
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamConf {
    pub name: String,
    pub method: BalanceMethod,
    /// `hash KEY`: the key as written (its variables checked at load).
    pub hash_key: Option<String>,
    pub servers: Vec<UpstreamServer>,
    /// `keepalive N`: idle connections kept per worker (none by default).
    pub keepalive: Option<u32>,
    pub keepalive_requests: u64,
    pub keepalive_time: Duration,
    pub keepalive_timeout: Duration,
    /// `zone NAME [SIZE]`: the peers' attempts in progress are counted
    /// across the workers; the rest of their state stays per worker.
    pub zone: Option<(String, Option<usize>)>,
    pub span: Span,
}

/// The balancing method of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalanceMethod {
    RoundRobin,
    IpHash,
    Hash { consistent: bool },
    LeastConn,
    Random { two: bool },
}

/// One `server` line of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamServer {
    /// The address as written (`backend:8080`): peers' names in logs, and
    /// the consistent hash's points.
    pub name: String,
    /// What it resolved to when the configuration loaded.
    pub addrs: Vec<PeerAddr>,
    pub weight: u32,
    pub max_fails: u32,
    pub fail_timeout: Duration,
    pub max_conns: u32,
    pub backup: bool,
    pub down: bool,
    pub span: Span,
}

/// A peer's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerAddr {
    Inet(std::net::SocketAddr),
    Unix(PathBuf),
}

// rewrite

/// The rewrite module's settings of one level (`ngx_http_rewrite_loc_conf_t`)
/// and `recursive_error_pages` (core's, used with the script's redirects).
#[derive(Debug, Clone, Default)]
pub struct RewriteConf {
    /// The level's own script (not inherited, as nginx's `codes`); `None`
    /// when the level has no rewrite-module directive.
    pub script: Option<Arc<Script>>,
    /// An enclosing level (the server) has a script: the location is off
    /// the static fast path, which skips the server rewrite phase.
    pub outer_script: bool,
    /// `rewrite_log` (default off).
    pub log: bool,
    /// `uninitialized_variable_warn` (default on).
    pub uninitialized_warn: bool,
    /// `recursive_error_pages` (default off).
    pub recursive_error_pages: bool,
}

impl RewriteConf {
    /// No script runs for a request in this location (the fast path may
    /// serve it).
    pub fn is_none(&self) -> bool {
        self.script.is_none() && !self.outer_script
    }
}

/// A level's compiled script: nginx's `ngx_http_script` codes, flat, an
/// `if` jumping over its block when false.
#[derive(Debug, Default)]
pub struct Script {
    pub ops: Vec<Op>,
}

/// One operation of a script, in configuration order.
#[derive(Debug, Clone)]
pub enum Op {
    Rewrite(Box<RewriteOp>),
    /// `return code [text]` / `return URL`.
    Return {
        code: u16,
        text: Option<Template>,
    },
    /// `set $var value`.
    Set {
        target: SetTarget,
        value: Template,
    },
    /// `break`.
    Break,
    /// `if (cond) {`: when false, go on at op `next`; when true, the block's
    /// settings (a location's `if`; `None` in a server) take effect.
    If {
        cond: Cond,
        conf: Option<Arc<LocConf>>,
        next: usize,
    },
}

/// `auth_request_set $variable value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRequestSet {
    pub target: SetTarget,
    pub value: Template,
}

/// Where `set` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetTarget {
    /// A variable of the request's table ([`HttpConf::variables`]).
    Var(usize),
    /// `$args` (nginx's changeable core variable).
    Args,
}

/// `rewrite regex replacement [flag]`.
#[derive(Debug, Clone)]
pub struct RewriteOp {
    pub regex: crate::regex::Regex,
    /// The replacement up to its first literal `?` (or all of it).
    pub uri: Template,
    /// After the literal `?`: the new arguments (not for redirects).
    pub args: Option<Template>,
    /// The replacement does not end with `?`: the request's arguments are
    /// appended.
    pub add_args: bool,
    pub flag: RewriteFlag,
    /// A redirect: `redirect`, `permanent`, or a replacement starting with
    /// `http://`, `https://` or `$scheme`.
    pub redirect: Option<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteFlag {
    /// No flag: the script goes on with the new URI.
    None,
    Last,
    Break,
}

/// An `if` condition.
#[derive(Debug, Clone)]
pub enum Cond {
    /// `($var)`: true unless empty or `"0"`.
    Var(Template),
    /// `($var = value)` / `!=`.
    Eq {
        var: Template,
        value: Template,
        negate: bool,
    },
    /// `($var ~ regex)`, `~*`, `!~`, `!~*`.
    Match {
        var: Template,
        regex: crate::regex::Regex,
        negate: bool,
    },
    /// `(-f path)` and the others.
    File {
        op: FileTest,
        negate: bool,
        path: Template,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileTest {
    /// `-f`: a regular file.
    Plain,
    /// `-d`: a directory.
    Dir,
    /// `-e`: exists.
    Exists,
    /// `-x`: executable.
    Exec,
}

/// A value compiled once at load (nginx's complex value): literal text,
/// variables and regex captures in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Lit(String),
    /// A variable of nginx's core or a module, resolved at load.
    Var(crate::variables::VarId),
    /// `$1`..`$9` (`$0` the whole match).
    Capture(usize),
    /// A name `set` may define: its index in the request's table, and the
    /// name (a regex's named capture when nothing was set).
    Set(usize, String),
}

impl Template {
    /// A template of `text` alone (no variables).
    pub fn literal_text(text: &str) -> Template {
        let parts = if text.is_empty() {
            Vec::new()
        } else {
            vec![Part::Lit(text.to_string())]
        };
        Template { parts }
    }

    /// The text of a template without variables.
    pub fn literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [Part::Lit(s)] => Some(s),
            _ => None,
        }
    }
}

// map

/// One `map SOURCE $VAR { }` (`ngx_http_map_module`).
#[derive(Debug, Clone)]
pub struct MapConf {
    /// The source value, its variables expanded per request.
    pub source: String,
    /// The variable it defines (lowercase, without `$`).
    pub var: String,
    pub default: Option<String>,
    /// `hostnames`: wildcard keys, a trailing dot of the source ignored.
    pub hostnames: bool,
    /// `volatile`: accepted (values are not cached per request anyway).
    pub volatile: bool,
    /// Exact keys, lowercase (nginx's hash compares case-insensitively).
    pub exact: std::collections::HashMap<String, String>,
    pub wildcards: Vec<(MapWildcard, String)>,
    /// `~` and `~*` keys, tried in order after the others.
    pub regexes: Vec<(crate::regex::Regex, String)>,
    pub span: Span,
}

/// A `hostnames` wildcard key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapWildcard {
    /// `*.example.com` (`bare: false`) or `.example.com` (`bare`: also
    /// `example.com` itself), stored as `.example.com`.
    Head { suffix: String, bare: bool },
    /// `www.example.*`, stored as `www.example.`.
    Tail(String),
}

// access

/// One `allow` or `deny` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRule {
    pub deny: bool,
    pub net: AccessNet,
}

/// What an access rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessNet {
    All,
    /// Clients on a UNIX socket (`unix:`).
    Unix,
    /// Address and mask, the address already masked.
    V4 {
        addr: u32,
        mask: u32,
    },
    V6 {
        addr: u128,
        mask: u128,
    },
}

// auth_basic

/// `auth_basic_user_file`: the path as written (variables unexpanded), and
/// the directory a relative result is taken from (nginx's conf prefix,
/// applied after expansion: `$arg_f` giving `htpasswd` reads
/// `CONF_DIR/htpasswd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserFile {
    pub path: String,
    pub conf_dir: String,
}

// split_clients

/// One `split_clients SOURCE $VAR { }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitClientsConf {
    /// The value hashed (variables expanded per request).
    pub source: String,
    /// The variable it defines (lowercase, without `$`).
    pub var: String,
    /// (upper bound of the MurmurHash2 value, exclusive; 0: the rest),
    /// value; in order.
    pub parts: Vec<(u32, String)>,
}
// proxy

/// The proxy module's merged settings of one level
/// (`ngx_http_proxy_loc_conf_t`); see `crate::build::proxy`.
#[derive(Debug, Clone)]
pub struct ProxyConf {
    /// `proxy_pass`: the location's content handler (not inherited, but
    /// kept by `if` and `limit_except` blocks as nginx keeps it).
    pub pass: Option<Arc<ProxyPass>>,
    /// `proxy_set_header`s in effect, nginx's defaults first (`Host
    /// $proxy_host`, `Connection close`), a level's own list replacing
    /// its parent's; a value "" drops the header.
    pub set_headers: Arc<[(String, String)]>,
    /// `proxy_http_version`: 1.0 (default) or 1.1.
    pub http11: bool,
    pub connect_timeout: Duration,
    pub send_timeout: Duration,
    pub read_timeout: Duration,
    pub pass_request_headers: bool,
    pub pass_request_body: bool,
    /// `proxy_set_body` (with variables).
    pub set_body: Option<String>,
    /// `proxy_method` (with variables).
    pub method: Option<String>,
    /// Extra header names (lowercase) not passed to the client, and the
    /// default hidden ones `proxy_pass_header` lets through.
    pub hide_headers: Vec<String>,
    pub pass_headers: Vec<String>,
    /// `proxy_ignore_headers` as [`ignore`] bits.
    pub ignore_headers: u32,
    pub redirect: ProxyRedirect,
    /// `proxy_next_upstream` as [`next`] bits.
    pub next_upstream: u32,
    pub next_upstream_tries: u32,
    pub next_upstream_timeout: Duration,
    pub intercept_errors: bool,
    pub buffering: bool,
    pub request_buffering: bool,
    /// `proxy_ignore_client_abort`: the upstream request goes on when the
    /// client closes before the answer (nginx then skips
    /// `ngx_http_upstream_check_broken_connection`).
    pub ignore_client_abort: bool,
    /// `proxy_limit_rate`: bytes a second the answer is read at, at most,
    /// when it is buffered (0: no limit).
    pub limit_rate: u64,
    /// `proxy_buffer_size`: the most a response head may take.
    pub buffer_size: usize,
    // proxy_cookie
    /// `proxy_cookie_domain` and `proxy_cookie_path` rules in order
    /// (empty: `off` or none), applied to each `Set-Cookie`.
    pub cookie_domain: Vec<CookieRule>,
    pub cookie_path: Vec<CookieRule>,
    /// `proxy_cookie_flags` rules in order (empty: `off` or none).
    pub cookie_flags: Vec<CookieFlags>,
    /// `proxy_cache*` (or the gateway's `*_cache*`).
    pub cache: Arc<crate::cache::CacheConf>,
}

/// `proxy_ignore_headers` bits (nginx's `NGX_HTTP_UPSTREAM_IGN_*`).
pub mod ignore {
    pub const X_ACCEL_REDIRECT: u32 = 1 << 0;
    pub const X_ACCEL_EXPIRES: u32 = 1 << 1;
    pub const X_ACCEL_LIMIT_RATE: u32 = 1 << 2;
    pub const X_ACCEL_BUFFERING: u32 = 1 << 3;
    pub const X_ACCEL_CHARSET: u32 = 1 << 4;
    pub const EXPIRES: u32 = 1 << 5;
    pub const CACHE_CONTROL: u32 = 1 << 6;
    pub const SET_COOKIE: u32 = 1 << 7;
    pub const VARY: u32 = 1 << 8;
}

/// `proxy_next_upstream` bits (nginx's `NGX_HTTP_UPSTREAM_FT_*`).
pub mod next {
    pub const ERROR: u32 = 1 << 1;
    pub const TIMEOUT: u32 = 1 << 2;
    pub const INVALID_HEADER: u32 = 1 << 3;
    pub const HTTP_500: u32 = 1 << 4;
    pub const HTTP_502: u32 = 1 << 5;
    pub const HTTP_503: u32 = 1 << 6;
    pub const HTTP_504: u32 = 1 << 7;
    pub const HTTP_403: u32 = 1 << 8;
    pub const HTTP_404: u32 = 1 << 9;
    pub const HTTP_429: u32 = 1 << 10;
    pub const UPDATING: u32 = 1 << 11;
    pub const NON_IDEMPOTENT: u32 = 1 << 30;
    /// `off`.
    pub const OFF: u32 = 1 << 31;
}

/// `proxy_pass URL` as read at load.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyPass {
    /// The URL as written.
    pub url: String,
    pub target: ProxyTarget,
    /// The URI part (`http://h/uri` → `/uri`), `None` without one.
    pub uri: Option<String>,
    /// `https://`: TLS to the upstream (`proxy_ssl_*`).
    pub tls: bool,
}

/// The `proxy_ssl_*` settings of a location (`ngx_http_proxy_merge_ssl`),
/// read by the engine's upstream TLS client. Values with variables stay
/// as written and are expanded per request.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxySslConf {
    /// `proxy_ssl_server_name` (default off): SNI sent.
    pub server_name: bool,
    /// `proxy_ssl_name` (default `$proxy_host`).
    pub name: Option<String>,
    /// `proxy_ssl_verify` (default off: any certificate is taken).
    pub verify: bool,
    /// `proxy_ssl_verify_depth` (default 1).
    pub verify_depth: u32,
    pub trusted_certificate: Option<PathBuf>,
    pub crl: Option<PathBuf>,
    /// `proxy_ssl_protocols` (default TLSv1.2 TLSv1.3).
    pub protocols: Vec<String>,
    /// `proxy_ssl_ciphers` (default `DEFAULT`, OpenSSL's language).
    pub ciphers: String,
    /// `proxy_ssl_certificate` and `_key`: a client certificate; with
    /// variables, relative to `conf_dir` once expanded; `""` cancels an
    /// inherited one.
    pub certificate: Option<(String, String)>,
    pub password_file: Option<PathBuf>,
    /// `proxy_ssl_session_reuse` (default on).
    pub session_reuse: bool,
    /// The configuration's directory (relative certificate names).
    pub conf_dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProxyTarget {
    /// A host (an `upstream` name, or a name or address resolved into a
    /// round-robin group) and port; `port_given`: written in the URL.
    Host {
        host: String,
        port: u16,
        port_given: bool,
    },
    /// `http://unix:/path:`.
    Unix(PathBuf),
    /// The URL has variables: parsed per request.
    Vars,
}

/// `proxy_redirect`.
#[derive(Debug, Clone)]
pub enum ProxyRedirect {
    /// `default` (and no directive): the proxied URL is replaced by the
    /// location's.
    Default,
    Off,
    /// Explicit rules in order.
    List(Vec<RedirectRule>),
}

/// One `proxy_redirect` rule of a list.
#[derive(Debug, Clone)]
pub enum RedirectRule {
    /// `default` among others.
    Default,
    /// `FROM TO`: a prefix (variables in both).
    Prefix(String, String),
    /// `~FROM TO` / `~*FROM TO`: the whole value, `$N` from the match.
    Regex(Regex, String),
}

// proxy_cookie

/// One `proxy_cookie_domain` / `proxy_cookie_path` rule.
#[derive(Debug, Clone)]
pub enum CookieRule {
    /// `FROM TO`, variables in both: a domain compared whole and
    /// caselessly (leading dots dropped at load), a path as a prefix.
    Literal(String, String),
    /// `~FROM TO` (`~*` for paths): the whole value replaced, `$N` from
    /// the match, variables in the replacement.
    Regex(Regex, String),
}

/// One `proxy_cookie_flags COOKIE FLAG...` rule.
#[derive(Debug, Clone)]
pub struct CookieFlags {
    pub cookie: CookieName,
    /// The flags as written (`secure`, `nohttponly`, `samesite=lax`...);
    /// one with variables is read per request.
    pub flags: Vec<String>,
}

/// Which cookie a `proxy_cookie_flags` rule is for.
#[derive(Debug, Clone)]
pub enum CookieName {
    /// The name (with variables), compared caselessly.
    Name(String),
    /// `~REGEX`, caseless.
    Regex(Regex),
}

// limits

/// `limit_req_zone KEY zone=NAME:SIZE rate=RATE` (and, with `rate` 0,
/// `limit_conn_zone KEY zone=NAME:SIZE`): a shared zone's definition. The
/// state lives in core (`peregrine_core::zone`), found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitZoneConf {
    pub name: String,
    /// The key, variables unexpanded (`$binary_remote_addr`).
    pub key: String,
    /// The zone's size in bytes: what bounds its states.
    pub size: usize,
    /// `limit_req_zone`'s rate in milli-requests a second (nginx's
    /// `ctx->rate`: `2r/s` is 2000, `30r/m` 500).
    pub rate: u64,
}

/// One `limit_req zone=NAME [burst=N] [nodelay | delay=N]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitReqRule {
    pub zone: String,
    /// In milli-requests, as nginx keeps it (`burst * 1000`).
    pub burst: u64,
    /// In milli-requests; `nodelay` is nginx's `NGX_MAX_INT_T_VALUE / 1000 * 1000`.
    pub delay: u64,
}

/// One `limit_conn NAME NUMBER`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitConnRule {
    pub zone: String,
    pub conn: u32,
}

/// The merged settings of a limit module (`limit_req_*` or `limit_conn_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitConf<R> {
    /// A level's own rules, else its parent's.
    pub rules: Arc<[R]>,
    /// `limit_req_status` / `limit_conn_status` (default 503).
    pub status: u16,
    /// `limit_*_log_level` (default error); a delay is logged one level
    /// lower (nginx's `delay_log_level`).
    pub log_level: LogLevel,
    pub dry_run: bool,
}

impl<R> Default for LimitConf<R> {
    fn default() -> Self {
        LimitConf {
            rules: Arc::from([]),
            status: 503,
            log_level: LogLevel::Error,
            dry_run: false,
        }
    }
}

/// `real_ip_header`'s source of the client address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RealIpHeader {
    /// `X-Real-IP` (the default).
    XRealIp,
    /// `X-Forwarded-For`: a list, read from its end.
    XForwardedFor,
    /// The PROXY protocol header's source address.
    ProxyProtocol,
    /// Any other header, holding one address.
    Other(String),
}

/// The realip module's merged settings (`set_real_ip_from`,
/// `real_ip_header`, `real_ip_recursive`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealIpConf {
    /// The trusted addresses (a level's own list, else its parent's);
    /// empty: the module does nothing.
    pub from: Arc<[AccessNet]>,
    pub header: RealIpHeader,
    pub recursive: bool,
}

impl Default for RealIpConf {
    fn default() -> Self {
        RealIpConf {
            from: Arc::from([]),
            header: RealIpHeader::XRealIp,
            recursive: false,
        }
    }
}

// geo

/// One `geo [SOURCE] $VAR { }` (`ngx_http_geo_module`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GeoConf {
    /// The address looked up (variables expanded per request); `None`:
    /// the client's.
    pub source: Option<String>,
    /// The variable it defines (lowercase, without `$`).
    pub var: String,
    pub volatile: bool,
    /// `ranges`: IPv4 ranges instead of networks.
    pub ranges: bool,
    /// The value when nothing matches (`default`; else empty).
    pub default: String,
    /// Networks by prefix length, longest first: (mask, network → value).
    pub v4: Vec<(u32, std::collections::BTreeMap<u32, String>)>,
    pub v6: Vec<(u128, std::collections::BTreeMap<u128, String>)>,
    /// `ranges`: start → (end, value), not overlapping.
    pub range_map: std::collections::BTreeMap<u32, (u32, String)>,
    /// `proxy`: the trusted addresses whose `X-Forwarded-For` names the client.
    pub proxies: Vec<AccessNet>,
    pub proxy_recursive: bool,
}

// limit_except

/// `limit_except METHOD... { }` (`ngx_http_core_limit_except`): a request
/// with another method is served with `conf` (the block's settings over
/// the location's).
#[derive(Debug, Clone)]
pub struct LimitExceptConf {
    /// The methods let through with the location's own settings (`GET`
    /// brings `HEAD`), as nginx's names.
    pub methods: Vec<String>,
    pub conf: Arc<LocConf>,
}

impl LimitExceptConf {
    /// Whether `method` keeps the location's own settings.
    pub fn allows(&self, method: &str) -> bool {
        self.methods.iter().any(|m| m == method)
    }
}

/// One `resolver` directive (`crate::build::resolver`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverConf {
    /// The name servers, in order (a host name gave all its addresses).
    pub servers: Vec<std::net::SocketAddr>,
    /// `valid=`: how long answers are kept, whatever their TTL.
    pub valid: Option<std::time::Duration>,
    pub ipv4: bool,
    pub ipv6: bool,
}

// http2

/// A server's HTTP/2 settings (ngx_http_v2_module; see build::http2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Http2Conf {
    /// `http2 on`: ALPN `h2` on TLS, h2c by prior knowledge on plain ports.
    pub on: bool,
    pub max_concurrent_streams: u32,
    /// The most DATA payload per frame sent.
    pub chunk_size: usize,
    /// Each stream's receive window (request body read ahead).
    pub body_preread_size: usize,
    /// nginx's per-worker read buffer; the engine's read size for HTTP/2.
    pub recv_buffer_size: usize,
}

impl Default for Http2Conf {
    fn default() -> Self {
        crate::build::http2::RawHttp2::default().resolve()
    }
}

// client body

/// Where a request body goes beyond `client_body_buffer_size`
/// (`ngx_http_core_module`'s client body settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientBodyConf {
    pub in_file_only: InFileOnly,
    /// `client_body_in_single_buffer`: `$request_body` of a body that fits
    /// the buffer (Peregrine keeps a body in memory in one piece anyway).
    pub single_buffer: bool,
    pub temp_path: Arc<TempPath>,
}

/// `client_body_in_file_only`: `on` keeps the file after the request,
/// `clean` removes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InFileOnly {
    Off,
    On,
    Clean,
}

/// A `*_temp_path` directory and its `levels` (each 1 or 2 characters of
/// the file's name, nginx's `ngx_create_hashed_filename`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempPath {
    pub dir: PathBuf,
    pub levels: Vec<u8>,
}
