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
mod header_line;
mod host;
mod limits;
mod line;
#[cfg(test)]
mod tests;

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
}

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
    /// Copy of the head bytes (after any leading empty lines); all spans index it.
    pub(crate) buf: Vec<u8>,
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
    /// Normalised path (see [`crate::uri::normalize`]).
    pub(crate) path: String,
    /// The request target as text, validated once by the parser (the
    /// accessors would otherwise re-validate the bytes on every call).
    pub(crate) target_text: String,
    /// Lowercased host without port or trailing dot.
    pub(crate) host: String,
    pub(crate) has_host: bool,
    pub(crate) keep_alive: bool,
    pub(crate) body_kind: BodyKind,
    pub(crate) expect_continue: bool,
    pub(crate) head_len: usize,
}

/// A header name's bit in [`Request::names`]: from its length and its
/// first and last bytes, case-folded as names compare (RFC 9110 §5.1).
pub(crate) fn name_bit(name: &[u8]) -> u64 {
    let first = name.first().map_or(0, u8::to_ascii_lowercase);
    let last = name.last().map_or(0, u8::to_ascii_lowercase);
    let h = name.len() as u64 * 7 + u64::from(first) * 3 + u64::from(last);
    1 << (h & 63)
}

impl Default for Request {
    fn default() -> Self {
        Self::new()
    }
}

impl Request {
    pub fn new() -> Self {
        Request {
            buf: Vec::new(),
            method: Method::Get,
            method_span: 0..0,
            target: 0..0,
            query: None,
            request_line: 0..0,
            version: Version::Http11,
            headers: Vec::new(),
            names: 0,
            path: String::new(),
            target_text: String::new(),
            host: String::new(),
            has_host: false,
            keep_alive: false,
            body_kind: BodyKind::None,
            expect_continue: false,
            head_len: 0,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.method = Method::Get;
        self.method_span = 0..0;
        self.target = 0..0;
        self.query = None;
        self.request_line = 0..0;
        self.version = Version::Http11;
        self.headers.clear();
        self.names = 0;
        self.path.clear();
        self.target_text.clear();
        self.host.clear();
        self.has_host = false;
        self.keep_alive = false;
        self.body_kind = BodyKind::None;
        self.expect_continue = false;
        self.head_len = 0;
    }

    /// Text of a span. Every span stored is validated ASCII/UTF-8 at parse
    /// time; the fallback keeps this panic-free regardless.
    fn text(&self, r: &Range<usize>) -> &str {
        self.buf
            .get(r.clone())
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("")
    }

    fn bytes(&self, r: &Range<usize>) -> &[u8] {
        self.buf.get(r.clone()).unwrap_or(&[])
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
        &self.target_text
    }

    /// Percent-decoded path with dot-segments resolved and `//` merged (nginx's
    /// `merge_slashes on`); always starts with `/`. For an absolute-form target
    /// this is the path part only.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Raw query string without the `?` (`$args`), if the target had a `?`.
    pub fn query(&self) -> Option<&str> {
        // The query lies inside the target: a slice of its text.
        let q = self.query.as_ref()?;
        let t0 = self.target.start;
        let (a, b) = (q.start.checked_sub(t0)?, q.end.checked_sub(t0)?);
        Some(self.target_text.get(a..b).unwrap_or(""))
    }

    /// The request line without its line ending (`$request`).
    pub fn request_line(&self) -> &str {
        self.text(&self.request_line)
    }

    /// First header with this name (ASCII case-insensitive), if its value is
    /// valid UTF-8. Use [`Request::headers`] for raw bytes.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.header_bytes(name)
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    /// First header with this name (ASCII case-insensitive), raw value bytes.
    pub fn header_bytes(&self, name: &str) -> Option<&[u8]> {
        if self.names & name_bit(name.as_bytes()) == 0 {
            return None;
        }
        self.headers
            .iter()
            .find(|(n, _)| self.bytes(n).eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| self.bytes(v))
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
        self.has_host.then_some(self.host.as_str())
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
