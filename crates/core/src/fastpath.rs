//! The static hit fast path: a per-worker memo from (server, URI) to the
//! memory-cache entry that a plain GET or HEAD of that URI was last
//! answered from. The next such request skips the location phases (the
//! location match, the `return`/`try_files`/`stub_status` checks, mapping
//! the URI to a file path, the precompressed probe, the conditional and
//! compression decisions) and the memory cache's hash of the file path:
//! one probe of a word (the hash of server and URI; the route found is
//! checked for both), then the entry's own revalidation
//! (`open_file_cache_valid`) as ever. The caller builds the response from
//! the references returned, where it returns it.
//!
//! Sound because, for such a request, the answer is a function of the
//! server, the URI and the file alone. A route is recorded only when the
//! full path reached the memory cache with the request's own URI (no
//! internal redirect, no `error_page`), in a location the configuration
//! marks eligible (`LocConf::fast_eligible`, set at load from the
//! fast-path verdict of every directive in the location's chain, see
//! `peregrine_conf::fast`: `try_files` or a `*_static` module probe the
//! filesystem per request, a `root`/`alias` with variables could depend on
//! other request headers, `add_header` runs per answer...). A request
//! takes a route only when nothing else could
//! change the answer: GET or HEAD, no body, no conditional or `Range`
//! header, and a compression policy that leaves the response as is
//! ([`Policy::may_change`]). Everything else goes the long way, which
//! records the route again when an entry was replaced.
//!
//! Hand-written (a map and a few checks): it is the hot path, and what it
//! may skip is specific to this server's phases.

use std::sync::Arc;
use std::time::SystemTime;

use peregrine_compress::Policy;
use peregrine_conf::model::{LocConf, ServerConf};

use crate::fxhash::{FxHasher, KeyMap};
use crate::http::{Ctx, HttpCore};
use crate::mcache::MemEntry;
use crate::request::{HeaderLookup, Method, RequestView};
use crate::response::Response;

/// Routes kept per worker; when full they are all dropped and relearned.
/// Routes come only from URIs answered from the memory cache, whose size
/// bounds the files, but several URIs can name one file (an `alias`), so
/// the memo needs its own bound.
pub(crate) const ROUTES_MAX: usize = 4096;

/// Longest URI a route is kept for: the memo's keys come from requests, and
/// with a regex `alias` naming one file any number of long URIs reach the
/// same entry; [`ROUTES_MAX`] keys this long bound the memo at 1 MiB per
/// worker. Longer URIs still work, the long way.
pub(crate) const ROUTE_URI_MAX: usize = 256;

/// Request headers whose presence can change a static answer: the
/// conditional ones and `Range` (RFC 9110, sections 13 and 14), and
/// `Transfer-Encoding` (a body).
const DECIDING_HEADERS: [&str; 6] = [
    "Range",
    "If-Modified-Since",
    "If-None-Match",
    "If-Match",
    "If-Unmodified-Since",
    "Transfer-Encoding",
];

const DECIDING_MASK: u64 = peregrine_codec::request::header_mask(&DECIDING_HEADERS);

/// The one header that can change it through compression ([`Route::ae_changes`]).
const ACCEPT_ENCODING: &str = "Accept-Encoding";

/// Every header a route looks at: a request with none of them (one `AND`
/// says so) is decided without a lookup.
const CHECKED_MASK: u64 = DECIDING_MASK | peregrine_codec::request::header_mask(&[ACCEPT_ENCODING]);

/// Where a URI of a server was answered from.
#[derive(Debug)]
pub(crate) struct Route {
    /// The key it was recorded under (two keys may share a hash).
    server: usize,
    uri: Box<str>,
    /// The memory-cache slot and the stamp of the entry in it.
    slot: usize,
    stamp: u64,
    /// The location's settings and the server block (the response
    /// carries them).
    conf: Arc<LocConf>,
    server_conf: Arc<ServerConf>,
    /// The location's compression filters could change the answer to a
    /// request with `Accept-Encoding` ([`Policy::may_change`], a function
    /// of the settings alone). Without one they cannot, or no route would
    /// have been recorded.
    ae_changes: bool,
    /// The file's path, for revalidation.
    path: Box<str>,
}

#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct Routes {
    /// [`route_key`] → route.
    map: KeyMap<Route>,
    /// Requests answered by a route (tests).
    pub(crate) hits: u64,
}

/// The hash of (server, URI) the routes are kept under: computed once per
/// request, then one probe compares words; the route found is checked
/// for its server and URI. The server and the URI's length share a word
/// (one multiply where `Hasher::write_usize` then `write` take two).
#[inline]
fn route_key(server: usize, uri: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = FxHasher::default();
    h.add(server as u64 ^ (uri.len() as u64) << 32);
    h.add_bytes(uri.as_bytes());
    h.finish()
}

