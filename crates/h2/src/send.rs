//! The sending side: response heads, DATA within the peer's windows and
//! frame size, trailers, RST_STREAM, GOAWAY (immediate or graceful), the
//! WINDOW_UPDATEs that give credit back, and what the engine's scheduler
//! and timers need to see.

use crate::connection::{Connection, GoAway, Phase};
use crate::error::{ErrorCode, SendError};
use crate::frame::{self, FrameHeader, HEADER_LEN, Kind, flags};
use crate::hpack;
use crate::stream::{Priority, Stream, StreamState};

/// A DATA frame header granted by [`Connection::data_frame`]: write the 9
/// bytes, then `len` bytes of the body the caller owns (after whatever
/// [`Connection::output`] held before the call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataFrame {
    pub header: [u8; HEADER_LEN],
    pub len: usize,
    pub end_stream: bool,
}

/// Encodes a response head (`:status` first, then the fields, whose names
/// must be lowercase) into an HPACK block. Stateless (see hpack.rs): the
/// block can be cached and sent with [`Connection::send_encoded_headers`]
/// on any connection.
pub fn encode_response_head(status: u16, fields: &[(&[u8], &[u8])], out: &mut Vec<u8>) {
    let mut digits = [0u8; 3];
    let s = status.min(999);
    digits[0] = b'0' + (s / 100) as u8;
    digits[1] = b'0' + (s / 10 % 10) as u8;
    digits[2] = b'0' + (s % 10) as u8;
    hpack::encode_field(out, b":status", &digits);
    for (n, v) in fields {
        hpack::encode_field(out, n, v);
    }
}

impl Connection {
    /// Bytes to write to the socket, in order.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// Drops `n` written bytes from the front of the output.
    pub fn advance_output(&mut self, n: usize) {
        self.out.drain(..n.min(self.out.len()));
    }

    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    fn sendable_stream(&mut self, stream: u32) -> Result<&mut Stream, SendError> {
        if matches!(self.phase, Phase::Failed(_)) {
            return Err(SendError::ConnectionClosed);
        }
        match self.streams.get_mut(&stream) {
            Some(s) if !s.send_closed => Ok(s),
            _ => Err(SendError::StreamNotOpen),
        }
    }

    /// Sends the response head, HPACK-encoded here.
    pub fn send_headers(
        &mut self,
        stream: u32,
        status: u16,
        fields: &[(&[u8], &[u8])],
        end_stream: bool,
    ) -> Result<(), SendError> {
        let mut block = Vec::with_capacity(64);
        encode_response_head(status, fields, &mut block);
        self.send_encoded_headers(stream, &block, end_stream)
    }

    /// Sends a response head already encoded by [`encode_response_head`].
    pub fn send_encoded_headers(
        &mut self,
        stream: u32,
        block: &[u8],
        end_stream: bool,
    ) -> Result<(), SendError> {
        let max = self.peer.max_frame_size as usize;
        let s = self.sendable_stream(stream)?;
        if s.headers_sent {
            return Err(SendError::HeadersAlreadySent);
        }
        s.headers_sent = true;
        s.send_closed = end_stream;
        frame::put_header_block(&mut self.out, stream, block, end_stream, max);
        self.sent_end(stream);
        Ok(())
    }

    /// Sends trailers (a header block with END_STREAM, §8.1).
    pub fn send_trailers(
        &mut self,
        stream: u32,
        fields: &[(&[u8], &[u8])],
    ) -> Result<(), SendError> {
        let max = self.peer.max_frame_size as usize;
        let s = self.sendable_stream(stream)?;
        if !s.headers_sent {
            return Err(SendError::HeadersNotSent);
        }
        s.send_closed = true;
        let mut block = Vec::with_capacity(64);
        for (n, v) in fields {
            hpack::encode_field(&mut block, n, v);
        }
        frame::put_header_block(&mut self.out, stream, &block, true, max);
        self.sent_end(stream);
        Ok(())
    }

