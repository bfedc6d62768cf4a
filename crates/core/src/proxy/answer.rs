//! The upstream's answer as the client's response
//! (`ngx_http_upstream_process_headers` and the proxy's header handlers):
//! the headers passed on except the hidden ones and the connection's own,
//! `Location` and `Refresh` through `proxy_redirect`, `Set-Cookie`
//! through the cookie rules (`super::cookie`), the body's framing
//! toward the client (length passed through; chunked to an HTTP/1.1
//! client when the length is unknown, else close), then the location's
//! filters (`add_header` sees `$upstream_*`).

use std::borrow::Cow;
use std::sync::Arc;

use peregrine_codec::upstream::{Framing, UpstreamHead};

use super::{ProxyJob, Redirect, UpstreamVars, view_of};
use crate::http::HttpCore;
use peregrine_codec::fields::{FieldList, Text};

use crate::response::{Body, ConnInfo, Response};
use crate::special::Special;

/// How the body goes to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFraming {
    /// No body (HEAD, 204, 304).
    None,
    Length(u64),
    /// Re-framed as chunks (HTTP/1.1 client, length unknown).
    Chunked,
    /// Until the connection closes (HTTP/1.0 client, length unknown).
    Close,
}

/// The client's framing for an answer framed `f` upstream.
pub fn client_framing(f: Framing, client_http11: bool, chunked_on: bool) -> ClientFraming {
    match f {
        Framing::None => ClientFraming::None,
        Framing::Length(n) => ClientFraming::Length(n),
        Framing::Chunked | Framing::UntilClose if client_http11 && chunked_on => {
            ClientFraming::Chunked
        }
        Framing::Chunked | Framing::UntilClose => ClientFraming::Close,
    }
}

/// Headers that describe the upstream connection, never passed on
/// (`ngx_http_upstream_headers_in`: ignored or handled apart). `Upgrade`
/// is passed (nginx 1.29 keeps a backend's `Upgrade` in any answer to an
/// HTTP/1.1 client; the HTTP/2 session drops it as connection-specific).
const CONNECTION_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
];

/// The gateways' answer headers nginx does not pass to the client
/// (`ngx_http_fastcgi_hide_headers`, the uwsgi and SCGI modules' alike):
/// `Status` became the status line.
const GATEWAY_HIDDEN_HEADERS: &[&str] = &[
    "status",
    "x-accel-expires",
    "x-accel-redirect",
    "x-accel-limit-rate",
    "x-accel-buffering",
    "x-accel-charset",
];

/// Whether the client gets header `name` (any case: the lists are
/// lowercase, compared without a lowercase copy of the name).
fn passed(job: &ProxyJob, name: &[u8]) -> bool {
    let p = job.up();
    let is = |h: &str| name.eq_ignore_ascii_case(h.as_bytes());
    if CONNECTION_HEADERS.iter().any(|h| is(h)) {
        return false;
    }
    if p.hide_headers.iter().any(|h| is(h)) {
        return false;
    }
    let hidden = match job.proto {
        super::Proto::Http => peregrine_conf::build::proxy::HIDDEN_HEADERS
            .iter()
            .any(|h| is(h)),
        _ => GATEWAY_HIDDEN_HEADERS.iter().any(|h| is(h)),
    };
    !hidden || p.pass_headers.iter().any(|h| is(h))
}

/// `proxy_redirect` on a `Location` or `Refresh` value: the first rule
/// that matches (a prefix case-sensitively, as `ngx_rstrncmp`; a regex
/// replaces the whole value, `$N` from its captures).
pub fn rewrite_redirect<'v>(value: &'v str, rules: &[Redirect]) -> Cow<'v, str> {
    for r in rules {
        match r {
            Redirect::Prefix(from, to) => {
                if let Some(rest) = value.strip_prefix(from.as_str()) {
                    return Cow::Owned(format!("{to}{rest}"));
                }
            }
            Redirect::Regex(re, to) => {
                if let Some(caps) = re.captures(value) {
                    return Cow::Owned(with_captures(to, &caps));
                }
            }
        }
    }
    Cow::Borrowed(value)
}

