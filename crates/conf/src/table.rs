//! The directive table: for each directive Peregrine implements or accepts
//! as a tuning hint, the contexts nginx allows it in, its number of
//! arguments, the function that gives it meaning, and its verdict for the
//! static fast path ([`crate::fast`]). Also the "did you mean"
//! suggestion. nginx's directives without a row are refused by name (see
//! [`crate::known`]).

use crate::build::Handler;
use crate::build::client_body as cb;
use crate::build::conn as c;
use crate::build::handlers as h;
use crate::build::headers as hd;
use crate::build::hints as t;
use crate::build::http2 as h2;
use crate::build::modules as m;
use crate::build::proxy as px;
use crate::build::proxy_cookie as pc;
use crate::build::request as r;
use crate::build::rewrite as rw;
use crate::build::ssl as sl;
use crate::fast::{self as f, CARRIED, Fast, Fast::*, LONG_WAY, UNRECORDED, VARIABLES};

/// Context bits (nginx's `NGX_MAIN_CONF`, `NGX_EVENT_CONF`, `NGX_HTTP_*_CONF`).
pub mod ctx {
    pub const MAIN: u16 = 1;
    pub const EVENTS: u16 = 2;
    pub const HTTP: u16 = 4;
    pub const SERVER: u16 = 8;
    pub const LOCATION: u16 = 16;
    /// Inside `upstream { }` (`NGX_HTTP_UPS_CONF`).
    pub const UPS: u16 = 32;
    /// Inside `if { }` in a server (`NGX_HTTP_SIF_CONF`).
    pub const SIF: u16 = 64;
    /// Inside `if { }` in a location (`NGX_HTTP_LIF_CONF`).
    pub const LIF: u16 = 128;
    /// Inside `limit_except { }` (`NGX_HTTP_LMT_CONF`).
    pub const LMT: u16 = 256;
    pub const HSL: u16 = HTTP | SERVER | LOCATION;
    pub const HS: u16 = HTTP | SERVER;
    pub const SL: u16 = SERVER | LOCATION;
    /// nginx's `NGX_ANY_CONF`: every context.
    pub const ANY: u16 = MAIN | EVENTS | HSL | UPS | SIF | LIF | LMT;
}

/// How many arguments a directive takes (nginx's `NGX_CONF_TAKE*`, `1MORE`...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Args {
    /// Between `min` and `max` inclusive.
    Range(usize, usize),
    /// At least this many.
    AtLeast(usize),
}

impl Args {
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Args::Range(min, max) => (min..=max).contains(&n),
            Args::AtLeast(min) => n >= min,
        }
    }
}

const NONE: Args = Args::Range(0, 0);
const ONE: Args = Args::Range(1, 1);
const TWO: Args = Args::Range(2, 2);
const ONE_TWO: Args = Args::Range(1, 2);
const MORE: Args = Args::AtLeast(1);
const MORE2: Args = Args::AtLeast(2);

/// One row of the table.
pub struct Spec {
    pub name: &'static str,
    pub contexts: u16,
    pub args: Args,
    /// Whether the directive takes a `{ }` block.
    pub block: bool,
    pub handler: Handler,
    /// Its bearing on the static fast path ([`crate::fast`]): every row
    /// states one.
    pub fast: Fast,
}

const fn row(name: &'static str, contexts: u16, args: Args, handler: Handler, fast: Fast) -> Spec {
    let block = matches!(handler, Handler::Block(_));
    Spec {
        name,
        contexts,
        args,
        block,
        handler,
        fast,
    }
}

use crate::build::BlockKind as B;
use ctx::*;