/// `a == b`, inline for the short strings URIs are: word by word, the
/// last word overlapping the one before (`==` on slices calls `bcmp`:
/// 8 instructions more per route hit under `bench/instructions.sh`).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a, b);
    while let (Some((p, xs)), Some((q, ys))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        if p != q {
            return false;
        }
        (x, y) = (xs, ys);
    }
    match (a.last_chunk::<8>(), b.last_chunk::<8>()) {
        // Equal lengths of 8 or more: the rest is within the last word.
        (Some(p), Some(q)) => p == q,
        _ => x == y,
    }
}

impl Routes {
    /// Routes held (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    fn get(&self, key: u64, server: usize, uri: &str) -> Option<&Route> {
        self.map
            .get(&key)
            .filter(|r| r.server == server && same(r.uri.as_bytes(), uri.as_bytes()))
    }

    fn forget(&mut self, key: u64) {
        self.map.remove(&key);
    }

    /// Keeps `route`, in place of any other route under its key.
    fn record(&mut self, route: Route) {
        if self.map.len() >= ROUTES_MAX {
            self.map.clear();
        }
        self.map.insert(route_key(route.server, &route.uri), route);
    }
}

/// What a route needs to know of a request.
pub(crate) struct FastReq<'a, H: HeaderLookup + ?Sized> {
    pub method: Method,
    pub path: &'a str,
    pub content_length: Option<u64>,
    pub headers: &'a H,
}

impl<'a> FastReq<'a, dyn HeaderLookup + 'a> {
    pub(crate) fn of(req: &RequestView<'a>) -> Self {
        FastReq {
            method: req.method,
            path: req.path,
            content_length: req.content_length,
            headers: req.headers,
        }
    }
}

impl<'a> FastReq<'a, peregrine_codec::Request> {
    /// The parsed request itself (its header lookups are not virtual
    /// calls), before any view is built.
    #[inline]
    pub(crate) fn parsed(req: &'a peregrine_codec::Request) -> Self {
        FastReq {
            method: match req.method() {
                peregrine_codec::Method::Get => Method::Get,
                peregrine_codec::Method::Head => Method::Head,
                peregrine_codec::Method::Post => Method::Post,
                _ => Method::Other,
            },
            path: req.path(),
            content_length: match req.body_kind() {
                peregrine_codec::BodyKind::Length(n) => Some(n),
                _ => None,
            },
            headers: req,
        }
    }
}

/// What [`HttpCore::fast_hit`] found. References, not an answer: the
/// caller builds the response where it returns it.
pub(crate) enum Fast<'a> {
    /// Answer from this entry (marked used and counted as a memory hit).
    Hit(&'a Route, &'a MemEntry),
    /// The route under this key names an entry that was replaced or
    /// whose file changed: [`HttpCore::forget_route`] it.
    Stale(u64),
    /// No route, or the request may not take one.
    Miss,
}

impl Route {
    /// The response from entry `e`, as the full path gives it
    /// ([`crate::static_file::plain_hit`]).
    #[inline]
    pub(crate) fn answer(&self, e: &MemEntry, method: Method) -> Response {
        let mut r = crate::static_file::plain_hit(e, self.conf.clone(), method, false);
        r.server = Some(self.server_conf.clone());
        r
    }
}

/// Nothing in the request but the server and the URI can change a static
/// answer (compression aside: see [`Policy::may_change`]). `look`: the
/// header bitmap allows one of [`DECIDING_HEADERS`] (from [`DECIDING_MASK`]
/// or a mask that contains it).
#[inline]
fn request_qualifies<H: HeaderLookup + ?Sized>(req: &FastReq<'_, H>, look: bool) -> bool {
    matches!(req.method, Method::Get | Method::Head)
        && req.content_length.unwrap_or(0) == 0
        && (!look
            || DECIDING_HEADERS
                .iter()
                .all(|h| req.headers.get(h).is_none()))
}

/// The location's configuration marks it eligible: no directive in its
/// chain changes a cached file's answer per request or keeps it from being
/// the file (`peregrine_conf::fast`: every directive states its verdict).
fn location_qualifies(conf: &LocConf) -> bool {
    conf.fast_eligible
}

