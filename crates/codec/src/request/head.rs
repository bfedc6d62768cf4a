//! Driver: request line, header lines, then the checks nginx makes in
//! `ngx_http_process_request_header` before a request reaches a location.

use super::header_line::{Scanned, scan_line};
use super::host::{host_part, validate_host};
use super::limits::BufferSim;
use super::line::{RequestLine, parse_line};
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
    let reach = sim.reach(start);
    let window = buf.get(..reach.min(buf.len())).unwrap_or(buf);
    let Some(line) = parse_line(window, start)? else {
        return if buf.len() >= reach {
            Err(BufferSim::error(true))
        } else {
            Ok(Parsed::Partial)
        };
    };
    sim.commit(start, line.end);
    apply_request_line(buf, &line, limits, req)?;

    let mut seen = Seen::default();
    let mut pos = line.end;
    loop {
        let reach = sim.reach(pos);
        let window = buf.get(..reach.min(buf.len())).unwrap_or(buf);
        let rest = window.get(pos..).unwrap_or(&[]);
        match scan_line(rest, limits)? {
            Scanned::Incomplete if buf.len() >= reach => return Err(BufferSim::error(false)),
            Scanned::Incomplete => return Ok(Parsed::Partial),
            Scanned::EndOfHead(n) => {
                let end = pos + n;
                finish(buf, end, req, &seen)?;
                return Ok(Parsed::Complete(end));
            }
            Scanned::Header {
                name,
                value,
                end,
                keep,
            } => {
                sim.commit(pos, pos + end);
                if keep {
                    let name = pos + name.start..pos + name.end;
                    let value = pos + value.start..pos + value.end;
                    on_header(buf, name.clone(), value.clone(), req, &mut seen)?;
                    req.names |= super::name_bit(buf.get(name.clone()).unwrap_or(&[]));
                    req.headers.push((name, value));
                }
                pos += end;
            }
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
) -> Result<(), HttpError> {
    let target = buf.get(line.target.clone()).unwrap_or(&[]);
    // nginx passes raw non-ASCII bytes through; Peregrine's accessors are
    // `str`, so a target that is not UTF-8 is refused (documented deviation).
    let Ok(text) = std::str::from_utf8(target) else {
        return Err(bad(K::InvalidUri));
    };
    req.target_text.push_str(text);
    req.method = line.method;
    req.method_span = line.method_span.clone();
    req.target = line.target.clone();
    req.request_line = line.line.clone();
    req.version = line.version;
    if let Some(h) = &line.host {
        if !validate_host(buf.get(h.clone()).unwrap_or(&[]), &mut req.host) {
            return Err(bad(K::InvalidHost));
        }
        req.has_host = true;
    }
    // Path ends at the first `?` or `#`; the query runs from a `?` that
    // comes before any `#` to the end of the target, as nginx's `$args`.
    let t0 = line.target.start;
    let p0 = line.path_start.unwrap_or(line.target.end);
    let rel = p0.saturating_sub(t0);
    let tail = target.get(rel..).unwrap_or(&[]);
    let path_len = memchr::memchr2(b'?', b'#', tail).unwrap_or(tail.len());
    let raw_path = tail.get(..path_len).unwrap_or(&[]);
    if tail.get(path_len) == Some(&b'?') {
        req.query = Some(p0 + path_len + 1..line.target.end);
    }
    if raw_path.is_empty() {
        req.path.clear();
        req.path.push('/');
    } else {
        // The path as a slice of the target's text (validated above): `?`,
        // `#` and the `/` it starts with are ASCII, so the slice is on
        // character boundaries.
        let normalized = match req.target_text.get(rel..rel + path_len) {
            Some(text) => uri::normalize_str(text, &mut req.path, limits.merge_slashes),
            None => uri::normalize_with(raw_path, &mut req.path, limits.merge_slashes),
        };
        normalized.map_err(|_| bad(K::InvalidUri))?;
    }
    Ok(())
}

/// Headers nginx refuses to see twice (`ngx_http_process_unique_header_line`).
/// Keep in step with the length arm of `on_header` that tests UNIQUE.
const _: () = {
    let mut i = 0;
    while i < UNIQUE.len() {
        let n = UNIQUE[i].len();
        assert!(n == 8 || n == 13 || n == 17 || n == 19);
        i += 1;
    }
};

const UNIQUE: [&str; 7] = [
    "if-modified-since",
    "if-unmodified-since",
    "if-match",
    "if-none-match",
    "content-range",
    "if-range",
    "authorization",
];

fn on_header(
    buf: &[u8],
    name: Range<usize>,
    value: Range<usize>,
    req: &mut Request,
    seen: &mut Seen,
) -> Result<(), HttpError> {
    let n = buf.get(name).unwrap_or(&[]);
    let v = buf.get(value.clone()).unwrap_or(&[]);
    let is = |s: &str| n.eq_ignore_ascii_case(s.as_bytes());
    let once = |slot: &Option<Range<usize>>| {
        if slot.is_some() {
            Err(bad(K::DuplicateHeader))
        } else {
            Ok(Some(value.clone()))
        }
    };
    match n.len() {
        4 if is("host") => {
            if seen.host {
                return Err(bad(K::DuplicateHeader));
            }
            seen.host = true;
            // Validated even when an absolute-form target already set the
            // host, which then wins (ngx_http_process_host).
            let ok = if req.has_host {
                host_part(v).is_some()
            } else {
                validate_host(v, &mut req.host)
            };
            if !ok {
                return Err(bad(K::InvalidHost));
            }
            req.has_host = true;
        }
        10 if is("connection") => {
            // nginx matches substrings, "close" first (ngx_http_process_connection).
            if contains_ci(v, b"close") {
                seen.connection = Some(ConnectionType::Close);
            } else if contains_ci(v, b"keep-alive") {
                seen.connection = Some(ConnectionType::KeepAlive);
            }
        }
        14 if is("content-length") => seen.content_length = once(&seen.content_length)?,
        17 if is("transfer-encoding") => seen.transfer_encoding = once(&seen.transfer_encoding)?,
        6 if is("expect") => seen.expect = once(&seen.expect)?,
        // The lengths of UNIQUE's names: most headers are none of them.
        8 | 13 | 17 | 19 => {
            if let Some(i) = UNIQUE.iter().position(|u| is(u)) {
                let bit = 1u16 << i;
                if seen.unique & bit != 0 {
                    return Err(bad(K::DuplicateHeader));
                }
                seen.unique |= bit;
            }
        }
        _ => {}
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
    req.buf.extend_from_slice(buf.get(..end).unwrap_or(buf));
    Ok(())
}