/// Every directive Peregrine implements or accepts as a hint.
pub static TABLE: &[Spec] = &[
    // main
    row(
        "worker_processes",
        MAIN,
        ONE,
        Handler::Main(h::worker_processes),
        Neutral,
    ),
    row(
        "worker_cpu_affinity",
        MAIN,
        MORE,
        Handler::Main(h::worker_cpu_affinity),
        Neutral,
    ),
    row(
        "worker_rlimit_nofile",
        MAIN,
        ONE,
        Handler::Main(h::worker_rlimit_nofile),
        Neutral,
    ),
    row(
        "worker_shutdown_timeout",
        MAIN,
        ONE,
        Handler::Main(h::worker_shutdown_timeout),
        Neutral,
    ),
    row("pid", MAIN, ONE, Handler::Main(h::pid), Neutral),
    row("daemon", MAIN, ONE, Handler::Main(h::daemon), Neutral),
    row("user", MAIN, ONE_TWO, Handler::Main(h::user), Neutral),
    row("error_log", MAIN | HSL, MORE, Handler::ErrorLog, CARRIED),
    // Fast path: each included directive states its own verdict.
    row("include", ANY, ONE, Handler::Include, Neutral),
    row("events", MAIN, NONE, Handler::Block(B::Events), Neutral),
    row("http", MAIN, NONE, Handler::Block(B::Http), Neutral),
    // stream: the block reads its own directives (build/stream.rs).
    row("stream", MAIN, NONE, Handler::Block(B::Stream), Neutral),
    // mail: the block reads its own directives (build/mail.rs).
    row("mail", MAIN, NONE, Handler::Block(B::Mail), Neutral),
    // events
    row(
        "worker_connections",
        EVENTS,
        ONE,
        Handler::Events(h::worker_connections),
        Neutral,
    ),
    row("use", EVENTS, ONE, Handler::Events(h::use_method), Neutral),
    row(
        "multi_accept",
        EVENTS,
        ONE,
        Handler::Events(h::multi_accept),
        Neutral,
    ),
    // http / server. Fast path: `server` and `location` blocks are judged
    // by the directives in them; a route is kept per server (chosen by
    // `listen` and `server_name` before any route is looked at); the
    // request head is read before a route is looked at (`client_header_*`).
    row("server", HTTP, NONE, Handler::Block(B::Server), Neutral),
    row(
        "location",
        SL,
        ONE_TWO,
        Handler::Block(B::Location),
        Neutral,
    ),
    row("types", HSL, NONE, Handler::Block(B::Types), CARRIED),
    row("listen", SERVER, MORE, Handler::Server(h::listen), Neutral),
    row(
        "server_name",
        SERVER,
        MORE,
        Handler::Server(h::server_name),
        Neutral,
    ),
    row("log_format", HTTP, MORE2, Handler::LogFormat, Neutral),
    row(
        "client_header_timeout",
        HS,
        ONE,
        Handler::Srv(h::client_header_timeout),
        Neutral,
    ),
    row(
        "client_header_buffer_size",
        HS,
        ONE,
        Handler::Srv(h::client_header_buffer_size),
        Neutral,
    ),
    row(
        "large_client_header_buffers",
        HS,
        TWO,
        Handler::Srv(h::large_client_header_buffers),
        Neutral,
    ),
    // location level
    row("root", HSL, ONE, Handler::Loc(h::root), When(f::root_fixed)),
    row(
        "alias",
        LOCATION,
        ONE,
        Handler::Loc(h::alias),
        When(f::root_fixed),
    ),
    row("index", HSL, MORE, Handler::Loc(h::index), UNRECORDED),
    row(
        "autoindex",
        HSL,
        ONE,
        Handler::Loc(h::autoindex),
        UNRECORDED,
    ),
    row(
        "try_files",
        SL,
        MORE2,
        Handler::Loc(h::try_files),
        When(f::no_try_files),
    ),
    row(
        "error_page",
        HSL,
        MORE2,
        Handler::Loc(h::error_page),
        UNRECORDED,
    ),
    row(
        "stub_status",
        SL,
        Args::Range(0, 1),
        Handler::Loc(h::stub_status),
        When(f::no_handler),
    ),
    row(
        "metrics",
        LOCATION,
        ONE,
        Handler::Loc(h::metrics),
        When(f::no_handler),
    ),
    // deploy: Peregrine's drain-aware health endpoint and shutdown delay
    // (docs/operations.md)
    row(
        "health_status",
        LOCATION,
        NONE,
        Handler::Loc(h::health_status),
        When(f::no_handler),
    ),
    row(
        "shutdown_delay",
        MAIN,
        ONE,
        Handler::Main(h::shutdown_delay),
        Neutral,
    ),
    row(
        "config_watch",
        MAIN,
        ONE,
        Handler::Main(h::config_watch),
        Neutral,
    ),
    row(
        "default_type",
        HSL,
        ONE,
        Handler::Loc(h::default_type),
        CARRIED,
    ),
    row(
        "charset",
        HSL,
        ONE,
        Handler::Loc(h::charset),
        When(f::charset_constant),
    ),
    row(
        "charset_types",
        HSL,
        MORE,
        Handler::Loc(h::charset_types),
        CARRIED,
    ),
    row("sendfile", HSL, ONE, Handler::Loc(h::sendfile), CARRIED),
    row("tcp_nopush", HSL, ONE, Handler::Loc(h::tcp_nopush), CARRIED),
    row(
        "tcp_nodelay",
        HSL,
        ONE,
        Handler::Loc(h::tcp_nodelay),
        CARRIED,
    ),
    row(
        "keepalive_timeout",
        HSL,
        ONE_TWO,
        Handler::Loc(h::keepalive_timeout),
        CARRIED,
    ),
    row(
        "keepalive_requests",
        HSL,
        ONE,
        Handler::Loc(h::keepalive_requests),
        CARRIED,
    ),
    row(
        "reset_timedout_connection",
        HSL,
        ONE,
        Handler::Loc(h::reset_timedout_connection),
        CARRIED,
    ),
    row(
        "client_body_timeout",
        HSL,
        ONE,
        Handler::Loc(h::client_body_timeout),
        CARRIED,
    ),
    row(
        "send_timeout",
        HSL,
        ONE,
        Handler::Loc(h::send_timeout),
        CARRIED,
    ),
    row(
        "client_max_body_size",
        HSL,
        ONE,
        Handler::Loc(h::client_max_body_size),
        LONG_WAY,
    ),
    row(
        "client_body_buffer_size",
        HSL,
        ONE,
        Handler::Loc(h::client_body_buffer_size),
        LONG_WAY,
    ),
    row(
        "open_file_cache",
        HSL,
        ONE_TWO,
        Handler::Loc(h::open_file_cache),
        CARRIED,
    ),
    row(
        "open_file_cache_valid",
        HSL,
        ONE,
        Handler::Loc(h::open_file_cache_valid),
        CARRIED,
    ),
    row(
        "open_file_cache_min_uses",
        HSL,
        ONE,
        Handler::Loc(h::open_file_cache_min_uses),
        CARRIED,
    ),
    row(
        "open_file_cache_errors",
        HSL,
        ONE,
        Handler::Loc(h::open_file_cache_errors),
        CARRIED,
    ),
    row(
        "memory_cache",
        HSL,
        ONE_TWO,
        Handler::Loc(h::memory_cache),
        CARRIED,
    ),
    row(
        "access_log",
        HSL | LMT,
        MORE,
        Handler::Loc(h::access_log),
        CARRIED,
    ),
    row("gzip", HSL, ONE, Handler::Loc(h::gzip), LONG_WAY),
    row(
        "gzip_types",
        HSL,
        MORE,
        Handler::Loc(h::gzip_types),
        LONG_WAY,
    ),
    row(
        "gzip_min_length",
        HSL,
        ONE,
        Handler::Loc(h::gzip_min_length),
        LONG_WAY,
    ),
    row(
        "gzip_comp_level",
        HSL,
        ONE,
        Handler::Loc(h::gzip_comp_level),
        LONG_WAY,
    ),
    row(
        "gzip_proxied",
        HSL,
        MORE,
        Handler::Loc(h::gzip_proxied),
        LONG_WAY,
    ),
    row(
        "gzip_disable",
        HSL,
        MORE,
        Handler::Loc(h::gzip_disable),
        LONG_WAY,
    ),
    row("gzip_vary", HSL, ONE, Handler::Loc(h::gzip_vary), LONG_WAY),
    row(
        "gzip_http_version",
        HSL,
        ONE,
        Handler::Loc(h::gzip_http_version),
        LONG_WAY,
    ),
    row(
        "gzip_buffers",
        HSL,
        TWO,
        Handler::Loc(h::gzip_buffers),
        LONG_WAY,
    ),
    row(
        "gzip_static",
        HSL,
        ONE,
        Handler::Loc(h::gzip_static),
        When(f::statics_off),
    ),
    row("brotli", HSL, ONE, Handler::Loc(h::brotli), LONG_WAY),
    row(
        "brotli_types",
        HSL,
        MORE,
        Handler::Loc(h::brotli_types),
        LONG_WAY,
    ),
    row(
        "brotli_comp_level",
        HSL,
        ONE,
        Handler::Loc(h::brotli_comp_level),
        LONG_WAY,
    ),
    row(
        "brotli_min_length",
        HSL,
        ONE,
        Handler::Loc(h::brotli_min_length),
        LONG_WAY,
    ),
    row(
        "brotli_static",
        HSL,
        ONE,
        Handler::Loc(h::brotli_static),
        When(f::statics_off),
    ),
    row("zstd", HSL, ONE, Handler::Loc(h::zstd), LONG_WAY),
    row(
        "zstd_types",
        HSL,
        MORE,
        Handler::Loc(h::zstd_types),
        LONG_WAY,
    ),
    row(
        "zstd_comp_level",
        HSL,
        ONE,
        Handler::Loc(h::zstd_comp_level),
        LONG_WAY,
    ),
    row(
        "zstd_min_length",
        HSL,
        ONE,
        Handler::Loc(h::zstd_min_length),
        LONG_WAY,
    ),
    row(
        "zstd_static",
        HSL,
        ONE,
        Handler::Loc(h::zstd_static),
        When(f::statics_off),
    ),
    // Accepted, unused: neutral.
    row(
        "proxy_buffers",
        HSL,
        TWO,
        Handler::Loc(h::proxy_buffers),
        Neutral,
    ),
    row(
        "proxy_busy_buffers_size",
        HSL,
        ONE,
        Handler::Loc(h::proxy_busy_buffers_size),
        Neutral,
    ),
    // modules: nginx's small stock modules and open_log_file_cache.
    row(
        "empty_gif",
        LOCATION,
        NONE,
        Handler::Loc(m::empty_gif),
        When(f::no_handler),
    ),
    row(
        "random_index",
        LOCATION,
        ONE,
        Handler::Loc(m::random_index),
        UNRECORDED,
    ),
    row(
        "valid_referers",
        SL,
        MORE,
        Handler::Loc(m::valid_referers),
        VARIABLES,
    ),
    row(
        "referer_hash_max_size",
        SL,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "referer_hash_bucket_size",
        SL,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "secure_link",
        HSL,
        ONE,
        Handler::Loc(m::secure_link),
        VARIABLES,
    ),
    row(
        "secure_link_md5",
        HSL,
        ONE,
        Handler::Loc(m::secure_link_md5),
        VARIABLES,
    ),
    row(
        "secure_link_secret",
        HSL,
        ONE,
        Handler::Loc(m::secure_link_secret),
        VARIABLES,
    ),
    row(
        "userid",
        HSL,
        ONE,
        Handler::Loc(m::userid),
        When(f::no_userid_cookie),
    ),
    // Fast path: these shape the cookie of `userid on`, which `userid` judges.
    row(
        "userid_service",
        HSL,
        ONE,
        Handler::Loc(m::userid_service),
        Neutral,
    ),
    row(
        "userid_name",
        HSL,
        ONE,
        Handler::Loc(m::userid_name),
        Neutral,
    ),
    row(
        "userid_domain",
        HSL,
        ONE,
        Handler::Loc(m::userid_domain),
        Neutral,
    ),
    row(
        "userid_path",
        HSL,
        ONE,
        Handler::Loc(m::userid_path),
        Neutral,
    ),
    row(
        "userid_expires",
        HSL,
        ONE,
        Handler::Loc(m::userid_expires),
        Neutral,
    ),
    row(
        "userid_flags",
        HSL,
        Args::Range(1, 3),
        Handler::Loc(m::userid_flags),
        Neutral,
    ),
    row("userid_p3p", HSL, ONE, Handler::Loc(m::userid_p3p), Neutral),
    row(
        "userid_mark",
        HSL,
        ONE,
        Handler::Loc(m::userid_mark),
        Neutral,
    ),
    row(
        "open_log_file_cache",
        HSL,
        Args::Range(1, 4),
        Handler::Loc(m::open_log_file_cache),
        CARRIED,
    ),
    // request: nginx's request-processing directives (build/request.rs)
    // Fast path: a route is keyed by the URI as normalised.
    row(
        "merge_slashes",
        HS,
        ONE,
        Handler::Srv(r::merge_slashes),
        Neutral,
    ),
    row(
        "log_not_found",
        HSL,
        ONE,
        Handler::Loc(r::log_not_found),
        UNRECORDED,
    ),
    // Fast path: no subrequests.
    row(
        "log_subrequest",
        HSL,
        ONE,
        Handler::Loc(r::log_subrequest),
        Neutral,
    ),
    // Fast path: the answer is followed by the post action's request.
    row(
        "post_action",
        HSL | LIF,
        ONE,
        Handler::Loc(r::post_action),
        Never,
    ),
    row(
        "internal",
        LOCATION,
        NONE,
        Handler::Loc(r::internal),
        When(f::not_internal),
    ),
    row(
        "absolute_redirect",
        HSL,
        ONE,
        Handler::Loc(r::absolute_redirect),
        UNRECORDED,
    ),
    row(
        "port_in_redirect",
        HSL,
        ONE,
        Handler::Loc(r::port_in_redirect),
        UNRECORDED,
    ),
    row(
        "server_name_in_redirect",
        HSL,
        ONE,
        Handler::Loc(r::server_name_in_redirect),
        UNRECORDED,
    ),
    row("max_ranges", HSL, ONE, Handler::Loc(r::max_ranges), CARRIED),
    row(
        "msie_padding",
        HSL,
        ONE,
        Handler::Loc(r::msie_padding),
        UNRECORDED,
    ),
    row(
        "msie_refresh",
        HSL,
        ONE,
        Handler::Loc(r::msie_refresh),
        UNRECORDED,
    ),
    row(
        "disable_symlinks",
        HSL,
        ONE_TWO,
        Handler::Loc(r::disable_symlinks),
        When(f::symlinks_unchecked),
    ),
    // Fast path: the tables `source_charset` reads, which it judges.
    row(
        "charset_map",
        HTTP,
        TWO,
        Handler::Block(B::CharsetMap),
        Neutral,
    ),
    row(
        "source_charset",
        HSL,
        ONE,
        Handler::Loc(r::source_charset),
        When(f::no_recoding),
    ),
    row(
        "override_charset",
        HSL,
        ONE,
        Handler::Loc(r::override_charset),
        CARRIED,
    ),
    row(
        "autoindex_format",
        HSL,
        ONE,
        Handler::Loc(r::autoindex_format),
        UNRECORDED,
    ),
    // headers: the response-header directives (build/headers.rs)
    row(
        "add_header",
        HSL,
        Args::Range(2, 3),
        Handler::Loc(hd::add_header),
        When(f::headers_inactive),
    ),
    row(
        "add_trailer",
        HSL,
        Args::Range(2, 3),
        Handler::Loc(hd::add_trailer),
        When(f::headers_inactive),
    ),
    row(
        "add_header_inherit",
        HSL,
        ONE,
        Handler::Loc(hd::add_header_inherit),
        When(f::headers_inactive),
    ),
    row(
        "add_trailer_inherit",
        HSL,
        ONE,
        Handler::Loc(hd::add_trailer_inherit),
        When(f::headers_inactive),
    ),
    row(
        "expires",
        HSL,
        ONE_TWO,
        Handler::Loc(hd::expires),
        When(f::headers_inactive),
    ),
    row(
        "server_tokens",
        HSL,
        ONE,
        Handler::Loc(hd::server_tokens),
        CARRIED,
    ),
    row("etag", HSL, ONE, Handler::Loc(hd::etag), CARRIED),
    row(
        "if_modified_since",
        HSL,
        ONE,
        Handler::Loc(hd::if_modified_since),
        LONG_WAY,
    ),
    // conn: connection-level directives (crates/conf/src/build/conn.rs)
    row(
        "keepalive_time",
        HSL,
        ONE,
        Handler::Loc(c::keepalive_time),
        CARRIED,
    ),
    row(
        "keepalive_disable",
        HSL,
        ONE_TWO,
        Handler::Loc(c::keepalive_disable),
        CARRIED,
    ),
    row(
        "lingering_close",
        HSL,
        ONE,
        Handler::Loc(c::lingering_close),
        CARRIED,
    ),
    row(
        "lingering_time",
        HSL,
        ONE,
        Handler::Loc(c::lingering_time),
        CARRIED,
    ),
    row(
        "lingering_timeout",
        HSL,
        ONE,
        Handler::Loc(c::lingering_timeout),
        CARRIED,
    ),
    row(
        "sendfile_max_chunk",
        HSL,
        ONE,
        Handler::Loc(c::sendfile_max_chunk),
        CARRIED,
    ),
    row("send_lowat", HSL, ONE, Handler::Loc(c::send_lowat), CARRIED),
    row(
        "limit_rate",
        HSL,
        ONE,
        Handler::Loc(c::limit_rate),
        When(f::rate_fixed),
    ),
    row(
        "limit_rate_after",
        HSL,
        ONE,
        Handler::Loc(c::limit_rate_after),
        When(f::rate_fixed),
    ),
    row(
        "chunked_transfer_encoding",
        HSL,
        ONE,
        Handler::Loc(c::chunked_transfer_encoding),
        CARRIED,
    ),
    // Fast path: the request head is parsed before a route is looked at.
    row(
        "max_headers",
        HS,
        ONE,
        Handler::Srv(c::max_headers),
        Neutral,
    ),
    row(
        "ignore_invalid_headers",
        HS,
        ONE,
        Handler::Srv(c::ignore_invalid_headers),
        Neutral,
    ),
    row(
        "underscores_in_headers",
        HS,
        ONE,
        Handler::Srv(c::underscores_in_headers),
        Neutral,
    ),
    // upstream: the block reads its own directives (server, hash, ...);
    // a group changes no location's answer until `proxy_pass` uses it.
    row("upstream", HTTP, ONE, Handler::Block(B::Upstream), Neutral),
    // access: a per-client decision, so a location with rules in its
    // chain takes no route (its answer depends on who asks).
    row(
        "allow",
        HSL | LMT,
        ONE,
        Handler::Loc(crate::build::access::rule),
        When(f::no_access),
    ),
    row(
        "deny",
        HSL | LMT,
        ONE,
        Handler::Loc(crate::build::access::rule),
        When(f::no_access),
    ),
    // auth_basic: per request credentials, so a location with a realm in
    // its chain takes no route.
    row(
        "auth_basic",
        HSL | LMT,
        ONE,
        Handler::Loc(crate::build::auth_basic::auth_basic),
        When(f::no_auth_basic),
    ),
    row(
        "auth_basic_user_file",
        HSL | LMT,
        ONE,
        Handler::Loc(crate::build::auth_basic::auth_basic_user_file),
        When(f::no_auth_basic),
    ),
    // auth_request: a subrequest decides per request, so a location
    // with one in its chain takes no route.
    row(
        "auth_request",
        HSL,
        ONE,
        Handler::Loc(crate::build::auth_request::auth_request),
        When(f::no_auth_request),
    ),
    row(
        "auth_request_set",
        HSL,
        TWO,
        Handler::Loc(crate::build::auth_request::auth_request_set),
        When(f::no_auth_request),
    ),
    // map: defines a variable; the directives that use it state their own
    // verdicts (`VARIABLES` rows).
    row("map", HTTP, TWO, Handler::Block(B::Map), Neutral),
    // split_clients: defines a variable, as map.
    row(
        "split_clients",
        HTTP,
        TWO,
        Handler::Block(B::SplitClients),
        Neutral,
    ),
    // Tuning hints: nginx settings with no effect in Peregrine's design,
    // accepted (their values checked) with a notice. Neutral, as every row
    // below.
    row(
        "accept_mutex",
        EVENTS,
        ONE,
        Handler::Hint(h::hint_flag),
        Neutral,
    ),
    row(
        "accept_mutex_delay",
        EVENTS,
        ONE,
        Handler::Hint(h::hint_time),
        Neutral,
    ),
    row(
        "worker_priority",
        MAIN,
        ONE,
        Handler::Hint(h::hint_priority),
        Neutral,
    ),
    row(
        "timer_resolution",
        MAIN,
        ONE,
        Handler::Hint(h::hint_time),
        Neutral,
    ),
    row(
        "server_names_hash_bucket_size",
        HTTP,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "server_names_hash_max_size",
        HTTP,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "types_hash_bucket_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "types_hash_max_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "variables_hash_bucket_size",
        HTTP,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "variables_hash_max_size",
        HTTP,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "client_body_temp_path",
        HSL,
        Args::Range(1, 4),
        Handler::Loc(cb::client_body_temp_path),
        LONG_WAY,
    ),
    row(
        "client_body_in_file_only",
        HSL,
        ONE,
        Handler::Loc(cb::client_body_in_file_only),
        LONG_WAY,
    ),
    row(
        "proxy_temp_path",
        HSL,
        Args::Range(1, 4),
        Handler::Hint(h::hint_temp_path),
        Neutral,
    ),
    row(
        "fastcgi_temp_path",
        HSL,
        Args::Range(1, 4),
        Handler::Hint(h::hint_temp_path),
        Neutral,
    ),
    row(
        "uwsgi_temp_path",
        HSL,
        Args::Range(1, 4),
        Handler::Hint(h::hint_temp_path),
        Neutral,
    ),
    row(
        "scgi_temp_path",
        HSL,
        Args::Range(1, 4),
        Handler::Hint(h::hint_temp_path),
        Neutral,
    ),
    row(
        "connection_pool_size",
        HS,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "request_pool_size",
        HS,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    // table: the rest of nginx's directives with no effect in Peregrine's
    // design (each line says why); any whose effect a configuration relies
    // on for what it serves or protects is refused instead (no row).
    //
    // Single process, worker threads: no master to switch off, no
    // accept-mutex lock file, no per-worker directory (nginx chdirs only
    // for core files), no core-size limit for workers, no debug stops.
    row(
        "master_process",
        MAIN,
        ONE,
        Handler::Hint(h::hint_flag),
        Neutral,
    ),
    row(
        "lock_file",
        MAIN,
        ONE,
        Handler::Hint(t::hint_string),
        Neutral,
    ),
    row(
        "working_directory",
        MAIN,
        ONE,
        Handler::Hint(t::hint_string),
        Neutral,
    ),
    row(
        "worker_rlimit_core",
        MAIN,
        ONE,
        Handler::Hint(t::hint_offset),
        Neutral,
    ),
    row(
        "debug_points",
        MAIN,
        ONE,
        Handler::Hint(t::hint_debug_points),
        Neutral,
    ),
    // nginx clears its workers' environment but for these names; nothing in
    // Peregrine reads the environment but TZ (`env TZ=...` is refused).
    row("env", MAIN, ONE, Handler::Hint(t::hint_env), Neutral),
    // Configuration regexes are always compiled with PCRE2's JIT (conf::regex).
    row("pcre_jit", MAIN, ONE, Handler::Hint(h::hint_flag), Neutral),
    // Pools for `aio threads`; Peregrine's workers do their own file I/O.
    row(
        "thread_pool",
        MAIN,
        Args::Range(2, 3),
        Handler::Hint(t::hint_thread_pool),
        Neutral,
    ),
    // A profiler's output file.
    row(
        "google_perftools_profiles",
        MAIN,
        ONE,
        Handler::Hint(t::hint_string),
        Neutral,
    ),
    row(
        "load_module",
        MAIN,
        ONE,
        Handler::Main(t::load_module),
        Neutral,
    ),
    // Event loop sizing: Peregrine sizes its own epoll batches and has no
    // Linux AIO contexts.
    row(
        "epoll_events",
        EVENTS,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "worker_aio_requests",
        EVENTS,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    // More debug logging for some clients: only in --with-debug builds of
    // nginx; it changes no response.
    row(
        "debug_connection",
        EVENTS,
        ONE,
        Handler::Hint(t::hint_repeatable),
        Neutral,
    ),
    // How files are read and output is buffered: the bytes sent are the same.
    row("aio", HSL, ONE, Handler::Hint(t::hint_aio), Neutral),
    row("aio_write", HSL, ONE, Handler::Hint(h::hint_flag), Neutral),
    row(
        "directio",
        HSL,
        ONE,
        Handler::Hint(t::hint_directio),
        Neutral,
    ),
    row(
        "directio_alignment",
        HSL,
        ONE,
        Handler::Hint(t::hint_offset),
        Neutral,
    ),
    row("read_ahead", HSL, ONE, Handler::Hint(h::hint_size), Neutral),
    row(
        "output_buffers",
        HSL,
        TWO,
        Handler::Hint(t::hint_bufs),
        Neutral,
    ),
    row(
        "postpone_output",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "subrequest_output_buffer_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "client_body_in_single_buffer",
        HSL,
        ONE,
        Handler::Loc(cb::client_body_in_single_buffer),
        LONG_WAY,
    ),
    // kqueue-only file change events.
    row(
        "open_file_cache_events",
        HSL,
        ONE,
        Handler::Hint(h::hint_flag),
        Neutral,
    ),
    // How long an idle keep-alive connection is kept at least when nginx
    // runs short of connections and reuses them.
    row(
        "keepalive_min_timeout",
        HSL,
        ONE,
        Handler::Hint(h::hint_time),
        Neutral,
    ),
    // zlib's window and memory, buffering before compressing, and a flag
    // nginx reads but no longer uses: the decoded body is the same.
    row(
        "gzip_window",
        HSL,
        ONE,
        Handler::Hint(t::hint_gzip_window),
        Neutral,
    ),
    row(
        "gzip_hash",
        HSL,
        ONE,
        Handler::Hint(t::hint_gzip_hash),
        Neutral,
    ),
    row(
        "postpone_gzipping",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "gzip_no_buffer",
        HSL,
        ONE,
        Handler::Hint(h::hint_flag),
        Neutral,
    ),
    // Hash table sizes, as the other *_hash_* hints.
    row(
        "map_hash_max_size",
        HTTP,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    row(
        "map_hash_bucket_size",
        HTTP,
        ONE,
        Handler::Hint(h::hint_number),
        Neutral,
    ),
    // rewrite: ngx_http_rewrite_module's script (`build::rewrite`); inside
    // `if`, nginx's own contexts apply (see `build::check`). A script runs
    // per request (it may change the URI, answer, or set variables): a
    // location with one in its chain takes no route.
    row(
        "rewrite",
        SL,
        Args::Range(2, 3),
        Handler::Loc(rw::rewrite),
        Never,
    ),
    row("return", SL, ONE_TWO, Handler::Loc(rw::return_), Never),
    row("set", SL, TWO, Handler::Loc(rw::set), Never),
    row("break", SL, NONE, Handler::Loc(rw::break_), Never),
    row("if", SL, MORE, Handler::Block(B::If), Never),
    // Logging of a script's steps: nothing runs without a script.
    row(
        "rewrite_log",
        HSL,
        ONE,
        Handler::Loc(rw::rewrite_log),
        Neutral,
    ),
    row(
        "uninitialized_variable_warn",
        HSL,
        ONE,
        Handler::Loc(rw::uninitialized_variable_warn),
        Neutral,
    ),
    // Which error pages apply: a route serves found files only.
    row(
        "recursive_error_pages",
        HSL,
        ONE,
        Handler::Loc(rw::recursive_error_pages),
        Neutral,
    ),
    // ssl: the ssl module's directives (crates/conf/src/build/ssl.rs).
    // TLS is the transport under the session: a route's answer is the same
    // bytes over it, so each is neutral to the fast path.
    row(
        "ssl_certificate",
        HS,
        ONE,
        Handler::Srv(sl::ssl_certificate),
        Neutral,
    ),
    row(
        "ssl_certificate_key",
        HS,
        ONE,
        Handler::Srv(sl::ssl_certificate_key),
        Neutral,
    ),
    row(
        "ssl_protocols",
        HS,
        MORE,
        Handler::Srv(sl::ssl_protocols),
        Neutral,
    ),
    row(
        "ssl_ciphers",
        HS,
        ONE,
        Handler::Srv(sl::ssl_ciphers),
        Neutral,
    ),
    row(
        "ssl_prefer_server_ciphers",
        HS,
        ONE,
        Handler::Srv(sl::ssl_prefer_server_ciphers),
        Neutral,
    ),
    row(
        "ssl_session_cache",
        HS,
        ONE_TWO,
        Handler::Srv(sl::ssl_session_cache),
        Neutral,
    ),
    row(
        "ssl_session_timeout",
        HS,
        ONE,
        Handler::Srv(sl::ssl_session_timeout),
        Neutral,
    ),
    row(
        "ssl_session_tickets",
        HS,
        ONE,
        Handler::Srv(sl::ssl_session_tickets),
        Neutral,
    ),
    // http2: the HTTP/2 session's settings (crates/conf/src/build/http2.rs).
    // HTTP/2 is a session over the transport: a route's answer is the same
    // response in HPACK and DATA frames, so each is neutral to the fast path.
    row("http2", HS, ONE, Handler::Srv(h2::http2), Neutral),
    row(
        "http2_max_concurrent_streams",
        HS,
        ONE,
        Handler::Srv(h2::http2_max_concurrent_streams),
        Neutral,
    ),
    row(
        "http2_chunk_size",
        HSL,
        ONE,
        Handler::Loc(h2::http2_chunk_size),
        Neutral,
    ),
    row(
        "http2_body_preread_size",
        HS,
        ONE,
        Handler::Srv(h2::http2_body_preread_size),
        Neutral,
    ),
    row(
        "http2_recv_buffer_size",
        ctx::HTTP,
        ONE,
        Handler::Srv(h2::http2_recv_buffer_size),
        Neutral,
    ),
    row(
        "http2_recv_timeout",
        HS,
        ONE,
        Handler::Srv(h2::obsolete),
        Neutral,
    ),
    row(
        "http2_idle_timeout",
        HS,
        ONE,
        Handler::Srv(h2::obsolete),
        Neutral,
    ),
    row(
        "http2_max_field_size",
        HS,
        ONE,
        Handler::Srv(h2::obsolete),
        Neutral,
    ),
    row(
        "http2_max_header_size",
        HS,
        ONE,
        Handler::Srv(h2::obsolete),
        Neutral,
    ),
    row(
        "http2_max_requests",
        HS,
        ONE,
        Handler::Srv(h2::obsolete),
        Neutral,
    ),
    // proxy: proxy_pass is a location's content handler (a route never
    // records an upstream's answer); the rest shape only proxied requests.
    row(
        "proxy_pass",
        LOCATION | LMT,
        ONE,
        Handler::Loc(px::proxy_pass),
        Never,
    ),
    row(
        "proxy_set_header",
        HSL,
        TWO,
        Handler::Loc(px::proxy_set_header),
        Neutral,
    ),
    row(
        "proxy_http_version",
        HSL,
        ONE,
        Handler::Loc(px::proxy_http_version),
        Neutral,
    ),
    row(
        "proxy_connect_timeout",
        HSL,
        ONE,
        Handler::Loc(px::proxy_connect_timeout),
        Neutral,
    ),
    row(
        "proxy_send_timeout",
        HSL,
        ONE,
        Handler::Loc(px::proxy_send_timeout),
        Neutral,
    ),
    row(
        "proxy_read_timeout",
        HSL,
        ONE,
        Handler::Loc(px::proxy_read_timeout),
        Neutral,
    ),
    row(
        "proxy_pass_request_headers",
        HSL,
        ONE,
        Handler::Loc(px::proxy_pass_request_headers),
        Neutral,
    ),
    row(
        "proxy_pass_request_body",
        HSL,
        ONE,
        Handler::Loc(px::proxy_pass_request_body),
        Neutral,
    ),
    row(
        "proxy_set_body",
        HSL,
        ONE,
        Handler::Loc(px::proxy_set_body),
        Neutral,
    ),
    row(
        "proxy_method",
        HSL,
        ONE,
        Handler::Loc(px::proxy_method),
        Neutral,
    ),
    row(
        "proxy_hide_header",
        HSL,
        ONE,
        Handler::Loc(px::proxy_hide_header),
        Neutral,
    ),
    row(
        "proxy_pass_header",
        HSL,
        ONE,
        Handler::Loc(px::proxy_pass_header),
        Neutral,
    ),
    row(
        "proxy_ignore_headers",
        HSL,
        MORE,
        Handler::Loc(px::proxy_ignore_headers),
        Neutral,
    ),
    row(
        "proxy_redirect",
        HSL,
        ONE_TWO,
        Handler::Loc(px::proxy_redirect),
        Neutral,
    ),
    // proxy_cookie
    row(
        "proxy_cookie_domain",
        HSL,
        ONE_TWO,
        Handler::Loc(pc::proxy_cookie_domain),
        Neutral,
    ),
    row(
        "proxy_cookie_path",
        HSL,
        ONE_TWO,
        Handler::Loc(pc::proxy_cookie_path),
        Neutral,
    ),
    row(
        "proxy_cookie_flags",
        HSL,
        Args::Range(1, 4),
        Handler::Loc(pc::proxy_cookie_flags),
        Neutral,
    ),
    row(
        "proxy_next_upstream",
        HSL,
        MORE,
        Handler::Loc(px::proxy_next_upstream),
        Neutral,
    ),
    row(
        "proxy_next_upstream_tries",
        HSL,
        ONE,
        Handler::Loc(px::proxy_next_upstream_tries),
        Neutral,
    ),
    row(
        "proxy_next_upstream_timeout",
        HSL,
        ONE,
        Handler::Loc(px::proxy_next_upstream_timeout),
        Neutral,
    ),
    row(
        "proxy_intercept_errors",
        HSL,
        ONE,
        Handler::Loc(px::proxy_intercept_errors),
        Neutral,
    ),
    row(
        "proxy_buffering",
        HSL,
        ONE,
        Handler::Loc(px::proxy_buffering),
        Neutral,
    ),
    row(
        "proxy_request_buffering",
        HSL,
        ONE,
        Handler::Loc(px::proxy_request_buffering),
        Neutral,
    ),
    row(
        "proxy_ignore_client_abort",
        HSL,
        ONE,
        Handler::Loc(px::proxy_ignore_client_abort),
        Neutral,
    ),
    row(
        "proxy_limit_rate",
        HSL,
        ONE,
        Handler::Loc(px::proxy_limit_rate),
        Neutral,
    ),
    row(
        "proxy_buffer_size",
        HSL,
        ONE,
        Handler::Loc(px::proxy_buffer_size),
        Neutral,
    ),
    // proxy_ssl: TLS to `https://` upstreams; proxied requests only.
    row(
        "proxy_ssl_server_name",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_server_name),
        Neutral,
    ),
    row(
        "proxy_ssl_name",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_name),
        Neutral,
    ),
    row(
        "proxy_ssl_verify",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_verify),
        Neutral,
    ),
    row(
        "proxy_ssl_verify_depth",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_verify_depth),
        Neutral,
    ),
    row(
        "proxy_ssl_trusted_certificate",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_trusted_certificate),
        Neutral,
    ),
    row(
        "proxy_ssl_crl",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_crl),
        Neutral,
    ),
    row(
        "proxy_ssl_protocols",
        HSL,
        MORE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_protocols),
        Neutral,
    ),
    row(
        "proxy_ssl_ciphers",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_ciphers),
        Neutral,
    ),
    row(
        "proxy_ssl_certificate",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_certificate),
        Neutral,
    ),
    row(
        "proxy_ssl_certificate_key",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_certificate_key),
        Neutral,
    ),
    row(
        "proxy_ssl_password_file",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_password_file),
        Neutral,
    ),
    row(
        "proxy_ssl_session_reuse",
        HSL,
        ONE,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_session_reuse),
        Neutral,
    ),
    row(
        "proxy_ssl_conf_command",
        HSL,
        TWO,
        Handler::Loc(crate::build::proxy_ssl::proxy_ssl_conf_command),
        Neutral,
    ),
    row(
        "proxy_headers_hash_max_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "proxy_headers_hash_bucket_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "proxy_max_temp_file_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "proxy_temp_file_write_size",
        HSL,
        ONE,
        Handler::Hint(h::hint_size),
        Neutral,
    ),
    row(
        "ssl_session_ticket_key",
        HS,
        ONE,
        Handler::Srv(sl::ssl_session_ticket_key),
        Neutral,
    ),
    row(
        "ssl_ecdh_curve",
        HS,
        ONE,
        Handler::Srv(sl::ssl_ecdh_curve),
        Neutral,
    ),
    row(
        "ssl_buffer_size",
        HS,
        ONE,
        Handler::Srv(sl::ssl_buffer_size),
        Neutral,
    ),
    row(
        "ssl_dhparam",
        HS,
        ONE,
        Handler::Srv(sl::ssl_dhparam),
        Neutral,
    ),
    row(
        "ssl_stapling",
        HS,
        ONE,
        Handler::Srv(sl::ssl_stapling),
        Neutral,
    ),
    row(
        "ssl_stapling_file",
        HS,
        ONE,
        Handler::Srv(sl::ssl_stapling_file),
        Neutral,
    ),
    row(
        "ssl_stapling_responder",
        HS,
        ONE,
        Handler::Srv(sl::ssl_stapling_responder),
        Neutral,
    ),
    row(
        "ssl_stapling_verify",
        HS,
        ONE,
        Handler::Srv(sl::ssl_stapling_verify),
        Neutral,
    ),
    row(
        "ssl_verify_client",
        HS,
        ONE,
        Handler::Srv(sl::ssl_verify_client),
        Neutral,
    ),
    row(
        "ssl_verify_depth",
        HS,
        ONE,
        Handler::Srv(sl::ssl_verify_depth),
        Neutral,
    ),
    row(
        "ssl_client_certificate",
        HS,
        ONE,
        Handler::Srv(sl::ssl_client_certificate),
        Neutral,
    ),
    row(
        "ssl_trusted_certificate",
        HS,
        ONE,
        Handler::Srv(sl::ssl_trusted_certificate),
        Neutral,
    ),
    row("ssl_crl", HS, ONE, Handler::Srv(sl::ssl_crl), Neutral),
    row(
        "ssl_reject_handshake",
        HS,
        ONE,
        Handler::Srv(sl::ssl_reject_handshake),
        Neutral,
    ),
    row(
        "ssl_early_data",
        HS,
        ONE,
        Handler::Srv(sl::ssl_early_data),
        Neutral,
    ),
    row(
        "ssl_password_file",
        HS,
        ONE,
        Handler::Srv(sl::ssl_password_file),
        Neutral,
    ),
    row("ssl", HS, ONE, Handler::Srv(sl::ssl), Neutral),
    row(
        "ssl_certificate_cache",
        HS,
        Args::Range(1, 3),
        Handler::Srv(sl::ssl_certificate_cache),
        Neutral,
    ),
    row(
        "ssl_certificate_compression",
        HS,
        ONE,
        Handler::Srv(sl::ssl_certificate_compression),
        Neutral,
    ),
    row("ssl_ocsp", HS, ONE, Handler::Srv(sl::ssl_ocsp), Neutral),
    row(
        "ssl_ocsp_responder",
        HS,
        ONE,
        Handler::Srv(sl::ssl_ocsp_unused),
        Neutral,
    ),
    row(
        "ssl_ocsp_cache",
        HS,
        ONE,
        Handler::Srv(sl::ssl_ocsp_unused),
        Neutral,
    ),
    row(
        "ssl_conf_command",
        HS,
        TWO,
        Handler::Srv(sl::ssl_conf_command),
        Neutral,
    ),
    row(
        "ssl_ech_file",
        HS,
        ONE,
        Handler::Srv(sl::ssl_ech_file),
        Neutral,
    ),
    // limits: limit_req, limit_conn and realip (build/limit_req.rs,
    // build/limit_conn.rs, build/limit_zone.rs, build/realip.rs). A zone
    // changes nothing until a rule uses it; a location under a rule takes
    // no route (its answer depends on the rate or on who asks).
    row(
        "limit_req_zone",
        HTTP,
        Args::Range(3, 3),
        Handler::Loc(crate::build::limit_req::limit_req_zone),
        Neutral,
    ),
    row(
        "limit_req",
        HSL,
        Args::Range(1, 3),
        Handler::Loc(crate::build::limit_req::limit_req),
        When(f::no_limit_req),
    ),
    row(
        "limit_req_status",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::status),
        When(f::no_limit_req),
    ),
    row(
        "limit_req_log_level",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::log_level),
        When(f::no_limit_req),
    ),
    row(
        "limit_req_dry_run",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::dry_run),
        When(f::no_limit_req),
    ),
    row(
        "limit_conn_zone",
        HTTP,
        TWO,
        Handler::Loc(crate::build::limit_conn::limit_conn_zone),
        Neutral,
    ),
    row(
        "limit_conn",
        HSL,
        TWO,
        Handler::Loc(crate::build::limit_conn::limit_conn),
        When(f::no_limit_conn),
    ),
    row(
        "limit_conn_status",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::status),
        When(f::no_limit_conn),
    ),
    row(
        "limit_conn_log_level",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::log_level),
        When(f::no_limit_conn),
    ),
    row(
        "limit_conn_dry_run",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::dry_run),
        When(f::no_limit_conn),
    ),
    row(
        "set_real_ip_from",
        HSL,
        ONE,
        Handler::Loc(crate::build::realip::set_real_ip_from),
        When(f::no_realip),
    ),
    row(
        "real_ip_header",
        HSL,
        ONE,
        Handler::Loc(crate::build::realip::real_ip_header),
        When(f::no_realip),
    ),
    row(
        "real_ip_recursive",
        HSL,
        ONE,
        Handler::Loc(crate::build::realip::real_ip_recursive),
        When(f::no_realip),
    ),
    // satisfy: how the access modules combine; it changes nothing where
    // none applies, and those that do keep their locations off the routes.
    row(
        "satisfy",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::satisfy),
        Neutral,
    ),
    // limit_except: the block's settings for the other methods; a
    // location with one takes no route (a GET may be limited).
    row(
        "limit_except",
        LOCATION,
        MORE,
        Handler::Block(B::LimitExcept),
        Never,
    ),
    // geo: defines a variable, as map.
    row(
        "geo",
        HTTP,
        Args::Range(1, 2),
        Handler::Block(B::Geo),
        Neutral,
    ),
    // auth_delay: acts on a 401 only, which no route answers.
    row(
        "auth_delay",
        HSL,
        ONE,
        Handler::Loc(crate::build::limit_zone::auth_delay),
        UNRECORDED,
    ),
    // resolver: read only by the proxy's content handler, which no route
    // runs.
    row(
        "resolver",
        HSL,
        MORE,
        Handler::Loc(crate::build::resolver::resolver),
        UNRECORDED,
    ),
    row(
        "resolver_timeout",
        HSL,
        ONE,
        Handler::Loc(crate::build::resolver::resolver_timeout),
        UNRECORDED,
    ),
];

