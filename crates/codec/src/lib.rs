//! Sans-I/O HTTP/1.1 codec for Peregrine.
//!
//! Owns: parsing request heads exactly as nginx accepts or rejects them
//! ([`parse_request`] into a reusable [`Request`]), the incremental request
//! body decoder ([`BodyDecoder`]: Content-Length and chunked), URI
//! normalisation ([`uri`]), HTTP dates and nginx's log timestamps ([`date`]),
//! the byte-level pieces of responses: status lines, nginx's built-in
//! error pages, header-writing helpers ([`response`]), and a backend's
//! response head as nginx's proxy reads it, with its body's framing
//! ([`upstream`]; not wired yet: the proxy, issue 19).
//!
//! Does not own: any I/O, timers or buffering policy (engine), deciding what
//! to answer (core, which also parses `Range`), compression (compress, which
//! also reads `Accept-Encoding`), or configuration (conf). Every
//! function here is pure over the bytes it is given, so the engine can feed
//! whatever it has read so far and ask again when more arrives.
//!
//! Fidelity: every accept/reject decision and status was checked against
//! nginx 1.22 with raw sockets (see the tests). Known deviations, all
//! refusals with 400 where nginx would serve something odd:
//! - HTTP/0.9 simple requests (`GET /\r\n`) are refused; nginx answers them.
//! - A target, path (after percent-decoding) or Host that is not valid UTF-8
//!   is refused; nginx passes raw bytes through. Header *values* may be any
//!   bytes (see [`Request::header_bytes`]).
//! - A header name with non-ASCII bytes is always skipped, even with
//!   `ignore_invalid_headers off`.
//!
//! Steady state allocates nothing: [`Request`] keeps its buffers between
//! [`parse_request`] calls, and the buffer-limit checks replay nginx's
//! `client_header_buffer_size` / `large_client_header_buffers` allocation so
//! 414 / 494 fire at the same byte as in nginx. A head can therefore never
//! need more than `header_buffer_size + count * size` bytes of input.

pub mod body;
pub mod date;
mod error;
pub mod fields;
pub mod proxy_protocol;
pub mod request;
pub mod response;
pub mod upstream;
pub mod uri;

pub use body::{BodyDecoder, BodyProgress};
pub use date::DateCache;
pub use error::{HttpError, HttpErrorKind};
pub use request::{
    BodyKind, DEFAULT_MAX_HEADERS, Limits, Parsed, Request, discardable_prefix, parse_request,
};

/// Request method. Methods nginx does not know are [`Method::Other`]; the
/// original spelling stays available through [`Request::method_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Options,
    Patch,
    Trace,
    Connect,
    Other,
}

impl Method {
    /// Maps a method token to its variant (case-sensitive, RFC 9110 §9.1).
    pub fn from_bytes(m: &[u8]) -> Method {
        match m {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"DELETE" => Method::Delete,
            b"OPTIONS" => Method::Options,
            b"PATCH" => Method::Patch,
            b"TRACE" => Method::Trace,
            b"CONNECT" => Method::Connect,
            _ => Method::Other,
        }
    }
}

/// HTTP version of a request. nginx answers HTTP/1.2 … 1.99 as HTTP/1.1, so
/// those parse as [`Version::Http11`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    Http10,
    Http11,
}

impl Version {
    /// The protocol token as sent in a status line.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}
