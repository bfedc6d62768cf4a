//! What Peregrine does with each of nginx's directives, from two lists: the
//! directive table ([`crate::table::TABLE`], what Peregrine implements or
//! accepts as a tuning hint) and nginx's own directives
//! ([`crate::nginx_directives`], generated from nginx's source). A name with a
//! table row is implemented (or a hint, if its row says so); an nginx name
//! without one is refused by name; any other name is unknown. So a row added
//! to the table takes its directive out of the refused ones by itself.
//!
//! Also which of nginx's modules Peregrine has (`-V` and `load_module` ask).

use crate::build::Handler;
use crate::nginx_directives::{DIRECTIVES, MODULES, STOCK_MODULES};
use crate::table::{self, ctx};

/// nginx's argument-count flags (`NGX_CONF_NOARGS` ... `NGX_CONF_2MORE`, the
/// same bits as ngx_conf_file.h so the generated list reads like nginx's).
pub mod arg {
    pub const NOARGS: u16 = 0x1;
    pub const TAKE1: u16 = 0x2;
    pub const TAKE2: u16 = 0x4;
    pub const TAKE3: u16 = 0x8;
    pub const TAKE4: u16 = 0x10;
    pub const TAKE5: u16 = 0x20;
    pub const TAKE6: u16 = 0x40;
    pub const TAKE7: u16 = 0x80;
    pub const BLOCK: u16 = 0x100;
    pub const FLAG: u16 = 0x200;
    pub const ANY_ARGS: u16 = 0x400;
    pub const MORE1: u16 = 0x800;
    pub const MORE2: u16 = 0x1000;
    /// nginx's `NGX_CONF_MAX_ARGS`: the name and at most 7 arguments for the
    /// `TAKEn` kinds.
    pub const MAX_ARGS: usize = 8;
}

/// One of nginx's directives in one module (a name can be in several:
/// `server` in http and in `upstream`, `error_log` at main and in http).
#[derive(Debug)]
pub struct NginxDirective {
    pub name: &'static str,
    /// Peregrine's [`ctx`] bits.
    pub contexts: u16,
    /// [`arg`] bits.
    pub args: u16,
    /// The module, `ngx_X_module` as `X` (`http_gzip_filter`).
    pub module: &'static str,
}

impl NginxDirective {
    pub fn block(&self) -> bool {
        self.args & arg::BLOCK != 0
    }

    /// nginx's argument check in `ngx_conf_handler`, for `n` arguments.
    pub fn accepts(&self, n: usize) -> bool {
        let t = self.args;
        if t & arg::ANY_ARGS != 0 {
            true
        } else if t & arg::FLAG != 0 {
            n == 1
        } else if t & arg::MORE1 != 0 {
            n >= 1
        } else if t & arg::MORE2 != 0 {
            n >= 2
        } else {
            n < arg::MAX_ARGS && t & (1 << n) != 0
        }
    }
}

/// How nginx's `./configure` builds a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// No switch: always there.
    Always,
    /// Built unless `--without-X_module`.
    Default,
    /// Built only with `--with-X_module`.
    Optional,
}

/// One of nginx's modules that has directives.
#[derive(Debug)]
pub struct NginxModule {
    /// `ngx_X_module` as `X`.
    pub name: &'static str,
    /// The `./configure` switch's name (`http_gzip` for `--without-http_gzip_module`).
    pub switch: Option<&'static str>,
    pub build: Build,
}

/// nginx directives the reference nginx 1.22 has and current nginx dropped,
/// so that configurations written for 1.22 are refused by name too.
static REMOVED: &[NginxDirective] = &[
    // `ssl on`: removed in nginx 1.25.1 (`listen ... ssl` replaces it).
    NginxDirective {
        name: "ssl",
        contexts: ctx::HTTP | ctx::SERVER,
        args: arg::FLAG,
        module: "http_ssl",
    },
];