/// Directives that are stored but are tuning hints nonetheless: accepted
/// with a notice too (`use epoll` is what Peregrine does anyway).
pub static NOTICE_TOO: &[&str] = &["use"];

/// The table row of a directive name (nginx compares names case-sensitively).
pub fn lookup(name: &str) -> Option<&'static Spec> {
    all().find(|s| s.name == name)
}

/// Every row: [`TABLE`], then the gateway modules' ([`crate::table_cgi`]).
pub fn all() -> impl Iterator<Item = &'static Spec> {
    TABLE
        .iter()
        .chain(crate::table_cgi::TABLES.iter().flat_map(|t| t.iter()))
        .chain(crate::table_cache::TABLES.iter().flat_map(|t| t.iter()))
        .chain(crate::table_filters::TABLE.iter())
}

/// Largest edit distance for a "did you mean" suggestion.
pub const SUGGEST_MAX_DISTANCE: usize = 2;

/// Levenshtein distance over bytes.
fn distance(a: &[u8], b: &[u8]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known directive closest to an unknown name: equal ignoring case, or
/// within [`SUGGEST_MAX_DISTANCE`] edits (names of 3 bytes or fewer need a
/// case-insensitive match, since any short word is 2 edits from another).
/// Implemented directives come first, then nginx's others.
pub fn suggest(name: &str) -> Option<&'static str> {
    let names = || all().map(|s| s.name).chain(crate::known::nginx_names());
    if let Some(n) = names().find(|n| n.eq_ignore_ascii_case(name)) {
        return Some(n);
    }
    if name.len() <= 3 {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    // The distance is at least the difference in length, so names that
    // differ more are skipped unmeasured: the quadratic distance then only
    // runs on short words, whatever length (up to the lexer's 4096-byte
    // word limit) the unknown name has.
    names()
        .filter(|n| n.len().abs_diff(lower.len()) <= SUGGEST_MAX_DISTANCE)
        .map(|n| (distance(lower.as_bytes(), n.as_bytes()), n))
        .filter(|&(d, _)| d <= SUGGEST_MAX_DISTANCE)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for s in all() {
            assert!(
                lookup(s.name).is_some_and(|f| std::ptr::eq(f, s)),
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("Location"), Some("location"));
        assert_eq!(suggest("Worker_processes"), Some("worker_processes"));
        assert_eq!(suggest("worker_proceses"), Some("worker_processes"));
        assert_eq!(suggest("gzip_typs"), Some("gzip_types"));
        assert_eq!(suggest("frobnicate"), None);
        assert_eq!(suggest("foo"), None);
        assert_eq!(suggest("USE"), Some("use"));
        // Length filter edges: 2 edits away by insertion/deletion only.
        assert_eq!(suggest("worker_processesxx"), Some("worker_processes"));
        assert_eq!(suggest("worker_process"), Some("worker_processes"));
        assert_eq!(suggest("worker_processesxxx"), None);
        // nginx's directives Peregrine refuses are suggested too.
        assert_eq!(suggest("proxy_pas"), Some("proxy_pass"));
        assert_eq!(suggest("Fastcgi_Param"), Some("fastcgi_param"));
    }

    #[test]
    fn arity() {
        assert!(ONE_TWO.accepts(1) && ONE_TWO.accepts(2) && !ONE_TWO.accepts(3));
        assert!(!MORE.accepts(0) && MORE.accepts(9));
        assert!(NONE.accepts(0) && !NONE.accepts(1));
    }
}