    /// After a frame that may have carried END_STREAM: a malformed
    /// request's stream is reset with PROTOCOL_ERROR once its response is
    /// out (RFC 9113 §8.1.1, see `Stream::malformed`); any other stream
    /// closes if both directions ended.
    fn sent_end(&mut self, stream: u32) {
        match self.streams.get(&stream) {
            Some(s) if s.send_closed && s.malformed => {
                self.reset_local(stream, ErrorCode::ProtocolError);
            }
            _ => self.maybe_close(stream),
        }
    }

    /// The most DATA payload the stream may send now: its window, the
    /// connection's, and the frame size (the smaller of the peer's
    /// SETTINGS_MAX_FRAME_SIZE and our `chunk_size`). 0 for a stream that
    /// cannot send: with the stream open and a zero window, it is stalled
    /// (see [`Connection::is_stalled`]).
    pub fn sendable(&self, stream: u32) -> usize {
        let Some(s) = self
            .streams
            .get(&stream)
            .filter(|s| !s.send_closed && s.headers_sent)
        else {
            return 0;
        };
        let chunk = s.chunk_size.unwrap_or(self.cfg.chunk_size);
        let frame = self.peer.max_frame_size.min(chunk) as usize;
        s.send
            .available()
            .min(self.send_conn.available())
            .min(frame)
    }

    /// The stream's own `http2_chunk_size` (nginx reads it from the
    /// request's location), in place of the connection's.
    pub fn set_chunk_size(&mut self, stream: u32, chunk: u32) {
        if let Some(s) = self.streams.get_mut(&stream) {
            s.chunk_size = Some(chunk.max(1));
        }
    }

    /// Grants a DATA frame of up to `want` bytes without copying: the
    /// windows are taken now, the caller writes the header and its own
    /// payload bytes. `end_stream` is kept only if the whole `want` fits.
    /// A zero-length END_STREAM frame is always granted. The END_STREAM
    /// of a malformed request's response leaves the stream for the caller
    /// to [`Connection::reset`] with PROTOCOL_ERROR once the payload is
    /// written (RFC 9113 §8.1.1; [`Connection::send_data`] does it).
    pub fn data_frame(
        &mut self,
        stream: u32,
        want: usize,
        end_stream: bool,
    ) -> Result<DataFrame, SendError> {
        let room = self.sendable(stream);
        let s = self.sendable_stream(stream)?;
        if !s.headers_sent {
            return Err(SendError::HeadersNotSent);
        }
        let len = want.min(room);
        let end_stream = end_stream && len == want;
        s.send.consume(len);
        s.send_closed = end_stream;
        let malformed = s.malformed;
        self.send_conn.consume(len);
        let f = if end_stream { flags::END_STREAM } else { 0 };
        let header = FrameHeader {
            len: len as u32,
            kind: Kind::Data,
            flags: f,
            stream,
        }
        .encode();
        if !(end_stream && malformed) {
            self.maybe_close(stream);
        }
        Ok(DataFrame {
            header,
            len,
            end_stream,
        })
    }

    /// Copies up to one frame of `data` into the output; returns how many
    /// bytes were taken (0 when the windows are shut).
    pub fn send_data(
        &mut self,
        stream: u32,
        data: &[u8],
        end_stream: bool,
    ) -> Result<usize, SendError> {
        let malformed = self.streams.get(&stream).is_some_and(|s| s.malformed);
        let f = self.data_frame(stream, data.len(), end_stream)?;
        if f.len == 0 && !f.end_stream {
            return Ok(0);
        }
        self.out.extend_from_slice(&f.header);
        self.out.extend_from_slice(&data[..f.len]);
        if f.end_stream && malformed {
            self.reset_local(stream, ErrorCode::ProtocolError);
        }
        Ok(f.len)
    }

