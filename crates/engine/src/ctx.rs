//! What every connection of a worker shares: the worker's core, pools,
//! timers, counters, clocks and logs ([`Ctx`]), and the settings of each
//! listening address ([`ListenCtx`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use peregrine_codec::{DateCache, Limits};
use peregrine_conf::model::{Config, LogLevel, ServerConf};
use peregrine_core::HttpCore;

use crate::exchange::ExchangePool;
use crate::loc_errlog::LocErrLogs;
use crate::pool::{Pool, READ_BUF_SIZE};
use crate::stats::Counters;
use crate::timer::Timers;
use crate::tls::TlsTable;
use crate::write::HeadStart;
use crate::{AccessLog, ErrorLog};

/// What the worker knows about one listening address, for its connections.
pub struct ListenCtx {
    pub limits: Limits,
    /// `client_header_timeout` of the address's default server.
    pub header_timeout: Duration,
    /// `reset_timedout_connection` of the default server (header timeouts).
    pub reset_timedout: bool,
    /// The default server's first name (`server:` in error-log lines).
    pub server_name: String,
    /// Largest head buffer: the codec's limits plus one read's slack.
    pub max_head: usize,
    /// The default server and its settings: what answers (and logs) a
    /// request that failed before a server was chosen, as in nginx.
    pub default_server: Option<Arc<ServerConf>>,
    // tls
    /// The address speaks TLS: the configuration's TLS server blocks.
    pub tls: Option<Arc<TlsTable>>,
    // proxy_protocol
    /// Connections start with a PROXY protocol header (`listen ...
    /// proxy_protocol` on any `listen` of the address, as nginx).
    pub proxy_protocol: bool,
    // http2
    /// The address speaks HTTP/2 (`listen ... http2`, or `http2 on` in a
    /// server of it): the default server's settings.
    pub http2: Option<peregrine_conf::model::Http2Conf>,
    /// `listen ... http2` on the address (nginx's `addr_conf->http2`):
    /// every server of it speaks HTTP/2, whatever its `http2` says.
    pub http2_listen: bool,
}

/// Per-worker context shared by every connection of the worker.
pub struct Ctx {
    pub core: HttpCore,
    pub pool: Pool,
    pub exchanges: ExchangePool,
    pub timers: Timers,
    pub stats: Arc<Counters>,
    pub date: DateCache,
    /// A `200 OK` head's first lines with the current `Date`.
    pub head_start: HeadStart,
    /// Some location has `metrics on`: only then is there anyone to read
    /// the per-request metrics, so only then are they counted (see
    /// `worker::scraped`).
    pub metrics: bool,
    pub now: Instant,
    pub wall: SystemTime,
    pub errlog: ErrorLog,
    /// Messages below this level are not even formatted.
    pub log_level: LogLevel,
    pub access: Option<Box<dyn AccessLog>>,
    pub listen: Vec<ListenCtx>,
    /// Settings for an address index missing from `listen` (cannot happen:
    /// both come from the same configuration; this keeps lookups total).
    pub listen_fallback: ListenCtx,
    pub draining: bool,
    /// The `error_log`s of http/server/location levels, opened on use.
    pub loc_errlogs: LocErrLogs,
    // proxy
    /// The upstream groups, their pools and the poll's registry.
    pub upstreams: crate::upstream::Upstreams,
    /// The resolvers of names built from variables.
    pub resolvers: crate::resolver::Resolvers,
}

impl Ctx {
    /// The settings of listening address `i`.
    pub fn lctx(&self, i: usize) -> &ListenCtx {
        self.listen.get(i).unwrap_or(&self.listen_fallback)
    }

    /// Brings the `Date` cache to this loop turn's clock (it formats once a
    /// second) and the head start with it, so that a response copies them
    /// instead of converting the clock per request.
    pub fn refresh_date(&mut self) {
        let date = self.date.get(self.wall);
        self.head_start.set_date(date);
    }
}

