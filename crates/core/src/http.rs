//! [`HttpCore`]: one per worker. Selects the server and location and runs
//! nginx's phases in order — server rewrite (`return`), find config
//! (location, `client_max_body_size`), rewrite (`return`), try_files,
//! content (stub_status, index, autoindex, static) — following internal
//! redirects (index, try_files, error_page) and named locations, at most
//! [`MAX_URI_CHANGES`] times as nginx.

use std::borrow::Cow;
use std::rc::Rc;
use std::sync::Arc;
use std::time::SystemTime;

use peregrine_conf::model::{
    Config, LocConf, LocationConf, LocationMatch, ServerConf, ServerName, UseridMode,
};

use crate::fastpath::FastReq;
use crate::fcache::OpenFileCache;
use crate::headmemo::HeadMemo;
use crate::locations::Locations;
use crate::mcache::MemCache;
use crate::request::{Method, RequestView};
use crate::response::{ConnInfo, Response, StatusSource, StubStatus};
use crate::servers::ServerIndex;
use crate::special::{self, PageCtx, Special, find_error_page};
use crate::vars::VarCtx;

/// nginx's `NGX_HTTP_MAX_URI_CHANGES`: internal redirects allowed per
/// request before "rewrite or internal redirection cycle" (500).
pub const MAX_URI_CHANGES: u8 = 10;

/// A server block with its locations indexed.
#[derive(Debug)]
pub(crate) struct ServerRt {
    pub conf: Arc<ServerConf>,
    pub locs: Locations,
    /// The first name (`$server_name`).
    pub name: String,
    /// A `server_name` regex has named captures (variables).
    pub named_captures: bool,
    // variables
    /// The configuration's own variables (`set`, `map`...), by index.
    pub variables: Arc<peregrine_conf::model::VarTable>,
    // map
    /// The configuration's `map` variables (shared by every server).
    pub maps: Arc<[peregrine_conf::model::MapConf]>,
    /// Its `split_clients` variables.
    pub splits: Arc<[peregrine_conf::model::SplitClientsConf]>,
    // geo
    pub geos: Arc<[peregrine_conf::model::GeoConf]>,
}

/// One per worker thread (owns the worker's open-file cache and memory
/// cache; not `Send`, nothing in it is locked).
///
/// `repr(C)`, aligned to a cache line: what a route's hit reads in a
/// one-server configuration (the routes, the server index's shortcut,
/// `last_server`, the memory cache's slots and counter; each struct puts
/// those first) sits in the first two lines; with several servers the Host
/// memo, further on, is read too.
#[repr(C, align(64))]
pub struct HttpCore {
    /// The static hit fast path's routes.
    pub(crate) routes: crate::fastpath::Routes,
    index: ServerIndex,
    last_server: Option<usize>,
    pub(crate) mcache: MemCache,
    pub(crate) servers: Rc<Vec<ServerRt>>,
    pub(crate) fcache: OpenFileCache,
    pub(crate) heads: HeadMemo,
    pub(crate) status: Option<std::rc::Rc<dyn StatusSource>>,
    /// The multipart/byteranges boundary counter (nginx's temp number).
    pub(crate) boundary: u64,
    /// Scratch for file paths, reused across requests.
    pub(crate) path_buf: String,
    /// The last Host looked up (see [`crate::servers::HostMemo`]).
    host_memo: crate::servers::HostMemo,
    /// Settings for responses to unparsable requests.
    fallback: Arc<LocConf>,
    // request
    /// The `charset_map` tables (`charset` with `source_charset` recodes).
    pub(crate) charset_maps: Rc<Vec<peregrine_conf::model::CharsetMap>>,
    // rewrite
    /// Lines for the error log (see [`HttpCore::take_log_lines`]).
    pub(crate) log_lines: Vec<crate::rewrite::LogLine>,
    // fastpath
    /// What nginx's handlers would have logged of this request's failure,
    /// from the failed call itself ([`HttpCore::note_failure`]).
    pub(crate) failure: Option<crate::response::ErrorNote>,
    // auth_basic
    /// The `auth_basic_user_file`s read, kept while unchanged.
    pub(crate) user_files: crate::auth_basic::UserFiles,
    // proxy
    /// The upstream request the content phase handed over (see
    /// [`HttpCore::take_proxy`]).
    pub(crate) proxy_job: Option<Box<crate::proxy::ProxyJob>>,
    pub(crate) upstreams: Rc<Vec<peregrine_conf::model::UpstreamConf>>,
    /// The hosts of `proxy_pass` URLs without variables (nginx's implicit
    /// upstreams, which a URL with variables may name).
    pub(crate) implicit: Rc<Vec<(String, u16)>>,
    // limits
    /// The configuration's `limit_req`/`limit_conn` zones.
    pub(crate) limit_zones: Rc<crate::limits::LimitZones>,
    // cache
    /// The configuration's upstream cache zones.
    pub(crate) caches: Rc<crate::cache::Caches>,
    /// What the last request left the engine ([`HttpCore::take_held`]).
    pub(crate) held: Option<Box<crate::limits::Held>>,
    /// The state of a held request run again ([`HttpCore::resume`]).
    pub(crate) resuming: Option<crate::limits::RequestLimits>,
    // filters
    /// How deep the subrequest being made is (0: the main request).
    pub(crate) sub_depth: u8,
    /// Subrequests made for the main request so far.
    pub(crate) subrequests: u32,
    /// The proxied subrequests' answers (`filters::subrequest`).
    pub(crate) sub_memo: crate::filters::subrequest::Memo,
}