/// `$N` and `${N}` of a replacement from `caps`.
pub(crate) fn with_captures(to: &str, caps: &[String]) -> String {
    let mut out = String::with_capacity(to.len() + 32);
    let b = to.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let n = usize::from(b[i + 1] - b'0');
            out.push_str(caps.get(n).map_or("", String::as_str));
            i += 2;
        } else {
            let next = to[i + 1..].find('$').map_or(b.len(), |n| i + 1 + n);
            out.push_str(&to[i..next]);
            i = next;
        }
    }
    out
}

/// The client's header fields for the answer, in nginx's header filter
/// order (Content-Type, Content-Length, Last-Modified, Location,
/// Transfer-Encoding before the split where `Connection` goes).
pub fn head_fields(
    job: &ProxyJob,
    uh: &UpstreamHead,
    buf: &[u8],
    framing: ClientFraming,
) -> FieldList {
    let mut head = FieldList::with_capacity(uh.headers.len() + 2);
    let text = |r: &std::ops::Range<usize>| String::from_utf8_lossy(&buf[r.clone()]).into_owned();
    let mut ctype = None;
    let mut lastmod = None;
    let mut location = None;
    for (n, v) in &uh.headers {
        // Names and values are copied once, as bytes (short ones inline in
        // the field): the name needs no lowercase copy to be matched.
        let name = &buf[n.clone()];
        if !passed(job, name) {
            continue;
        }
        let is = |h: &str| name.eq_ignore_ascii_case(h.as_bytes());
        if ctype.is_none() && is("content-type") {
            ctype = Some(&buf[v.clone()]);
        } else if lastmod.is_none() && is("last-modified") {
            lastmod = Some(&buf[v.clone()]);
        } else if location.is_none() && is("location") {
            let value = text(v);
            let mut l = rewrite_redirect(&value, &job.redirects).into_owned();
            if l.starts_with('/') {
                l = format!("{}{l}", job.origin);
            }
            location = Some(l);
        } else if is("refresh") {
            let value = text(v);
            let r = match value.find("url=") {
                Some(i) => {
                    let (a, b) = value.split_at(i + 4);
                    format!("{a}{}", rewrite_redirect(b, &job.redirects))
                }
                None => value.clone(),
            };
            head.push(Text::copy(name), r);
        } else if is("set-cookie") && job.proto == super::Proto::Http && job.cookies.is_some() {
            let value = text(v);
            let c = job
                .cookies
                .as_deref()
                .and_then(|c| super::cookie::rewrite(&value, c));
            head.push(Text::copy(name), c.unwrap_or(value));
        } else {
            head.push(Text::copy(name), Text::copy(&buf[v.clone()]));
        }
    }
    if let Some(t) = ctype {
        head.push_first("Content-Type", Text::copy(t));
    }
    match framing {
        ClientFraming::Length(n) => head.push_first("Content-Length", Text::decimal(n)),
        ClientFraming::None => {
            if let Some(n) = uh.content_length {
                head.push_first("Content-Length", Text::decimal(n));
            }
        }
        _ => {}
    }
    if let Some(t) = lastmod {
        head.push_first("Last-Modified", Text::copy(t));
    }
    if let Some(l) = location {
        head.push_first("Location", l);
    }
    if framing == ClientFraming::Chunked {
        head.push_first("Transfer-Encoding", "chunked");
    }
    // A backend's Date or Server passed on stands for nginx's own, and a
    // `*_pass_header` of one leaves none when the backend sent none
    // (`ngx_http_upstream_process_headers`).
    let p = job.up();
    let named = |n: &str| p.pass_headers.iter().any(|h| h == n);
    if head.has("Date") || named("date") {
        head.omit_own_date();
    }
    if head.has("Server") || named("server") {
        head.omit_own_server();
    }
    head
}

/// The answer's headers an `X-Accel-Redirect` keeps (those of
/// `ngx_http_upstream_headers_in` marked for redirects).
const REDIRECT_KEPT: &[&str] = &[
    "content-type",
    "set-cookie",
    "content-disposition",
    "cache-control",
    "expires",
    "accept-ranges",
];