/// The default server of an address: the one marked `default_server`, else
/// the first listing it (nginx's rule).
fn default_server(conf: &Config, addr: SocketAddr) -> Option<&Arc<ServerConf>> {
    let servers = &conf.http.as_ref()?.servers;
    let on_addr = |s: &&Arc<ServerConf>| s.listen.iter().any(|l| l.addr == addr);
    servers
        .iter()
        .filter(on_addr)
        .find(|s| s.listen.iter().any(|l| l.addr == addr && l.default_server))
        .or_else(|| servers.iter().find(on_addr))
}

pub fn listen_ctx(conf: &Config, spec_addr: SocketAddr, tls: Option<&Arc<TlsTable>>) -> ListenCtx {
    let srv = default_server(conf, spec_addr);
    let limits = Limits {
        header_buffer_size: srv.map_or(1024, |s| s.client_header_buffer_size),
        large_header_buffers: srv.map_or((4, 8192), |s| s.large_client_header_buffers),
        merge_slashes: srv.is_none_or(|s| s.merge_slashes),
        max_headers: srv.map_or(peregrine_codec::DEFAULT_MAX_HEADERS, |s| {
            s.headers.max_headers
        }),
        ignore_invalid_headers: srv.is_none_or(|s| s.headers.ignore_invalid_headers),
        underscores_in_headers: srv.is_some_and(|s| s.headers.underscores_in_headers),
    };
    let max_head = limits
        .header_buffer_size
        .saturating_add(
            limits
                .large_header_buffers
                .0
                .saturating_mul(limits.large_header_buffers.1),
        )
        .saturating_add(READ_BUF_SIZE);
    ListenCtx {
        limits,
        header_timeout: srv.map_or(
            peregrine_conf::build::raw::DEFAULT_CLIENT_HEADER_TIMEOUT,
            |s| s.client_header_timeout,
        ),
        reset_timedout: srv.is_some_and(|s| s.conf.reset_timedout_connection),
        server_name: srv
            .and_then(|s| s.server_names.first())
            .map(crate::errlog::server_name_text)
            .unwrap_or_default(),
        max_head,
        default_server: srv.cloned(),
        tls: tls
            .filter(|_| TlsTable::listens_on(conf, spec_addr))
            .cloned(),
        proxy_protocol: crate::proxy_protocol::listens_on(conf, spec_addr),
        http2: http2_on(conf, spec_addr).then(|| srv.map(|s| s.http2).unwrap_or_default()),
        http2_listen: http2_listen(conf, spec_addr),
    }
}

/// Whether connections to `addr` may speak HTTP/2: a `listen ... http2`
/// of it, or `http2 on` in a server listening on it.
pub fn http2_on(conf: &Config, addr: SocketAddr) -> bool {
    conf.http.as_ref().is_some_and(|h| {
        h.servers.iter().any(|s| {
            s.listen
                .iter()
                .any(|l| l.addr == addr && (l.http2 || s.http2.on))
        })
    })
}

/// Whether some `listen` of `addr` says `http2` (the obsolete form): in
/// nginx the flag belongs to the address, not to the server that wrote it.
pub fn http2_listen(conf: &Config, addr: SocketAddr) -> bool {
    conf.http.as_ref().is_some_and(|h| {
        h.servers
            .iter()
            .any(|s| s.listen.iter().any(|l| l.addr == addr && l.http2))
    })
}

/// The default server's page for a request that could not be taken, on
/// listening address `lst` (its `error_page` applies, as nginx's special
/// response handler); a panic there costs the page, not the worker. Both
/// sessions (HTTP/1, HTTP/2) answer their bad requests with it.
pub fn default_server_page(
    cx: &mut Ctx,
    lst: usize,
    info: &peregrine_core::ConnInfo,
    status: u16,
) -> peregrine_core::Response {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let default = cx.lctx(lst).default_server.clone();
    let wall = cx.wall;
    let core = &mut cx.core;
    let mut resp = catch_unwind(AssertUnwindSafe(|| {
        core.bad_request_response(info, default.as_ref(), status, wall)
    }))
    .unwrap_or_else(|_| cx.core.error_response(status));
    if let Some(srv) = &default {
        resp.conf = resp.conf.or_else(|| Some(srv.conf.clone()));
        resp.server = resp.server.or_else(|| Some(srv.clone()));
    }
    resp
}
