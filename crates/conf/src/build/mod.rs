//! The interpreter: walks syntax trees in file order, checks each directive
//! against the table (context, block, arity), gives it meaning, follows
//! `include`s, and merges the levels into the typed [`Config`].
//!
//! Order of errors follows nginx: a directive's own errors as it is reached,
//! a syntax error when reading reached it, the http-wide checks (duplicate
//! locations) at the end of `http { }`, and `no "events" section` last.

pub mod access;
pub mod auth_basic;
pub mod auth_request;
pub mod cache;
pub mod cgi;
pub mod client_body;
pub mod conn;
pub mod filters;
pub mod handlers;
// http2
pub mod http2;
mod include;
mod listen;
pub use listen::DEFAULT_BACKLOG;
pub mod headers;
pub mod hints;
mod location;
pub use headers::parse_expires;
mod logs;
mod map;
pub mod modules;
pub mod proxy;
pub mod proxy_cookie;
pub mod proxy_ssl;
pub mod raw;
pub mod request;
pub mod rewrite;
mod split_clients;
// stream
mod stream;
pub mod stream_table;
// mail
mod mail;
pub mod mail_table;
// limits
mod geo;
pub mod limit_conn;
pub mod limit_req;
pub mod limit_zone;
pub mod realip;
pub mod resolver;
pub mod ssl;
mod syslog;
mod upstream;
mod vars;

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{ConfError, Result};
use crate::known;
use crate::model::*;
use crate::syntax::{Block, Directive};
use crate::table::{self, ctx};

pub use include::open_failed as include_open_failed;
pub use include::read_conf_file;
pub use listen::Listens;
use raw::*;

/// Blocks and included files nested deeper than this, counted together, are
/// refused: the walk recurses once per level, and a block limit per file
/// alone would let includes multiply it.
pub const MAX_WALK_DEPTH: usize = 100;

/// A large value made and boxed in a frame of its own. [`Builder::block`]
/// recurses once per nesting level, and in a debug build a value built or
/// moved in its body (a server's or location's raw settings, about 10 KiB
/// each) takes a slot in that frame for the whole walk below it: these
/// helpers keep those slots out of the recursion.
#[inline(never)]
fn boxed<T>(make: impl FnOnce() -> T) -> Box<T> {
    Box::new(make())
}

/// [`boxed`] for a value whose making can fail.
#[inline(never)]
fn boxed_result<T>(make: impl FnOnce() -> Result<T>) -> Result<Box<T>> {
    make().map(Box::new)
}

/// Moves a boxed value into a list outside the recursing frame (see
/// [`boxed`]). The box is the point: the value reaches this frame as a
/// pointer, not a copy in the caller's.
#[inline(never)]
#[allow(clippy::boxed_local)]
fn push_unboxed<T>(list: &mut Vec<T>, value: Box<T>) {
    list.push(*value);
}

/// What a directive's handler gets besides its own arguments.
pub struct Env<'a> {
    pub prefix: &'a Path,
    pub log_formats: &'a [LogFormatConf],
    /// Inside a named location (`@x`), where `alias` is refused.
    pub named_location: bool,
    /// `$hostname` for `server_name`.
    pub hostname: &'a str,
    /// nginx's `[warn]`s (the configuration is accepted), reported as notices.
    pub warnings: &'a RefCell<Vec<String>>,
    // ssl
    /// The main configuration file's directory (nginx's conf prefix:
    /// `ssl_certificate` and the like are relative to it).
    pub conf_dir: &'a Path,
    // rewrite
    /// Variables the directive defines (`set`, a regex's named groups).
    pub declared: &'a RefCell<Vec<String>>,
    /// The names `set` may define, by index (see [`Part::Set`]).
    pub set_vars: &'a RefCell<Vec<String>>,
}

