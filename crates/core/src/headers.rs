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
use std::ops::Range;
use std::time::SystemTime;

use peregrine_conf::build::parse_expires;
use peregrine_conf::model::{Expires, LocConf};

use crate::date::push_http_date;
use crate::http::Ctx;
use std::sync::Arc;

use crate::response::{Body, HeadLines, Response};
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
            let v = vars.expand(&h.value);
            etag = (!v.is_empty()).then_some(Cow::Owned(v));
        } else if h.name.eq_ignore_ascii_case("Last-Modified") {
            // nginx: `ngx_parse_http_time`, -1 (none) when unparsable.
            mtime = peregrine_codec::date::parse_http_date(&vars.expand(&h.value));
        }
    }
    (etag, mtime)
}

/// Applies `expires` and `add_header` to `resp` (`ngx_http_headers_filter`).
///
/// The usual case only adds lines: the head is then copied once, with the
/// new lines in their place. Only `ETag` and `Last-Modified`, which edit a
/// line of the response's own, work on a copy first.
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
    // The head with ETag/Last-Modified edits, once there is one.
    let mut edited: Option<(Vec<u8>, usize)> = None;
    let mut added = Vec::new();
    let vars = ctx.vars();
    let now = unix_secs(ctx.now);
    if safe && conf.expires != Expires::Off {
        let lines = resp.head.as_bytes();
        let lm = find_line(lines, b"Last-Modified")
            .and_then(|r| std::str::from_utf8(value_of(lines, r)).ok())
            .and_then(peregrine_codec::date::parse_http_date);
        push_expires(&mut added, &conf.expires, &vars, lm, now);
    }
    for h in conf.add_headers.iter().filter(|h| safe || h.always) {
        let value = vars.expand_cow(&h.value);
        let name = h.name.as_bytes();
        let special = if h.name.eq_ignore_ascii_case("ETag") {
            Some(&b"ETag"[..])
        } else if h.name.eq_ignore_ascii_case("Last-Modified") {
            Some(&b"Last-Modified"[..])
        } else {
            None
        };
        if let Some(special) = special {
            let cur = edited.as_ref().map_or(resp.head.as_bytes(), |e| &e.0);
            if let Some(r) = find_line(cur, special) {
                let (lines, split) = edited.get_or_insert_with(|| {
                    let head = resp.head.as_bytes().to_vec();
                    let split = resp.head_split.min(head.len());
                    (head, split)
                });
                let mut line = Vec::new();
                if special == b"ETag" {
                    push_line(&mut line, name, &value);
                }
                remove_or_replace(lines, split, r, &line);
                if special == b"ETag" {
                    continue;
                }
            }
            // An ETag this filter added before: replaced too (nginx keeps
            // one `headers_out.etag`; an empty value clears it).
            if special == b"ETag"
                && let Some(r) = find_line(&added, special)
            {
                added.drain(r);
            }
            // nginx's header filter drops Last-Modified but on these.
            if special == b"Last-Modified" && !matches!(resp.status, 200 | 206 | 304) {
                continue;
            }
        }
        push_line(&mut added, name, &value);
    }
    if added.is_empty() && edited.is_none() {
        return;
    }
    let (lines, split) = match &edited {
        Some((lines, split)) => (&lines[..], *split),
        None => (
            resp.head.as_bytes(),
            resp.head_split.min(resp.head.as_bytes().len()),
        ),
    };
    // Content-Range and Accept-Ranges are the range filter's: after these.
    let at = [&b"Content-Range"[..], b"Accept-Ranges"]
        .iter()
        .filter_map(|n| find_line(&lines[split..], n).map(|r| r.start + split))
        .min()
        .unwrap_or(lines.len());
    let mut head = Vec::with_capacity(lines.len() + added.len());
    head.extend_from_slice(&lines[..at]);
    head.extend_from_slice(&added);
    head.extend_from_slice(&lines[at..]);
    resp.head = HeadLines::Owned(head);
    resp.head_split = split;
}

