//! Driver: request line, header lines, then the checks nginx makes in
//! `ngx_http_process_request_header` before a request reaches a location.

use super::header_line::{Scanned, scan_line};
use super::host::push_lowercase;
use super::known::{Kind, kind_of};
use super::limits::BufferSim;
use super::line::{RequestLine, parse_line, parse_line_general};
use super::{BodyKind, Limits, Parsed, Request};
use crate::{HttpError, HttpErrorKind as K, Method, Version, uri};
use std::ops::Range;

fn bad(kind: K) -> HttpError {
    HttpError::new(400, kind)
}

/// Parses the request head at the start of `buf` into `req` (cleared first,
/// capacity kept). Call again with the grown buffer after `Partial`; the
/// result for a prefix is `Partial` or the same as for the whole head, and
/// errors come as early as nginx would send them.
pub fn parse_request(buf: &[u8], limits: &Limits, req: &mut Request) -> Result<Parsed, HttpError> {
    req.clear();
    let mut sim = BufferSim::new(limits, 0);
    // nginx skips empty lines before the request line (RFC 9112 §2.2 too).
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    sim.skip_empty(start);
    let Some(line) = request_line(buf, start, &mut sim)? else {
        return Ok(Parsed::Partial);
    };
    let mut seen = Seen::default();
    apply_request_line(buf, &line, limits, req, &mut seen)?;

    let mut pos = line.end;
    loop {
        match next_line(buf, pos, limits, &mut sim)? {
            None => return Ok(Parsed::Partial),
            Some((Scanned::Incomplete, _)) => return Err(BufferSim::error(false)),
            Some((Scanned::EndOfHead(n), _)) => {
                // `max_headers`, checked once the head is in (nginx checks
                // each line as it comes: the status is the same, 494 sent
                // as 400; a head too large fails on its buffers first).
                if req.headers.len() > limits.max_headers {
                    return Err(HttpError::new(494, K::TooManyHeaders));
                }
                let end = pos + n;
                finish(buf, end, req, &seen)?;
                return Ok(Parsed::Complete(end));
            }
            Some((
                Scanned::Header {
                    name,
                    value,
                    end,
                    keep,
                    known,
                },
                line,
            )) => {
                if keep {
                    let value = pos + value.start..pos + value.end;
                    let (kind, bit) = match known {
                        Some(k) => (k.kind, k.bit),
                        None => kind_and_bit(line.get(name.clone()).unwrap_or(&[])),
                    };
                    on_header(kind, buf, value.clone(), req, &mut seen)?;
                    req.names |= bit;
                    req.headers.push((pos + name.start..pos + name.end, value));
                }
                pos += end;
            }
        }
    }
}

/// A header name the scanner did not recognise as it went: its kind and
/// name bit, worked out from the name.
#[inline(never)]
fn kind_and_bit(name: &[u8]) -> (Kind, u64) {
    (kind_of(name), super::name_bit(name))
}

/// Reads the request line at `start` as [`next_line`] reads header lines:
/// in the buffer it starts in first (no bookkeeping for a line that ends
/// there), then within the reach nginx's buffers give it. `None` when more
/// bytes may still complete it.
#[inline(always)]
fn request_line(
    buf: &[u8],
    start: usize,
    sim: &mut BufferSim,
) -> Result<Option<RequestLine>, HttpError> {
    let first = buf.get(..sim.buffer_end().min(buf.len())).unwrap_or(buf);
    if let Some(line) = parse_line(first, start)? {
        return Ok(Some(line));
    }
    let reach = sim.reach(start);
    let window = buf.get(..reach.min(buf.len())).unwrap_or(buf);
    match parse_line_general(window, start)? {
        Some(line) => {
            sim.commit(start, line.end);
            Ok(Some(line))
        }
        None if buf.len() >= reach => Err(BufferSim::error(true)),
        None => Ok(None),
    }
}

/// Scans the header line at `pos` within the reach nginx's buffers give it:
/// `None` when more bytes may still complete it, `Some(Incomplete)` when
/// they may not (494).
///
/// A line that ends inside the buffer it starts in needs no bookkeeping
/// (`reach(pos)` is at least that buffer's end, and committing such a line
/// changes nothing), so it is scanned in that buffer first: for a head that
/// fits `client_header_buffer_size`, that is every line. Only a line that
/// does not end there is scanned again with its full reach; the scanner
/// gives a prefix the same answer as the whole or `Incomplete`, so the two
/// scans cannot disagree.
///
/// Also returns the bytes from `pos` the scan ran on, which its ranges
/// index.
#[inline(always)]
fn next_line<'a>(
    buf: &'a [u8],
    pos: usize,
    limits: &Limits,
    sim: &mut BufferSim,
) -> Result<Option<(Scanned, &'a [u8])>, HttpError> {
    let first = buf.get(pos..sim.buffer_end().min(buf.len())).unwrap_or(&[]);
    match scan_line(first, limits)? {
        Scanned::Incomplete => {}
        done => return Ok(Some((done, first))),
    }
    let reach = sim.reach(pos);
    let window = buf.get(pos..reach.min(buf.len())).unwrap_or(&[]);
    match scan_line(window, limits)? {
        Scanned::Incomplete if buf.len() >= reach => Ok(Some((Scanned::Incomplete, window))),
        Scanned::Incomplete => Ok(None),
        done => {
            if let Scanned::Header { end, .. } = done {
                sim.commit(pos, pos + end);
            }
            Ok(Some((done, window)))
        }
    }
}