fn keep_redirect_headers(r: &mut Response, up: &UpstreamVars) {
    let kept: Vec<(String, String)> = up
        .headers
        .iter()
        .filter_map(|(n, v)| {
            let name = String::from_utf8_lossy(up.head.get(n.clone())?).into_owned();
            let lower = name.to_ascii_lowercase();
            REDIRECT_KEPT.contains(&lower.as_str()).then(|| {
                let value = String::from_utf8_lossy(up.head.get(v.clone()).unwrap_or(&[]));
                (name, value.into_owned())
            })
        })
        .collect();
    if kept.is_empty() {
        return;
    }
    let head = r.head.to_mut();
    head.retain(|f| !kept.iter().any(|(n, _)| f.is(n)));
    for (n, v) in kept {
        if n.eq_ignore_ascii_case("content-type") {
            head.push_first(n, v);
        } else {
            head.push(n, v);
        }
    }
}

impl HttpCore {
    /// The client's response to the upstream's answer `uh` (its bytes in
    /// `buf`), through the location's filters; its body is the engine's
    /// to stream.
    #[allow(clippy::too_many_arguments)]
    pub fn proxied(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        uh: &UpstreamHead,
        buf: &[u8],
        framing: ClientFraming,
    ) -> Response {
        let head = head_fields(job, uh, buf, framing);
        let header_only =
            framing == ClientFraming::None || matches!(req.method(), peregrine_codec::Method::Head);
        let resp = Response {
            status: job.err_status.unwrap_or(uh.status),
            head: head.into(),
            body: Body::Empty,
            content_length: match framing {
                ClientFraming::Length(n) => Some(n),
                _ => uh.content_length,
            },
            // The engine's upstream streaming frames the chunks.
            chunked: framing == ClientFraming::Chunked,
            trailers: None,
            keepalive: framing != ClientFraming::Close,
            header_only,
            conf: Some(job.conf.clone()),
            server: Some(job.server.clone()),
            // nginx's gzip filter takes proxied answers as any other
            // (`gzip_proxied` is about requests that came through a proxy).
            compressible: true,
        };
        self.through_filters(job, conn, req, now, up, resp, None)
    }

    /// The error page for a failed upstream request (502, 504, or an
    /// intercepted status), `error_page` applying in the location.
    pub fn upstream_error(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        status: u16,
    ) -> Response {
        let resp = self.error_response(status);
        let mut r = self.through_filters(job, conn, req, now, up, resp, Some(status));
        if status == 401 {
            // An intercepted 401 keeps the upstream's challenges
            // (`ngx_http_upstream_intercept_errors`).
            let head = r.head.to_mut();
            for (n, v) in &up.headers {
                if up.head[n.clone()].eq_ignore_ascii_case(b"WWW-Authenticate") {
                    head.push("WWW-Authenticate", up.head[v.clone()].to_vec());
                }
            }
        }
        r
    }

    /// `X-Accel-Redirect: URI` (or `@name`) of an answer: an internal
    /// redirect, as GET unless HEAD (`ngx_http_upstream_process_headers`).
    pub fn accel_redirect(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        target: &str,
    ) -> Response {
        let step = if target.starts_with('@') {
            crate::http::Step::Named(target.to_string())
        } else {
            match parse_unsafe_uri(target) {
                Some((u, a)) => crate::http::Step::Redirect(u, a),
                // nginx finalizes the request with 404.
                None => crate::http::Step::Special(crate::special::Special::status(404)),
            }
        };
        let resp = self.error_response(500);
        let mut r = self.resume_with(job, conn, req, now, up, resp, Some(step));
        keep_redirect_headers(&mut r, up);
        r
    }

