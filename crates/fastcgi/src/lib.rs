//! Sans-I/O FastCGI codec for Peregrine: the wire format nginx's
//! `ngx_http_fastcgi_module` speaks to an application server such as
//! PHP-FPM (FastCGI specification 1.0).
//!
//! Owns:
//! - the record header ([`Header`], [`RecordType`]) and its limits;
//! - the request side ([`encode`]): `BEGIN_REQUEST` (role responder, the
//!   `FCGI_KEEP_CONN` flag), the `PARAMS` stream built from (name, value)
//!   pairs with 1- and 4-byte lengths, the `STDIN` stream split into
//!   records, each padded to 8 bytes as nginx pads them;
//! - the response side ([`decode`]): the application's byte stream turned
//!   into events (stdout bytes, stderr bytes, the end of stdout, the end of
//!   the request with its statuses) and protocol errors in nginx's
//!   error-log wording;
//! - name-value pairs read back ([`params`]), for `GET_VALUES_RESULT` and
//!   for tests;
//! - the CGI response head that arrives in `STDOUT` ([`head`]): header
//!   lines split anywhere across records, `Status:` and `Location:` as
//!   `ngx_http_fastcgi_process_header` reads them.
//!
//! Does not own: sockets, timers, buffers' sizes or lifetimes (engine), which
//! params to send and how they are built from the request (the `fastcgi_param`
//! machinery), what to do with the head's headers (the upstream machinery:
//! `Content-Length`, hiding, passing, intercepting errors), logging.
//! Every function here is pure over the bytes it is given: bytes in, events
//! out, output appended to a caller's buffer, so the engine can feed whatever
//! it has read and call again when more arrives, and a fuzzer can drive it.
//!
//! Hand-written because the crates that speak FastCGI drive a stream
//! themselves (fastcgi-client over tokio or futures' `AsyncRead`/`AsyncWrite`,
//! gfcgi and fastcgi over `std::io`), and none reports record content in
//! place, resumable at any byte, with nginx's error wording.

#![forbid(unsafe_code)]

pub mod decode;
pub mod encode;
pub mod head;
pub mod params;

pub use decode::{DecodeError, Decoder, EndRequest, Event, Progress, ProtocolStatus, stderr_text};
pub use encode::{EncodeError, ParamsEncoder, begin_request, end_stdin, stdin};
pub use head::{Head, HeadError, HeadParser, HeadStatus};

/// The only protocol version (FastCGI 1.0 §3.3, `FCGI_VERSION_1`); nginx
/// refuses any other ("upstream sent unsupported FastCGI protocol version").
pub const VERSION: u8 = 1;

/// Size of a record header (§3.3, `FCGI_HEADER_LEN`).
pub const HEADER_LEN: usize = 8;

/// Largest content of one record: `contentLength` is 16 bits (§3.3).
pub const MAX_CONTENT: usize = 65_535;

/// nginx pads every record it sends so that content plus padding is a
/// multiple of 8 (`padding = 8 - len % 8` in `ngx_http_fastcgi_create_request`),
/// which the specification recommends (§3.3) for aligned processing.
pub const PAD_TO: usize = 8;

/// The request id nginx uses: it sends one request per connection and
/// refuses records of any other id ("we support the single request per
/// connection", `ngx_http_fastcgi_process_record`).
pub const NGINX_REQUEST_ID: u16 = 1;

/// The responder role (§6.2), the only one nginx asks for.
pub const ROLE_RESPONDER: u16 = 1;

/// `FCGI_KEEP_CONN` (§5.1): the application keeps the connection open after
/// the request (nginx's `fastcgi_keep_conn on`).
pub const FLAG_KEEP_CONN: u8 = 1;

/// Record types (§8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordType {
    BeginRequest,
    AbortRequest,
    EndRequest,
    Params,
    Stdin,
    Stdout,
    Stderr,
    Data,
    GetValues,
    GetValuesResult,
    UnknownType,
    /// Any other byte (the application answers these with `UNKNOWN_TYPE`).
    Other(u8),
}