/// The state of one request across internal redirects.
pub(crate) struct Ctx<'a> {
    pub req: &'a RequestView<'a>,
    pub conn: &'a ConnInfo,
    pub now: SystemTime,
    pub server: usize,
    pub uri: Cow<'a, str>,
    pub args: Option<Cow<'a, str>>,
    pub method: Method,
    uri_changes: u8,
    /// The status `error_page` imposes (nginx's `r->err_status`).
    pub err_status: Option<u16>,
    /// The Location of a redirect that `error_page` replaced by a URI:
    /// nginx's `r->headers_out.location` outlives the internal redirect,
    /// so the page that answers still carries it.
    kept_location: Option<String>,
    error_page_done: bool,
    /// A status that drops keep-alive was met (nginx clears `r->keepalive`
    /// before looking for an error_page, so a custom page also closes).
    close: bool,
    /// The body was discarded (after a special response): nginx's 413 check
    /// (`!r->discard_body`) no longer applies on internal redirects.
    discarded: bool,
    /// The location settings in effect and what `alias` replaces.
    pub conf: Arc<LocConf>,
    pub name_len: Option<usize>,
    /// nginx's `r->valid_location`: cleared when a rewrite changed the URI
    /// and `break` kept it in this location (`ngx_http_script_break_code`);
    /// `proxy_pass` then sends the whole URI, its own URI part ignored.
    pub valid_location: bool,
    /// `$server_name`.
    pub server_name: &'a str,
    /// Captures of the regex location, when its settings use them.
    pub captures: Vec<String>,
    /// The server's names (`valid_referers server_names`).
    pub server_names: &'a [ServerName],
    /// The server's `listen`s (`$server_addr` of a socket path).
    pub listen: &'a [peregrine_conf::model::ListenConf],
    /// The userid filter's state for this request.
    pub uid: crate::userid::UidCell,
    /// Named captures of the server name regex.
    pub named: Vec<(String, String)>,
    // vars2
    /// The engine's counters (`$connections_active`...), read only when a
    /// variable asks.
    pub status: Option<std::rc::Rc<dyn StatusSource>>,
    // rewrite
    /// The values `set` gave this request.
    pub sets: crate::rewrite::SetVars<'a>,
    /// The configuration's `map` variables.
    pub maps: &'a [peregrine_conf::model::MapConf],
    /// Their values so far (across internal redirects, as nginx's).
    pub map_cache: crate::map::MapCache,
    /// The configuration's `split_clients` variables.
    pub splits: &'a [peregrine_conf::model::SplitClientsConf],
    // proxy
    /// The upstream's answer (`$upstream_*`), in the filters of a proxied
    /// response.
    pub upstream: Option<&'a crate::proxy::UpstreamVars>,
    // limits
    /// `$limit_req_status`, `$limit_conn_status`, realip's address, a delay.
    pub limits: crate::limits::RequestLimits,
    /// The `limit_conn` slots taken.
    pub slots: Vec<crate::limit_conn::ConnSlot>,
    // geo
    pub geos: &'a [peregrine_conf::model::GeoConf],
}