    /// The request's state again in its location, then either the filters
    /// on `resp` or (`special`) the error page for that status.
    #[allow(clippy::too_many_arguments)]
    fn through_filters(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        resp: Response,
        special: Option<u16>,
    ) -> Response {
        let servers = self.servers.clone();
        let Some(srv) = servers.get(job.server_index) else {
            return resp;
        };
        let view = view_of(req);
        let mut ctx = self.job_ctx(srv, job, &view, conn, now, up);
        let step = match special {
            Some(s) => self.special(&mut ctx, Special::status(s)),
            None => crate::http::Step::Done(resp),
        };
        self.finish_resumed(job, &mut ctx, &servers, step)
    }

    #[allow(clippy::too_many_arguments)]
    fn resume_with(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        resp: Response,
        step: Option<crate::http::Step>,
    ) -> Response {
        let servers = self.servers.clone();
        let Some(srv) = servers.get(job.server_index) else {
            return resp;
        };
        let view = view_of(req);
        let mut ctx = self.job_ctx(srv, job, &view, conn, now, up);
        if ctx.method != crate::request::Method::Head {
            ctx.method = crate::request::Method::Get;
        }
        let step = step.unwrap_or(crate::http::Step::Done(resp));
        self.finish_resumed(job, &mut ctx, &servers, step)
    }

    /// A proxied answer's whole body `body` through the location's body
    /// filters (SSI, sub, addition: `crate::filters`), once the engine
    /// has read it: `resp` is the head [`HttpCore::proxied`] made, and
    /// gets the filtered body and its length.
    #[allow(clippy::too_many_arguments)]
    pub fn filter_proxied(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        resp: &mut Response,
        body: Vec<u8>,
    ) {
        self.filter_proxied_body(job, conn, req, now, up, resp, body, true);
    }

    /// [`HttpCore::filter_proxied`] of a body the upstream cut short
    /// (`whole` false): filtered as far as it came, nothing added at its
    /// end (no `add_after_body`, no trailers: nginx's filters never get
    /// the last buffer), and no length, the client's framing being the
    /// engine's to choose.
    #[allow(clippy::too_many_arguments)]
    pub fn filter_proxied_body(
        &mut self,
        job: &ProxyJob,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        up: &UpstreamVars,
        resp: &mut Response,
        mut body: Vec<u8>,
        whole: bool,
    ) {
        let maps = std::rc::Rc::clone(&self.charset_maps);
        let ct = resp.head.get_str("Content-Type").unwrap_or_default();
        if let Some((r, ct)) = crate::charset::proxied_recoding(&job.conf, ct, &maps) {
            body = r.recode(&body);
            resp.head.to_mut().set("Content-Type", ct);
        }
        let len = body.len() as u64;
        crate::filters::set_length(resp.head.to_mut(), Some(len));
        resp.content_length = Some(len);
        resp.chunked = false;
        resp.body = Body::Shared(Arc::from(body));
        let servers = self.servers.clone();
        let Some(srv) = servers.get(job.server_index) else {
            return;
        };
        let view = view_of(req);
        let mut ctx = self.job_ctx(srv, job, &view, conn, now, up);
        crate::filters::apply_body(self, &mut ctx, &servers, resp, whole);
        if whole {
            crate::headers::proxied_trailers(resp, &ctx);
        } else {
            crate::filters::set_length(resp.head.to_mut(), None);
            resp.content_length = None;
        }
    }

    /// Whether the answer `resp` (its head as [`HttpCore::proxied`] made
    /// it) is read whole before it goes to the client, for what needs its
    /// whole body: the location's body filters, `override_charset`'s
    /// recoding, `add_trailer` (whose values may read the answer's
    /// `$upstream_*` at its end).
    pub fn holds_proxied(
        &self,
        job: &ProxyJob,
        req: &peregrine_codec::Request,
        resp: &Response,
    ) -> bool {
        if resp.header_only {
            return false;
        }
        let conf = &job.conf;
        conf.filters.active
            || crate::headers::trailers_apply(
                conf,
                resp.status,
                req.version() == peregrine_codec::Version::Http11,
            )
            || conf.request.override_charset
                && resp.head.get_str("Content-Type").is_some_and(|ct| {
                    crate::charset::proxied_recoding(conf, ct, &self.charset_maps).is_some()
                })
    }

