//! The upstream side of HTTP/1: a backend's response head read as nginx's
//! proxy reads it (`ngx_http_parse_status_line`,
//! `ngx_http_proxy_process_status_line`, `ngx_http_proxy_process_header`
//! and the `headers_in` handlers of `ngx_http_upstream.c`), and the
//! framing of the body that follows (`ngx_http_proxy_input_filter_init`).
//!
//! A backend is trusted less than nginx trusts a client in one respect:
//! anything that could make two parsers disagree on where the body ends
//! (two `Content-Length`s, `Content-Length` with `Transfer-Encoding`, a
//! coding other than chunked) is refused, and the proxy answers 502. In
//! others it is trusted more, as nginx trusts it: underscores and other
//! invalid name bytes are kept, a status line that is not HTTP/1.x makes
//! the whole answer an HTTP/0.9 body.
//!
//! Pure over the bytes given: [`parse_head`] scans from the start of the
//! buffer each time it is called (a head is bounded by
//! `proxy_buffer_size`, a few KiB, and usually arrives in one read), so
//! the caller keeps no parser state between reads.

use std::ops::Range;

use crate::request::Limits;
use crate::request::header_line::{Scanned, scan_line};

/// What the proxy logs and answers 502 for (nginx's
/// `NGX_HTTP_UPSTREAM_INVALID_HEADER`), in nginx's words (the caller adds
/// ` while reading response header from upstream` and the context).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamHeadError {
    /// The head did not fit in `proxy_buffer_size`.
    #[error("upstream sent too big header")]
    TooBig,
    /// `upstream sent invalid header: "NAME\xNN..."`: the line up to the
    /// byte the parser stopped at, and that byte.
    #[error("upstream sent invalid header: \"{}\\x{:02x}...\"", String::from_utf8_lossy(.0), .1)]
    InvalidHeader(Vec<u8>, u8),
    #[error("upstream sent duplicate header line: \"{0}\", previous value: \"{1}\"")]
    Duplicate(String, String),
    #[error("upstream sent \"Content-Length\" and \"Transfer-Encoding\" headers at the same time")]
    LengthAndEncoding,
    #[error("upstream sent invalid \"Content-Length\" header: \"{0}\"")]
    InvalidLength(String),
    #[error("upstream sent unknown \"Transfer-Encoding\": \"{0}\"")]
    UnknownEncoding(String),
    #[error("upstream sent HTTP/1.0 response with early hints")]
    EarlyHints10,
}

/// A parsed response head; ranges index the buffer given to [`parse_head`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamHead {
    /// `major * 1000 + minor` as nginx counts (1001 for HTTP/1.1); 9 for
    /// an HTTP/0.9 answer (no status line: the bytes are all body).
    pub version: u32,
    pub status: u16,
    /// The status line from the code on (`200 OK`), as nginx keeps it to
    /// send on.
    pub status_line: Range<usize>,
    /// Header lines in order: (name, value).
    pub headers: Vec<(Range<usize>, Range<usize>)>,
    pub content_length: Option<u64>,
    pub chunked: bool,
    /// `Connection: close`, an HTTP/1.0 answer, or an HTTP/0.9 one: the
    /// connection cannot carry another request.
    pub connection_close: bool,
    pub has_server: bool,
    pub has_date: bool,
    /// Bytes of head: the body starts here.
    pub len: usize,
}

/// How the body after the head ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// 204, 304, an answer to HEAD: nothing follows.
    None,
    Length(u64),
    Chunked,
    /// Neither length nor chunked: the body ends when the backend closes
    /// (the connection is not reused).
    UntilClose,
}

/// The outcome of [`parse_head`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// More bytes are needed (the buffer holds less than a whole head).
    Partial,
    Head(UpstreamHead),
    /// No `HTTP/` status line: nginx logs `upstream sent no valid HTTP/1.0
    /// header` (error level) and passes the bytes on as an HTTP/0.9 body
    /// with status 200.
    Http09(UpstreamHead),
}

/// 103 Early Hints: a head that precedes the real one (nginx 1.29
/// `early_hints`); the caller forwards or drops it and parses again after
/// `len`.
pub const EARLY_HINTS: u16 = 103;

/// Header-line rules for upstream heads: nginx calls its header parser
/// with `allow_underscores` and keeps lines with invalid name bytes.
fn upstream_limits() -> Limits {
    Limits {
        underscores_in_headers: true,
        ignore_invalid_headers: false,
        ..Limits::default()
    }
}

