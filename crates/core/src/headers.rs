//! nginx's headers filter (`ngx_http_headers_filter_module`): `expires` and
//! `add_header` applied to a finished response, in the location that
//! produced it.
//!
//! In nginx the filter runs after the not-modified filter (a 304 gets the
//! headers too) and before the range filter, which therefore judges
//! `If-Range` by the ETag and Last-Modified that `add_header` left
//! ([`validators`]) and adds `Content-Range` and `Accept-Ranges` after the
//! filter's lines. `Expires` and `Cache-Control` come first, then each
//! `add_header` in order, all after `Connection` (nginx's header filter
//! writes the header list after it). Special names, as nginx's
//! `ngx_http_set_headers`: `ETag` replaces the response's ETag (an empty
//! value removes it), `Last-Modified` replaces the Last-Modified time
//! (empty: none); `Cache-Control` and `Link` are added like any other name.
//! An empty value adds nothing.
//!
//! A location with any of these is off the static fast path
//! (`fastpath::location_qualifies`): the filter runs on every answer.

use std::borrow::Cow;
use std::time::SystemTime;

use peregrine_conf::build::parse_expires;
use peregrine_conf::model::{Expires, LocConf};

use crate::http::Ctx;

use peregrine_codec::fields::{FieldList, IntoText, Text};

use crate::response::{Body, Response};
use crate::vars::VarCtx;

/// `expires epoch`'s date (`ngx_http_set_expires`).
const EPOCH_DATE: &[u8] = b"Thu, 01 Jan 1970 00:00:01 GMT";
/// `expires max`: the date and the max-age (10 years) nginx writes.
const MAX_DATE: &[u8] = b"Thu, 31 Dec 2037 23:55:55 GMT";
const MAX_AGE_MAX: &[u8] = b"max-age=315360000";
const DAY_SECS: i64 = 24 * 60 * 60;

/// The statuses the filter adds to without `always` (nginx's `safe_status`).
pub(crate) fn safe_status(status: u16) -> bool {
    matches!(
        status,
        200 | 201 | 204 | 206 | 301 | 302 | 303 | 304 | 307 | 308
    )
}

/// The location has something for the filter to do.
#[inline]
pub(crate) fn active(conf: &LocConf) -> bool {
    !conf.add_headers.is_empty() || conf.expires != Expires::Off || !conf.add_trailers.is_empty()
}

/// The ETag and Last-Modified time a 200 of a file leaves the filter with,
/// for the range filter's `If-Range` test: `add_header ETag` and
/// `add_header Last-Modified` replace them (an empty value removes them).
pub(crate) fn validators<'e>(
    ctx: &Ctx<'_>,
    etag: Option<&'e str>,
    mtime: i64,
) -> (Option<Cow<'e, str>>, Option<i64>) {
    let mut etag = etag.map(Cow::Borrowed);
    let mut mtime = Some(mtime);
    if ctx.conf.add_headers.is_empty() {
        return (etag, mtime);
    }
    let vars = ctx.vars();
    for h in ctx.conf.add_headers.iter() {
        if h.name.eq_ignore_ascii_case("ETag") {
            let v = vars.eval(&h.value).into_owned();
            etag = (!v.is_empty()).then_some(Cow::Owned(v));
        } else if h.name.eq_ignore_ascii_case("Last-Modified") {
            // nginx: `ngx_parse_http_time`, -1 (none) when unparsable.
            mtime = peregrine_codec::date::parse_http_date(&vars.eval(&h.value));
        }
    }
    (etag, mtime)
}

/// Applies `expires` and `add_header` to `resp` (`ngx_http_headers_filter`).
pub(crate) fn filter(resp: &mut Response, ctx: &Ctx<'_>) {
    // 444 sends nothing.
    if resp.status == 444 {
        return;
    }
    let conf = &ctx.conf;
    let safe = safe_status(resp.status);
    if !conf.add_trailers.is_empty() {
        add_trailers(resp, ctx, safe);
    }
    let vars = ctx.vars();
    let now = unix_secs(ctx.now);
    let mut added = Added::new(&resp.head);
    if safe && conf.expires != Expires::Off {
        let lm = resp
            .head
            .get_str("Last-Modified")
            .and_then(|v| peregrine_codec::date::parse_http_date(v.trim()));
        if let Some((date, cc)) = expires(&conf.expires, &vars, lm, now) {
            added.add(resp, date, cc);
        }
    }
    for h in conf.add_headers.iter().filter(|h| safe || h.always) {
        let value = vars.eval(&h.value);
        let etag = h.name.eq_ignore_ascii_case("ETag");
        if etag || h.name.eq_ignore_ascii_case("Last-Modified") {
            // nginx keeps one `headers_out.etag` (`ngx_http_set_response_header`):
            // the ETag there, the response's own or one added before, gets
            // the value in place; an empty value clears it. Last-Modified
            // is cleared and added again where add_header adds.
            let special = if etag { "ETag" } else { "Last-Modified" };
            if let Some(at) = resp.head.position(special) {
                let head = resp.head.to_mut();
                if !etag || value.is_empty() {
                    head.remove_at(at);
                    added.removed(at);
                } else {
                    head.set_value(at, Text::copy(value.as_bytes()));
                }
                if etag {
                    continue;
                }
            }
            // nginx's header filter drops Last-Modified but on these.
            if !etag && !matches!(resp.status, 200 | 206 | 304) {
                continue;
            }
        }
        if !value.is_empty() {
            added.add_field(
                resp,
                Text::copy(h.name.as_bytes()),
                Text::copy(value.as_bytes()),
            );
        }
    }
}

