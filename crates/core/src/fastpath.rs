//! The static hit fast path: a per-worker memo from (server, URI) to the
//! memory-cache entry that a plain GET or HEAD of that URI was last
//! answered from. The next such request skips the location phases (the
//! location match, the `return`/`try_files`/`stub_status` checks, mapping
//! the URI to a file path, the precompressed probe, the conditional and
//! compression decisions) and the memory cache's hash of the file path:
//! one probe of a short key, then the entry's own revalidation
//! (`open_file_cache_valid`) as ever.
//!
//! Sound because, for such a request, the answer is a function of the
//! server, the URI and the file alone. A route is recorded only when the
//! full path reached the memory cache with the request's own URI (no
//! internal redirect, no `error_page`), in a location without `try_files`
//! or a `*_static` module (both probe the filesystem per request) and
//! whose `root`/`alias` has no variables (which could depend on other
//! request headers). A request takes a route only when nothing else could
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
use peregrine_conf::model::LocConf;

use crate::fxhash::FxHashMap;
use crate::http::{Ctx, HttpCore};
use crate::request::{Method, RequestView};
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

/// Where a URI of a server was answered from.
#[derive(Debug)]
pub(crate) struct Route {
    /// The location's settings (the response carries them).
    conf: Arc<LocConf>,
    /// The memory-cache slot and the stamp of the entry in it.
    slot: usize,
    stamp: u64,
    /// The file's path, for revalidation.
    path: Box<str>,
}

#[derive(Debug, Default)]
pub(crate) struct Routes {
    /// Per server index: URI → route.
    by_server: Vec<FxHashMap<Box<str>, Route>>,
    len: usize,
    /// Requests answered by a route (tests).
    pub(crate) hits: u64,
}

impl Routes {
    /// Routes held (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn get(&self, server: usize, uri: &str) -> Option<&Route> {
        self.by_server.get(server)?.get(uri)
    }

    fn forget(&mut self, server: usize, uri: &str) {
        if let Some(m) = self.by_server.get_mut(server)
            && m.remove(uri).is_some()
        {
            self.len -= 1;
        }
    }

    fn record(&mut self, server: usize, uri: &str, route: Route) {
        if self.len >= ROUTES_MAX {
            self.by_server.iter_mut().for_each(FxHashMap::clear);
            self.len = 0;
        }
        if self.by_server.len() <= server {
            self.by_server.resize_with(server + 1, FxHashMap::default);
        }
        if self.by_server[server].insert(uri.into(), route).is_none() {
            self.len += 1;
        }
    }
}

/// Nothing in the request but the server and the URI can change a static
/// answer (compression aside: see [`policy_keeps`]).
fn request_qualifies(req: &RequestView<'_>) -> bool {
    matches!(req.method, Method::Get | Method::Head)
        && req.content_length.unwrap_or(0) == 0
        && (!req.headers.may_have_any(DECIDING_MASK)
            || DECIDING_HEADERS
                .iter()
                .all(|h| req.headers.get(h).is_none()))
}

/// The location's compression filters send this request's answer as is.
fn policy_keeps(conf: &LocConf, req: &RequestView<'_>) -> bool {
    !Policy::of(conf).may_change(req.headers.get("Accept-Encoding").is_some())
}

/// The location answers a URI from one file, found without probing.
fn location_qualifies(conf: &LocConf) -> bool {
    conf.try_files.is_empty()
        && crate::static_variants::statics_off(conf)
        && !crate::phases::root_text(&conf.root).contains('$')
}

impl HttpCore {
    /// The answer from the route of (`server`, the request's URI), if the
    /// request qualifies and the entry is still cached and current.
    pub(crate) fn fast_hit(
        &mut self,
        server: usize,
        req: &RequestView<'_>,
        now: SystemTime,
    ) -> Option<Response> {
        let route = self.routes.get(server, req.path)?;
        if !request_qualifies(req) || !policy_keeps(&route.conf, req) {
            return None;
        }
        let valid = route.conf.open_file_cache_valid;
        let Some(e) = self
            .mcache
            .get_slot(route.slot, route.stamp, &route.path, valid, now)
        else {
            self.routes.forget(server, req.path);
            return None;
        };
        let r = crate::static_file::plain_hit(e, route.conf.clone(), req.method, false);
        self.routes.hits += 1;
        Some(r)
    }

    /// Remembers where this request was answered from, when the next one
    /// like it may skip the phases (see the module doc). Called on a plain
    /// memory-cache answer with `self.path_buf` holding the file's path.
    pub(crate) fn record_route(&mut self, ctx: &Ctx<'_>) {
        if !ctx.is_original()
            || ctx.uri.len() > ROUTE_URI_MAX
            || !location_qualifies(&ctx.conf)
            || !policy_keeps(&ctx.conf, ctx.req)
            || !request_qualifies(ctx.req)
        {
            return;
        }
        let Some((slot, stamp)) = self.mcache.slot(&self.path_buf) else {
            return;
        };
        let route = Route {
            conf: ctx.conf.clone(),
            slot,
            stamp,
            path: self.path_buf.as_str().into(),
        };
        self.routes.record(ctx.server, &ctx.uri, route);
    }
}
