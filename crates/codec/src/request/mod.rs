//! Request-head parsing: request line, header lines, nginx's buffer limits
//! and the semantic checks nginx applies before a request reaches a location.
//!
//! The grammar is hand-written rather than delegated to `httparse`: nginx's
//! answers depend on details httparse folds into one error or decides
//! differently (HTTP/1.2+ is accepted as 1.1, HTTP/2.0 is 505, a header name
//! with `_` or `@` is skipped rather than fatal, control bytes other than NUL
//! are allowed in values, request lines may use bare LF). One parser that
//! decides all of it avoids two parsers disagreeing, which is how request
//! smuggling starts. A differential test (`tests/nginx_differential.rs`)
//! replays mutated heads against the real nginx.
//!
//! Engine protocol: after each read, drop [`discardable_prefix`] bytes, call
//! [`parse_request`] on everything buffered; `Partial` → read more (the
//! parser itself fails with 414/494 before the buffer can exceed
//! `header_buffer_size + count * size`); `Complete(n)` → the body (see
//! [`crate::BodyDecoder`]) or the next pipelined request starts at `n`;
//! `Err(e)` → answer `e.status`'s page and close. EOF with a partial head
//! closes silently, as nginx does.

mod head;
pub(crate) mod header_line;
mod host;
mod known;
mod limits;
mod line;
#[cfg(test)]
mod tests;

/// xorshift64 for the randomised agreement tests (fast paths against the
/// general parser): fixed seeds, so a failure repeats.
#[cfg(test)]
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> usize {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    }
}

use crate::{Method, Version};
use std::ops::Range;

pub use head::{discardable_prefix, parse_request};

/// Buffer limits that bound a request head, as nginx's directives set them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `client_header_buffer_size` (nginx default 1k): the first buffer a head
    /// is read into. A head that fits in it is never size-checked further.
    pub header_buffer_size: usize,
    /// `large_client_header_buffers` (count, size), nginx default (4, 8k): the
    /// request line and each header line must fit in one of them; at most
    /// `count` are used for one head.
    pub large_header_buffers: (usize, usize),
    /// `underscores_in_headers` (default off): when off, a header name with
    /// `_` is invalid (and then skipped if `ignore_invalid_headers`).
    pub underscores_in_headers: bool,
    /// `ignore_invalid_headers` (default on): header lines whose name has
    /// characters outside `[A-Za-z0-9-]` are skipped; when off they are kept.
    pub ignore_invalid_headers: bool,
    /// `merge_slashes` (default on): `//` in the path collapses to `/`.
    pub merge_slashes: bool,
    /// `max_headers` (nginx 1.29, default [`DEFAULT_MAX_HEADERS`]): header
    /// lines kept beyond this many make the request fail with 494 (sent as
    /// 400), as `ngx_http_process_request_headers` does.
    pub max_headers: usize,
}

/// nginx's default `max_headers` (`ngx_http_core_merge_srv_conf`).
pub const DEFAULT_MAX_HEADERS: usize = 1000;

/// nginx's default `client_header_buffer_size`.
pub const DEFAULT_HEADER_BUFFER_SIZE: usize = 1024;
/// nginx's default `large_client_header_buffers 4 8k`.
pub const DEFAULT_LARGE_HEADER_BUFFERS: (usize, usize) = (4, 8192);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_buffer_size: DEFAULT_HEADER_BUFFER_SIZE,
            large_header_buffers: DEFAULT_LARGE_HEADER_BUFFERS,
            underscores_in_headers: false,
            ignore_invalid_headers: true,
            merge_slashes: true,
            max_headers: DEFAULT_MAX_HEADERS,
        }
    }
}

/// How the request body is delimited (RFC 9112 §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// No body (no Content-Length, no Transfer-Encoding, or Content-Length: 0
    /// is reported as `Length(0)`).
    None,
    Length(u64),
    Chunked,
}

