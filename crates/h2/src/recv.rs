//! The rules for each received frame type (RFC 9113 §6), each violation
//! with the error and scope the RFC gives it.

use crate::connection::{Block, Connection, Event, GoAway};
use crate::error::{ErrorCode, Violation};
use crate::frame::{self, FrameHeader, flags};
use crate::hpack::DecodeError;
use crate::stream::{Closer, Priority, Stream};
use crate::{limits, request};

type Step<'a> = Result<Option<Event<'a>>, Violation>;

const fn conn(code: ErrorCode, reason: &'static str) -> Violation {
    Violation::Conn(code, reason)
}

/// Strips padding (§6.1, §6.2): the pad length must be shorter than the payload.
fn unpad(h: &FrameHeader, payload: &[u8]) -> Result<(usize, usize), Violation> {
    if !h.has(flags::PADDED) {
        return Ok((0, payload.len()));
    }
    let pad = *payload.first().ok_or(conn(
        ErrorCode::FrameSizeError,
        "client sent padded frame with no pad length",
    ))? as usize;
    if pad >= payload.len() {
        return Err(conn(
            ErrorCode::ProtocolError,
            "client sent padded frame with incorrect length",
        ));
    }
    Ok((1, payload.len() - pad))
}

/// nginx's checks of a request body against its `content-length`
/// (`ngx_http_v2_process_request_body`), with its log lines: more than
/// declared as soon as it is, less at the end of the stream.
fn body_length_error(cl: Option<u64>, received: u64, end: bool) -> Option<&'static str> {
    let cl = cl?;
    if received > cl {
        return Some("client intended to send body data larger than declared");
    }
    if end && received != cl {
        return Some("client prematurely closed stream: request body is shorter than declared");
    }
    None
}

impl Connection {
    /// A body that broke its `content-length` made the request malformed
    /// (RFC 9113 §8.1.1): a stream error PROTOCOL_ERROR, sent now if the
    /// response is out already, else after it (`Stream::malformed`).
    fn malformed_body(&mut self, stream: u32, answered: bool) {
        if answered {
            self.reset_local(stream, ErrorCode::ProtocolError);
        } else {
            self.maybe_close(stream);
        }
    }

