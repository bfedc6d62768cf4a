//! One stream's state (RFC 9113 §5.1) as a server sees it. A server never
//! pushes, so the reserved states do not occur; idle streams are those
//! above the highest identifier the peer used, and closed ones are absent
//! from the connection's table (a few remembered, see `limits`).

use crate::flow::{RecvWindow, SendWindow};

/// PRIORITY information (RFC 9113 §5.3.2 and §6.3, deprecated by RFC 9113
/// but still sent): parsed and handed to the session's scheduler, which
/// may use it or schedule round robin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    pub dependency: u32,
    /// 1..=256 (the wire value plus one).
    pub weight: u16,
    pub exclusive: bool,
}

impl Default for Priority {
    /// §5.3.5 of RFC 7540: depends on stream 0 with weight 16.
    fn default() -> Self {
        Priority {
            dependency: 0,
            weight: 16,
            exclusive: false,
        }
    }
}

impl Priority {
    /// Parses the 5 priority bytes of HEADERS or PRIORITY.
    pub fn parse(b: &[u8; 5]) -> Priority {
        let dep = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        Priority {
            dependency: dep & 0x7fff_ffff,
            weight: u16::from(b[4]) + 1,
            exclusive: dep & 0x8000_0000 != 0,
        }
    }
}

/// A stream's state as RFC 9113 §5.1 names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamState {
    Open,
    /// The peer sent END_STREAM: the request is complete.
    HalfClosedRemote,
    /// We sent END_STREAM: the response is complete, the body may still come.
    HalfClosedLocal,
}

/// An open or half-closed stream.
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    pub recv_closed: bool,
    pub send_closed: bool,
    pub headers_sent: bool,
    pub send: SendWindow,
    pub recv: RecvWindow,
    pub content_length: Option<u64>,
    pub received: u64,
    pub priority: Priority,
    /// The location's `http2_chunk_size`, over the connection's.
    pub chunk_size: Option<u32>,
    /// The body broke its `content-length` ([`crate::Event::BadBody`]):
    /// later DATA is dropped, its credit given back (nginx's `skip_data`).
    pub skip_data: bool,
    /// The request is malformed (RFC 9113 §8.1.1): nginx's 400 response
    /// goes out, and RST_STREAM PROTOCOL_ERROR follows its END_STREAM, as
    /// §8.1.1 allows ("a server MAY send an HTTP response prior to closing
    /// or resetting the stream") and requires (a stream error).
    pub malformed: bool,
}

impl Stream {
    pub fn new(send_window: u32, recv_window: u32) -> Stream {
        Stream {
            recv_closed: false,
            send_closed: false,
            headers_sent: false,
            send: SendWindow::new(send_window),
            recv: RecvWindow::new(recv_window),
            content_length: None,
            received: 0,
            priority: Priority::default(),
            chunk_size: None,
            skip_data: false,
            malformed: false,
        }
    }

    pub fn state(&self) -> StreamState {
        match (self.recv_closed, self.send_closed) {
            (true, _) => StreamState::HalfClosedRemote,
            (false, true) => StreamState::HalfClosedLocal,
            (false, false) => StreamState::Open,
        }
    }

    /// Both directions ended: the stream is closed (§5.1).
    pub fn is_closed(&self) -> bool {
        self.recv_closed && self.send_closed
    }
}

/// Who closed a remembered stream: frames on a stream we reset may still
/// be in flight and are ignored (§5.1, "closed"); after the peer's reset or
/// a normal close they are the peer's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Closer {
    Us,
    Peer,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_parses_exclusive_bit_and_weight() {
        let p = Priority::parse(&[0x80, 0, 0, 3, 255]);
        assert_eq!(
            p,
            Priority {
                dependency: 3,
                weight: 256,
                exclusive: true
            }
        );
        assert_eq!(Priority::parse(&[0, 0, 0, 0, 0]).weight, 1);
    }

    #[test]
    fn state_follows_the_two_directions() {
        let mut s = Stream::new(10, 10);
        assert_eq!(s.state(), StreamState::Open);
        s.send_closed = true;
        assert_eq!(s.state(), StreamState::HalfClosedLocal);
        s.recv_closed = true;
        assert!(s.is_closed());
    }
}
