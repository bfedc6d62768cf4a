//! The static fast path's verdicts (issue 17): every row of the directive
//! table ([`crate::table::Spec::fast`]) says how its directive bears on
//! core's route memo (`crates/core/src/fastpath.rs`), which answers a
//! repeated GET of a cached file without running the phases. The builder
//! gathers the verdicts of the directives written in a location's chain
//! (http, server, the enclosing locations, the location itself) and sets
//! [`LocConf::fast_eligible`] once, at load; core records routes only in
//! locations with it set.
//!
//! Opt-in: a row cannot be written without a verdict (`table::row` takes
//! one, so a forgotten verdict fails the build, tests included), and a
//! verdict other than [`Fast::Neutral`] is what keeps a location off the
//! routes. The named neutral verdicts below say why a directive is neutral.

use crate::model::{DocRoot, Expires, LocConf, StaticMode, SymlinkMode, UseridMode};

/// A directive's bearing on the fast path.
#[derive(Debug, Clone, Copy)]
pub enum Fast {
    /// It does not change a static file's answer, or the route's answer
    /// carries its effect (see the named verdicts below).
    Neutral,
    /// A location with it in its chain never takes a route: for
    /// directives whose effect the merged settings do not show (the
    /// rewrite module's, whose scripts run per request).
    Never,
    /// A location with it in its chain takes routes only when this holds
    /// of its merged settings: for directives whose default is neutral
    /// (`userid off`, `disable_symlinks off`) or whose effect depends on
    /// the value (`root` with variables).
    When(Test),
}

/// The test of a [`Fast::When`] row: the location may take routes.
pub type Test = fn(&LocConf) -> bool;

/// Neutral: the route's response carries the location's settings
/// (`Route::conf`), and what reads them there still does: the engine's
/// connection settings (timeouts, `keepalive_*`, `limit_rate`,
/// `sendfile`), the log phase (`access_log`, `error_log`), the head of a
/// cached file (types, `charset`, `etag`, `server_tokens`, `max_ranges`).
pub const CARRIED: Fast = Fast::Neutral;

/// Neutral: the requests it acts on go the long way. A route answers only
/// a GET or HEAD without a body, a conditional or a `Range` header, and
/// with an `Accept-Encoding` only where the compression policy leaves the
/// file as is (`Policy::may_change`): compression, body limits and
/// conditional requests are decided on the full path.
pub const LONG_WAY: Fast = Fast::Neutral;

/// Neutral: it acts only on answers no route is recorded for. A route is
/// recorded for a 200 from the memory cache of the request's own URI: not
/// for an error, a redirect, an internal redirect (an index file, a random
/// index) or a generated page (a directory listing).
pub const UNRECORDED: Fast = Fast::Neutral;

/// Neutral: it defines variables only (`$invalid_referer`, `$secure_link`).
/// Where they are read, the reading directive's own verdict applies (`if`,
/// `return`), or the log phase, which runs on a route's answer too.
pub const VARIABLES: Fast = Fast::Neutral;

/// The verdicts of the directives written in a location's chain.
#[derive(Debug, Clone, Default)]
pub struct FastChain {
    /// The first directive with [`Fast::Never`], if any.
    pub never: Option<&'static str>,
    /// The directives with [`Fast::When`], each once, and their tests.
    pub when: Vec<(&'static str, Test)>,
}

impl FastChain {
    /// Notes directive `name`, written at this level.
    pub fn add(&mut self, name: &'static str, fast: Fast) {
        match fast {
            Fast::Neutral => {}
            Fast::Never => {
                self.never.get_or_insert(name);
            }
            Fast::When(test) => {
                if !self.when.iter().any(|(n, _)| *n == name) {
                    self.when.push((name, test));
                }
            }
        }
    }

    /// This level's verdicts after those of the enclosing `parent`.
    pub fn under(&self, parent: &FastChain) -> FastChain {
        let mut chain = parent.clone();
        if let Some(n) = self.never {
            chain.never.get_or_insert(n);
        }
        for &(name, test) in &self.when {
            chain.add(name, Fast::When(test));
        }
        chain
    }