/// How many leading bytes of `buf` the caller may drop before calling
/// [`parse_request`] again: whole `client_header_buffer_size` blocks of the
/// empty lines that may precede a request line. nginx rewinds its buffer
/// over exactly these, so a flood of CRLFs is unlimited but costs no memory;
/// dropping them keeps the engine's buffer bounded by
/// `header_buffer_size + count * size` without changing any answer.
pub fn discardable_prefix(buf: &[u8], limits: &Limits) -> usize {
    let empty = buf
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .count();
    let block = limits.header_buffer_size.max(1);
    empty / block * block
}

#[derive(Clone, Copy)]
enum ConnectionType {
    Close,
    KeepAlive,
}

/// Header handlers that must see the whole head before deciding.
#[derive(Default)]
struct Seen {
    host: bool,
    /// The host `req.host_span` points at has uppercase letters.
    host_upper: bool,
    content_length: Option<Range<usize>>,
    transfer_encoding: Option<Range<usize>>,
    expect: Option<Range<usize>>,
    /// nginx's `connection_type`, set by the last Connection header that
    /// mentions `close` or `keep-alive`.
    connection: Option<ConnectionType>,
    /// Bit per header nginx handles with `ngx_http_process_unique_header_line`.
    unique: u16,
}

fn apply_request_line(
    buf: &[u8],
    line: &RequestLine,
    limits: &Limits,
    req: &mut Request,
    seen: &mut Seen,
) -> Result<(), HttpError> {
    // nginx passes raw non-ASCII bytes through; Peregrine's accessors are
    // `str`, so a target that is not UTF-8 is refused (documented deviation).
    // The line parser noted whether any byte is ≥ 0x80: ASCII needs no check.
    if line.scan.non_ascii {
        let target = buf.get(line.target.clone()).unwrap_or(&[]);
        if std::str::from_utf8(target).is_err() {
            return Err(bad(K::InvalidUri));
        }
    }
    req.method = line.method;
    req.method_span = line.method_span.clone();
    req.target = line.target.clone();
    req.request_line = line.line.clone();
    req.version = line.version;
    if let Some(h) = &line.host {
        let Some(part) = req.host_memo.host_part(buf.get(h.clone()).unwrap_or(&[])) else {
            return Err(bad(K::InvalidHost));
        };
        req.host_span = Some(h.start..h.start + part.len);
        seen.host_upper = part.has_upper;
        req.has_host = true;
    }
    // Path ends at the first `?` or `#`; the query runs from a `?` that
    // comes before any `#` to the next `#`, as nginx's `$args` (a `#` makes
    // the URI complex and `ngx_http_parse_complex_uri` ends the args there;
    // nginx 1.22 kept the fragment in them).
    let p0 = line.path_start.unwrap_or(line.target.end);
    let p1 = line.scan.path_end;
    if buf.get(p1) == Some(&b'?') {
        let query = buf.get(p1 + 1..line.target.end).unwrap_or(&[]);
        let end = query
            .iter()
            .position(|&b| b == b'#')
            .map_or(line.target.end, |n| p1 + 1 + n);
        req.query = Some(p1 + 1..end);
    }
    let s = &line.scan;
    if p1 <= p0 {
        req.path.push('/');
    } else if !(s.path_escapes || s.path_double_slash && limits.merge_slashes) {
        // Decoding and resolution would leave every byte in place (the
        // line parser's pass saw no `%`, no dot segment, no `//` to merge;
        // test `plain_path_shortcut_agrees_with_the_normaliser`).
        req.path_span = Some(p0..p1);
    } else {
        let raw_path = buf.get(p0..p1).unwrap_or(&[]);
        if uri::normalize_with(raw_path, &mut req.path, limits.merge_slashes).is_err() {
            // A refused URI leaves no path (nginx logs `$uri` empty).
            req.path.clear();
            return Err(bad(K::InvalidUri));
        }
    }
    Ok(())
}