/// `add_trailer` (`ngx_http_trailers_filter`, written by nginx's chunked
/// filter). When a trailer applies to the status, nginx sends an HTTP/1.1
/// body chunked (dropping its Content-Length; not for HEAD, 204 or 304)
/// and writes the trailer fields with non-empty values after the last
/// chunk. A body core already chunk-framed (an autoindex listing, a
/// compressed memory-cache variant) gets them after its last chunk; any
/// other body is framed here, and then the engine's compression filter
/// leaves it alone (nginx would compress it, then chunk it).
fn add_trailers(resp: &mut Response, ctx: &Ctx<'_>, safe: bool) {
    let applies = ctx.conf.add_trailers.iter().any(|t| safe || t.always);
    if !applies
        || resp.header_only
        || ctx.req.version < (1, 1)
        || resp.status < 200
        || !ctx.conf.conn.chunked_transfer_encoding
    {
        return;
    }
    let mut end = b"0\r\n".to_vec();
    for t in ctx.conf.add_trailers.iter().filter(|t| safe || t.always) {
        // nginx evaluates each trailer after the ones before it are in
        // the list: `$sent_trailer_*` sees them, `$sent_http_*` the head.
        let value = {
            let vars = VarCtx {
                sent: Some((resp.head.as_bytes(), &end[3..])),
                ..ctx.vars()
            };
            vars.expand_cow(&t.value).into_owned()
        };
        push_line(&mut end, t.name.as_bytes(), &value);
    }
    end.extend_from_slice(b"\r\n");
    if find_line(resp.head.as_bytes(), b"Transfer-Encoding").is_some() {
        return replace_last_chunk(&mut resp.body, &end);
    }
    let mut head = resp.head.as_bytes().to_vec();
    let mut split = resp.head_split.min(head.len());
    if let Some(r) = find_line(&head, b"Content-Length") {
        remove_or_replace(&mut head, &mut split, r, b"");
    }
    const CHUNKED: &[u8] = b"Transfer-Encoding: chunked\r\n";
    head.splice(split..split, CHUNKED.iter().copied());
    split += CHUNKED.len();
    let len = resp.body.len();
    let body = std::mem::replace(&mut resp.body, Body::Empty);
    let mut parts = Vec::with_capacity(4);
    if len > 0 {
        parts.push(Body::Shared(Arc::from(format!("{len:x}\r\n").into_bytes())));
        match body {
            Body::Parts(p) => parts.extend(p),
            b => parts.push(b),
        }
        end.splice(0..0, b"\r\n".iter().copied());
    }
    parts.push(Body::Shared(Arc::from(end)));
    resp.body = Body::Parts(parts);
    resp.head = HeadLines::Owned(head);
    resp.head_split = split;
    resp.content_length = None;
    resp.compressible = false;
}

/// Puts `end` (`0\r\n`, trailers, blank line) in place of the last chunk
/// of a body core chunk-framed.
fn replace_last_chunk(body: &mut Body, end: &[u8]) {
    let with = |chunks: &[u8]| -> Option<Arc<[u8]>> {
        let mut b = chunks.strip_suffix(LAST_CHUNK)?.to_vec();
        b.extend_from_slice(end);
        Some(Arc::from(b))
    };
    match body {
        Body::Shared(b) => {
            if let Some(nb) = with(b) {
                *b = nb;
            }
        }
        Body::Parts(parts) => {
            if let Some(last) = parts.last_mut()
                && let Body::Static(b) = last
                && let Some(nb) = with(b)
            {
                *last = Body::Shared(nb);
            }
        }
        _ => {}
    }
}