    /// Resets a stream (RST_STREAM, §6.4): the exchange was abandoned, or
    /// the response is complete and the request body is not wanted
    /// (NO_ERROR, §8.1).
    pub fn reset(&mut self, stream: u32, code: ErrorCode) {
        if self.streams.contains_key(&stream) {
            self.reset_local(stream, code);
        }
    }

    /// Gives back `n` bytes of request body the engine has consumed (DATA
    /// payload of [`crate::Event::Data`]); queues WINDOW_UPDATE frames for
    /// the stream and the connection when enough credit gathered.
    pub fn release(&mut self, stream: u32, n: u32) {
        if let Some(s) = self.streams.get_mut(&stream)
            && !s.recv_closed
            && let Some(inc) = s.recv.release(n)
        {
            frame::put_window_update(&mut self.out, stream, inc);
        }
        self.release_conn(n);
    }

    /// Opens a stream's receive window up to `target` bytes at once
    /// (nginx's `ngx_http_v2_read_request_body`: a buffered body's stream
    /// gets the largest window, an unbuffered one its buffer's size).
    pub fn grow_window(&mut self, stream: u32, target: u32) {
        if let Some(s) = self.streams.get_mut(&stream)
            && !s.recv_closed
            && let Some(inc) = s.recv.grow(target)
        {
            frame::put_window_update(&mut self.out, stream, inc);
        }
    }

    pub(crate) fn release_conn(&mut self, n: u32) {
        if let Some(inc) = self.recv_conn.release(n) {
            frame::put_window_update(&mut self.out, 0, inc);
        }
    }

    /// Ends the connection now: GOAWAY with the last stream processed.
    pub fn go_away(&mut self, code: ErrorCode) {
        if !matches!(self.goaway, GoAway::Sent(_)) {
            frame::put_goaway(&mut self.out, self.last_processed, code.to_u32());
            self.goaway = GoAway::Sent(self.last_processed);
        }
    }

    /// Graceful shutdown (reload, QUIT, keepalive_requests): GOAWAY
    /// NO_ERROR with the last stream processed, now; the streams below it
    /// are served, later ones ignored, and the connection ends when none
    /// is left. One step, as nginx's (`ngx_http_v2_finalize_connection`
    /// and the keepalive_requests GOAWAY name the real last stream, which
    /// nginx's tests check), not RFC 9113 §6.8's suggested 2^31 - 1 and
    /// PING first.
    pub fn shutdown(&mut self) {
        self.go_away(ErrorCode::NoError);
    }

    /// The final GOAWAY was sent (or the peer's received) and no stream is
    /// left: write the output and close.
    pub fn is_finished(&self) -> bool {
        let going = matches!(self.goaway, GoAway::Sent(_)) || self.peer_goaway;
        matches!(self.phase, Phase::Failed(_)) || (going && self.streams.is_empty())
    }

    /// The stream's state, `None` when it is idle or closed.
    pub fn stream_state(&self, stream: u32) -> Option<StreamState> {
        self.streams.get(&stream).map(Stream::state)
    }

    /// Streams open or half-closed (the engine's idle timer runs at 0).
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// The stream's last PRIORITY (the default when none came).
    pub fn priority(&self, stream: u32) -> Option<Priority> {
        self.streams.get(&stream).map(|s| s.priority)
    }

    /// The order two streams' DATA goes out in: RFC 7540 §5.3's tree as
    /// nginx ranks it (see [`crate::priority`]).
    pub fn send_order(&self, a: u32, b: u32) -> std::cmp::Ordering {
        self.tree.cmp(a, b)
    }

    /// The response has begun and its window (the stream's or the
    /// connection's) is shut: a zero-window stall. The engine bounds it with
    /// its send timer (`send_timeout`), as nginx does, then resets.
    pub fn is_stalled(&self, stream: u32) -> bool {
        self.streams.get(&stream).is_some_and(|s| {
            s.headers_sent
                && !s.send_closed
                && (s.send.available() == 0 || self.send_conn.available() == 0)
        })
    }
}