impl Ctx<'_> {
    /// The client's address: realip's, else the connection's.
    pub(crate) fn peer(&self) -> std::net::SocketAddr {
        self.limits.real.unwrap_or(self.conn.peer)
    }

    /// The status a normal response gets: `error_page`'s, else `own`.
    pub(crate) fn status(&self, own: u16) -> u16 {
        self.err_status.unwrap_or(own)
    }

    /// Still the request's own URI: no internal redirect, no `error_page`.
    pub(crate) fn is_original(&self) -> bool {
        matches!(self.uri, Cow::Borrowed(u) if std::ptr::eq(u, self.req.path))
            && self.uri_changes == MAX_URI_CHANGES + 1
            && self.err_status.is_none()
            && !self.error_page_done
    }

    pub(crate) fn header_only(&self) -> bool {
        self.method == Method::Head
    }

    pub(crate) fn vars(&self) -> VarCtx<'_> {
        VarCtx {
            req: self.req,
            uri: &self.uri,
            args: self.args.as_deref(),
            local: self.conn.local,
            peer: self.peer(),
            server_name: self.server_name,
            document_root: root_of(&self.conf),
            captures: &self.captures,
            conf: &self.conf,
            server_names: self.server_names,
            listen: self.listen,
            method: self.method,
            uid: &self.uid,
            now: self.now,
            named: &self.named,
            conn: self.conn,
            status: self.status.as_deref(),
            sets: &self.sets,
            name_len: self.name_len,
            maps: self.maps,
            map_cache: &self.map_cache,
            splits: self.splits,
            upstream: self.upstream,
            limits: &self.limits,
            geos: self.geos,
            sent: None,
            sent_status: None,
        }
    }

    /// `http://host[:port]` as nginx prefixes a Location starting with `/`
    /// (`ngx_http_header_filter`): the server's name with
    /// `server_name_in_redirect on`, else the Host, else the local address;
    /// the port unless it is 80 or `port_in_redirect off`. Empty with
    /// `absolute_redirect off`: the Location stays as it is.
    pub(crate) fn origin(&self) -> String {
        let r = &self.conf.request;
        if !r.absolute_redirect {
            return String::new();
        }
        let host: Cow<'_, str> = match self.req.host {
            _ if r.server_name_in_redirect => Cow::Borrowed(self.server_name),
            Some(h) if !h.is_empty() => Cow::Borrowed(h),
            _ => Cow::Owned(self.conn.local.ip().to_string()),
        };
        match self.conn.local.port() {
            80 => format!("http://{host}"),
            _ if !r.port_in_redirect => format!("http://{host}"),
            port => format!("http://{host}:{port}"),
        }
    }
}

/// What a phase decided.
pub(crate) enum Step {
    Done(Response),
    Special(Special),
    /// Internal redirect to (uri, args).
    Redirect(String, Option<String>),
    Named(String),
    /// The internal redirect budget ran out: 500 without error_page.
    Cycle(crate::response::ErrorNote),
    /// The proxy's upstream request, for the engine to run.
    Upstream(Box<crate::proxy::ProxyJob>),
}

/// Whether any level of the configuration says `open_file_cache_errors
/// on` (with an `open_file_cache`): the open file cache then keeps paths
/// that do not exist, which requests choose.
fn caches_errors(conf: &Config) -> bool {
    fn loc(l: &peregrine_conf::model::LocationConf) -> bool {
        l.conf.open_file_cache_errors || l.locations.iter().any(|c| loc(c))
    }
    conf.http.as_ref().is_some_and(|h| {
        h.servers
            .iter()
            .any(|s| s.conf.open_file_cache_errors || s.locations.iter().any(|l| loc(l)))
    })
}