impl Env<'_> {
    /// Records an nginx `[warn]` at a directive.
    pub fn warn(&self, d: &Directive, message: impl std::fmt::Display) {
        self.warnings
            .borrow_mut()
            .push(format!("{message} in {}", d.span));
    }

    /// Makes `name` (lowercase) a known variable of this configuration.
    pub fn declare(&self, name: &str) {
        self.declared.borrow_mut().push(name.to_string());
    }

    /// The index of `name` (lowercase) in a request's table of set values.
    pub fn set_index(&self, name: &str) -> usize {
        let mut v = self.set_vars.borrow_mut();
        match v.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                v.push(name.to_string());
                v.len() - 1
            }
        }
    }
}

type H<T> = fn(&mut T, &Directive, &Env<'_>) -> Result<()>;

/// What a table row does.
pub enum Handler {
    Block(BlockKind),
    Include,
    Main(H<RawMain>),
    Events(H<RawEvents>),
    Srv(H<RawSrv>),
    Loc(H<RawLoc>),
    Server(fn(&mut RawServer, &Directive, &mut Listens, &Env<'_>) -> Result<()>),
    LogFormat,
    ErrorLog,
    /// A tuning hint: the function checks the value and says whether the
    /// directive now counts as set at its level; a notice is recorded.
    Hint(fn(&Directive) -> Result<bool>),
}

/// The block directives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    Events,
    Http,
    Server,
    Location,
    Types,
    // request
    CharsetMap,
    // upstream
    Upstream,
    // map
    Map,
    // split_clients
    SplitClients,
    // geo
    Geo,
    // limit_except
    LimitExcept,
    // rewrite
    If,
    // stream
    Stream,
    // mail
    Mail,
}

/// The context being filled.
pub enum Frame<'a> {
    Main(&'a mut RawMain),
    Events(&'a mut RawEvents),
    Http(&'a mut RawHttp),
    Server(&'a mut RawServer),
    Location(&'a mut RawLocation),
    /// An `if` block's settings, with its context (`SIF` or `LIF`).
    If(&'a mut RawLoc, u16),
}

impl Frame<'_> {
    /// The location-level settings of an http, server or location frame:
    /// where a directive's fast-path verdict is noted.
    fn loc(&mut self) -> Option<&mut RawLoc> {
        match self {
            Frame::Http(h) => Some(&mut h.loc),
            Frame::Server(s) => Some(&mut s.loc),
            Frame::Location(l) => Some(&mut l.loc),
            Frame::If(l, _) => Some(l),
            Frame::Main(_) | Frame::Events(_) => None,
        }
    }

    fn ctx(&self) -> u16 {
        match self {
            Frame::Main(_) => ctx::MAIN,
            Frame::Events(_) => ctx::EVENTS,
            Frame::Http(_) => ctx::HTTP,
            Frame::Server(_) => ctx::SERVER,
            Frame::Location(_) => ctx::LOCATION,
            Frame::If(_, c) => *c,
        }
    }
}

/// Interpreter state shared by every level.
pub struct Builder {
    pub prefix: PathBuf,
    /// The directory of the main configuration file: `include` is relative to it.
    pub conf_dir: PathBuf,
    /// `false` for [`crate::parse_str`]: `include` reads nothing.
    pub read_includes: bool,
    pub files: Vec<SourceFile>,
    pub notices: Vec<String>,
    /// `*_temp_path` directories, for [`Config::temp_paths`].
    pub temp_paths: Vec<PathBuf>,
    warnings: RefCell<Vec<String>>,
    include_depth: usize,
    /// Nesting of blocks and includes being walked, bounded by [`MAX_WALK_DEPTH`].
    walk_depth: usize,
    /// The block being walked (0: the main level), numbered in the order
    /// blocks are entered; `include`d directives stay in the includer's.
    scope: usize,
    /// How many blocks have been entered.
    scopes: usize,
    /// Tuning hints set so far, by block: their duplicate check.
    hints_set: HashSet<(usize, &'static str)>,
    log_formats: Vec<LogFormatConf>,
    listens: Listens,
    hostname: String,
    // request
    /// Variable names used so far, in first-use order (checked against
    /// [`crate::variables`] at the end of `http { }`, as nginx does).
    used_vars: Vec<String>,
    /// Names directives defined (see [`Builder::declare_variable`]).
    declared_vars: HashSet<String>,
    // rewrite
    /// Names the last directive defined ([`Env::declare`]).
    pending_declared: RefCell<Vec<String>>,
    /// The variables `set` may define ([`Env::set_index`]).
    set_vars: RefCell<Vec<String>>,
}

impl Builder {
    pub fn new(prefix: PathBuf, conf_dir: PathBuf, read_includes: bool) -> Self {
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_ascii_lowercase())
            .unwrap_or_else(|_| "localhost".into());
        Builder {
            prefix,
            conf_dir,
            read_includes,
            files: Vec::new(),
            temp_paths: Vec::new(),
            notices: Vec::new(),
            warnings: RefCell::new(Vec::new()),
            include_depth: 0,
            walk_depth: 0,
            scope: 0,
            scopes: 0,
            hints_set: HashSet::new(),
            log_formats: vec![logs::combined()],
            listens: Listens::default(),
            hostname,
            used_vars: Vec::new(),
            declared_vars: HashSet::new(),
            pending_declared: RefCell::new(Vec::new()),
            set_vars: RefCell::new(Vec::new()),
        }
    }

    /// Walks directives of one file or block, then raises the syntax error
    /// that stopped reading there, if any.
    pub fn walk(
        &mut self,
        items: &[Directive],
        error: Option<&ConfError>,
        frame: &mut Frame<'_>,
    ) -> Result<()> {
        if self.walk_depth >= MAX_WALK_DEPTH {
            let span = items.first().map(|d| d.span.clone()).unwrap_or_default();
            return Err(ConfError::at(
                &span,
                format!("blocks and includes are nested deeper than {MAX_WALK_DEPTH} levels"),
            ));
        }
        self.walk_depth += 1;
        let result = items.iter().try_for_each(|d| self.directive(d, frame));
        self.walk_depth -= 1;
        result?;
        match error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn directive(&mut self, d: &Directive, frame: &mut Frame<'_>) -> Result<()> {
        let spec = check(d, frame.ctx())?;
        let r = self.dispatch(spec, d, frame);
        self.flush_declared();
        r?;
        if let Some(loc) = frame.loc() {
            loc.fast.add(spec.name, spec.fast);
        }
        vars::check_script(d)?;
        for v in vars::variable_values(d) {
            for name in vars::names(v) {
                if !self.used_vars.iter().any(|u| u.eq_ignore_ascii_case(name)) {
                    self.used_vars.push(name.to_string());
                }
            }
        }
        Ok(())
    }

    /// Makes `name` a known variable for this configuration: for directives
    /// that define one (`set`, `map`, `geo`...).
    pub fn declare_variable(&mut self, name: &str) {
        self.declared_vars.insert(name.to_ascii_lowercase());
    }

    /// Moves the names [`Env::declare`] recorded to the declared ones.
    fn flush_declared(&mut self) {
        for n in self.pending_declared.take() {
            self.declared_vars.insert(n);
        }
    }

    /// The handlers' view of the builder.
    fn env(&self, named_location: bool) -> Env<'_> {
        Env {
            prefix: &self.prefix,
            log_formats: &self.log_formats,
            named_location,
            hostname: &self.hostname,
            warnings: &self.warnings,
            conf_dir: &self.conf_dir,
            declared: &self.pending_declared,
            set_vars: &self.set_vars,
        }
    }

    /// Named groups of server-name and location regexes are variables, as
    /// nginx's `ngx_http_regex_compile` makes them (`server_name
    /// ~^(?<sub>.+)\.example\.com$; root /srv/$sub;`).
    fn declare_named_captures(&mut self, servers: &[Arc<ServerConf>]) {
        fn walk(locs: &[Arc<LocationConf>], out: &mut Vec<String>) {
            for l in locs {
                if let LocationMatch::Regex { regex, .. } = &l.matcher {
                    out.extend(regex.capture_names().into_iter().map(|(n, _)| n));
                }
                walk(&l.locations, out);
            }
        }
        let mut names = Vec::new();
        for s in servers {
            for n in &s.server_names {
                if let ServerName::Regex(re) = n {
                    names.extend(re.capture_names().into_iter().map(|(n, _)| n));
                }
            }
            walk(&s.locations, &mut names);
        }
        for n in names {
            self.declare_variable(&n);
        }
    }

    /// nginx's `ngx_http_variables_init_vars`: the first variable used that
    /// nobody defines.
    fn check_variables(&self) -> Result<()> {
        let unknown = self.used_vars.iter().find(|n| {
            !crate::variables::is_known(n) && !self.declared_vars.contains(&n.to_ascii_lowercase())
        });
        match unknown {
            Some(n) => Err(ConfError::bare(format!("unknown \"{n}\" variable"))),
            None => Ok(()),
        }
    }

    /// Gives a checked directive its meaning. One arm per kind of handler:
    /// the match pairs the handler with the level it writes to.
    fn dispatch(&mut self, spec: &table::Spec, d: &Directive, frame: &mut Frame<'_>) -> Result<()> {
        let named_location =
            matches!(frame, Frame::Location(l) if matches!(l.matcher, LocationMatch::Named(_)));
        let env = Env {
            prefix: &self.prefix,
            log_formats: &self.log_formats,
            named_location,
            hostname: &self.hostname,
            warnings: &self.warnings,
            conf_dir: &self.conf_dir,
            declared: &self.pending_declared,
            set_vars: &self.set_vars,
        };
        if spec.name == "client_body_temp_path"
            && let Some(dir) = d.args.first()
        {
            // Created at start as the other `*_temp_path`s (ngx_create_paths).
            self.temp_paths
                .push(PathBuf::from(raw::full_name(&self.prefix, dir)));
        }
        match (&spec.handler, frame) {
            (Handler::Block(kind), frame) => {
                let block = d
                    .block
                    .as_ref()
                    .ok_or_else(|| ConfError::at(&d.span, "internal: block expected"))?;
                let outer = self.scope;
                self.scopes += 1;
                self.scope = self.scopes;
                let r = self.block(*kind, d, block, frame);
                self.scope = outer;
                r
            }
            (Handler::Include, frame) => self.include(d, frame),
            (Handler::Main(f), Frame::Main(m)) => f(m, d, &env),
            (Handler::Events(f), Frame::Events(e)) => {
                f(e, d, &env)?;
                if table::NOTICE_TOO.contains(&spec.name) {
                    env.warn(
                        d,
                        format_args!(
                            "\"{}\" is an nginx tuning hint with no effect in Peregrine",
                            d.name
                        ),
                    );
                }
                Ok(())
            }
            (Handler::Srv(f), Frame::Http(h)) => f(&mut h.srv, d, &env),
            (Handler::Srv(f), Frame::Server(s)) => f(&mut s.srv, d, &env),
            (Handler::Loc(f), Frame::Http(h)) => f(&mut h.loc, d, &env),
            (Handler::Loc(f), Frame::Server(s)) => f(&mut s.loc, d, &env),
            (Handler::Loc(f), Frame::Location(l)) => f(&mut l.loc, d, &env),
            (Handler::Loc(f), Frame::If(l, _)) => f(l, d, &env),
            (Handler::Server(f), Frame::Server(s)) => f(s, d, &mut self.listens, &env),
            (Handler::LogFormat, _) => {
                let lf = logs::log_format(d, &self.log_formats)?;
                self.log_formats.push(lf);
                Ok(())
            }
            (Handler::ErrorLog, frame) => {
                let conf = logs::error_log(d, &env)?;
                // nginx allows error_log at every level: below the main one
                // it receives the lines of requests in that scope.
                let loc = match frame {
                    Frame::Main(m) => {
                        m.error_log.push(conf);
                        return Ok(());
                    }
                    Frame::Http(h) => &mut h.loc,
                    Frame::Server(s) => &mut s.loc,
                    Frame::Location(l) => &mut l.loc,
                    Frame::If(l, _) => l,
                    _ => return Ok(()),
                };
                loc.error_log.get_or_insert_with(Vec::new).push(conf);
                Ok(())
            }
            (Handler::Hint(check), _) => {
                // nginx's slot functions refuse a second value at one level
                // before reading it.
                let key = (self.scope, spec.name);
                if self.hints_set.contains(&key) {
                    return Err(ConfError::at(
                        &d.span,
                        format!("\"{}\" directive is duplicate", d.name),
                    ));
                }
                if check(d)? {
                    self.hints_set.insert(key);
                }
                if spec.name.ends_with("_temp_path") {
                    let path = raw::full_name(&self.prefix, &d.args[0]);
                    self.temp_paths.push(PathBuf::from(path));
                }
                self.notices.push(format!(
                    "\"{}\" is an nginx tuning hint with no effect in Peregrine (in {})",
                    d.name, d.span
                ));
                Ok(())
            }
            _ => Err(ConfError::at(
                &d.span,
                format!("\"{}\" directive is not allowed here", d.name),
            )),
        }
    }

    fn block(
        &mut self,
        kind: BlockKind,
        d: &Directive,
        block: &Block,
        frame: &mut Frame<'_>,
    ) -> Result<()> {
        let dup = || ConfError::at(&d.span, format!("\"{}\" directive is duplicate", d.name));
        match (kind, frame) {
            (BlockKind::Events, Frame::Main(m)) => {
                if m.events.is_some() {
                    return Err(dup());
                }
                let mut ev = RawEvents::default();
                self.walk(
                    &block.items,
                    block.error.as_ref(),
                    &mut Frame::Events(&mut ev),
                )?;
                m.events = Some(ev);
                Ok(())
            }
            (BlockKind::Http, Frame::Main(m)) => {
                if m.http.is_some() {
                    return Err(dup());
                }
                // Boxed: this function recurses once per nesting level, and in a
                // debug build every arm's locals share one frame.
                let mut http = Box::<RawHttp>::default();
                self.walk(
                    &block.items,
                    block.error.as_ref(),
                    &mut Frame::Http(&mut http),
                )?;
                self.listens.check_covered()?;
                m.http = Some(self.finish_http(&http)?);
                Ok(())
            }
            (BlockKind::Server, Frame::Http(http)) => {
                let mut server = boxed(|| RawServer {
                    span: d.span.clone(),
                    ..Default::default()
                });
                self.listens.current_server = http.servers.len();
                self.walk(
                    &block.items,
                    block.error.as_ref(),
                    &mut Frame::Server(&mut server),
                )?;
                push_unboxed(&mut http.servers, server);
                Ok(())
            }
            (BlockKind::Location, Frame::Server(s)) => {
                let mut loc = boxed_result(|| location::new(d, None))?;
                self.walk(
                    &block.items,
                    block.error.as_ref(),
                    &mut Frame::Location(&mut loc),
                )?;
                push_unboxed(&mut s.locations, loc);
                Ok(())
            }
            (BlockKind::Location, Frame::Location(parent)) => {
                let mut loc = boxed_result(|| location::new(d, Some(parent)))?;
                self.walk(
                    &block.items,
                    block.error.as_ref(),
                    &mut Frame::Location(&mut loc),
                )?;
                push_unboxed(&mut parent.locations, loc);
                Ok(())
            }
            (BlockKind::Types, frame) => {
                let raw = match frame {
                    Frame::Http(h) => &mut h.loc,
                    Frame::Server(s) => &mut s.loc,
                    Frame::Location(l) => &mut l.loc,
                    _ => {
                        return Err(ConfError::at(
                            &d.span,
                            "\"types\" directive is not allowed here",
                        ));
                    }
                };
                let types = raw.types.get_or_insert_with(MimeTypes::default);
                self.types(&block.items, block.error.as_ref(), types)
            }
            (BlockKind::If, Frame::Server(s)) => self.if_block(d, block, &mut s.loc, true),
            (BlockKind::If, Frame::Location(l)) => self.if_block(d, block, &mut l.loc, false),
            (BlockKind::LimitExcept, Frame::Location(l)) => self.limit_except(d, block, &mut l.loc),
            (BlockKind::CharsetMap, Frame::Http(h)) => {
                let map = request::charset_map(d, block, &h.charset_maps)?;
                h.charset_maps.push(map);
                Ok(())
            }
            (BlockKind::SplitClients, Frame::Http(h)) => {
                let split = self.split_clients(d, block)?;
                h.split_clients.push(split);
                Ok(())
            }
            (BlockKind::Geo, Frame::Http(h)) => {
                let geo = self.geo(d, block)?;
                h.geos.push(geo);
                Ok(())
            }
            (BlockKind::Map, Frame::Http(h)) => {
                let map = self.map(d, block)?;
                h.maps.push(map);
                Ok(())
            }
            (BlockKind::Stream, Frame::Main(m)) => {
                if m.stream.is_some() {
                    return Err(dup());
                }
                m.stream = Some(std::sync::Arc::new(self.stream(block)?));
                Ok(())
            }
            (BlockKind::Mail, Frame::Main(m)) => {
                if m.mail.is_some() {
                    return Err(dup());
                }
                m.mail = Some(std::sync::Arc::new(self.mail(block)?));
                Ok(())
            }
            (BlockKind::Upstream, Frame::Http(h)) => {
                let up = self.upstream(d, block, &h.upstreams)?;
                h.upstreams.push(up);
                Ok(())
            }
            _ => Err(ConfError::at(
                &d.span,
                format!("\"{}\" directive is not allowed here", d.name),
            )),
        }
    }

    /// The inside of `types { }`: `type ext...;` lines and `include`.
    fn types(
        &mut self,
        items: &[Directive],
        error: Option<&ConfError>,
        types: &mut MimeTypes,
    ) -> Result<()> {
        for d in items {
            if d.block.is_some() {
                return Err(ConfError::at(&d.span, "unexpected \"{\""));
            }
            if d.name == "include" {
                if d.args.len() != 1 {
                    return Err(ConfError::at(
                        &d.span,
                        "invalid number of arguments in \"include\" directive",
                    ));
                }
                for path in self.include_paths(d)? {
                    let parsed = self.load_file(&path, d)?;
                    self.include_depth += 1;
                    let r = self.types(&parsed.items, parsed.error.as_ref(), types);
                    self.include_depth -= 1;
                    r?;
                }
                continue;
            }
            for ext in &d.args {
                // Later entries win, as in nginx (which warns about duplicates).
                types
                    .by_ext
                    .insert(ext.to_ascii_lowercase(), d.name.clone());
            }
        }
        match error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn include(&mut self, d: &Directive, frame: &mut Frame<'_>) -> Result<()> {
        for path in self.include_paths(d)? {
            let parsed = self.load_file(&path, d)?;
            self.include_depth += 1;
            let r = self.walk(&parsed.items, parsed.error.as_ref(), frame);
            self.include_depth -= 1;
            r?;
        }
        Ok(())
    }

    /// The end of `http { }`: merging, and the checks nginx makes then.
    fn finish_http(&mut self, http: &RawHttp) -> Result<HttpConf> {
        let base = LocConf::nginx_default(&self.prefix);
        let http_loc = http.loc.merge(&base);
        let mut servers = Vec::with_capacity(http.servers.len());
        for s in &http.servers {
            location::check_duplicates(&s.locations)?;
            let conf = s.loc.merge(&http_loc);
            let srv = s.srv.merge(&http.srv);
            if let Some(m) = srv.ssl.check_keys() {
                return Err(ConfError::at(&s.span, m));
            }
            let locations = s
                .locations
                .iter()
                .map(|l| Arc::new(l.merge(&conf)))
                .collect();
            let listen = if s.listen.is_empty() {
                vec![listen::default_listen(&s.span)]
            } else {
                s.listen.clone()
            };
            let server_names = if s.server_names.is_empty() {
                vec![ServerName::Exact(String::new())]
            } else {
                s.server_names.clone()
            };
            servers.push(Arc::new(ServerConf {
                listen,
                server_names,
                client_header_timeout: srv
                    .client_header_timeout
                    .unwrap_or(DEFAULT_CLIENT_HEADER_TIMEOUT),
                client_header_buffer_size: srv
                    .client_header_buffer_size
                    .unwrap_or(DEFAULT_CLIENT_HEADER_BUFFER_SIZE),
                large_client_header_buffers: srv
                    .large_client_header_buffers
                    .unwrap_or(DEFAULT_LARGE_CLIENT_HEADER_BUFFERS),
                locations,
                conf: Arc::new(conf),
                span: s.span.clone(),
                merge_slashes: srv.merge_slashes.unwrap_or(true),
                headers: srv.headers.resolve(),
                ssl: srv.ssl.resolve(),
                http2: srv.http2.resolve(),
            }));
        }
        ssl::apply_ssl_on(&mut servers);
        ssl::check_listen(&servers)?;
        self.warn_conflicting_names(&servers);
        check_locations(&servers, &|c| {
            request::check_recoding(c, &http.charset_maps)
        })?;
        check_locations(&servers, &|c| proxy::check_hosts(c, &http.upstreams))?;
        check_locations(&servers, &|c| cgi::check_hosts(c, &http.upstreams))?;
        self.declare_named_captures(&servers);
        self.check_variables()?;
        check_locations(&servers, &|c| limit_zone::check_zones(c, &http.loc.zones))?;
        check_locations(&servers, &|c| cache::check_zones(c, &http.loc.cache_paths))?;
        let variables = Arc::new(self.variable_table(http));
        Ok(HttpConf {
            servers,
            log_formats: self.log_formats.clone(),
            charset_maps: http.charset_maps.clone(),
            upstreams: http.upstreams.clone(),
            maps: http.maps.clone(),
            split_clients: http.split_clients.clone(),
            limit_req_zones: http.loc.zones.req.clone(),
            limit_conn_zones: http.loc.zones.conn.clone(),
            cache_paths: http.loc.cache_paths.clone(),
            geos: http.geos.clone(),
            variables,
        })
    }

    /// Every variable the configuration defines, with what defines it, in
    /// the indexes compiled values were given (names declared but never
    /// used in a compiled value after them, sorted: the order of a log
    /// format's lookups does not matter).
    fn variable_table(&self, http: &RawHttp) -> VarTable {
        let mut names = self.set_vars.borrow().clone();
        let mut rest: Vec<&String> = self
            .declared_vars
            .iter()
            .filter(|d| !names.contains(d))
            .collect();
        rest.sort();
        names.extend(rest.into_iter().cloned());
        let defs = names
            .iter()
            .map(|n| {
                if let Some(i) = http.maps.iter().position(|m| m.var == *n) {
                    VarDef::Map(i)
                } else if let Some(i) = http.geos.iter().position(|g| g.var == *n) {
                    VarDef::Geo(i)
                } else if let Some(i) = http.split_clients.iter().position(|s| s.var == *n) {
                    VarDef::Split(i)
                } else {
                    VarDef::Script
                }
            })
            .collect();
        let shadows_family = names
            .iter()
            .any(|n| crate::variables::PREFIXES.iter().any(|p| n.starts_with(p)));
        VarTable {
            names,
            defs,
            shadows_family,
        }
    }

    /// nginx warns when two servers on one address have the same exact name
    /// (the first one wins).
    fn warn_conflicting_names(&self, servers: &[Arc<ServerConf>]) {
        let mut seen: std::collections::HashSet<(std::net::SocketAddr, &str)> =
            std::collections::HashSet::new();
        for s in servers {
            for l in &s.listen {
                for n in &s.server_names {
                    let ServerName::Exact(name) = n else { continue };
                    if !seen.insert((l.addr, name.as_str())) {
                        self.warnings.borrow_mut().push(format!(
                            "conflicting server name \"{name}\" on {}, ignored",
                            l.addr
                        ));
                    }
                }
            }
        }
    }

    /// The notices: hint notices, then nginx's warnings.
    pub fn take_notices(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.notices);
        out.append(self.warnings.get_mut());
        out
    }
}

/// nginx's `ngx_conf_handler` checks, in its order: known name, context,
/// block or not, number of arguments. An nginx directive Peregrine does not
/// implement goes through the same checks against nginx's own declaration
/// before it is refused: a misplaced or malformed one gets nginx's message
/// (what `nginx -t` would say, and what needs fixing first), a well-formed one
/// "not supported by Peregrine yet".
fn check(d: &Directive, ctx: u16) -> Result<&'static table::Spec> {
    let n = d.args.len();
    if let Some(spec) = table::lookup(&d.name) {
        // Inside `if`, nginx's own contexts say what is allowed (a row's
        // `LOCATION` stands for the rest of nginx's declaration).
        let in_if = ctx & (ctx::SIF | ctx::LIF) != 0
            && known::entries(&d.name).any(|e| e.contexts & ctx != 0);
        check_shape(
            d,
            spec.contexts & ctx != 0 || in_if,
            spec.block,
            spec.args.accepts(n),
        )?;
        return Ok(spec);
    }
    if let Some(first) = known::entries(&d.name).next() {
        // nginx tries each module's declaration of the name and takes the
        // first whose contexts fit.
        let entry = known::entries(&d.name).find(|e| e.contexts & ctx != 0);
        let e = entry.unwrap_or(first);
        check_shape(d, entry.is_some(), e.block(), e.accepts(n))?;
        return Err(ConfError::at(
            &d.span,
            format!("\"{}\" directive is not supported by Peregrine yet", d.name),
        ));
    }
    let e = ConfError::at(&d.span, format!("unknown directive \"{}\"", d.name));
    Err(match table::suggest(&d.name) {
        Some(s) => e.with_hint(format!("did you mean \"{s}\"?")),
        None => e,
    })
}

/// The context, block and argument-count errors, worded as nginx's.
fn check_shape(d: &Directive, allowed: bool, block: bool, args_ok: bool) -> Result<()> {
    if !allowed {
        return Err(ConfError::at(
            &d.span,
            format!("\"{}\" directive is not allowed here", d.name),
        ));
    }
    if !block && d.block.is_some() {
        return Err(ConfError::at(
            &d.span,
            format!("directive \"{}\" is not terminated by \";\"", d.name),
        ));
    }
    if block && d.block.is_none() {
        return Err(ConfError::at(
            &d.span,
            format!("directive \"{}\" has no opening \"{{\"", d.name),
        ));
    }
    if !args_ok {
        return Err(ConfError::at(
            &d.span,
            format!("invalid number of arguments in \"{}\" directive", d.name),
        ));
    }
    Ok(())
}

/// Runs `check` on the settings of every server and location (nested ones
/// too), in configuration order.
fn check_locations(
    servers: &[Arc<ServerConf>],
    check: &dyn Fn(&LocConf) -> Result<()>,
) -> Result<()> {
    fn walk(l: &LocationConf, check: &dyn Fn(&LocConf) -> Result<()>) -> Result<()> {
        check(&l.conf)?;
        l.locations.iter().try_for_each(|n| walk(n, check))
    }
    for s in servers {
        check(&s.conf)?;
        s.locations.iter().try_for_each(|l| walk(l, check))?;
    }
    Ok(())
}