/// Peregrine's own directives (not nginx's): the memory cache, the metrics
/// endpoint, and those of the ngx_brotli and zstd-nginx-module modules.
pub static OWN: &[&str] = &[
    "memory_cache",
    "metrics",
    "brotli",
    "brotli_types",
    "brotli_comp_level",
    "brotli_min_length",
    "brotli_static",
    "zstd",
    "zstd_types",
    "zstd_comp_level",
    "zstd_min_length",
    "zstd_static",
    // deploy: the drain-aware health endpoint and the shutdown delay
    "health_status",
    "shutdown_delay",
    "config_watch",
];

/// Modules that are not nginx's whose directives Peregrine implements, as
/// their `load_module` files name them (`ngx_X_module.so`).
pub static OWN_MODULES: &[&str] = &[
    "http_brotli_filter",
    "http_brotli_static",
    "http_zstd_filter",
    "http_zstd_static",
];

/// The entries of an nginx directive (none: not nginx's).
/// Whether nginx has `name` inside `upstream { }` (`NGX_HTTP_UPS_CONF`).
pub fn upstream_directive(name: &str) -> bool {
    entries(name).any(|e| e.contexts & ctx::UPS != 0)
}

pub fn entries(name: &str) -> impl Iterator<Item = &'static NginxDirective> + '_ {
    DIRECTIVES
        .iter()
        .chain(REMOVED)
        .filter(move |d| d.name == name)
}

/// Every nginx directive name, once, in the list's order.
pub fn nginx_names() -> Vec<&'static str> {
    let mut seen = std::collections::HashSet::new();
    DIRECTIVES
        .iter()
        .chain(REMOVED)
        .map(|d| d.name)
        .filter(|n| seen.insert(*n))
        .collect()
}

/// What Peregrine does with a directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Implemented,
    /// Accepted, its value checked, with a notice: no effect in Peregrine.
    Hint,
    /// nginx's, refused by name.
    Refused,
}

/// A directive's status; `None` for a name neither nginx nor Peregrine has.
pub fn status(name: &str) -> Option<Status> {
    match table::lookup(name) {
        Some(s) if matches!(s.handler, Handler::Hint(_)) || table::NOTICE_TOO.contains(&s.name) => {
            Some(Status::Hint)
        }
        Some(_) => Some(Status::Implemented),
        None => entries(name).next().map(|_| Status::Refused),
    }
}

/// The contexts the directive table serves: nginx's `if` and
/// `limit_except` blocks count once their directive has a table row.
pub fn reachable() -> u16 {
    // `upstream { }` reads its own directives (build/upstream.rs), not
    // through the table: its context never counts here.
    let mut r = ctx::MAIN | ctx::EVENTS | ctx::HSL;
    for (block, bits) in [("if", ctx::SIF | ctx::LIF), ("limit_except", ctx::LMT)] {
        if table::lookup(block).is_some() {
            r |= bits;
        }
    }
    r
}

/// Whether Peregrine does what this entry does: its directive has a row
/// covering every context of the entry Peregrine can be in (so http's
/// `keepalive_timeout` does not stand in for upstream's).
pub fn entry_has_row(e: &NginxDirective) -> bool {
    // Inside `if`, a row's directive is allowed where nginx allows it
    // (`build::check`), so `if` contexts need no bits of the row.
    let r = e.contexts & reachable() & !(ctx::SIF | ctx::LIF);
    r != 0 && table::lookup(e.name).is_some_and(|s| s.contexts & r == r)
}