impl HttpCore {
    /// The route of (`server`, the request's URI) and its entry, if the
    /// request qualifies and the entry is still cached and current: the
    /// tests of [`request_qualifies`] and [`Policy::may_change`], cheapest first
    /// (the route's own fields stand for the location's settings).
    #[inline]
    pub(crate) fn fast_hit<H: HeaderLookup + ?Sized>(
        &mut self,
        server: usize,
        req: &FastReq<'_, H>,
        now: SystemTime,
    ) -> Fast<'_> {
        // One bitmap test for both header checks (`Accept-Encoding` below).
        let look = req.headers.may_have_any(CHECKED_MASK);
        if !request_qualifies(req, look) {
            return Fast::Miss;
        }
        let key = route_key(server, req.path);
        let Some(route) = self.routes.get(key, server, req.path) else {
            return Fast::Miss;
        };
        if route.ae_changes && look && req.headers.get(ACCEPT_ENCODING).is_some() {
            return Fast::Miss;
        }
        match self
            .mcache
            .get_slot(route.slot, route.stamp, &route.path, now)
        {
            Some(e) => Fast::Hit(route, e),
            None => Fast::Stale(key),
        }
    }

    /// The answer of the route of (`server`, the request's URI), counted in
    /// `routes.hits`; a stale route is dropped on the way. Inlined: the
    /// response is built where the caller returns it.
    #[inline]
    pub(crate) fn route_answer<H: HeaderLookup + ?Sized>(
        &mut self,
        server: usize,
        req: &FastReq<'_, H>,
        now: SystemTime,
    ) -> Option<Response> {
        match self.fast_hit(server, req, now) {
            Fast::Hit(route, e) => {
                let r = route.answer(e, req.method);
                self.routes.hits += 1;
                Some(r)
            }
            Fast::Stale(key) => {
                self.forget_route(key);
                None
            }
            Fast::Miss => None,
        }
    }

    /// Drops a stale route ([`Fast::Stale`]): apart from [`Self::fast_hit`],
    /// whose answer borrows the routes.
    #[cold]
    fn forget_route(&mut self, key: u64) {
        self.routes.forget(key);
    }

    /// Remembers where this request was answered from, when the next one
    /// like it may skip the phases (see the module doc). Called on a plain
    /// memory-cache answer with `self.path_buf` holding the file's path.
    pub(crate) fn record_route(&mut self, ctx: &Ctx<'_>) {
        let policy = Policy::of(&ctx.conf);
        let req = FastReq::of(ctx.req);
        if !ctx.is_original()
            || ctx.uri.len() > ROUTE_URI_MAX
            || !location_qualifies(&ctx.conf)
            // The filters send this request's answer as is.
            || policy.may_change(req.headers.get(ACCEPT_ENCODING).is_some())
            // A route tests `Accept-Encoding` only (`ae_changes`): the
            // filters must leave requests without it alone.
            || policy.may_change(false)
            || !request_qualifies(&req, req.headers.may_have_any(DECIDING_MASK))
        {
            return;
        }
        let Some((slot, stamp)) = self.mcache.slot(&self.path_buf) else {
            return;
        };
        let Some(srv) = self.servers.get(ctx.server) else {
            return;
        };
        self.routes.record(Route {
            server: ctx.server,
            uri: ctx.uri.as_ref().into(),
            slot,
            stamp,
            conf: ctx.conf.clone(),
            server_conf: srv.conf.clone(),
            ae_changes: policy.may_change(true),
            path: self.path_buf.as_str().into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two keys may share a hash: a route answers only its own server and
    /// URI, whatever key it is found under.
    #[test]
    fn a_route_answers_only_its_own_server_and_uri() {
        let conf = Arc::new(crate::fixtures::loc_conf("/srv"));
        let server = crate::fixtures::server(&[("0.0.0.0:80", false)], &[""], Vec::new());
        let mut routes = Routes::default();
        let key = route_key(0, "/a.txt");
        routes.map.insert(
            key,
            Route {
                server: 0,
                uri: "/a.txt".into(),
                slot: 0,
                stamp: 0,
                conf,
                server_conf: Arc::new(server),
                ae_changes: false,
                path: "/srv/a.txt".into(),
            },
        );
        assert!(routes.get(key, 0, "/a.txt").is_some());
        assert!(routes.get(key, 1, "/a.txt").is_none());
        assert!(routes.get(key, 0, "/b.txt").is_none());
        assert!(routes.get(key, 0, "/a.tx").is_none());
        assert_ne!(route_key(0, "/a.txt"), route_key(1, "/a.txt"));
    }

    /// Every length around the word size, a difference at every byte.
    #[test]
    fn same_compares_every_byte() {
        for len in 0..=33usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "{len}");
            assert!(len == 0 || !same(&a, &a[..len - 1]));
            for i in 0..len {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same(&a, &b), "{len} {i}");
            }
        }
    }
}
