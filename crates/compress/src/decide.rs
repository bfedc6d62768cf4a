//! Whether, and with which coding, to compress a response on the fly.
//!
//! This is the header-filter decision of ngx_http_gzip_filter_module
//! (with ngx_http_gzip_ok from ngx_http_core_module), ngx_brotli's filter and
//! zstd-nginx-module's filter. Each module has the same prechecks (enabled,
//! status 200/403/404, no `Content-Encoding` yet, `Content-Length` not below
//! its `*_min_length`, type in its `*_types`); passing them is what makes
//! nginx send `Vary: Accept-Encoding` (when `gzip_vary on`), whether or not
//! the client accepts the coding. Only gzip then applies ngx_http_gzip_ok's
//! further rules (`gzip_http_version`, `gzip_proxied`, `gzip_disable`):
//! ngx_brotli and zstd-nginx-module look at `Accept-Encoding` alone.
//!
//! Where nginx runs whichever module comes first in its filter chain (with
//! Debian's ngx_brotli loaded, br is sent whenever the client accepts it,
//! even with `gzip;q=1, br;q=0.5`: verified), Peregrine picks among the
//! eligible codings by the client's q-values, ties going to br, then zstd,
//! then gzip. Also verified with ngx_brotli: br ignores `Via` and
//! `gzip_http_version`, honours `br;q=0`, ignores `Range`, and below
//! `brotli_min_length` adds no `Vary`.

use peregrine_codec::date::parse_http_date;
use peregrine_conf::model::{CompressConf, GzipConf, GzipProxied, LocConf};

use crate::coding::{Accepted, Coding, preferred};
use crate::user_agent::is_msie6;

/// What the request says, as far as compression is concerned.
#[derive(Debug, Clone, Default)]
pub struct RequestFacts<'a> {
    /// From the first `Accept-Encoding` header ([`Accepted::from_header`]).
    pub accepted: Accepted,
    /// `(major, minor)`; HTTP/0.9 is `(0, 9)`.
    pub http_version: (u8, u8),
    pub user_agent: Option<&'a str>,
    /// A `Via` header is present (the request came through a proxy).
    pub via: bool,
    /// An `Authorization` header is present.
    pub authorization: bool,
    /// ngx_http_gzip_ok's answer when it already ran for this request:
    /// `gzip_static on` runs it in the content phase (see
    /// [`crate::StaticPlan::gzip_tested`]) and nginx's gzip filter then
    /// reuses that answer (`r->gzip_tested`) instead of testing again with
    /// the response's headers.
    pub gzip_tested: Option<bool>,
}

/// What the response says, before any compression.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponseFacts<'a> {
    pub status: u16,
    /// The `Content-Type` value; parameters (`; charset=...`) are ignored.
    pub content_type: Option<&'a str>,
    /// `None` when the length is not known in advance.
    pub content_length: Option<u64>,
    /// An existing `Content-Encoding`; a non-empty one disables compression.
    pub content_encoding: Option<&'a str>,
    /// `Expires`, `Date` and every `Cache-Control` value, for `gzip_proxied`.
    pub expires: Option<&'a str>,
    /// The response's own `Date`, if it has one before the header is sent
    /// (a proxied response); otherwise `now` is used, as nginx does.
    pub date: Option<&'a str>,
    pub cache_control: &'a [&'a str],
    /// A `Last-Modified` header exists when the filters run. nginx's static
    /// module only records the time then (the header is made later), so for
    /// a static file pass `false`: `gzip_proxied no_last_modified` does not
    /// stop it (verified against nginx 1.22.1). A proxied response's own
    /// `Last-Modified` counts.
    pub last_modified: bool,
    /// An `ETag` exists when the filters run: `true` for a static file
    /// (ngx_http_set_etag runs in the handler; `gzip_proxied no_etag` stops
    /// it, verified against nginx 1.22.1), unless `etag off`.
    pub etag: bool,
    /// The current time, seconds since the Unix epoch.
    pub now: i64,
}

/// The location's compression settings.
#[derive(Debug, Clone, Copy)]
pub struct Policy<'a> {
    pub gzip: &'a GzipConf,
    pub brotli: &'a CompressConf,
    pub zstd: &'a CompressConf,
}

impl<'a> Policy<'a> {
    /// The settings of a location.
    pub fn of(loc: &'a LocConf) -> Policy<'a> {
        Policy {
            gzip: &loc.gzip,
            brotli: &loc.brotli,
            zstd: &loc.zstd,
        }
    }

    /// Whether any of the three filters is on.
    pub fn any_on(&self) -> bool {
        self.gzip.on || self.brotli.on || self.zstd.on
    }

    /// Whether [`decide`] can answer anything but "send as is, no `Vary`"
    /// for a request with (`true`) or without an `Accept-Encoding` header.
    /// Without one no coding is accepted (ngx_http_gzip_ok and the
    /// brotli/zstd filters test it first), so only `gzip_vary` can still
    /// change the response: callers skip the type, length and header tests
    /// for every request of a client that asks for no coding.
    pub fn may_change(&self, has_accept_encoding: bool) -> bool {
        self.any_on() && (self.gzip.vary || has_accept_encoding)
    }

    /// The configured level for `coding` (`gzip_comp_level`,
    /// `brotli_comp_level`, `zstd_comp_level`), for [`crate::Encoder`].
    pub fn level(&self, coding: Coding) -> i32 {
        let level = match coding {
            Coding::Gzip => self.gzip.comp_level,
            Coding::Brotli => self.brotli.comp_level,
            Coding::Zstd => self.zstd.comp_level,
        };
        // Out of i32 range is out of every codec's range: the encoder
        // refuses it.
        i32::try_from(level).unwrap_or(i32::MAX)
    }
}

/// The outcome for one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The coding to apply, if any.
    pub coding: Option<Coding>,
    /// Add `Vary: Accept-Encoding` (also when not compressing: the answer
    /// depended on `Accept-Encoding`).
    pub vary: bool,
}