impl HttpCore {
    pub fn new(conf: Arc<Config>) -> Self {
        let maps: Arc<[peregrine_conf::model::MapConf]> = conf
            .http
            .as_ref()
            .map(|h| Arc::from(h.maps.as_slice()))
            .unwrap_or_else(|| Arc::from([]));
        let splits: Arc<[peregrine_conf::model::SplitClientsConf]> = conf
            .http
            .as_ref()
            .map(|h| Arc::from(h.split_clients.as_slice()))
            .unwrap_or_else(|| Arc::from([]));
        let geos: Arc<[peregrine_conf::model::GeoConf]> = conf
            .http
            .as_ref()
            .map(|h| Arc::from(h.geos.as_slice()))
            .unwrap_or_else(|| Arc::from([]));
        let servers: Vec<ServerRt> = conf
            .http
            .as_ref()
            .map(|h| {
                h.servers
                    .iter()
                    .map(|s| ServerRt {
                        conf: s.clone(),
                        locs: Locations::new(&s.locations),
                        name: primary_name(s),
                        named_captures: crate::servers::has_named_captures(s),
                        variables: h.variables.clone(),
                        maps: maps.clone(),
                        splits: splits.clone(),
                        geos: geos.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let index = conf
            .http
            .as_ref()
            .map(|h| ServerIndex::new(&h.servers))
            .unwrap_or_default();
        let fallback = servers
            .first()
            .map(|s| s.conf.conf.clone())
            .unwrap_or_else(|| Arc::new(crate::fixtures::loc_conf("html")));
        HttpCore {
            servers: Rc::new(servers),
            index,
            fcache: OpenFileCache::new(caches_errors(&conf)),
            mcache: MemCache::default(),
            heads: HeadMemo::default(),
            routes: Default::default(),
            status: None,
            boundary: 0,
            path_buf: String::with_capacity(256),
            last_server: None,
            host_memo: Default::default(),
            fallback,
            charset_maps: Rc::new(
                conf.http
                    .as_ref()
                    .map(|h| h.charset_maps.clone())
                    .unwrap_or_default(),
            ),
            log_lines: Vec::new(),
            failure: None,
            user_files: Default::default(),
            proxy_job: None,
            implicit: Rc::new(crate::proxy::implicit_hosts(&conf)),
            upstreams: Rc::new(
                conf.http
                    .as_ref()
                    .map(|h| h.upstreams.clone())
                    .unwrap_or_default(),
            ),
            limit_zones: Rc::new(crate::limits::LimitZones::of(&conf)),
            caches: Rc::new(crate::cache::Caches::of(&conf)),
            held: None,
            resuming: None,
            sub_depth: 0,
            subrequests: 0,
            sub_memo: Default::default(),
        }
    }

    /// Drops every cache the worker's requests fill (open files, memory
    /// cache, head memo, fast-path routes, the Host memo, the last server):
    /// after a panic in request processing they may be half updated. nginx
    /// loses the whole worker process then; here the worker keeps its
    /// other connections and starts its caches afresh.
    pub fn drop_caches(&mut self) {
        self.fcache = self.fcache.emptied();
        self.mcache = MemCache::default();
        self.heads = HeadMemo::default();
        self.routes = Default::default();
        self.host_memo = Default::default();
        self.last_server = None;
        self.log_lines.clear();
        self.failure = None;
        self.user_files.clear();
    }

    /// Installs the engine's counters for stub_status. Without a source
    /// stub_status renders zeros.
    pub fn set_status_source(&mut self, src: Box<dyn StatusSource>) {
        self.status = Some(std::rc::Rc::from(src));
    }

    pub(crate) fn status_source(&self) -> Option<std::rc::Rc<dyn StatusSource>> {
        self.status.clone()
    }

    pub(crate) fn stub_numbers(&self) -> StubStatus {
        self.status
            .as_ref()
            .map(|s| s.stub_status())
            .unwrap_or_default()
    }

    /// Cache lookups since the last call (then reset): the engine adds them
    /// to its per-worker metrics counters after each request.
    pub fn take_cache_counts(&mut self) -> crate::metrics::CacheCounts {
        let counts = crate::metrics::CacheCounts {
            open_file_hits: self.fcache.hits,
            open_file_misses: self.fcache.misses,
            memory_hits: self.mcache.hits,
            memory_misses: self.mcache.misses,
        };
        self.fcache.hits = 0;
        self.fcache.misses = 0;
        self.mcache.hits = 0;
        self.mcache.misses = 0;
        counts
    }

    /// The server block selected for the last handled request.
    pub fn last_server(&self) -> Option<&Arc<ServerConf>> {
        self.last_server
            .and_then(|i| self.servers.get(i))
            .map(|s| &s.conf)
    }

    /// The server and location nginx would pick for `uri` (no phases run):
    /// for diagnostics, tests and benchmarks of the matching alone.
    pub fn select(
        &self,
        local: std::net::SocketAddr,
        host: Option<&str>,
        uri: &str,
    ) -> Option<(&Arc<ServerConf>, Option<&Arc<LocationConf>>)> {
        let srv = self.servers.get(self.index.find(local, host)?)?;
        let loc = srv.locs.find(uri).map(|id| &srv.locs.node(id).loc);
        Some((&srv.conf, loc))
    }

    /// Selects the server by local addr + Host (nginx order), then the
    /// location, runs the phases and produces the response.
    pub fn handle(
        &mut self,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: SystemTime,
    ) -> Response {
        self.handle_explained(conn, req, now, false).0
    }

    /// [`HttpCore::handle`] when no route answers: the view, then the
    /// phases (out of line: the route's caller stays small).
    #[inline(never)]
    pub(crate) fn handle_parsed(
        &mut self,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        server: usize,
        fast: &FastReq<'_, peregrine_codec::Request>,
        now: SystemTime,
    ) -> Response {
        let view = RequestView {
            method: fast.method,
            method_name: req.method_str(),
            version: match req.version() {
                peregrine_codec::Version::Http10 => (1, 0),
                peregrine_codec::Version::Http11 => (1, 1),
            },
            path: fast.path,
            args: req.query(),
            target: req.target(),
            host: req.host(),
            content_length: fast.content_length,
            headers: req,
        };
        self.handle_server(conn, &view, server, now)
    }

    /// [`HttpCore::handle`] on a request view (tests, benches, and callers
    /// that parse requests themselves).
    pub fn handle_view(
        &mut self,
        conn: &ConnInfo,
        req: &RequestView<'_>,
        now: SystemTime,
    ) -> Response {
        let Some(server) = self.find_server(conn, || req.host) else {
            return self.error_response(500);
        };
        if let Some(r) = self.route_answer(server, &FastReq::of(req), now) {
            return r;
        }
        self.handle_server(conn, req, server, now)
    }

    /// The server block for the connection's address and this Host,
    /// remembered for [`HttpCore::last_server`].
    #[inline]
    pub(crate) fn find_server<'h>(
        &mut self,
        conn: &ConnInfo,
        host: impl FnOnce() -> Option<&'h str>,
    ) -> Option<usize> {
        self.last_server = self.index.find_lazy(&mut self.host_memo, conn.local, host);
        self.last_server
    }

    /// The request's state at its start, in `server`.
    pub(crate) fn start_ctx<'a>(
        srv: &'a ServerRt,
        server: usize,
        req: &'a RequestView<'a>,
        conn: &'a ConnInfo,
        now: SystemTime,
    ) -> Ctx<'a> {
        Ctx {
            req,
            conn,
            now,
            server,
            uri: Cow::Borrowed(req.path),
            args: req.args.map(Cow::Borrowed),
            method: req.method,
            uri_changes: MAX_URI_CHANGES + 1,
            err_status: None,
            kept_location: None,
            error_page_done: false,
            close: false,
            discarded: false,
            conf: srv.conf.conf.clone(),
            name_len: Some(0),
            valid_location: true,
            server_name: &srv.name,
            captures: Vec::new(),
            server_names: &srv.conf.server_names,
            listen: &srv.conf.listen,
            uid: Default::default(),
            named: if srv.named_captures {
                crate::servers::named_captures(&srv.conf, req.host)
            } else {
                Vec::new()
            },
            status: None,
            sets: crate::rewrite::SetVars {
                table: &srv.variables,
                values: Vec::new(),
            },
            maps: &srv.maps,
            map_cache: Default::default(),
            splits: &srv.splits,
            upstream: None,
            limits: Default::default(),
            slots: Vec::new(),
            geos: &srv.geos,
        }
    }

    /// The state of a subrequest of `parent` to `uri`: a GET, internal
    /// (it may use `internal` locations), sharing the parent's variables
    /// (nginx's `sr->variables = r->variables`; copied back after).
    pub(crate) fn sub_ctx<'a>(
        srv: &'a ServerRt,
        parent: &Ctx<'a>,
        uri: String,
        args: Option<String>,
    ) -> Ctx<'a> {
        let mut c = Self::start_ctx(srv, parent.server, parent.req, parent.conn, parent.now);
        c.uri = Cow::Owned(uri);
        c.args = args.map(Cow::Owned);
        c.method = crate::request::Method::Get;
        c.uri_changes = MAX_URI_CHANGES;
        c.status = parent.status.clone();
        c.sets.values = parent.sets.values.clone();
        c.limits.real = parent.limits.real;
        c
    }

    /// The phases, in `server`, for a request no route answered.
    fn handle_server(
        &mut self,
        conn: &ConnInfo,
        req: &RequestView<'_>,
        server: usize,
        now: SystemTime,
    ) -> Response {
        let servers = self.servers.clone();
        let srv = &servers[server];
        self.begin_pass();
        let mut ctx = Self::start_ctx(srv, server, req, conn, now);
        ctx.status = self.status.clone();
        if let Some(limits) = self.resuming.take() {
            ctx.limits = limits;
        }
        // The post-read phase: realip with the server's settings.
        if !srv.conf.conf.realip.from.is_empty() {
            crate::realip::run(&mut ctx, &srv.conf.conf.realip);
        }
        let mut resp = self.run(&mut ctx, &servers);
        self.end_pass();
        if resp.server.is_none() {
            resp.server = Some(srv.conf.clone());
        }
        if ctx.limits.delay.is_some() || ctx.limits.real.is_some() || !ctx.slots.is_empty() {
            let slots = std::mem::take(&mut ctx.slots);
            self.leave(&ctx.limits, slots);
        }
        resp
    }

    fn run(&mut self, ctx: &mut Ctx<'_>, servers: &[ServerRt]) -> Response {
        let step = self.server_rewrite_phase(ctx, servers);
        self.drive(ctx, servers, step)
    }

    /// Follows `step` through internal redirects to the response.
    pub(crate) fn drive(
        &mut self,
        ctx: &mut Ctx<'_>,
        servers: &[ServerRt],
        mut step: Step,
    ) -> Response {
        loop {
            step = match step {
                Step::Done(mut r) => {
                    r.keepalive &= !ctx.close;
                    if let Some(loc) = ctx.kept_location.take() {
                        keep_location(ctx, &mut r, loc);
                    }
                    crate::charset::expand_in_head(ctx, &mut r);
                    // nginx's header filter chain runs the headers
                    // filter before the userid filter.
                    if crate::headers::active(&ctx.conf) {
                        crate::headers::filter(&mut r, ctx);
                    }
                    if ctx.conf.userid.mode >= UseridMode::V1
                        && r.status != 444
                        && let Some(note) = crate::userid::filter(ctx, &mut r)
                    {
                        self.log_line(peregrine_conf::model::LogLevel::Notice, || note);
                    }
                    if ctx.conf.filters.active {
                        crate::filters::apply(self, ctx, servers, &mut r);
                    }
                    self.own_rate(ctx, &mut r);
                    return r;
                }
                Step::Special(sp) => self.special(ctx, sp),
                Step::Upstream(job) => return self.hand_over(ctx, job),
                Step::Cycle(note) => {
                    self.note_failure(note);
                    return self.cycle(ctx);
                }
                Step::Redirect(uri, args) => {
                    if !count_change(ctx) {
                        self.note_failure(crate::response::ErrorNote::Cycle {
                            doing: "while internally redirecting to",
                            uri,
                        });
                        return self.cycle(ctx);
                    }
                    ctx.uri = Cow::Owned(uri);
                    ctx.args = args.map(Cow::Owned);
                    self.server_rewrite_phase(ctx, servers)
                }
                Step::Named(name) => {
                    if !count_change(ctx) {
                        self.note_failure(crate::response::ErrorNote::Cycle {
                            doing: "while redirect to named location",
                            uri: name,
                        });
                        return self.cycle(ctx);
                    }
                    let srv = &servers[ctx.server];
                    match srv.locs.named(&name) {
                        Some(id) => {
                            let node = srv.locs.node(id);
                            ctx.conf = node.loc.conf.clone();
                            ctx.name_len = node.name_len;
                            self.location_phases(ctx)
                        }
                        // nginx: "could not find named location" → 500.
                        None => Step::Special(Special::status(500)),
                    }
                }
            };
        }
    }

    /// The 500 of an internal redirection cycle: no error_page any more
    /// (nginx skips them once `uri_changes` is 0).
    fn cycle(&mut self, ctx: &mut Ctx<'_>) -> Response {
        ctx.error_page_done = true;
        self.builtin(ctx, &Special::status(500))
    }

    /// The server's script (nginx's server-rewrite phase), then the
    /// location's phases.
    pub(crate) fn server_rewrite_phase(&mut self, ctx: &mut Ctx<'_>, servers: &[ServerRt]) -> Step {
        let srv = &servers[ctx.server];
        if let Some(script) = &srv.conf.conf.rewrite.script {
            ctx.conf = srv.conf.conf.clone();
            ctx.name_len = Some(0);
            if let crate::rewrite::Flow::Step(step) = self.run_script(ctx, script) {
                return step;
            }
        }
        self.find_config_phase(ctx, servers)
    }

    /// nginx's find-config phase: the location of the URI, `internal`,
    /// `client_max_body_size`; then the location's phases.
    fn find_config_phase(&mut self, ctx: &mut Ctx<'_>, servers: &[ServerRt]) -> Step {
        ctx.valid_location = true;
        let srv = &servers[ctx.server];
        let found = srv.locs.find(&ctx.uri);
        if let Some(id) = srv.locs.auto_redirect(&ctx.uri, found) {
            ctx.conf = srv.locs.node(id).loc.conf.clone();
            let mut to = String::with_capacity(ctx.uri.len() + 8);
            // As the directory redirect (nginx 1.29 escapes both strictly).
            crate::static_file::escape_uri(&mut to, &ctx.uri);
            to.push('/');
            if let Some(a) = ctx.args.as_deref().filter(|a| !a.is_empty()) {
                to.push('?');
                to.push_str(a);
            }
            return Step::Special(Special {
                status: 301,
                location: Some(to),
                ..Special::default()
            });
        }
        // Assigned once (reference counts are not free on the hot path).
        let (conf, name_len) = match found {
            Some(id) => {
                let node = srv.locs.node(id);
                if node.captures
                    && let LocationMatch::Regex { regex, .. } = &node.loc.matcher
                    && let Some(c) = regex.captures(&ctx.uri)
                {
                    ctx.captures = c;
                }
                (&node.loc.conf, node.name_len)
            }
            None => (&srv.conf.conf, Some(0)),
        };
        if !Arc::ptr_eq(&ctx.conf, conf) {
            ctx.conf = conf.clone();
        }
        ctx.name_len = name_len;
        // `limit_except` (ngx_http_update_location_config): another method
        // is served with the block's settings.
        if let Some(le) = &ctx.conf.limit_except
            && !le.allows(ctx.req.method_name)
        {
            ctx.conf = le.conf.clone();
        }
        // `internal` (ngx_http_core_find_config_phase): only a redirected
        // request (index, try_files, error_page) may use the location.
        if ctx.conf.request.internal && ctx.uri_changes == MAX_URI_CHANGES + 1 {
            return Step::Special(Special::status(404));
        }
        let limit = ctx.conf.client_max_body_size;
        if limit > 0 && !ctx.discarded && ctx.req.content_length.is_some_and(|n| n > limit) {
            return Step::Special(Special::status(413));
        }
        self.location_phases(ctx)
    }

    fn location_phases(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if ctx.conf.rewrite.script.is_some()
            && let Some(step) = self.rewrite_phase(ctx)
        {
            return step;
        }
        // The preaccess phase: limit_req, limit_conn, realip with the
        // location's settings (nginx's handler order).
        if !ctx.conf.limit_req.rules.is_empty()
            && let Some(step) = self.limit_req(ctx)
        {
            return step;
        }
        if !ctx.conf.limit_conn.rules.is_empty()
            && let Some(step) = self.limit_conn(ctx)
        {
            return step;
        }
        if !ctx.conf.realip.from.is_empty() {
            crate::realip::run(ctx, &ctx.conf.realip.clone());
        }
        // The access phase (`allow`/`deny`, auth_basic, auth_request), for
        // every location a request reaches, internal redirects included;
        // not for a subrequest (`ngx_http_core_access_phase`).
        if self.sub_depth > 0 {
        } else if ctx.conf.satisfy_any {
            if let Some(step) = self.satisfy_any(ctx) {
                return step;
            }
        } else {
            if !ctx.conf.access.is_empty() && crate::access::denied(&ctx.conf.access, ctx.peer()) {
                self.note_failure(crate::response::ErrorNote::AccessForbidden);
                return Step::Special(Special::status(403));
            }
            if ctx.conf.auth_basic.is_some()
                && let Some(step) = self.auth_basic(ctx)
            {
                return self.auth_delay(ctx, step);
            }
            if ctx.conf.auth_request.is_some()
                && let Some(step) = self.auth_request(ctx)
            {
                return self.auth_delay(ctx, step);
            }
        }
        if !ctx.conf.try_files.is_empty()
            && let Some(step) = self.try_files(ctx)
        {
            return step;
        }
        if ctx.conf.proxy.pass.is_some() {
            return self.proxy(ctx);
        }
        if let Some(g) = crate::gateway::which(&ctx.conf) {
            return self.gateway(ctx, g);
        }
        if ctx.conf.stub_status {
            return self.stub_status(ctx);
        }
        if ctx.conf.metrics {
            return self.metrics(ctx);
        }
        if ctx.conf.empty_gif {
            return self.empty_gif(ctx);
        }
        if ctx.conf.health_status {
            return self.health_status(ctx);
        }
        self.content(ctx)
    }

    /// nginx's rewrite phase and post-rewrite phase: the location's script
    /// (not the server's again when no location matched), then a changed
    /// URI searched again, within the internal redirect budget.
    #[inline(never)]
    fn rewrite_phase(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        let servers = self.servers.clone();
        let srv = &servers[ctx.server];
        let conf = ctx.conf.clone();
        let script = conf.rewrite.script.as_ref()?;
        if Arc::ptr_eq(&conf, &srv.conf.conf) {
            return None;
        }
        match self.run_script(ctx, script) {
            crate::rewrite::Flow::Next => None,
            crate::rewrite::Flow::Step(step) => Some(step),
            crate::rewrite::Flow::Last => {
                if !count_change(ctx) {
                    return Some(Step::Cycle(crate::response::ErrorNote::Cycle {
                        doing: "while processing",
                        uri: ctx.uri.to_string(),
                    }));
                }
                Some(self.find_config_phase(ctx, &servers))
            }
        }
    }

    /// `ngx_http_special_response_handler`: error_page, else the built-in page.
    pub(crate) fn special(&mut self, ctx: &mut Ctx<'_>, sp: Special) -> Step {
        ctx.close |= special::closes_connection(sp.status);
        ctx.discarded = true;
        if !ctx.error_page_done
            && ctx.uri_changes != 0
            && let Some(ep) = find_error_page(&ctx.conf, sp.status).cloned()
        {
            // nginx's `r->error_page`: one error_page per request unless
            // `recursive_error_pages on`.
            ctx.error_page_done = !ctx.conf.rewrite.recursive_error_pages;
            ctx.err_status = match ep.overwrite {
                None => Some(sp.status),
                Some(None) => None,
                Some(Some(code)) => Some(code),
            };
            let target = ctx.vars().expand(&ep.target);
            if sp.location.is_some() && (target.starts_with('/') || target.starts_with('@')) {
                ctx.kept_location = sp.location;
            }
            if target.starts_with('/') {
                if ctx.method != Method::Head {
                    ctx.method = Method::Get;
                }
                let (uri, args) = split_args(&target);
                return Step::Redirect(uri, args);
            }
            if target.starts_with('@') {
                return Step::Named(target);
            }
            let status = match ep.overwrite {
                Some(Some(c @ (301 | 302 | 303 | 307 | 308))) => c,
                _ => 302,
            };
            // nginx's `ngx_http_send_error_page`: the refresh page for MSIE
            // only when the status became 302.
            if status == 302
                && let Some(r) = crate::msie_refresh::refresh(ctx, status, Some(&target))
            {
                return Step::Done(r);
            }
            let redirect = Special {
                status,
                location: Some(target),
                ..Special::default()
            };
            return Step::Done(self.builtin(ctx, &redirect));
        }
        if let Some(r) = crate::msie_refresh::refresh(ctx, sp.status, sp.location.as_deref()) {
            return Step::Done(r);
        }
        let r = self.builtin(ctx, &sp);
        Step::Done(crate::static_file::vary_if(r, sp.vary))
    }

    pub(crate) fn builtin(&mut self, ctx: &Ctx<'_>, sp: &Special) -> Response {
        let origin = ctx.origin();
        let page = PageCtx {
            conf: &ctx.conf,
            header_only: ctx.header_only(),
            padding: ctx.req.version >= (1, 0)
                && ctx.conf.request.msie_padding
                && special::wants_padding(ctx.req.header("User-Agent")),
            origin: &origin,
        };
        special::builtin(sp, &page)
    }

    /// The response for a request that failed to parse: nginx's error page,
    /// `keepalive: false`.
    #[cold]
    pub fn error_response(&mut self, status: u16) -> Response {
        let page = PageCtx {
            conf: &self.fallback,
            header_only: false,
            padding: false,
            origin: "",
        };
        let mut r = special::builtin(&Special::status(status), &page);
        r.status = peregrine_codec::response::wire_status(status);
        r.keepalive = false;
        r
    }
}