impl RecordType {
    pub fn from_u8(b: u8) -> RecordType {
        match b {
            1 => RecordType::BeginRequest,
            2 => RecordType::AbortRequest,
            3 => RecordType::EndRequest,
            4 => RecordType::Params,
            5 => RecordType::Stdin,
            6 => RecordType::Stdout,
            7 => RecordType::Stderr,
            8 => RecordType::Data,
            9 => RecordType::GetValues,
            10 => RecordType::GetValuesResult,
            11 => RecordType::UnknownType,
            n => RecordType::Other(n),
        }
    }

    pub fn as_u8(self) -> u8 {
        match self {
            RecordType::BeginRequest => 1,
            RecordType::AbortRequest => 2,
            RecordType::EndRequest => 3,
            RecordType::Params => 4,
            RecordType::Stdin => 5,
            RecordType::Stdout => 6,
            RecordType::Stderr => 7,
            RecordType::Data => 8,
            RecordType::GetValues => 9,
            RecordType::GetValuesResult => 10,
            RecordType::UnknownType => 11,
            RecordType::Other(n) => n,
        }
    }
}

/// A record header (§3.3): version, type, request id, content and padding
/// lengths, one reserved byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub kind: RecordType,
    pub request_id: u16,
    pub content_length: u16,
    pub padding_length: u8,
}

impl Header {
    /// A version-1 header for `len` content bytes, padded as nginx pads
    /// (see [`padding_for`]).
    pub fn new(kind: RecordType, request_id: u16, len: u16) -> Header {
        Header {
            version: VERSION,
            kind,
            request_id,
            content_length: len,
            padding_length: padding_for(usize::from(len)) as u8,
        }
    }

    /// The 8 bytes on the wire.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let [id_hi, id_lo] = self.request_id.to_be_bytes();
        let [len_hi, len_lo] = self.content_length.to_be_bytes();
        [
            self.version,
            self.kind.as_u8(),
            id_hi,
            id_lo,
            len_hi,
            len_lo,
            self.padding_length,
            0,
        ]
    }

    /// Reads 8 header bytes without judging them (the [`Decoder`] judges).
    pub fn from_bytes(b: &[u8; HEADER_LEN]) -> Header {
        Header {
            version: b[0],
            kind: RecordType::from_u8(b[1]),
            request_id: u16::from_be_bytes([b[2], b[3]]),
            content_length: u16::from_be_bytes([b[4], b[5]]),
            padding_length: b[6],
        }
    }

    /// Content plus padding: the bytes that follow this header.
    pub fn body_len(&self) -> usize {
        usize::from(self.content_length) + usize::from(self.padding_length)
    }
}

/// Padding that brings `len` content bytes to a multiple of [`PAD_TO`].
pub fn padding_for(len: usize) -> usize {
    (PAD_TO - len % PAD_TO) % PAD_TO
}

/// Zero bytes for padding (at most `PAD_TO - 1` are ever needed).
const ZEROS: [u8; PAD_TO] = [0; PAD_TO];

/// Appends one record (header, content, padding) to `out`.
/// `content.len()` must be at most [`MAX_CONTENT`].
pub(crate) fn push_record(out: &mut Vec<u8>, kind: RecordType, id: u16, content: &[u8]) {
    let len = u16::try_from(content.len()).expect("record content over MAX_CONTENT");
    let h = Header::new(kind, id, len);
    out.extend_from_slice(&h.to_bytes());
    out.extend_from_slice(content);
    out.extend_from_slice(&ZEROS[..usize::from(h.padding_length)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_padding() {
        let h = Header::new(RecordType::Stdin, 0x0102, 13);
        assert_eq!(h.to_bytes(), [1, 5, 1, 2, 0, 13, 3, 0]);
        assert_eq!(Header::from_bytes(&h.to_bytes()), h);
        assert_eq!(h.body_len(), 16);
        assert_eq!(
            (0..=9).map(padding_for).collect::<Vec<_>>(),
            [0, 7, 6, 5, 4, 3, 2, 1, 0, 7]
        );
        assert_eq!(padding_for(MAX_CONTENT), 1);
        for b in 0..=255u8 {
            assert_eq!(RecordType::from_u8(b).as_u8(), b);
        }
    }
}