/// When Peregrine counts as having a module beyond "every directive of it has
/// a row": its key directives. For a module whose main directive works and
/// whose extras do not, nginx's test suite then runs its tests and those of
/// the extras fail on a refused directive (loudly, by name), rather than
/// skipping tests that pass.
static KEY_DIRECTIVES: &[(&str, &[&str])] = &[
    // The listing itself; its format and size/time options are refused by
    // name (the suite's autoindex_format.t fails on them, autoindex.t runs).
    ("http_autoindex", &["autoindex"]),
    // The charset and its types; the recoding tables (charset_map,
    // source_charset, override_charset) are refused by name until they land.
    ("http_charset_filter", &["charset", "charset_types"]),
    // The proxy itself and its cookie rewriting; its cache, TLS to
    // upstreams and store are refused by name until they land.
    (
        "http_proxy",
        &[
            "proxy_pass",
            "proxy_set_header",
            "proxy_http_version",
            "proxy_read_timeout",
            "proxy_next_upstream",
            "proxy_redirect",
            "proxy_cookie_domain",
            "proxy_cookie_path",
            "proxy_cookie_flags",
        ],
    ),
    // The gateways: their caches, stores, `*_bind` and socket options are
    // refused by name until they land.
    (
        "http_fastcgi",
        &[
            "fastcgi_pass",
            "fastcgi_param",
            "fastcgi_split_path_info",
            "fastcgi_keep_conn",
            "fastcgi_read_timeout",
        ],
    ),
    (
        "http_uwsgi",
        &["uwsgi_pass", "uwsgi_param", "uwsgi_modifier1"],
    ),
    ("http_scgi", &["scgi_pass", "scgi_param"]),
    // http2: the session and its settings; server push (removed from
    // nginx in 1.25.1) and the pool sizes are refused by name.
    (
        "http_v2",
        &[
            "http2",
            "http2_max_concurrent_streams",
            "http2_body_preread_size",
        ],
    ),
];

/// The balancer modules whose directives live only in `upstream { }`
/// (which reads them itself, `build/upstream.rs`): present once the proxy
/// can use a group.
static UPSTREAM_BLOCK_MODULES: &[&str] = &[
    "http_upstream_hash",
    "http_upstream_ip_hash",
    "http_upstream_keepalive",
    "http_upstream_least_conn",
    "http_upstream_random",
    "http_upstream_zone",
];

/// Whether Peregrine has an nginx module.
pub fn module_present(module: &str) -> bool {
    if UPSTREAM_BLOCK_MODULES.contains(&module) {
        return table::lookup("proxy_pass").is_some();
    }
    if let Some((_, keys)) = KEY_DIRECTIVES.iter().find(|(m, _)| *m == module) {
        return keys
            .iter()
            .all(|k| entries(k).filter(|e| e.module == module).all(entry_has_row));
    }
    DIRECTIVES
        .iter()
        .filter(|d| d.module == module)
        .all(entry_has_row)
}

/// `-V`'s switches: `--with-X_module` for the optional modules Peregrine
/// has, `--without-X_module` for the default ones it lacks (a switch that
/// builds several modules needs all of them).
pub fn configure_switches() -> (Vec<&'static str>, Vec<&'static str>) {
    let mut with = Vec::new();
    let mut without = Vec::new();
    for m in MODULES {
        let Some(switch) = m.switch else { continue };
        if with.contains(&switch) || without.contains(&switch) {
            continue;
        }
        let present = MODULES
            .iter()
            .filter(|o| o.switch == Some(switch))
            .all(|o| module_present(o.name));
        match (m.build, present) {
            (Build::Optional, true) => with.push(switch),
            (Build::Default, false) => without.push(switch),
            _ => {}
        }
    }
    (with, without)
}

/// What `load_module` finds for a module file's name (`ngx_X_module`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loadable {
    /// Peregrine has it built in.
    BuiltIn,
    /// One of nginx's modules that Peregrine lacks: each of its directives
    /// is refused by name, so loading it changes nothing.
    StockMissing,
    /// Neither nginx's nor Peregrine's.
    Foreign,
}

pub fn loadable(module: &str) -> Loadable {
    let Some(short) = module
        .strip_prefix("ngx_")
        .and_then(|m| m.strip_suffix("_module"))
    else {
        return Loadable::Foreign;
    };
    if OWN_MODULES.contains(&short) {
        return Loadable::BuiltIn;
    }
    match MODULES.iter().find(|m| m.name == short) {
        Some(m) if module_present(m.name) => Loadable::BuiltIn,
        Some(_) => Loadable::StockMissing,
        None if STOCK_MODULES.contains(&short) => Loadable::StockMissing,
        None => Loadable::Foreign,
    }
}

#[cfg(test)]
#[path = "known_tests.rs"]
mod tests;