/// Parses the response head at the start of `buf`, which holds at most
/// `max` bytes of it (`proxy_buffer_size`).
pub fn parse_head(buf: &[u8], max: usize) -> Result<Parsed, UpstreamHeadError> {
    let window = &buf[..buf.len().min(max)];
    let mut head = UpstreamHead::default();
    let pos = match status_line(window, &mut head) {
        Line::Partial if buf.len() >= max => return Err(UpstreamHeadError::TooBig),
        Line::Partial => return Ok(Parsed::Partial),
        Line::Invalid => return Ok(Parsed::Http09(http09())),
        Line::Done(pos) => pos,
    };
    if head.version < 1001 {
        if head.status == EARLY_HINTS {
            return Err(UpstreamHeadError::EarlyHints10);
        }
        head.connection_close = true;
    }
    match header_lines(window, pos, &mut head)? {
        Some(len) => head.len = len,
        None if buf.len() >= max => return Err(UpstreamHeadError::TooBig),
        None => return Ok(Parsed::Partial),
    }
    if head.chunked {
        head.content_length = None;
    }
    Ok(Parsed::Head(head))
}

fn http09() -> UpstreamHead {
    UpstreamHead {
        version: 9,
        status: 200,
        connection_close: true,
        ..UpstreamHead::default()
    }
}

enum Line {
    Partial,
    Invalid,
    Done(usize),
}

/// `HTTP/major.minor SP NNN [SP|. text] CRLF`, decided byte by byte as
/// `ngx_http_parse_status_line` decides it (so a line is refused as soon
/// as a byte makes it invalid, before its end arrives): versions of up to
/// three digits each, the major's first digit 1-9, spaces before the code
/// skipped (before and among the code's digits), `403.1` (IIS) accepted, a bare LF accepted, a CR only just
/// before the LF. One match over (state, byte), as nginx's one switch: the
/// whole grammar is read in one place.
fn status_line(b: &[u8], head: &mut UpstreamHead) -> Line {
    let mut st = Sl::Prefix(0);
    let (mut major, mut code_start, mut cr) = (0u32, 0usize, None);
    for (i, &c) in b.iter().enumerate() {
        let digit = u32::from(c.wrapping_sub(b'0'));
        st = match (st, c) {
            (Sl::Prefix(4), b'/') => Sl::Major(None),
            (Sl::Prefix(n), _) if b"HTTP"[n..].first() == Some(&c) => Sl::Prefix(n + 1),
            (Sl::Major(None), b'1'..=b'9') => Sl::Major(Some(digit)),
            (Sl::Major(Some(m)), b'.') => {
                major = m;
                Sl::Minor(None)
            }
            (Sl::Major(Some(m)), b'0'..=b'9') if m <= 99 => Sl::Major(Some(m * 10 + digit)),
            (Sl::Minor(None), b'0'..=b'9') => Sl::Minor(Some(digit)),
            (Sl::Minor(Some(m)), b' ') => {
                head.version = major * 1000 + m;
                Sl::Code(0, 0)
            }
            (Sl::Minor(Some(m)), b'0'..=b'9') if m <= 99 => Sl::Minor(Some(m * 10 + digit)),
            // nginx skips spaces anywhere among the code's digits.
            (Sl::Code(v, n), b' ') => Sl::Code(v, n),
            (Sl::Code(v, n), b'0'..=b'9') => {
                let v = v * 10 + digit as u16;
                if n == 2 {
                    head.status = v;
                    // nginx's `status->start`: two bytes before the last
                    // digit (the code itself, unless spaces split it).
                    code_start = i - 2;
                    Sl::AfterCode
                } else {
                    Sl::Code(v, n + 1)
                }
            }
            (Sl::AfterCode, b' ' | b'.') => Sl::Text,
            (Sl::AfterCode | Sl::Text, b'\r') => {
                cr = Some(i);
                Sl::Cr
            }
            (Sl::AfterCode | Sl::Text | Sl::Cr, b'\n') => {
                head.status_line = code_start..cr.unwrap_or(i);
                return Line::Done(i + 1);
            }
            (Sl::Text, _) => Sl::Text,
            _ => return Line::Invalid,
        };
    }
    Line::Partial
}

/// The states of [`status_line`] (nginx's `sw_*` of the same function).
#[derive(Clone, Copy, PartialEq)]
enum Sl {
    /// `n` bytes of `HTTP` matched (4: expecting the `/`).
    Prefix(usize),
    /// The major version's digits so far (none yet: the first must be 1-9).
    Major(Option<u32>),
    Minor(Option<u32>),
    /// The code's value and digits so far.
    Code(u16, u8),
    AfterCode,
    Text,
    /// A CR: only the LF may follow.
    Cr,
}

