//! The body filters nginx runs on whole responses made of subrequests:
//! addition (`add_before_body`, `add_after_body`), sub (`sub_filter`) and
//! SSI, in nginx's filter order (addition's subrequests around the body,
//! the body through sub then SSI; the subrequests' own output is theirs,
//! already filtered by their locations, as nginx's postpone filter joins
//! them).
//!
//! A response of a location with a filter on is made whole in memory
//! ([`MAX_FILTERED_BODY`]) and its subrequests run synchronously in the
//! same core call ([`subrequest`]): a static file, a `return`, another
//! filtered location. A location without a filter pays one test
//! (`FiltersConf::active`), in the phases' `Done` step only.
//!
//! Deliberate differences: the filtered body is sent with a Content-Length
//! (nginx streams it chunked); a subrequest to a proxied location is run
//! by the engine and the request replayed with its answer
//! ([`subrequest`]), on HTTP/1; on HTTP/2, and from a proxied answer's
//! own filters, it is answered 502.

pub mod ssi;
pub mod ssi_parse;
pub mod sub;
pub mod subrequest;
pub mod timefmt;

use std::sync::Arc;

use peregrine_conf::filters::{FiltersConf, type_matches};

use peregrine_codec::fields::FieldList;

use crate::http::{Ctx, HttpCore, ServerRt};
use crate::response::{Body, Response};

/// The largest body the filters read into memory (a larger file is sent
/// unfiltered, as the charset filter does).
pub const MAX_FILTERED_BODY: u64 = 16 * 1024 * 1024;

/// What the filters of `ctx`'s location do to `resp`.
pub(crate) fn apply(
    core: &mut HttpCore,
    ctx: &mut Ctx<'_>,
    servers: &[ServerRt],
    resp: &mut Response,
) {
    apply_body(core, ctx, servers, resp, true);
}

/// [`apply`] to a body that is whole, or (`whole` false) to one an
/// upstream cut short: nginx's filters never see its last buffer, so
/// what comes at the end (`add_after_body`'s subrequest) is not added.
pub(crate) fn apply_body(
    core: &mut HttpCore,
    ctx: &mut Ctx<'_>,
    servers: &[ServerRt],
    resp: &mut Response,
    whole: bool,
) {
    // A proxied answer's head: its body is the engine's to read first
    // (it comes back with `HttpCore::filter_proxied`).
    if ctx.upstream.is_some() && matches!(resp.body, Body::Empty) {
        return;
    }
    let f = Arc::clone(&ctx.conf.filters);
    let ty = content_type(resp);
    let head_ok = resp.status != 304 && resp.status != 204 && !has_line(resp, "content-encoding");
    let addition = head_ok
        && resp.status == 200
        && core.sub_depth == 0
        && (f.add_before_body.is_some() || f.add_after_body.is_some())
        && type_matches(&f.addition_types, &ty);
    let sub = head_ok && !f.sub.is_empty() && type_matches(&f.sub_types, &ty);
    let ssi = head_ok && f.ssi && type_matches(&f.ssi_types, &ty);
    if !(addition || sub || ssi) || resp.content_length == Some(0) && !addition {
        return;
    }
    let keep_validators = (!ssi || f.ssi_last_modified) && (!sub || f.sub_last_modified);
    if resp.header_only {
        edit_head(resp, None, keep_validators);
        return;
    }
    let Some(mut body) = read_body(&resp.body) else {
        return;
    };
    if sub {
        body = sub::run(&f.sub, f.sub_once, &ctx.vars(), &body);
    }
    if ssi {
        body = ssi::run(core, ctx, servers, &f, &body);
    }
    if addition {
        body = add(core, ctx, servers, &f, body, whole);
    }
    edit_head(resp, Some(body.len() as u64), keep_validators);
    resp.body = Body::Shared(Arc::from(body));
    // The engine's gzip filter comes after these.
    resp.compressible = resp.status != 204;
}

/// addition: the before and after subrequests' output around the body.
fn add(
    core: &mut HttpCore,
    ctx: &mut Ctx<'_>,
    servers: &[ServerRt],
    f: &FiltersConf,
    body: Vec<u8>,
    whole: bool,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    if let Some(uri) = &f.add_before_body {
        let uri = ctx.vars().expand(uri);
        out.extend(subrequest::run(core, ctx, servers, &uri).body);
    }
    out.extend(body);
    if let Some(uri) = f.add_after_body.as_ref().filter(|_| whole) {
        let uri = ctx.vars().expand(uri);
        out.extend(subrequest::run(core, ctx, servers, &uri).body);
    }
    out
}

fn has_line(resp: &Response, name: &str) -> bool {
    resp.head.has(name)
}

/// The response's media type (empty without a Content-Type).
fn content_type(resp: &Response) -> String {
    resp.head
        .get("content-type")
        .map(|v| String::from_utf8_lossy(v).trim().to_string())
        .unwrap_or_default()
}

/// The body's bytes, if it is small enough to filter.
pub fn read_body(body: &Body) -> Option<Vec<u8>> {
    if body.len() > MAX_FILTERED_BODY {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() as usize);
    push_body(body, &mut out).then_some(out)
}

fn push_body(body: &Body, out: &mut Vec<u8>) -> bool {
    use std::os::unix::fs::FileExt;
    match body {
        Body::Empty => true,
        Body::Static(b) => {
            out.extend_from_slice(b);
            true
        }
        Body::Shared(b) => {
            out.extend_from_slice(b);
            true
        }
        Body::File { file, offset, len } => {
            let start = out.len();
            out.resize(start + *len as usize, 0);
            file.read_exact_at(&mut out[start..], *offset).is_ok()
        }
        Body::Parts(parts) => parts.iter().all(|p| push_body(p, out)),
    }
}

/// The head's framing for a body of `len` bytes (`None`: no length, a
/// HEAD's): no Transfer-Encoding (a proxied answer's chunked coding is
/// undone), a Content-Length where nginx's header filter puts it.
pub(crate) fn set_length(head: &mut FieldList, len: Option<u64>) {
    head.remove("transfer-encoding");
    head.set_content_length(len);
}

/// The head of a filtered body: its new length (nginx clears it and
/// chunks), no ranges (`ngx_http_clear_accept_ranges`), and no validators
/// unless `*_last_modified on` (then the ETag is weak,
/// `ngx_http_weak_etag`).
fn edit_head(resp: &mut Response, len: Option<u64>, keep_validators: bool) {
    let head = resp.head.to_mut();
    set_length(head, len);
    head.remove("accept-ranges");
    if keep_validators {
        if let Some(at) = head.position("etag") {
            let v = head.fields()[at].value.clone();
            if v.starts_with(b"\"") {
                head.set_value(at, [b"W/".as_slice(), &v].concat());
            }
        }
    } else {
        head.remove("last-modified");
        head.remove("etag");
    }
    resp.content_length = len;
}
