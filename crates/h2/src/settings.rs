//! SETTINGS (RFC 9113 §6.5): the peer's values as they apply to what we
//! send, the parsing of a SETTINGS payload with its errors, and our own
//! SETTINGS frame.

use crate::error::ErrorCode;
use crate::frame::{Kind, put_header};
use crate::limits::{DEFAULT_WINDOW, MAX_WINDOW};

const HEADER_TABLE_SIZE: u16 = 0x1;
const ENABLE_PUSH: u16 = 0x2;
const MAX_CONCURRENT_STREAMS: u16 = 0x3;
const INITIAL_WINDOW_SIZE: u16 = 0x4;
const MAX_FRAME_SIZE: u16 = 0x5;
const MAX_HEADER_LIST_SIZE: u16 = 0x6;

/// The smallest and largest SETTINGS_MAX_FRAME_SIZE (§6.5.2).
const MIN_MAX_FRAME: u32 = 1 << 14;
const MAX_MAX_FRAME: u32 = (1 << 24) - 1;

/// The peer's settings, as far as they bind what we send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerSettings {
    /// The peer's HPACK decoder table. Our encoder never inserts into the
    /// dynamic table, so any value is fine and nothing has to be signalled.
    pub header_table_size: u32,
    /// How many streams we may open: irrelevant to a server that never
    /// pushes; kept for the record.
    pub max_concurrent_streams: Option<u32>,
    /// The initial send window of every stream.
    pub initial_window_size: u32,
    /// The largest frame payload we may send.
    pub max_frame_size: u32,
    /// The header list the peer accepts (advisory, §6.5.2).
    pub max_header_list_size: Option<u32>,
}

impl Default for PeerSettings {
    fn default() -> Self {
        PeerSettings {
            header_table_size: 4096,
            max_concurrent_streams: None,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: MIN_MAX_FRAME,
            max_header_list_size: None,
        }
    }
}

impl PeerSettings {
    /// Applies a SETTINGS payload (length already checked as a multiple of
    /// 6). Returns the old initial window size, so the caller can move every
    /// stream's window by the difference (§6.9.2). Unknown identifiers are
    /// ignored (§6.5.2); SETTINGS_ENABLE_PUSH is validated and ignored (we
    /// are a server).
    pub fn apply(&mut self, payload: &[u8]) -> Result<u32, (ErrorCode, &'static str)> {
        let old_window = self.initial_window_size;
        for p in payload.chunks_exact(6) {
            let id = u16::from_be_bytes([p[0], p[1]]);
            let v = u32::from_be_bytes([p[2], p[3], p[4], p[5]]);
            match id {
                HEADER_TABLE_SIZE => self.header_table_size = v,
                ENABLE_PUSH if v > 1 => {
                    return Err((
                        ErrorCode::ProtocolError,
                        "client sent SETTINGS frame with incorrect ENABLE_PUSH value",
                    ));
                }
                MAX_CONCURRENT_STREAMS => self.max_concurrent_streams = Some(v),
                INITIAL_WINDOW_SIZE if v > MAX_WINDOW => {
                    return Err((
                        ErrorCode::FlowControlError,
                        "client sent SETTINGS frame with incorrect INITIAL_WINDOW_SIZE value",
                    ));
                }
                INITIAL_WINDOW_SIZE => self.initial_window_size = v,
                MAX_FRAME_SIZE if !(MIN_MAX_FRAME..=MAX_MAX_FRAME).contains(&v) => {
                    return Err((
                        ErrorCode::ProtocolError,
                        "client sent SETTINGS frame with incorrect MAX_FRAME_SIZE value",
                    ));
                }
                MAX_FRAME_SIZE => self.max_frame_size = v,
                MAX_HEADER_LIST_SIZE => self.max_header_list_size = Some(v),
                _ => {}
            }
        }
        Ok(old_window)
    }
}

/// Our SETTINGS frame: what we promise to the peer. SETTINGS_ENABLE_PUSH=0
/// is not sent: it is a client's setting (a server sending it is harmless,
/// but nginx does not).
pub fn put_ours(
    out: &mut Vec<u8>,
    max_streams: u32,
    initial_window: u32,
    header_list: u32,
    max_frame: u32,
) {
    let params: [(u16, u32); 4] = [
        (MAX_CONCURRENT_STREAMS, max_streams),
        (INITIAL_WINDOW_SIZE, initial_window),
        (MAX_FRAME_SIZE, max_frame),
        (MAX_HEADER_LIST_SIZE, header_list),
    ];
    put_header(out, Kind::Settings, 0, 0, params.len() * 6);
    for (id, v) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(id: u16, v: u32) -> Vec<u8> {
        let mut p = id.to_be_bytes().to_vec();
        p.extend_from_slice(&v.to_be_bytes());
        p
    }

    #[test]
    fn values_apply_and_unknown_ids_are_ignored() {
        let mut s = PeerSettings::default();
        let mut p = param(INITIAL_WINDOW_SIZE, 1000);
        p.extend(param(MAX_FRAME_SIZE, 20000));
        p.extend(param(0x99, 7));
        p.extend(param(ENABLE_PUSH, 0));
        p.extend(param(HEADER_TABLE_SIZE, 0));
        assert_eq!(s.apply(&p), Ok(DEFAULT_WINDOW));
        assert_eq!(
            (s.initial_window_size, s.max_frame_size, s.header_table_size),
            (1000, 20000, 0)
        );
    }

    #[test]
    fn out_of_range_values_are_the_rfc_errors() {
        let mut s = PeerSettings::default();
        assert_eq!(
            s.apply(&param(ENABLE_PUSH, 2)).unwrap_err().0,
            ErrorCode::ProtocolError
        );
        assert_eq!(
            s.apply(&param(INITIAL_WINDOW_SIZE, MAX_WINDOW + 1))
                .unwrap_err()
                .0,
            ErrorCode::FlowControlError
        );
        assert!(s.apply(&param(INITIAL_WINDOW_SIZE, MAX_WINDOW)).is_ok());
        assert_eq!(
            s.apply(&param(MAX_FRAME_SIZE, 16383)).unwrap_err().0,
            ErrorCode::ProtocolError
        );
        assert_eq!(
            s.apply(&param(MAX_FRAME_SIZE, 1 << 24)).unwrap_err().0,
            ErrorCode::ProtocolError
        );
        assert!(s.apply(&param(MAX_FRAME_SIZE, (1 << 24) - 1)).is_ok());
    }
}