    pub(crate) fn on_data<'a>(&mut self, h: FrameHeader, payload: &'a [u8]) -> Step<'a> {
        if h.stream == 0 {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent DATA frame with incorrect identifier",
            ));
        }
        let (start, end) = unpad(&h, payload)?;
        let len = payload.len() as u32;
        if self.recv_conn.receive(len).is_err() {
            return Err(conn(
                ErrorCode::FlowControlError,
                "client violated connection flow control",
            ));
        }
        let end_stream = h.has(flags::END_STREAM);
        let Some(s) = self.streams.get_mut(&h.stream) else {
            // Closed or idle: the connection credit comes back at once.
            self.release_conn(len);
            return match self.closed_by(h.stream) {
                _ if h.stream > self.max_peer_stream => Err(conn(
                    ErrorCode::ProtocolError,
                    "client sent DATA frame on idle stream",
                )),
                Some(Closer::Us) => Ok(None),
                _ => Err(Violation::Stream(
                    h.stream,
                    ErrorCode::StreamClosed,
                    "client sent DATA frame for closed stream",
                )),
            };
        };
        if s.recv_closed {
            self.release_conn(len);
            return Err(Violation::Stream(
                h.stream,
                ErrorCode::StreamClosed,
                "client sent DATA frame for half-closed stream",
            ));
        }
        if s.recv.receive(len).is_err() {
            self.release_conn(len);
            return Err(Violation::Stream(
                h.stream,
                ErrorCode::FlowControlError,
                "client violated flow control",
            ));
        }
        let data = &payload[start..end];
        if s.skip_data {
            s.recv_closed = end_stream;
            self.release(h.stream, len);
            self.maybe_close(h.stream);
            return Ok(None);
        }
        s.received += data.len() as u64;
        if let Some(reason) = body_length_error(s.content_length, s.received, end_stream) {
            s.skip_data = true;
            s.recv_closed = end_stream;
            s.malformed = true;
            let answered = s.send_closed;
            self.release(h.stream, len);
            self.malformed_body(h.stream, answered);
            return Ok(Some(Event::BadBody {
                stream: h.stream,
                reason,
            }));
        }
        s.recv_closed = end_stream;
        let pad = len - data.len() as u32;
        self.payload_bytes += data.len() as u64;
        if pad > 0 {
            self.release(h.stream, pad);
        }
        self.maybe_close(h.stream);
        if data.is_empty() && !end_stream {
            return Ok(None);
        }
        Ok(Some(Event::Data {
            stream: h.stream,
            data,
            end_stream,
        }))
    }

    pub(crate) fn on_headers<'a>(&mut self, h: FrameHeader, payload: &'a [u8]) -> Step<'a> {
        if h.stream == 0 {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent HEADERS frame with incorrect identifier",
            ));
        }
        let (mut start, end) = unpad(&h, payload)?;
        let mut priority = None;
        if h.has(flags::PRIORITY) {
            let p: &[u8; 5] = payload
                .get(start..start + 5)
                .filter(|_| start + 5 <= end)
                .and_then(|p| p.try_into().ok())
                .ok_or(conn(
                    ErrorCode::FrameSizeError,
                    "client sent HEADERS frame with incorrect length",
                ))?;
            let p = Priority::parse(p);
            if p.dependency == h.stream {
                // RFC 9113 §5.3.1 makes it a stream error; nginx ends the
                // connection, before the stream counts as seen (h2_priority.t
                // "HEADERS self": GOAWAY with last stream 0).
                return Err(conn(
                    ErrorCode::ProtocolError,
                    "client sent HEADERS frame with incorrect dependency",
                ));
            }
            priority = Some(p);
            start += 5;
        }
        // nginx's last_sid is the stream's as soon as its HEADERS arrive
        // (ngx_http_v2_state_headers), so that a GOAWAY for an error in
        // its header block names it (h2_headers.t "invalid index - GOAWAY
        // last stream").
        if h.stream % 2 == 1
            && h.stream > self.max_peer_stream
            && !matches!(self.goaway, GoAway::Sent(_))
        {
            self.last_processed = h.stream;
        }
        let block = Block {
            stream: h.stream,
            end_stream: h.has(flags::END_STREAM),
            priority,
            bytes: std::mem::take(&mut self.block_buf),
            continuations: 0,
        };
        self.block = Some(block);
        self.on_fragment(&payload[start..end], h.has(flags::END_HEADERS))
    }

    pub(crate) fn on_continuation<'a>(&mut self, h: FrameHeader, payload: &'a [u8]) -> Step<'a> {
        let Some(b) = self.block.as_mut() else {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent unexpected CONTINUATION frame",
            ));
        };
        // Empty or tiny CONTINUATIONs do not grow the block: counted too.
        b.continuations += 1;
        if b.continuations > limits::MAX_CONTINUATION_FRAMES {
            return Err(conn(
                ErrorCode::EnhanceYourCalm,
                "client sent too many CONTINUATION frames",
            ));
        }
        self.on_fragment(payload, h.has(flags::END_HEADERS))
    }

    /// Adds a fragment to the block; the bound stops a CONTINUATION flood
    /// at the frame that passes it (CVE-2024-27316).
    fn on_fragment<'a>(&mut self, fragment: &[u8], end_headers: bool) -> Step<'a> {
        let max = self.cfg.max_header_block_size;
        let Some(b) = self.block.as_mut() else {
            return Ok(None);
        };
        if b.bytes.len() + fragment.len() > max {
            return Err(conn(
                ErrorCode::EnhanceYourCalm,
                "client sent too large header block",
            ));
        }
        b.bytes.extend_from_slice(fragment);
        if !end_headers {
            return Ok(None);
        }
        let b = self
            .block
            .take()
            .unwrap_or_else(|| unreachable!("block checked above"));
        self.on_block(b)
    }

    /// A whole header block: decoded first whatever becomes of the stream,
    /// so the HPACK table stays in step with the peer's (§4.3).
    fn on_block<'a>(&mut self, b: Block) -> Step<'a> {
        let mut fields = std::mem::take(&mut self.fields);
        let decoded = self.decoder.decode(
            &b.bytes,
            self.cfg.max_field_size as usize,
            self.cfg.max_header_list_size as usize,
            &mut fields,
        );
        let step = match decoded {
            Err(DecodeError::Length) => Err(conn(
                ErrorCode::FrameSizeError,
                "client sent header block with incorrect length",
            )),
            Err(DecodeError::Compression) => Err(conn(
                ErrorCode::CompressionError,
                "client sent invalid header block",
            )),
            // nginx: "client sent too large header", ENHANCE_YOUR_CALM.
            Err(DecodeError::ListTooLarge) => Err(conn(
                ErrorCode::EnhanceYourCalm,
                "client sent too large header",
            )),
            Ok(()) if self.streams.contains_key(&b.stream) => self.on_trailers(&b, &fields),
            Ok(()) => self.on_request(&b, &fields),
        };
        self.fields = fields;
        self.block_buf = b.bytes;
        self.block_buf.clear();
        step
    }

    fn on_trailers<'a>(&mut self, b: &Block, fields: &crate::hpack::FieldList) -> Step<'a> {
        let id = b.stream;
        let s = self
            .streams
            .get_mut(&id)
            .unwrap_or_else(|| unreachable!("caller checked"));
        if s.recv_closed {
            return Err(Violation::Stream(
                id,
                ErrorCode::StreamClosed,
                "client sent HEADERS frame for half-closed stream",
            ));
        }
        if !b.end_stream {
            return Err(Violation::Stream(
                id,
                ErrorCode::ProtocolError,
                "client sent trailers without END_STREAM",
            ));
        }
        let fields = request::trailers(fields)
            .map_err(|why| Violation::Stream(id, ErrorCode::ProtocolError, why))?;
        s.recv_closed = true;
        let short = body_length_error(s.content_length, s.received, true);
        let skip = s.skip_data;
        s.malformed |= short.is_some();
        let answered = s.send_closed;
        match short {
            Some(_) if !skip => self.malformed_body(id, answered),
            _ => self.maybe_close(id),
        }
        if skip {
            return Ok(None);
        }
        if let Some(reason) = short {
            return Ok(Some(Event::BadBody { stream: id, reason }));
        }
        Ok(Some(Event::Trailers { stream: id, fields }))
    }

    fn on_request<'a>(&mut self, b: &Block, fields: &crate::hpack::FieldList) -> Step<'a> {
        let id = b.stream;
        if id.is_multiple_of(2) {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent HEADERS frame with incorrect identifier",
            ));
        }
        if id <= self.max_peer_stream {
            return match self.closed_by(id) {
                Some(Closer::Us) => Ok(None),
                // RFC 9113 §5.1 has STREAM_CLOSED here; nginx answers a
                // reused identifier with PROTOCOL_ERROR (h2.t "dup stream").
                Some(Closer::Peer) => Err(conn(
                    ErrorCode::ProtocolError,
                    "client sent HEADERS frame with incorrect identifier",
                )),
                None => Err(conn(
                    ErrorCode::ProtocolError,
                    "client sent HEADERS frame with incorrect identifier",
                )),
            };
        }
        self.max_peer_stream = id;
        if matches!(self.goaway, GoAway::Sent(last) if id > last) {
            return Ok(None); // §6.8: not processed, the client may retry it elsewhere
        }
        if self.streams.len() >= self.cfg.max_concurrent_streams as usize {
            return Err(Violation::Stream(
                id,
                ErrorCode::RefusedStream,
                "concurrent streams exceeded",
            ));
        }
        // A body may follow before our SETTINGS are acknowledged, while
        // the peer counts on the protocol's window and ours is smaller:
        // nginx refuses the stream (ngx_http_v2_state_headers).
        if !self.settings_acked && !b.end_stream && self.cfg.initial_window < limits::DEFAULT_WINDOW
        {
            return Err(Violation::Stream(
                id,
                ErrorCode::RefusedStream,
                "client sent stream with data before settings were acknowledged",
            ));
        }
        self.new_streams += 1;
        if self.new_streams > 2 * self.cfg.max_concurrent_streams {
            return Err(Violation::Stream(
                id,
                ErrorCode::RefusedStream,
                "client sent too many streams at once",
            ));
        }
        let parsed = request::request_head(fields);
        let mut malformed = parsed.is_err();
        let mut head = parsed.unwrap_or_else(request::bad_request);
        head.block_len = b.bytes.len();
        // Before our SETTINGS are acknowledged the peer may count on the
        // protocol's initial window; a smaller one of ours applies after.
        let recv_window = match self.settings_acked {
            true => self.cfg.initial_window,
            false => self.cfg.initial_window.max(limits::DEFAULT_WINDOW),
        };
        let mut s = Stream::new(self.peer.initial_window_size, recv_window);
        s.content_length = head.content_length;
        s.priority = b.priority.unwrap_or_default();
        if b.end_stream {
            // nginx's ngx_http_v2_run_request: a 400 (the head's `bad`).
            if head.content_length.is_some_and(|cl| cl != 0) && head.bad.is_none() {
                head.bad = Some((400, "client prematurely closed stream"));
                malformed = true;
            }
            s.recv_closed = true;
        }
        s.malformed = malformed;
        self.streams.insert(id, s);
        self.tree.open(id, b.priority);
        self.last_processed = id;
        self.payload_bytes += b.bytes.len() as u64;
        self.priority_budget = self
            .priority_budget
            .saturating_add(self.cfg.max_concurrent_streams);
        Ok(Some(Event::Request {
            stream: id,
            head: Box::new(head),
            end_stream: b.end_stream,
        }))
    }

    pub(crate) fn on_priority<'a>(&mut self, h: FrameHeader, payload: &[u8]) -> Step<'a> {
        if h.stream == 0 {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent PRIORITY frame with incorrect identifier",
            ));
        }
        let Ok(p) = <&[u8; 5]>::try_from(payload) else {
            return Err(Violation::Stream(
                h.stream,
                ErrorCode::FrameSizeError,
                "client sent PRIORITY frame with incorrect length",
            ));
        };
        self.priority_budget = self.priority_budget.saturating_sub(1);
        if self.priority_budget == 0 {
            return Err(conn(
                ErrorCode::EnhanceYourCalm,
                "client sent too many PRIORITY frames",
            ));
        }
        let priority = Priority::parse(p);
        if priority.dependency == h.stream {
            // A connection error as nginx's (RFC 9113 §5.3.1: stream error).
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent PRIORITY frame with incorrect dependency",
            ));
        }
        if let Some(s) = self.streams.get_mut(&h.stream) {
            s.priority = priority;
        }
        self.tree.prioritize(h.stream, priority);
        Ok(Some(Event::Priority {
            stream: h.stream,
            priority,
        }))
    }

    pub(crate) fn on_rst_stream<'a>(&mut self, h: FrameHeader, payload: &[u8]) -> Step<'a> {
        let Ok(code) = <[u8; 4]>::try_from(payload) else {
            return Err(conn(
                ErrorCode::FrameSizeError,
                "client sent RST_STREAM frame with incorrect length",
            ));
        };
        if h.stream == 0 || h.stream > self.max_peer_stream {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent RST_STREAM frame for idle stream",
            ));
        }
        let Some(s) = self.streams.remove(&h.stream) else {
            return Ok(None);
        };
        self.remember_closed(h.stream, Closer::Peer);
        // Rapid reset (CVE-2023-44487): a reset before the response ended.
        if !s.send_closed {
            self.reset_budget = self.reset_budget.saturating_sub(1);
            if self.reset_budget == 0 {
                return Err(conn(
                    ErrorCode::EnhanceYourCalm,
                    "client reset too many streams",
                ));
            }
        }
        let code = ErrorCode::from_u32(u32::from_be_bytes(code));
        Ok(Some(Event::Reset {
            stream: h.stream,
            code,
            remote: true,
            reason: "client reset stream",
        }))
    }

    pub(crate) fn on_settings<'a>(&mut self, h: FrameHeader, payload: &[u8]) -> Step<'a> {
        if h.stream != 0 {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent SETTINGS frame with incorrect identifier",
            ));
        }
        if h.has(flags::ACK) {
            if !payload.is_empty() {
                return Err(conn(
                    ErrorCode::FrameSizeError,
                    "client sent SETTINGS frame with the ACK flag and nonzero length",
                ));
            }
            self.settings_acked = true;
            return Ok(None);
        }
        if !payload.len().is_multiple_of(6) {
            return Err(conn(
                ErrorCode::FrameSizeError,
                "client sent SETTINGS frame with incorrect length",
            ));
        }
        let old = self
            .peer
            .apply(payload)
            .map_err(|(code, why)| conn(code, why))?;
        let delta = i64::from(self.peer.initial_window_size) - i64::from(old);
        if delta != 0 {
            for s in self.streams.values_mut() {
                if s.send.adjust(delta).is_err() {
                    return Err(conn(
                        ErrorCode::FlowControlError,
                        "client sent SETTINGS frame with incorrect INITIAL_WINDOW_SIZE value",
                    ));
                }
            }
        }
        frame::put_header(&mut self.out, frame::Kind::Settings, flags::ACK, 0, 0);
        Ok(Some(Event::Settings))
    }

    pub(crate) fn on_ping<'a>(&mut self, h: FrameHeader, payload: &[u8]) -> Step<'a> {
        if h.stream != 0 {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent PING frame with incorrect identifier",
            ));
        }
        let Ok(data) = <[u8; 8]>::try_from(payload) else {
            return Err(conn(
                ErrorCode::FrameSizeError,
                "client sent PING frame with incorrect length",
            ));
        };
        if !h.has(flags::ACK) {
            frame::put_ping(&mut self.out, true, data);
        }
        Ok(None)
    }

    pub(crate) fn on_goaway<'a>(&mut self, h: FrameHeader, payload: &'a [u8]) -> Step<'a> {
        if h.stream != 0 {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent GOAWAY frame with incorrect identifier",
            ));
        }
        if payload.len() < 8 {
            return Err(conn(
                ErrorCode::FrameSizeError,
                "client sent GOAWAY frame with incorrect length",
            ));
        }
        let last_stream =
            u32::from_be_bytes([payload[0], payload[1], payload[2], payload[3]]) & 0x7fff_ffff;
        let code = ErrorCode::from_u32(u32::from_be_bytes([
            payload[4], payload[5], payload[6], payload[7],
        ]));
        self.peer_goaway = true;
        Ok(Some(Event::GoAway {
            last_stream,
            code,
            debug: &payload[8..],
        }))
    }

    pub(crate) fn on_window_update<'a>(&mut self, h: FrameHeader, payload: &[u8]) -> Step<'a> {
        let Ok(b) = <[u8; 4]>::try_from(payload) else {
            return Err(conn(
                ErrorCode::FrameSizeError,
                "client sent WINDOW_UPDATE frame with incorrect length",
            ));
        };
        let inc = u32::from_be_bytes(b) & 0x7fff_ffff;
        if h.stream == 0 {
            if inc == 0 {
                return Err(conn(
                    ErrorCode::ProtocolError,
                    "client sent WINDOW_UPDATE frame with incorrect window increment 0",
                ));
            }
            if self.send_conn.adjust(i64::from(inc)).is_err() {
                return Err(conn(
                    ErrorCode::FlowControlError,
                    "client violated connection flow control: window overflow",
                ));
            }
            return Ok(Some(Event::WindowUpdate { stream: 0 }));
        }
        if h.stream > self.max_peer_stream {
            return Err(conn(
                ErrorCode::ProtocolError,
                "client sent WINDOW_UPDATE frame for idle stream",
            ));
        }
        if inc == 0 {
            return Err(Violation::Stream(
                h.stream,
                ErrorCode::ProtocolError,
                "client sent WINDOW_UPDATE frame with incorrect window increment 0",
            ));
        }
        let Some(s) = self.streams.get_mut(&h.stream) else {
            return Ok(None);
        };
        if s.send.adjust(i64::from(inc)).is_err() {
            return Err(Violation::Stream(
                h.stream,
                ErrorCode::FlowControlError,
                "client violated flow control: window overflow",
            ));
        }
        Ok(Some(Event::WindowUpdate { stream: h.stream }))
    }
}
