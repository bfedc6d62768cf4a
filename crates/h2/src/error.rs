//! Error codes (RFC 9113 §7) and the two kinds of protocol error (§5.4):
//! a connection error ends the connection with GOAWAY, a stream error ends
//! one stream with RST_STREAM.

/// An HTTP/2 error code (RFC 9113 §7). Unknown codes received from the
/// peer are kept as [`ErrorCode::Other`] (§7: "MUST NOT trigger any special
/// behavior"; treated as INTERNAL_ERROR where a meaning is needed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    NoError,
    ProtocolError,
    InternalError,
    FlowControlError,
    SettingsTimeout,
    StreamClosed,
    FrameSizeError,
    RefusedStream,
    Cancel,
    CompressionError,
    ConnectError,
    EnhanceYourCalm,
    InadequateSecurity,
    Http11Required,
    Other(u32),
}

impl ErrorCode {
    /// The code's number on the wire.
    pub fn to_u32(self) -> u32 {
        match self {
            ErrorCode::NoError => 0x0,
            ErrorCode::ProtocolError => 0x1,
            ErrorCode::InternalError => 0x2,
            ErrorCode::FlowControlError => 0x3,
            ErrorCode::SettingsTimeout => 0x4,
            ErrorCode::StreamClosed => 0x5,
            ErrorCode::FrameSizeError => 0x6,
            ErrorCode::RefusedStream => 0x7,
            ErrorCode::Cancel => 0x8,
            ErrorCode::CompressionError => 0x9,
            ErrorCode::ConnectError => 0xa,
            ErrorCode::EnhanceYourCalm => 0xb,
            ErrorCode::InadequateSecurity => 0xc,
            ErrorCode::Http11Required => 0xd,
            ErrorCode::Other(n) => n,
        }
    }

    /// The code a wire number stands for.
    pub fn from_u32(n: u32) -> ErrorCode {
        const KNOWN: [ErrorCode; 14] = [
            ErrorCode::NoError,
            ErrorCode::ProtocolError,
            ErrorCode::InternalError,
            ErrorCode::FlowControlError,
            ErrorCode::SettingsTimeout,
            ErrorCode::StreamClosed,
            ErrorCode::FrameSizeError,
            ErrorCode::RefusedStream,
            ErrorCode::Cancel,
            ErrorCode::CompressionError,
            ErrorCode::ConnectError,
            ErrorCode::EnhanceYourCalm,
            ErrorCode::InadequateSecurity,
            ErrorCode::Http11Required,
        ];
        KNOWN
            .get(n as usize)
            .copied()
            .unwrap_or(ErrorCode::Other(n))
    }
}

/// A connection error (RFC 9113 §5.4.1): the connection has queued GOAWAY
/// with [`ConnError::code`] and must be closed once the output is written.
/// `reason` is a short text for the error log (nginx logs these at `info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason} ({code:?})")]
pub struct ConnError {
    pub code: ErrorCode,
    pub reason: &'static str,
}

/// What a frame's validation concluded when it was wrong: which error, on
/// what scope (§5.4). Internal to the receive path; the connection turns a
/// stream error into RST_STREAM + [`crate::Event::Reset`] and a connection
/// error into GOAWAY + [`ConnError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Violation {
    Conn(ErrorCode, &'static str),
    Stream(u32, ErrorCode, &'static str),
}

/// Why a send call was refused: the caller asked for something the
/// protocol does not allow at this point (an engine bug, or a stream the
/// peer already reset).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("stream is not open for sending")]
    StreamNotOpen,
    #[error("response headers already sent")]
    HeadersAlreadySent,
    #[error("response headers not sent yet")]
    HeadersNotSent,
    #[error("connection is closed")]
    ConnectionClosed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_kept() {
        for n in 0..=0xd {
            assert_eq!(ErrorCode::from_u32(n).to_u32(), n);
        }
        assert_eq!(ErrorCode::from_u32(0xff), ErrorCode::Other(0xff));
        assert_eq!(ErrorCode::from_u32(0x7), ErrorCode::RefusedStream);
    }
}