    /// Whether a location with this chain and these merged settings may
    /// take routes.
    pub fn admits(&self, conf: &LocConf) -> bool {
        self.never.is_none() && self.when.iter().all(|(_, test)| test(conf))
    }
}

/// [`LocConf::fast_eligible`] for settings built without the parser (core's
/// fixtures): as if every directive with a [`Fast::When`] test had been
/// written (those with [`Fast::Never`] cannot be told from the settings).
pub fn admits_by_value(conf: &LocConf) -> bool {
    crate::table::all().all(|s| match s.fast {
        Fast::When(test) => test(conf),
        _ => true,
    })
}

// The tests of the `Fast::When` rows.

/// `root`/`alias` without variables: the file is a function of the URI
/// (variables could bring in any request header).
/// `limit_rate` and `limit_rate_after` without variables: a route's
/// answer carries them (with variables, core evaluates them per request).
pub fn rate_fixed(c: &LocConf) -> bool {
    c.conn.limit_rate_var.is_none() && c.conn.limit_rate_after_var.is_none()
}

pub fn root_fixed(c: &LocConf) -> bool {
    match &c.root {
        DocRoot::Root(r) | DocRoot::Alias(r) => !r.contains('$'),
    }
}

/// Not answered by a handler of its own (`stub_status`, `metrics`,
/// `empty_gif`: no file; `return` is the rewrite module's, `Never`). None
/// of them is inherited, so a location inside one keeps its flag.
pub fn no_handler(c: &LocConf) -> bool {
    !c.stub_status && !c.metrics && !c.empty_gif && !c.health_status
}

/// No `allow`/`deny` rules reach the location (`deny` in a parent is
/// undone by a level with rules of its own, e.g. `allow all`, which still
/// decides per client).
pub fn no_access(c: &LocConf) -> bool {
    c.access.is_empty()
}

/// No `auth_basic` realm applies (`auth_basic off` below one does).
pub fn no_auth_basic(c: &LocConf) -> bool {
    c.auth_basic.as_deref().is_none_or(|r| r == "off") || c.auth_basic_user_file.is_none()
}

/// No `auth_request` applies: its subrequest decides per request.
pub fn no_auth_request(c: &LocConf) -> bool {
    c.auth_request.is_none()
}

// limits

/// No `limit_req` applies: a limited location's answer depends on the
/// request rate, so it takes no route (a memory-cache hit stays limited).
pub fn no_limit_req(c: &LocConf) -> bool {
    c.limit_req.rules.is_empty()
}

/// No `limit_conn` applies (a slot is taken per request).
pub fn no_limit_conn(c: &LocConf) -> bool {
    c.limit_conn.rules.is_empty()
}

/// No trusted `set_real_ip_from`: the client's address is the peer's.
pub fn no_realip(c: &LocConf) -> bool {
    c.realip.from.is_empty()
}

/// No `try_files`: it probes the file system per request.
pub fn no_try_files(c: &LocConf) -> bool {
    c.try_files.is_empty()
}

/// `gzip_static`, `brotli_static`, `zstd_static` off: they probe for a
/// precompressed file per request.
pub fn statics_off(c: &LocConf) -> bool {
    c.gzip.static_ == StaticMode::Off
        && c.brotli.static_ == StaticMode::Off
        && c.zstd.static_ == StaticMode::Off
}

/// `userid off` or `log`: no cookie is added to the answer.
pub fn no_userid_cookie(c: &LocConf) -> bool {
    c.userid.mode < UseridMode::V1
}

/// No `add_header`, `add_trailer` or `expires`: the headers filter would
/// run per answer (`add_header` values may hold variables).
pub fn headers_inactive(c: &LocConf) -> bool {
    c.add_headers.is_empty() && c.add_trailers.is_empty() && c.expires == Expires::Off
}

/// A `charset` without variables: a route's head is the cached file's,
/// with the charset written at load.
pub fn charset_constant(c: &LocConf) -> bool {
    !c.charset.as_deref().is_some_and(|cs| cs.contains('$'))
}

/// No `source_charset`: recoding changes the body.
pub fn no_recoding(c: &LocConf) -> bool {
    c.request.source_charset.is_none()
}

/// Not `internal`: an outside request gets a 404.
pub fn not_internal(c: &LocConf) -> bool {
    !c.request.internal
}

/// `disable_symlinks off`: otherwise every path component is checked per
/// request.
pub fn symlinks_unchecked(c: &LocConf) -> bool {
    c.request.disable_symlinks.mode == SymlinkMode::Off
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::all;

    /// A `When` test is for directives whose default is neutral: nginx's
    /// defaults pass every one (or a location without the directive would
    /// be judged by the default's value, which the chain never looks at).
    #[test]
    fn every_test_passes_the_defaults() {
        let base = LocConf::nginx_default(std::path::Path::new("/p"));
        for s in all() {
            if let Fast::When(test) = s.fast {
                assert!(test(&base), "{}", s.name);
            }
        }
        assert!(admits_by_value(&base));
    }

    /// The directives that change a cached file's answer per request, or
    /// make it other than the file, are not neutral: the ones core listed
    /// by hand before the verdicts, and the content handlers.
    #[test]
    fn the_directives_that_change_an_answer_are_not_neutral() {
        let judged: Vec<&str> = all()
            .filter(|s| !matches!(s.fast, Fast::Neutral))
            .map(|s| s.name)
            .collect();
        for name in [
            "root",
            "alias",
            "try_files",
            "return",
            "stub_status",
            "metrics",
            "health_status",
            "empty_gif",
            "gzip_static",
            "brotli_static",
            "zstd_static",
            "userid",
            "add_header",
            "add_trailer",
            "expires",
            "source_charset",
            "internal",
            "disable_symlinks",
        ] {
            assert!(judged.contains(&name), "{name}");
        }
    }

    #[test]
    fn a_chain_keeps_the_first_never_and_each_test_once() {
        let mut http = FastChain::default();
        http.add("userid", Fast::When(no_userid_cookie));
        http.add("sendfile", CARRIED);
        let mut loc = FastChain::default();
        loc.add("userid", Fast::When(no_userid_cookie));
        loc.add("stub_status", Fast::Never);
        loc.add("return", Fast::Never);
        let chain = loc.under(&http);
        assert_eq!(chain.never, Some("stub_status"));
        assert_eq!(chain.when.len(), 1);
        let base = LocConf::nginx_default(std::path::Path::new("/p"));
        assert!(!chain.admits(&base));
        assert!(http.admits(&base));
    }
}