/// The header lines from `pos`: the index past the empty line, or `None`
/// when incomplete.
fn header_lines(
    b: &[u8],
    mut pos: usize,
    head: &mut UpstreamHead,
) -> Result<Option<usize>, UpstreamHeadError> {
    let limits = upstream_limits();
    loop {
        let rest = &b[pos..];
        match scan_line(rest, &limits) {
            Ok(Scanned::Incomplete) => return Ok(None),
            Ok(Scanned::EndOfHead(n)) => return Ok(Some(pos + n)),
            Ok(Scanned::Header {
                name, value, end, ..
            }) => {
                let (name, value) = (
                    pos + name.start..pos + name.end,
                    pos + value.start..pos + value.end,
                );
                known_header(b, &name, &value, head)?;
                head.headers.push((name, value));
                pos += end;
            }
            Err(_) => return Err(invalid_line(rest)),
        }
    }
}

/// nginx's message for a line its parser refused: the line up to the byte
/// it stopped at (a control byte in the name, a NUL, a CR not before the
/// LF), and that byte.
fn invalid_line(line: &[u8]) -> UpstreamHeadError {
    let colon = line.iter().position(|&c| c == b':').unwrap_or(line.len());
    let stop = line
        .iter()
        .enumerate()
        .position(|(i, &c)| {
            c == 0
                || (i < colon && (c <= b' ' || c == 0x7f) && !matches!(c, b'\r' | b'\n'))
                || (c == b'\r' && !matches!(line.get(i + 1), Some(b'\r' | b'\n')))
                || (i == 0 && c == b':')
        })
        .unwrap_or(0);
    UpstreamHeadError::InvalidHeader(line[..stop].to_vec(), line.get(stop).copied().unwrap_or(0))
}

/// The headers whose handlers decide framing and reuse.
fn known_header(
    b: &[u8],
    name: &Range<usize>,
    value: &Range<usize>,
    head: &mut UpstreamHead,
) -> Result<(), UpstreamHeadError> {
    let (n, v) = (&b[name.clone()], &b[value.clone()]);
    let line = || {
        format!(
            "{}: {}",
            String::from_utf8_lossy(n),
            String::from_utf8_lossy(v)
        )
    };
    let previous = |head: &UpstreamHead, want: &[u8]| {
        let (pn, pv) = head
            .headers
            .iter()
            .find(|(hn, _)| b[hn.clone()].eq_ignore_ascii_case(want))
            .cloned()
            .unwrap_or_default();
        format!(
            "{}: {}",
            String::from_utf8_lossy(&b[pn]),
            String::from_utf8_lossy(&b[pv])
        )
    };
    if n.eq_ignore_ascii_case(b"content-length") {
        if head.content_length.is_some() {
            return Err(UpstreamHeadError::Duplicate(line(), previous(head, n)));
        }
        if head.chunked {
            return Err(UpstreamHeadError::LengthAndEncoding);
        }
        head.content_length =
            Some(parse_length(v).ok_or_else(|| UpstreamHeadError::InvalidLength(line()))?);
    } else if n.eq_ignore_ascii_case(b"transfer-encoding") {
        if head.chunked {
            return Err(UpstreamHeadError::Duplicate(line(), previous(head, n)));
        }
        if head.content_length.is_some() {
            return Err(UpstreamHeadError::LengthAndEncoding);
        }
        if !v.eq_ignore_ascii_case(b"chunked") {
            return Err(UpstreamHeadError::UnknownEncoding(
                String::from_utf8_lossy(v).into_owned(),
            ));
        }
        head.chunked = true;
    } else if n.eq_ignore_ascii_case(b"connection") {
        if contains_ignore_case(v, b"close") {
            head.connection_close = true;
        }
    } else if n.eq_ignore_ascii_case(b"server") {
        head.has_server = true;
    } else if n.eq_ignore_ascii_case(b"date") {
        head.has_date = true;
    }
    Ok(())
}

/// `ngx_atoof`: decimal digits only, no sign, no spaces, within `i64`.
fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = std::str::from_utf8(v).ok()?.parse().ok()?;
    (n <= i64::MAX as u64).then_some(n)
}

/// nginx looks for `close` anywhere in the value (`ngx_strlcasestrn`).
fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

impl UpstreamHead {
    /// How the body ends (`ngx_http_proxy_input_filter_init`);
    /// `head_request`: the request sent upstream was HEAD.
    pub fn framing(&self, head_request: bool) -> Framing {
        if self.status == 204 || self.status == 304 || head_request {
            Framing::None
        } else if self.chunked {
            Framing::Chunked
        } else {
            match self.content_length {
                Some(n) => Framing::Length(n),
                None => Framing::UntilClose,
            }
        }
    }

    /// Whether the connection may carry another request once the body
    /// (by [`Self::framing`]) has been read whole.
    pub fn reusable(&self, head_request: bool) -> bool {
        !self.connection_close
            && self.status != 101
            && self.framing(head_request) != Framing::UntilClose
    }
}

#[cfg(test)]
mod tests;
