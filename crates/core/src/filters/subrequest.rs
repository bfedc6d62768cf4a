//! Subrequests (`ngx_http_subrequest`), run synchronously inside the
//! parent's core call: the subrequest goes through the phases from the
//! server's rewrite phase on (a static file, a `return`, a location with
//! filters of its own, which may make subrequests in turn), and its
//! response's body is handed to the parent, which puts it where its
//! output asked for it (nginx's postpone filter).

use crate::http::{Ctx, HttpCore, ServerRt};

/// nginx's `NGX_HTTP_MAX_SUBREQUESTS`: how deep subrequests may nest
/// ("subrequests cycle while processing").
pub const MAX_SUBREQUEST_DEPTH: u8 = 50;
/// Subrequests one main request may make in all (nginx's bound on
/// `r->main->count`, 65535 less its margin of 1000).
pub const MAX_SUBREQUESTS: u32 = 65535 - 1000;

/// What a subrequest gave.
pub(crate) struct SubResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

impl SubResponse {
    fn failed() -> SubResponse {
        SubResponse {
            status: 500,
            body: Vec::new(),
        }
    }
}

/// Runs a subrequest of `parent` to `target` (a URI, maybe with `?args`;
/// relative to the parent's URI's directory unless it starts with `/`,
/// as `ngx_http_ssi_include` resolves it).
pub(crate) fn run(
    core: &mut HttpCore,
    parent: &mut Ctx<'_>,
    servers: &[ServerRt],
    target: &str,
) -> SubResponse {
    if core.sub_depth >= MAX_SUBREQUEST_DEPTH || core.subrequests >= MAX_SUBREQUESTS {
        return SubResponse::failed();
    }
    let (path, args) = match target.split_once('?') {
        Some((p, a)) => (p, Some(a.to_string())),
        None => (target, None),
    };
    // `ngx_http_parse_unsafe_uri`: no `..` segment.
    if path.split('/').any(|seg| seg == "..") {
        return SubResponse::failed();
    }
    let uri = if path.starts_with('/') {
        path.to_string()
    } else {
        let dir = parent.uri.rfind('/').map_or("/", |i| &parent.uri[..=i]);
        format!("{dir}{path}")
    };
    // Unescaped and dot segments resolved (nginx's
    // `ngx_http_parse_unsafe_uri` refuses what would leave the root).
    let mut clean = String::with_capacity(uri.len());
    if peregrine_codec::uri::normalize(uri.as_bytes(), &mut clean).is_err() {
        return SubResponse::failed();
    }
    let uri = clean;
    core.subrequests += 1;
    core.sub_depth += 1;
    let srv = &servers[parent.server];
    let mut sub = HttpCore::sub_ctx(srv, parent, uri, args);
    let step = core.server_rewrite_phase(&mut sub, servers);
    let resp = core.drive(&mut sub, servers, step);
    core.sub_depth -= 1;
    parent.sets.values = std::mem::take(&mut sub.sets.values);
    if core.proxy_job.take().is_some() {
        // A proxied subrequest would need the engine's loop.
        return SubResponse {
            status: 502,
            body: Vec::new(),
        };
    }
    SubResponse {
        status: resp.status,
        body: super::read_body(&resp.body).unwrap_or_default(),
    }
}