/// Outcome of [`parse_request`] on the bytes received so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// The head is complete; this many bytes of the buffer belong to it (the
    /// body or a pipelined request starts right after).
    Complete(usize),
    /// More bytes are needed.
    Partial,
}

/// A parsed request head. Reusable: [`parse_request`] clears and refills it,
/// keeping capacity, so steady state allocates nothing.
#[derive(Clone, Debug)]
pub struct Request {
    /// The head (from the buffer's start through the final empty line) as
    /// text, when all of it is UTF-8 — nearly always: every span indexes it,
    /// and the `&str` accessors slice it without validating again. When a
    /// header line is not UTF-8 (a Latin-1 value, say), it holds the
    /// longest valid prefix, which covers the request line (its target was
    /// checked) and so every span the `&str` accessors use but header ones.
    pub(crate) text: String,
    /// Copy of the head bytes when it is not all UTF-8; empty otherwise.
    pub(crate) raw: Vec<u8>,
    pub(crate) method: Method,
    pub(crate) method_span: Range<usize>,
    pub(crate) target: Range<usize>,
    pub(crate) query: Option<Range<usize>>,
    pub(crate) request_line: Range<usize>,
    pub(crate) version: Version,
    /// (name, value) spans of the kept header lines, in order.
    pub(crate) headers: Vec<(Range<usize>, Range<usize>)>,
    /// One bit per header name present ([`name_bit`]): most lookups are
    /// for headers a request does not have (`Range`, `If-*`, `Via`...), and
    /// the bit answers those without comparing every name.
    pub(crate) names: u64,
    /// The path as a span of the target when the target's path is its own
    /// normal form (no `%`, no dot segment, no `//` to merge): nearly every
    /// request, which then copies nothing. Otherwise `path` holds it.
    pub(crate) path_span: Option<Range<usize>>,
    /// Normalised path (see [`crate::uri::normalize`]) when `path_span` is
    /// `None`.
    pub(crate) path: String,
    /// The host (port and trailing dot stripped) as a span of the head, when
    /// it needs no lowercasing; otherwise `host` holds it.
    pub(crate) host_span: Option<Range<usize>>,
    /// Lowercased host without port or trailing dot, when `host_span` is
    /// `None`.
    pub(crate) host: String,
    pub(crate) has_host: bool,
    pub(crate) keep_alive: bool,
    pub(crate) body_kind: BodyKind,
    pub(crate) expect_continue: bool,
    pub(crate) head_len: usize,
    /// The last valid Host checked (kept by `clear`).
    pub(crate) host_memo: host::HostMemo,
}

/// Length of the run of bytes at the start of `s` whose class in `table`
/// is 0 (the bytes a scanner only passes over). Not inlined: inlined into
/// the line scanner, LLVM kept five induction variables in step and the
/// loop took twelve instructions a byte; on its own it takes about four.
#[inline(never)]
pub(crate) fn plain_run(s: &[u8], table: &[u8; 256]) -> usize {
    let mut i = 0;
    // Four bytes a step while they all pass: the loop's own bookkeeping is
    // paid once for four (names and hosts are mostly longer than four).
    while let Some(&[a, b, c, d]) = s.get(i..i + 4).and_then(|w| <&[u8; 4]>::try_from(w).ok()) {
        let class = |b: u8| table[usize::from(b)];
        if class(a) | class(b) | class(c) | class(d) != 0 {
            break;
        }
        i += 4;
    }
    while let Some(&b) = s.get(i) {
        if table[usize::from(b)] != 0 {
            break;
        }
        i += 1;
    }
    i
}

/// A header name's bit in [`Request::names`]: from its length and its
/// first and last bytes, case-folded as names compare (RFC 9110 §5.1).
/// `| 0x20` folds ASCII letters (and pairs a few other bytes, which only
/// makes a bit shared more often: a shared bit still compares names).
pub(crate) const fn name_bit(name: &[u8]) -> u64 {
    let (first, last) = match name {
        [] => (0, 0),
        [f, .., l] => (*f | 0x20, *l | 0x20),
        [f] => (*f | 0x20, *f | 0x20),
    };
    let h = name.len() as u64 * 7 + first as u64 * 3 + last as u64;
    1 << (h & 63)
}