/// The values of `ssl_certificate`/`ssl_certificate_key` with variables.
impl HttpCore {
    /// `template` (an `ssl_certificate` or `ssl_certificate_key` value
    /// with variables) expanded for a handshake in server block `server`
    /// (its index in the configuration), the connection `conn` carrying
    /// the SNI as `$ssl_server_name`. nginx's `ngx_http_ssl_certificate`
    /// evaluates it in a request made for the purpose, before any was
    /// read: here a `GET /` without headers, as for the pages of refused
    /// requests.
    pub fn handshake_value(
        &self,
        server: usize,
        conn: &crate::response::ConnInfo,
        now: std::time::SystemTime,
        template: &str,
    ) -> String {
        let Some(srv) = self.servers.get(server) else {
            return String::new();
        };
        let headers: Vec<(&str, &str)> = Vec::new();
        let view = crate::request::RequestView {
            method: crate::request::Method::Get,
            method_name: "GET",
            version: (1, 0),
            path: "/",
            args: None,
            target: "/",
            host: None,
            content_length: None,
            headers: &headers,
        };
        let ctx = Self::start_ctx(srv, server, &view, conn, now);
        ctx.vars().expand(template)
    }
}

/// Adds the Location an `error_page` redirect kept ([`Ctx::kept_location`])
/// to the page that answered, unless it has its own; a path gets the
/// origin as nginx's header filter gives it.
fn keep_location(ctx: &Ctx<'_>, r: &mut Response, loc: String) {
    if r.head.get("Location").is_some() {
        return;
    }
    let origin = ctx.origin();
    let value = if loc.starts_with('/') && !origin.is_empty() {
        format!("{origin}{loc}")
    } else {
        loc
    };
    r.head.to_mut().push("Location", value);
}