/// The coding to compress this response with, if any.
pub fn choose(req: &RequestFacts, resp: &ResponseFacts, policy: &Policy) -> Option<Coding> {
    decide(req, resp, policy).coding
}

/// The full decision: coding and `Vary`.
pub fn decide(req: &RequestFacts, resp: &ResponseFacts, policy: &Policy) -> Decision {
    let mut vary = false;
    let mut eligible = [false; 3];
    for (i, coding) in Coding::PREFERENCE.into_iter().enumerate() {
        let (on, types, min_length) = match coding {
            Coding::Gzip => (policy.gzip.on, &policy.gzip.types, policy.gzip.min_length),
            Coding::Brotli => (
                policy.brotli.on,
                &policy.brotli.types,
                policy.brotli.min_length,
            ),
            Coding::Zstd => (policy.zstd.on, &policy.zstd.types, policy.zstd.min_length),
        };
        if !on || !response_compressible(resp, types, min_length) {
            continue;
        }
        vary = true;
        eligible[i] = match coding {
            Coding::Gzip => req
                .gzip_tested
                .unwrap_or_else(|| gzip_ok(req, resp, policy.gzip)),
            Coding::Brotli | Coding::Zstd => req.accepted.accepts(coding),
        };
    }
    let coding = preferred(&req.accepted, |c| {
        Coding::PREFERENCE
            .iter()
            .position(|&p| p == c)
            .is_some_and(|i| eligible[i])
    });
    Decision {
        coding,
        vary: vary && policy.gzip.vary,
    }
}

/// The prechecks shared by the three filters (see the module doc).
fn response_compressible(resp: &ResponseFacts, types: &[String], min_length: u64) -> bool {
    matches!(resp.status, 200 | 403 | 404)
        && resp.content_encoding.is_none_or(str::is_empty)
        && resp.content_length.is_none_or(|len| len >= min_length)
        && type_matches(types, resp.content_type)
}

/// ngx_http_test_content_type: `*` matches anything (even no type);
/// otherwise the type without parameters, lowercased, must be listed.
/// `text/html` is always listed (ngx_http_html_default_types is added to
/// every `*_types` list).
pub fn type_matches(types: &[String], content_type: Option<&str>) -> bool {
    if types.iter().any(|t| t == "*") {
        return true;
    }
    let Some(ct) = content_type else {
        return false;
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or_default()
        .trim_end_matches([' ', '\t']);
    if mime.is_empty() {
        return false;
    }
    mime.eq_ignore_ascii_case("text/html") || types.iter().any(|t| t.eq_ignore_ascii_case(mime))
}

/// ngx_http_gzip_ok: whether gzip may be used for this request and response
/// (`Accept-Encoding`, `gzip_disable msie6`, `gzip_http_version`,
/// `gzip_proxied` when there is a `Via`, then `gzip_disable` regexes).
pub fn gzip_ok(req: &RequestFacts, resp: &ResponseFacts, conf: &GzipConf) -> bool {
    if !req.accepted.accepts(Coding::Gzip) {
        return false;
    }
    let ua = req.user_agent;
    if conf.disable_msie6 && ua.is_some_and(is_msie6) {
        return false;
    }
    if req.http_version < conf.http_version {
        return false;
    }
    if req.via && !proxied_ok(req, resp, &conf.proxied) {
        return false;
    }
    match ua {
        Some(ua) => !conf.disable.iter().any(|re| re.is_match(ua)),
        None => true,
    }
}

/// The `gzip_proxied` part of ngx_http_gzip_ok, for a request with `Via`.
/// Note nginx's fall-through: flags that name a header the response lacks
/// (for instance `expired` without `Expires`, or `no_etag` without `ETag`)
/// let the response be compressed.
fn proxied_ok(req: &RequestFacts, resp: &ResponseFacts, p: &GzipProxied) -> bool {
    let off = !(p.expired
        || p.no_cache
        || p.no_store
        || p.private
        || p.no_last_modified
        || p.no_etag
        || p.auth
        || p.any);
    if off {
        return false;
    }
    if p.any || (req.authorization && p.auth) {
        return true;
    }
    if let Some(expires) = resp.expires {
        if !p.expired {
            return false;
        }
        let Some(expires) = parse_http_date(expires) else {
            return false;
        };
        let date = match resp.date {
            Some(d) => match parse_http_date(d) {
                Some(d) => d,
                None => return false,
            },
            None => resp.now,
        };
        return expires < date;
    }
    if !resp.cache_control.is_empty() {
        let has = |name: &str| {
            resp.cache_control
                .iter()
                .any(|v| cache_control_has(v, name))
        };
        return (p.no_cache && has("no-cache"))
            || (p.no_store && has("no-store"))
            || (p.private && has("private"));
    }
    !((p.no_last_modified && resp.last_modified) || (p.no_etag && resp.etag))
}

/// ngx_http_parse_multi_header_lines without a value: a comma-separated
/// member that is exactly `name` (case-insensitive), spaces allowed after it.
/// `no-cache="Set-Cookie"` therefore does not count, as in nginx.
fn cache_control_has(value: &str, name: &str) -> bool {
    value.split(',').any(|member| {
        let member = member.trim_start_matches(' ');
        member.len() >= name.len()
            && member.is_char_boundary(name.len())
            && member[..name.len()].eq_ignore_ascii_case(name)
            && member[name.len()..].trim_start_matches(' ').is_empty()
    })
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
