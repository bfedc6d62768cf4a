//! The one error type of the request parsers: every failure carries the
//! status nginx would answer with.

/// Why a request was refused. The engine answers with nginx's error page for
/// [`HttpError::status`] and closes the connection (nginx sets
/// `keepalive = 0` on every such error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind} (status {status})")]
pub struct HttpError {
    /// nginx's status for this failure. 494 is nginx's internal "Request
    /// Header Or Cookie Too Large": it goes on the wire as 400 (see
    /// [`HttpError::wire_status`]) but `error_page 494` can match it.
    pub status: u16,
    pub kind: HttpErrorKind,
}

impl HttpError {
    pub const fn new(status: u16, kind: HttpErrorKind) -> Self {
        HttpError { status, kind }
    }

    /// The status code sent in the status line (494 is sent as 400, as nginx does).
    pub fn wire_status(&self) -> u16 {
        crate::response::wire_status(self.status)
    }
}

/// What exactly was wrong; used for error-log messages, which follow nginx's wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HttpErrorKind {
    #[error("client sent invalid request")]
    InvalidRequestLine,
    #[error("client sent invalid method")]
    InvalidMethod,
    #[error("client sent invalid request")]
    InvalidTarget,
    #[error("client sent invalid request")]
    InvalidVersion,
    /// HTTP/0.9 simple request (no version): nginx answers it with a bare
    /// body; Peregrine refuses it with 400 (documented deviation).
    #[error("client sent HTTP/0.9 request")]
    Http09,
    #[error("client sent invalid version")]
    UnsupportedVersion,
    #[error("client sent too long URI")]
    UriTooLong,
    #[error("client sent too long header line")]
    HeaderTooLarge,
    /// More header lines than `max_headers` (494, sent as 400).
    #[error("client sent too many header lines")]
    TooManyHeaders,
    #[error("client sent invalid header line")]
    InvalidHeader,
    #[error("client sent HTTP/1.1 request without \"Host\" header")]
    MissingHost,
    #[error("client sent invalid host header")]
    InvalidHost,
    #[error("client sent duplicate header line")]
    DuplicateHeader,
    #[error("client sent invalid \"Content-Length\" header")]
    InvalidContentLength,
    #[error("client sent \"Content-Length\" and \"Transfer-Encoding\" headers")]
    LengthAndChunked,
    #[error("client sent unknown \"Transfer-Encoding\"")]
    UnknownTransferEncoding,
    #[error("client sent HTTP/1.0 request with \"Transfer-Encoding\" header")]
    TransferEncodingHttp10,
    #[error("client sent invalid chunked body")]
    InvalidChunkedBody,
    #[error("client sent invalid request URI")]
    InvalidUri,
    /// TRACE and CONNECT, which nginx refuses with 405.
    #[error("client sent TRACE or CONNECT method")]
    MethodNotAllowed,
}
