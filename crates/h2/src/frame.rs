//! The frame layer (RFC 9113 §4, §6): the 9-byte header, the frame types
//! and flags, and writers for every frame a server sends. Payload parsing
//! lives with the state it changes (connection.rs, settings.rs).

/// The client connection preface (RFC 9113 §3.4), which precedes the
/// client's first SETTINGS frame.
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Length of a frame header.
pub const HEADER_LEN: usize = 9;

/// The frame types of RFC 9113 §6. Unknown types are ignored (§4.1, §5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Headers,
    Priority,
    RstStream,
    Settings,
    PushPromise,
    Ping,
    GoAway,
    WindowUpdate,
    Continuation,
    Unknown(u8),
}

impl Kind {
    pub fn from_u8(t: u8) -> Kind {
        match t {
            0x0 => Kind::Data,
            0x1 => Kind::Headers,
            0x2 => Kind::Priority,
            0x3 => Kind::RstStream,
            0x4 => Kind::Settings,
            0x5 => Kind::PushPromise,
            0x6 => Kind::Ping,
            0x7 => Kind::GoAway,
            0x8 => Kind::WindowUpdate,
            0x9 => Kind::Continuation,
            t => Kind::Unknown(t),
        }
    }

    pub fn to_u8(self) -> u8 {
        match self {
            Kind::Data => 0x0,
            Kind::Headers => 0x1,
            Kind::Priority => 0x2,
            Kind::RstStream => 0x3,
            Kind::Settings => 0x4,
            Kind::PushPromise => 0x5,
            Kind::Ping => 0x6,
            Kind::GoAway => 0x7,
            Kind::WindowUpdate => 0x8,
            Kind::Continuation => 0x9,
            Kind::Unknown(t) => t,
        }
    }
}

/// Frame flags (§6). Each applies only to the frame types that define it.
pub mod flags {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// A parsed frame header (§4.1). The reserved bit of the stream identifier
/// is ignored on receipt, as the RFC requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub len: u32,
    pub kind: Kind,
    pub flags: u8,
    pub stream: u32,
}

impl FrameHeader {
    /// Parses the first 9 bytes, or `None` when fewer are there.
    pub fn parse(b: &[u8]) -> Option<FrameHeader> {
        let h: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
        Some(FrameHeader {
            len: u32::from_be_bytes([0, h[0], h[1], h[2]]),
            kind: Kind::from_u8(h[3]),
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
        })
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The header's 9 bytes. `len` must fit 24 bits (callers never exceed
    /// the peer's max frame size, itself < 2^24).
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let l = self.len.to_be_bytes();
        let s = (self.stream & 0x7fff_ffff).to_be_bytes();
        [
            l[1],
            l[2],
            l[3],
            self.kind.to_u8(),
            self.flags,
            s[0],
            s[1],
            s[2],
            s[3],
        ]
    }
}

/// Appends a frame header.
pub fn put_header(out: &mut Vec<u8>, kind: Kind, flags: u8, stream: u32, len: usize) {
    let len = len as u32;
    out.extend_from_slice(
        &FrameHeader {
            len,
            kind,
            flags,
            stream,
        }
        .encode(),
    );
}

/// RST_STREAM (§6.4).
pub fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_header(out, Kind::RstStream, 0, stream, 4);
    out.extend_from_slice(&code.to_be_bytes());
}

/// WINDOW_UPDATE (§6.9), stream 0 for the connection.
pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_header(out, Kind::WindowUpdate, 0, stream, 4);
    out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
}

/// PING (§6.7), an answer when `ack`.
pub fn put_ping(out: &mut Vec<u8>, ack: bool, data: [u8; 8]) {
    put_header(out, Kind::Ping, if ack { flags::ACK } else { 0 }, 0, 8);
    out.extend_from_slice(&data);
}

/// GOAWAY (§6.8) with no debug data.
pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_header(out, Kind::GoAway, 0, 0, 8);
    out.extend_from_slice(&(last_stream & 0x7fff_ffff).to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

/// A header block as HEADERS + CONTINUATION frames of at most `max_frame`
/// payload bytes each (§6.2, §6.10), END_STREAM on the HEADERS frame.
pub fn put_header_block(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    max_frame: usize,
) {
    let mut chunks = block.chunks(max_frame.max(1));
    let first = chunks.next().unwrap_or(&[]);
    let mut more = chunks.peekable();
    let mut f = if end_stream { flags::END_STREAM } else { 0 };
    if more.peek().is_none() {
        f |= flags::END_HEADERS;
    }
    put_header(out, Kind::Headers, f, stream, first.len());
    out.extend_from_slice(first);
    while let Some(chunk) = more.next() {
        let f = if more.peek().is_none() {
            flags::END_HEADERS
        } else {
            0
        };
        put_header(out, Kind::Continuation, f, stream, chunk.len());
        out.extend_from_slice(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_ignores_the_reserved_bit() {
        let h = FrameHeader {
            len: 0x123456,
            kind: Kind::Headers,
            flags: 0x25,
            stream: 7,
        };
        let mut b = h.encode();
        assert_eq!(FrameHeader::parse(&b), Some(h));
        b[5] |= 0x80;
        assert_eq!(FrameHeader::parse(&b).unwrap().stream, 7);
        assert_eq!(FrameHeader::parse(&b[..8]), None);
        assert_eq!(Kind::from_u8(0x42), Kind::Unknown(0x42));
    }

    #[test]
    fn header_block_is_split_into_continuations() {
        let mut out = Vec::new();
        put_header_block(&mut out, 3, &[7u8; 10], true, 4);
        // HEADERS(4) + CONTINUATION(4) + CONTINUATION(2, END_HEADERS)
        let h1 = FrameHeader::parse(&out).unwrap();
        assert_eq!(
            (h1.kind, h1.len, h1.flags),
            (Kind::Headers, 4, flags::END_STREAM)
        );
        let h2 = FrameHeader::parse(&out[13..]).unwrap();
        assert_eq!((h2.kind, h2.len, h2.flags), (Kind::Continuation, 4, 0));
        let h3 = FrameHeader::parse(&out[26..]).unwrap();
        assert_eq!(
            (h3.kind, h3.len, h3.flags),
            (Kind::Continuation, 2, flags::END_HEADERS)
        );
        assert_eq!(out.len(), 3 * 9 + 10);

        let mut out = Vec::new();
        put_header_block(&mut out, 1, &[], false, 16384);
        let h = FrameHeader::parse(&out).unwrap();
        assert_eq!(
            (h.kind, h.len, h.flags),
            (Kind::Headers, 0, flags::END_HEADERS)
        );
    }
}