    /// The request's state in its location again, for the answer's
    /// filters and error pages: the job's server, settings, URI and
    /// arguments, the upstream's variables, what its limits found.
    pub(crate) fn job_ctx<'a>(
        &self,
        srv: &'a crate::http::ServerRt,
        job: &'a ProxyJob,
        view: &'a crate::request::RequestView<'a>,
        conn: &'a ConnInfo,
        now: std::time::SystemTime,
        up: &'a UpstreamVars,
    ) -> crate::http::Ctx<'a> {
        let mut ctx = HttpCore::start_ctx(srv, job.server_index, view, conn, now);
        ctx.conf = job.conf.clone();
        ctx.uri = Cow::Borrowed(&job.uri);
        ctx.args = job.args.as_deref().map(Cow::Borrowed);
        ctx.name_len = job.name_len;
        ctx.upstream = Some(up);
        ctx.sets.values = job.sets.clone();
        ctx.limits = job.limits;
        ctx.status = self.status.clone();
        ctx
    }

    fn finish_resumed(
        &mut self,
        job: &ProxyJob,
        ctx: &mut crate::http::Ctx<'_>,
        servers: &[crate::http::ServerRt],
        step: crate::http::Step,
    ) -> Response {
        let mut r = self.drive(ctx, servers, step);
        if r.server.is_none() {
            r.server = Some(Arc::clone(&job.server));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_conf::model::Regex;

    #[test]
    fn redirect_prefix_replaced() {
        let pairs = vec![Redirect::Prefix(
            "http://127.0.0.1:8081/".to_string(),
            "/".to_string(),
        )];
        assert_eq!(rewrite_redirect("http://127.0.0.1:8081/a", &pairs), "/a");
        assert_eq!(rewrite_redirect("http://other/a", &pairs), "http://other/a");
        let re = vec![Redirect::Regex(
            Regex::new("^http://[^/]+/(.*)$").unwrap(),
            "/x/$1".to_string(),
        )];
        assert_eq!(rewrite_redirect("http://h:1/a/b", &re), "/x/a/b");
    }

    #[test]
    fn framing_toward_the_client() {
        assert_eq!(
            client_framing(Framing::UntilClose, true, true),
            ClientFraming::Chunked
        );
        assert_eq!(
            client_framing(Framing::Chunked, false, true),
            ClientFraming::Close
        );
        assert_eq!(
            client_framing(Framing::Length(3), false, true),
            ClientFraming::Length(3)
        );
    }
}

/// `ngx_http_parse_unsafe_uri`: the URI of an `X-Accel-Redirect` up to its
/// first `?` (the rest is the arguments), `%XX` decoded; `None` when it
/// names a parent directory (a `..` segment, also when escaped) or holds a
/// NUL, which nginx refuses as unsafe.
pub(crate) fn parse_unsafe_uri(target: &str) -> Option<(String, Option<String>)> {
    let (path, args) = match target.split_once('?') {
        Some((p, a)) => (p, Some(a.to_string())),
        None => (target, None),
    };
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|h| char::from(*h).to_digit(16));
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    if out.contains(&0) || out.split(|&c| c == b'/').any(|seg| seg == b"..") {
        return None;
    }
    Some((String::from_utf8_lossy(&out).into_owned(), args))
}

#[cfg(test)]
mod unsafe_uri_tests {
    use super::parse_unsafe_uri;

    #[test]
    fn parent_segments_are_refused_escaped_or_not() {
        for bad in [
            "..",
            "../foo",
            "/foo/..",
            "/foo/.%2e",
            "/a/%2e%2e/b",
            "/x%00",
        ] {
            assert_eq!(parse_unsafe_uri(bad), None, "{bad}");
        }
        assert_eq!(
            parse_unsafe_uri("/foo%20bar?a=%20"),
            Some(("/foo bar".to_string(), Some("a=%20".to_string())))
        );
        assert_eq!(
            parse_unsafe_uri("/a..b/.c"),
            Some(("/a..b/.c".to_string(), None))
        );
    }
}