/// Where the filter's fields go: after the others of the list, before
/// Content-Range and Accept-Ranges (the range filter's, which runs after
/// it), in the order added.
struct Added {
    at: usize,
}

impl Added {
    fn new(head: &FieldList) -> Added {
        let split = head.split();
        let at = head.fields()[split..]
            .iter()
            .position(|f| f.is("Content-Range") || f.is("Accept-Ranges"))
            .map_or(head.len(), |i| i + split);
        Added { at }
    }

    /// `Expires` and `Cache-Control`, each in place of the response's
    /// own when it has one (a proxied answer's): `ngx_http_set_expires`
    /// reuses `headers_out.expires` and the first `Cache-Control`, and
    /// hides the others.
    fn add(&mut self, resp: &mut Response, date: Text, cc: Text) {
        self.replace(resp, "Expires", date);
        self.replace(resp, "Cache-Control", cc);
    }

    fn replace(&mut self, resp: &mut Response, name: &'static str, value: Text) {
        let Some(at) = resp.head.position(name) else {
            return self.add_field(resp, name.into_text(), value);
        };
        let head = resp.head.to_mut();
        head.set_value(at, value);
        while let Some(next) = head.fields()[at + 1..].iter().position(|f| f.is(name)) {
            head.remove_at(at + 1 + next);
            self.removed(at + 1 + next);
        }
    }

    fn add_field(&mut self, resp: &mut Response, name: Text, value: Text) {
        let head = resp.head.to_mut();
        let at = self.at.max(head.split()).min(head.len());
        head.insert(at, name, value);
        self.at = at + 1;
    }

    /// The field at `at` was removed.
    fn removed(&mut self, at: usize) {
        if at < self.at {
            self.at -= 1;
        }
    }
}

/// `add_trailer` (`ngx_http_trailers_filter`, written by nginx's chunked
/// filter). When a trailer applies to the status, nginx sends an HTTP/1.1
/// body chunked (dropping its Content-Length; not for HEAD, 204 or 304)
/// and writes the trailer fields with non-empty values after the last
/// chunk. Here the response is marked `chunked` (an autoindex listing or
/// a compressed memory-cache variant already is) and given the fields;
/// the protocol writer frames them. The engine's compression filter then
/// leaves the body alone (nginx would compress it, then chunk it).
fn add_trailers(resp: &mut Response, ctx: &Ctx<'_>, safe: bool) {
    if !trailers_apply(&ctx.conf, resp.status, ctx.req.version >= (1, 1)) || resp.header_only {
        return;
    }
    if ctx.upstream.is_some() && matches!(resp.body, Body::Empty) {
        // The head of a proxied answer: its body is read whole first
        // (`HttpCore::holds_proxied`), then framed with the trailers
        // ([`proxied_trailers`]).
        return;
    }
    let mut trailers = FieldList::new();
    for t in ctx.conf.add_trailers.iter().filter(|t| safe || t.always) {
        // nginx evaluates each trailer after the ones before it are in
        // the list: `$sent_trailer_*` sees them, `$sent_http_*` the head.
        let value = {
            let vars = VarCtx {
                sent: Some((&resp.head, &trailers)),
                ..ctx.vars()
            };
            vars.eval(&t.value).into_owned()
        };
        if !value.is_empty() {
            trailers.push(t.name.clone().into_bytes(), value.into_bytes());
        }
    }
    if !trailers.is_empty() {
        resp.trailers = Some(Box::new(trailers));
    }
    if resp.chunked {
        return;
    }
    let head = resp.head.to_mut();
    head.remove("Content-Length");
    head.push_first("Transfer-Encoding", "chunked");
    resp.chunked = true;
    resp.content_length = None;
    resp.compressible = false;
}