/// The mask of header names for [`Request::may_have_any`]: a `const`, so
/// a caller asking about several absent headers pays one `AND`.
pub const fn header_mask(names: &[&str]) -> u64 {
    let mut mask = 0;
    let mut i = 0;
    while i < names.len() {
        mask |= name_bit(names[i].as_bytes());
        i += 1;
    }
    mask
}

impl Default for Request {
    fn default() -> Self {
        Self::new()
    }
}

impl Request {
    pub fn new() -> Self {
        Request {
            text: String::new(),
            raw: Vec::new(),
            method: Method::Get,
            method_span: 0..0,
            target: 0..0,
            query: None,
            request_line: 0..0,
            version: Version::Http11,
            headers: Vec::new(),
            names: 0,
            path_span: None,
            path: String::new(),
            host_span: None,
            host: String::new(),
            has_host: false,
            keep_alive: false,
            body_kind: BodyKind::None,
            expect_continue: false,
            head_len: 0,
            host_memo: host::HostMemo::new(),
        }
    }

    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.raw.clear();
        self.method = Method::Get;
        self.method_span = 0..0;
        self.target = 0..0;
        self.query = None;
        self.request_line = 0..0;
        self.version = Version::Http11;
        self.headers.clear();
        self.names = 0;
        self.path_span = None;
        self.path.clear();
        self.host_span = None;
        self.host.clear();
        self.has_host = false;
        self.keep_alive = false;
        self.body_kind = BodyKind::None;
        self.expect_continue = false;
        self.head_len = 0;
    }

    /// Text of a span: a slice of `text`, or (a header line of a head that
    /// is not all UTF-8) of `raw` if that span is UTF-8. The spans the
    /// parser validated always lie in `text`; the fallbacks keep this
    /// panic-free regardless.
    fn text(&self, r: &Range<usize>) -> &str {
        self.text
            .get(r.clone())
            .or_else(|| std::str::from_utf8(self.raw.get(r.clone())?).ok())
            .unwrap_or("")
    }

    /// The head's bytes, whichever field holds them.
    fn head(&self) -> &[u8] {
        if self.raw.is_empty() {
            self.text.as_bytes()
        } else {
            &self.raw
        }
    }

    fn bytes(&self, r: &Range<usize>) -> &[u8] {
        self.head().get(r.clone()).unwrap_or(&[])
    }

    /// An HTTP/2 request's head length is its header block's, not that of
    /// the HTTP/1.1 text the engine made of it (`$request_length`).
    pub fn set_head_len(&mut self, n: usize) {
        self.head_len = n;
    }

    /// An HTTP/2 request the engine gave the codec as an HTTP/1.1 head
    /// (its adapter, engine/src/h2/head.rs): the request line says
    /// `HTTP/2.0` from now on, as nginx's `$request` of an HTTP/2 stream.
    pub fn mark_http2(&mut self) {
        let end = self.request_line.end;
        let Some(start) = end.checked_sub(8) else {
            return;
        };
        if self.text.get(start..end) == Some("HTTP/1.1") {
            self.text.replace_range(start..end, "HTTP/2.0");
        }
        if self.raw.get(start..end) == Some(b"HTTP/1.1") {
            self.raw[start..end].copy_from_slice(b"HTTP/2.0");
        }
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// The method as sent (for `$request_method` and methods outside [`Method`]).
    pub fn method_str(&self) -> &str {
        match self.method {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Patch => "PATCH",
            Method::Trace => "TRACE",
            Method::Connect => "CONNECT",
            Method::Other => self.text(&self.method_span),
        }
    }

    pub fn version(&self) -> Version {
        self.version
    }

    /// Raw request-target as received (`$request_uri`, logs).
    pub fn target(&self) -> &str {
        self.text(&self.target)
    }

    /// Percent-decoded path with dot-segments resolved and `//` merged (nginx's
    /// `merge_slashes on`); always starts with `/`. For an absolute-form target
    /// this is the path part only.
    pub fn path(&self) -> &str {
        match &self.path_span {
            Some(r) => self.text(r),
            None => &self.path,
        }
    }

    /// Raw query string without the `?` (`$args`), if the target had a `?`.
    pub fn query(&self) -> Option<&str> {
        // nginx ends the arguments at a fragment (`ngx_http_parse_complex_uri`,
        // `#` in the args state), which a client should not have sent.
        self.query.as_ref().map(|q| {
            let q = self.text(q);
            q.find('#').map_or(q, |n| &q[..n])
        })
    }

    /// The request line without its line ending (`$request`).
    pub fn request_line(&self) -> &str {
        self.text(&self.request_line)
    }

    /// First header with this name (ASCII case-insensitive), if its value is
    /// valid UTF-8. Use [`Request::headers`] for raw bytes.
    pub fn header(&self, name: &str) -> Option<&str> {
        let v = self.find_header(name)?;
        // A slice of `text` (the same bytes as `raw`'s prefix); only a value
        // past a non-UTF-8 byte of the head is validated here.
        self.text
            .get(v.clone())
            .or_else(|| std::str::from_utf8(self.raw.get(v.clone())?).ok())
    }

    /// `false` when no header named in `mask` ([`header_mask`]) is present;
    /// `true` when one may be (names share bits: look them up).
    pub fn may_have_any(&self, mask: u64) -> bool {
        self.names & mask != 0
    }

    /// First header with this name (ASCII case-insensitive), raw value bytes.
    pub fn header_bytes(&self, name: &str) -> Option<&[u8]> {
        self.find_header(name).map(|v| self.bytes(v))
    }

    /// The value span of the first header with this name. The names
    /// filter is inlined into the callers and the scan is kept out of line:
    /// most lookups of a static request (conditionals, `Range`,
    /// `Accept-Encoding`) are of absent headers, and with the scan inlined
    /// every lookup paid its register saves (a 123,784-byte file
    /// request's 8 lookups: 288 instructions, 199 since; docs/performance.md).
    #[inline]
    fn find_header(&self, name: &str) -> Option<&Range<usize>> {
        if self.names & name_bit(name.as_bytes()) == 0 {
            return None;
        }
        self.scan_headers(name.as_bytes())
    }

    /// The slow part of [`Request::find_header`]: the kept lines compared.
    #[inline(never)]
    fn scan_headers(&self, name: &[u8]) -> Option<&Range<usize>> {
        let head = self.head();
        self.headers
            .iter()
            .find(|(n, _)| {
                head.get(n.clone())
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            })
            .map(|(_, v)| v)
    }

    /// All kept header lines in order: name as sent, value without surrounding
    /// whitespace.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.headers
            .iter()
            .map(|(n, v)| (self.text(n), self.bytes(v)))
    }

    /// Host from an absolute-form target or the Host header: lowercased,
    /// port and trailing dot stripped, validated as nginx validates it.
    pub fn host(&self) -> Option<&str> {
        if !self.has_host {
            return None;
        }
        Some(match &self.host_span {
            Some(r) => self.text(r),
            None => &self.host,
        })
    }

    /// RFC 9112 §9.3 persistence as nginx decides it: HTTP/1.1 unless
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    pub fn keep_alive(&self) -> bool {
        self.keep_alive
    }

    pub fn body_kind(&self) -> BodyKind {
        self.body_kind
    }

    /// `Expect: 100-continue` on an HTTP/1.1 request (nginx ignores it for 1.0).
    pub fn expect_continue(&self) -> bool {
        self.expect_continue
    }

    /// Bytes of the head including leading empty lines and the final empty
    /// line (`$request_length` without the body).
    pub fn head_len(&self) -> usize {
        self.head_len
    }
}