/// The end of a body chunked by core.
const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// `Name: value\r\n`.
/// Appends `name: value\r\n` to `out`; an empty value adds nothing.
fn push_line(out: &mut Vec<u8>, name: &[u8], value: &str) {
    if value.is_empty() {
        return;
    }
    out.reserve(name.len() + value.len() + 4);
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Puts `with` (whole lines, maybe none) where the line `r` was.
pub(crate) fn remove_or_replace(
    lines: &mut Vec<u8>,
    split: &mut usize,
    r: Range<usize>,
    with: &[u8],
) {
    if r.start < *split {
        *split = *split + with.len() - r.len();
    }
    lines.splice(r, with.iter().copied());
}

/// The value of field `name` (`_` for `-`, any case) in serialized
/// `lines` (`$sent_http_*`, `$sent_trailer_*`).
pub(crate) fn field_value<'a>(lines: &'a [u8], name: &str) -> Option<&'a str> {
    let mut at = 0;
    while at < lines.len() {
        let end = memchr::memchr(b'\n', &lines[at..]).map_or(lines.len(), |n| at + n + 1);
        let line = &lines[at..end];
        let n = name.len();
        if line.len() > n
            && line[n] == b':'
            && line[..n]
                .iter()
                .zip(name.bytes())
                .all(|(&a, b)| a.eq_ignore_ascii_case(&b) || (a == b'-' && b == b'_'))
        {
            let v = std::str::from_utf8(&line[n + 1..]).ok()?;
            return Some(v.trim_matches([' ', '\t', '\r', '\n']));
        }
        at = end;
    }
    None
}

/// The byte range of the line (CRLF included) whose field name is `name`.
pub(crate) fn find_line(lines: &[u8], name: &[u8]) -> Option<Range<usize>> {
    let mut at = 0;
    while at < lines.len() {
        // Lines end in CRLF, and a serialized head has no other LF.
        let end = memchr::memchr(b'\n', &lines[at..]).map_or(lines.len(), |n| at + n + 1);
        let line = &lines[at..end];
        if line.len() > name.len()
            && line[name.len()] == b':'
            && line[..name.len()].eq_ignore_ascii_case(name)
        {
            return Some(at..end);
        }
        at = end;
    }
    None
}

/// The value of the line at `r` (after `Name: `, before CRLF).
pub(crate) fn value_of(lines: &[u8], r: Range<usize>) -> &[u8] {
    let line = &lines[r];
    let colon = line.iter().position(|&c| c == b':').unwrap_or(0);
    line[colon + 1..]
        .strip_suffix(b"\r\n")
        .unwrap_or(&line[colon + 1..])
        .trim_ascii()
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

/// `Expires` and `Cache-Control` as `ngx_http_set_expires` writes them;
/// `lm`: the response's Last-Modified time.
fn push_expires(out: &mut Vec<u8>, e: &Expires, vars: &VarCtx<'_>, lm: Option<i64>, now: i64) {
    // nginx tests the configured time's sign (0 for a value with variables).
    let (e, conf_negative) = match e {
        Expires::Variable { modified, value } => {
            match parse_expires(&vars.expand(value), *modified) {
                Ok(e) => (e, false),
                Err(_) => return,
            }
        }
        Expires::Access(t) | Expires::Modified(t) | Expires::Daily(t) => (e.clone(), *t < 0),
        e => (e.clone(), false),
    };
    let (when, max_age) = match e {
        Expires::Off | Expires::Variable { .. } => return,
        Expires::Epoch => return push_pair(out, EPOCH_DATE, b"no-cache"),
        Expires::Max => return push_pair(out, MAX_DATE, MAX_AGE_MAX),
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
    let mut date = Vec::with_capacity(29);
    push_http_date(&mut date, when);
    let cc = if conf_negative || max_age < 0 {
        Cow::Borrowed("no-cache")
    } else {
        Cow::Owned(format!("max-age={max_age}"))
    };
    push_pair(out, &date, cc.as_bytes());
}

fn push_pair(out: &mut Vec<u8>, date: &[u8], cc: &[u8]) {
    out.extend_from_slice(b"Expires: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\nCache-Control: ");
    out.extend_from_slice(cc);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_by_name_ignoring_case() {
        let h = b"Content-Type: text/html\r\nETag: \"a\"\r\nAccept-Ranges: bytes\r\n";
        assert_eq!(find_line(h, b"etag"), Some(25..36));
        assert_eq!(value_of(h, 25..36), b"\"a\"");
        assert_eq!(find_line(h, b"Content"), None);
        assert_eq!(find_line(h, b"Accept-Ranges").map(|r| r.end), Some(h.len()));
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