/// Whether `add_trailer` applies to an answer with `status` in a location
/// with `conf`, to an HTTP/1.1 client (`http11`).
pub(crate) fn trailers_apply(conf: &LocConf, status: u16, http11: bool) -> bool {
    let safe = safe_status(status);
    conf.add_trailers.iter().any(|t| safe || t.always)
        && http11
        && status >= 200
        && conf.conn.chunked_transfer_encoding
}

/// `add_trailer` on a proxied answer read whole (`HttpCore::filter_proxied`):
/// its trailers, with the answer's `$upstream_*` known.
pub(crate) fn proxied_trailers(resp: &mut Response, ctx: &Ctx<'_>) {
    if !resp.header_only {
        add_trailers(resp, ctx, safe_status(resp.status));
    }
}

/// The value of field `name` (`_` for `-`, any case) in `list`
/// (`$sent_http_*`, `$sent_trailer_*`).
pub(crate) fn field_value<'a>(list: &'a FieldList, name: &str) -> Option<&'a str> {
    let f = list.fields().iter().find(|f| {
        f.name.len() == name.len()
            && f.name
                .iter()
                .zip(name.bytes())
                .all(|(&a, b)| a.eq_ignore_ascii_case(&b) || (a == b'-' && b == b'_'))
    })?;
    std::str::from_utf8(&f.value).ok().map(str::trim)
}

fn unix_secs(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `ngx_next_time`: the next `when` seconds after midnight, strictly after
/// `now`. nginx reckons midnight in local time; Peregrine in UTC (see
/// docs/directives.md).
fn next_time(when: i64, now: i64) -> i64 {
    let next = now - now.rem_euclid(DAY_SECS) + when;
    if next > now { next } else { next + DAY_SECS }
}

/// `Expires` (a date) and `Cache-Control` as `ngx_http_set_expires` writes
/// them; `lm`: the response's Last-Modified time.
fn expires(e: &Expires, vars: &VarCtx<'_>, lm: Option<i64>, now: i64) -> Option<(Text, Text)> {
    // nginx tests the configured time's sign (0 for a value with variables).
    let (e, conf_negative) = match e {
        Expires::Variable { modified, value } => {
            (parse_expires(&vars.expand(value), *modified).ok()?, false)
        }
        Expires::Access(t) | Expires::Modified(t) | Expires::Daily(t) => (e.clone(), *t < 0),
        e => (e.clone(), false),
    };
    let (when, max_age) = match e {
        Expires::Off | Expires::Variable { .. } => return None,
        Expires::Epoch => return Some((Text::Static(EPOCH_DATE), Text::Static(b"no-cache"))),
        Expires::Max => return Some((Text::Static(MAX_DATE), Text::Static(MAX_AGE_MAX))),
        Expires::Access(0) | Expires::Modified(0) => (now, 0),
        Expires::Daily(t) => {
            let next = next_time(t, now);
            (next, next - now)
        }
        Expires::Modified(t) if lm.is_some() => {
            let when = lm.unwrap_or(0).saturating_add(t);
            (when, when - now)
        }
        Expires::Access(t) | Expires::Modified(t) => (now.saturating_add(t), t),
    };
    let mut date = [0u8; 29];
    peregrine_codec::date::fmt_http_date(when, &mut date);
    let cc = if conf_negative || max_age < 0 {
        Text::Static(b"no-cache")
    } else {
        Text::copy(format!("max-age={max_age}").as_bytes())
    };
    Some((Text::copy(&date), cc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sent_fields_are_found_with_underscores_for_dashes() {
        let mut l = FieldList::new();
        l.push("Content-Type", "text/html");
        l.push("X-Foo-Bar", " v ");
        assert_eq!(field_value(&l, "content_type"), Some("text/html"));
        assert_eq!(field_value(&l, "x_foo_bar"), Some("v"));
        assert_eq!(field_value(&l, "x_foo"), None);
    }

    #[test]
    fn next_time_is_strictly_later() {
        let midnight = 20_000 * DAY_SECS;
        assert_eq!(next_time(3600, midnight), midnight + 3600);
        assert_eq!(next_time(3600, midnight + 3600), midnight + DAY_SECS + 3600);
        assert_eq!(next_time(0, midnight + 5), midnight + DAY_SECS);
    }

    #[test]
    fn safe_statuses_are_nginx_list() {
        let safe: Vec<u16> = (100..600).filter(|&s| safe_status(s)).collect();
        assert_eq!(safe, [200, 201, 204, 206, 301, 302, 303, 304, 307, 308]);
    }
}