/// A kept header of this kind; `value` is its value's span in `buf`.
fn on_header(
    kind: Kind,
    buf: &[u8],
    value: Range<usize>,
    req: &mut Request,
    seen: &mut Seen,
) -> Result<(), HttpError> {
    // Sliced only by the handlers that read it: most headers have none.
    let v = || buf.get(value.clone()).unwrap_or(&[]);
    let once = |slot: &Option<Range<usize>>| {
        if slot.is_some() {
            Err(bad(K::DuplicateHeader))
        } else {
            Ok(Some(value.clone()))
        }
    };
    match kind {
        Kind::Host => {
            if seen.host {
                return Err(bad(K::DuplicateHeader));
            }
            seen.host = true;
            // Validated even when an absolute-form target already set the
            // host, which then wins (ngx_http_process_host).
            let Some(part) = req.host_memo.host_part(v()) else {
                return Err(bad(K::InvalidHost));
            };
            if !req.has_host {
                req.host_span = Some(value.start..value.start + part.len);
                seen.host_upper = part.has_upper;
                req.has_host = true;
            }
        }
        Kind::Connection => {
            // nginx matches substrings, "close" first (ngx_http_process_connection);
            // the usual whole value "keep-alive" contains no "close".
            let v = v();
            if v.eq_ignore_ascii_case(b"keep-alive") {
                seen.connection = Some(ConnectionType::KeepAlive);
            } else if contains_ci(v, b"close") {
                seen.connection = Some(ConnectionType::Close);
            } else if contains_ci(v, b"keep-alive") {
                seen.connection = Some(ConnectionType::KeepAlive);
            }
        }
        Kind::ContentLength => seen.content_length = once(&seen.content_length)?,
        Kind::TransferEncoding => seen.transfer_encoding = once(&seen.transfer_encoding)?,
        Kind::Expect => seen.expect = once(&seen.expect)?,
        Kind::Unique(i) => {
            let bit = 1u16 << i;
            if seen.unique & bit != 0 {
                return Err(bad(K::DuplicateHeader));
            }
            seen.unique |= bit;
        }
        Kind::Other => {}
    }
    Ok(())
}

fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    // The whole value is the common case.
    hay.eq_ignore_ascii_case(needle)
        || hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// nginx's `ngx_atoof`: ASCII digits only, no sign, fits in `off_t`.
fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in v {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    (n <= i64::MAX as u64).then_some(n)
}

/// The checks of `ngx_http_process_request_header`, in nginx's order.
fn finish(buf: &[u8], end: usize, req: &mut Request, seen: &Seen) -> Result<(), HttpError> {
    if !seen.host && req.version >= Version::Http11 {
        return Err(bad(K::MissingHost));
    }
    let value = |r: &Option<Range<usize>>| r.as_ref().and_then(|r| buf.get(r.clone()));
    let length = match value(&seen.content_length) {
        Some(v) => Some(parse_length(v).ok_or(bad(K::InvalidContentLength))?),
        None => None,
    };
    req.body_kind = match (value(&seen.transfer_encoding), length) {
        (Some(_), _) if req.version < Version::Http11 => {
            return Err(bad(K::TransferEncodingHttp10));
        }
        (Some(te), len) if te.eq_ignore_ascii_case(b"chunked") => {
            if len.is_some() {
                return Err(bad(K::LengthAndChunked));
            }
            BodyKind::Chunked
        }
        (Some(_), _) => return Err(HttpError::new(501, K::UnknownTransferEncoding)),
        (None, Some(n)) => BodyKind::Length(n),
        (None, None) => BodyKind::None,
    };
    if matches!(req.method, Method::Connect | Method::Trace) {
        return Err(HttpError::new(405, K::MethodNotAllowed));
    }
    req.keep_alive = match seen.connection {
        Some(ConnectionType::Close) => false,
        Some(ConnectionType::KeepAlive) => true,
        None => req.version >= Version::Http11,
    };
    req.expect_continue = req.version >= Version::Http11
        && value(&seen.expect).is_some_and(|v| v.eq_ignore_ascii_case(b"100-continue"));
    req.head_len = end;
    keep_head(buf.get(..end).unwrap_or(buf), req, seen);
    Ok(())
}

/// Copies the head into `req` and settles where `host()` reads from.
/// One UTF-8 check of the whole head replaces one per `&str` accessor
/// call; a head with a non-UTF-8 header line (rare) keeps its bytes too.
fn keep_head(head: &[u8], req: &mut Request, seen: &Seen) {
    match std::str::from_utf8(head) {
        Ok(text) => req.text.push_str(text),
        Err(e) => {
            // The valid prefix covers the request line (its target was
            // checked), so every span the `&str` accessors use but header
            // ones; `Request::text` falls back to `raw` for those.
            let valid = head.get(..e.valid_up_to()).unwrap_or(&[]);
            req.text.push_str(std::str::from_utf8(valid).unwrap_or(""));
            req.raw.extend_from_slice(head);
        }
    }
    if let Some(r) = req.host_span.clone()
        && (seen.host_upper || r.end > req.text.len())
    {
        let from_raw = || std::str::from_utf8(req.raw.get(r.clone())?).ok();
        let host = req.text.get(r.clone()).or_else(from_raw).unwrap_or("");
        push_lowercase(host, &mut req.host);
        req.host_span = None;
    }
}