/// nginx's internal-redirect budget; `false` when exhausted.
fn count_change(ctx: &mut Ctx<'_>) -> bool {
    ctx.uri_changes = ctx.uri_changes.saturating_sub(1);
    ctx.uri_changes != 0
}

/// Splits `uri?args` (`ngx_http_split_args`).
pub(crate) fn split_args(target: &str) -> (String, Option<String>) {
    match target.split_once('?') {
        Some((u, a)) => (u.to_string(), Some(a.to_string())),
        None => (target.to_string(), None),
    }
}

pub(crate) fn root_of(conf: &LocConf) -> &str {
    match &conf.root {
        peregrine_conf::model::DocRoot::Root(r) | peregrine_conf::model::DocRoot::Alias(r) => r,
    }
}

fn primary_name(s: &ServerConf) -> String {
    match s.server_names.first() {
        Some(ServerName::Exact(n)) => n.clone(),
        Some(ServerName::WildcardStart { suffix, also_bare }) => {
            if *also_bare {
                // nginx: `.example.com` names the server `example.com`.
                suffix.trim_start_matches('.').to_string()
            } else {
                format!("*{suffix}")
            }
        }
        Some(ServerName::WildcardEnd(p)) => format!("{p}*"),
        Some(ServerName::Regex(r)) => format!("~{}", r.as_str()),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::HttpCore;

    /// What a route's hit reads of the core (see [`HttpCore`]) stays
    /// within its first two cache lines.
    #[test]
    fn a_hit_reads_two_lines_of_the_core() {
        let mcache_hits = offset_of!(HttpCore, mcache) + offset_of!(crate::mcache::MemCache, hits);
        assert!(mcache_hits + size_of::<u64>() <= 128, "{mcache_hits}");
        assert!(offset_of!(HttpCore, last_server) < 128);
    }

    /// The open file cache hashes with SipHash exactly when some location,
    /// however deeply nested, caches lookup errors (requests then choose
    /// its keys), and with Fx otherwise.
    #[test]
    fn the_file_cache_hasher_follows_open_file_cache_errors() {
        use crate::fixtures::{config, loc, loc_conf, nested, server_with};
        use crate::fxhash::PathBuild;
        let plain = loc_conf("html");
        let mut errors = plain.clone();
        errors.open_file_cache_errors = true;
        let deep = vec![nested("/a/", &plain, vec![loc("/a/b/", &errors)])];
        let sip = config(vec![server_with(&[], &[], deep, plain.clone())]);
        let fx = config(vec![server_with(&[], &[], vec![loc("/a/", &plain)], plain)]);
        let hasher = |c| match HttpCore::new(std::sync::Arc::new(c)).fcache.hasher() {
            PathBuild::Fx => "fx",
            PathBuild::Sip(_) => "sip",
        };
        assert_eq!(hasher(sip), "sip");
        assert_eq!(hasher(fx), "fx");
    }
}
