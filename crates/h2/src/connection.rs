//! The connection: what it holds, and the receive loop's frame layer
//! (preface, frame size, CONTINUATION sequencing, flood accounting). The
//! per-frame rules are in recv.rs, the sending side in send.rs.

use std::collections::{HashMap, VecDeque};

use crate::error::{ConnError, ErrorCode, Violation};
use crate::flow::{RecvWindow, SendWindow};
use crate::frame::{self, FrameHeader, HEADER_LEN, Kind, PREFACE};
use crate::hpack::{Decoder, FieldList};
use crate::limits;
use crate::request::RequestHead;
use crate::settings::{self, PeerSettings};
use crate::stream::{Closer, Priority, Stream};

/// The limits a connection enforces; the engine fills them from nginx's
/// directives (`http2_max_concurrent_streams`, `http2_body_preread_size`,
/// `http2_chunk_size`, `large_client_header_buffers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub max_concurrent_streams: u32,
    /// Each stream's receive window (SETTINGS_INITIAL_WINDOW_SIZE).
    pub initial_window: u32,
    /// The most DATA payload per frame we send.
    pub chunk_size: u32,
    /// A decoded field name or value (nginx: `large_client_header_buffers`' size).
    pub max_field_size: u32,
    /// The decoded list's names and values together (nginx's header_limit:
    /// `large_client_header_buffers` size × number).
    pub max_header_list_size: u32,
    pub max_header_block_size: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_concurrent_streams: limits::MAX_CONCURRENT_STREAMS,
            initial_window: limits::BODY_PREREAD_SIZE,
            chunk_size: limits::CHUNK_SIZE,
            max_field_size: limits::MAX_FIELD_SIZE,
            max_header_list_size: limits::MAX_HEADER_LIST_SIZE,
            max_header_block_size: limits::MAX_HEADER_BLOCK_SIZE,
        }
    }
}

/// A frame (or header block) the connection has only part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incomplete {
    Headers(u32),
    Data(u32),
}

/// What one received frame meant for the engine.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A new request: hand it to an exchange. `end_stream`: no body follows.
    Request {
        stream: u32,
        head: Box<RequestHead>,
        end_stream: bool,
    },
    /// Request body bytes (padding removed), borrowed from the input. Give
    /// the credit back with [`Connection::release`] as they are consumed.
    Data {
        stream: u32,
        data: &'a [u8],
        end_stream: bool,
    },
    /// The request's trailer section; the request body is complete.
    Trailers { stream: u32, fields: FieldList },
    /// The request body's length differs from its `content-length`: RFC
    /// 9113 §8.1.1 makes the stream malformed (a stream error), nginx
    /// answers 400 (`ngx_http_v2_process_request_body` returns
    /// NGX_HTTP_BAD_REQUEST) and drops the rest of the body, as done here:
    /// no reset is queued, later DATA is dropped with its credit given
    /// back, `reason` is nginx's log line (info).
    BadBody { stream: u32, reason: &'static str },
    /// The stream is gone: the peer's RST_STREAM (`remote`), or our stream
    /// error (RST_STREAM already queued) with the reason to log. A local
    /// reset may name a stream the engine never saw (refused with
    /// REFUSED_STREAM, or a frame for a closed stream): ignore those.
    Reset {
        stream: u32,
        code: ErrorCode,
        remote: bool,
        reason: &'static str,
    },
    /// A window grew (stream 0: the connection's): a blocked stream may
    /// send again.
    WindowUpdate { stream: u32 },
    /// The peer changed SETTINGS: send windows and the frame size may differ.
    Settings,
    /// PRIORITY for the scheduler (also given in [`Connection::priority`]).
    Priority { stream: u32, priority: Priority },
    /// The peer is going away: streams above `last_stream` were not
    /// processed by it (they are ours; a server has none) and no new
    /// streams will come.
    GoAway {
        last_stream: u32,
        code: ErrorCode,
        debug: &'a [u8],
    },
}

/// The result of [`Connection::recv`]: as the HTTP/1 codec's `Partial`,
/// "give me more bytes", or one frame done.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    /// Not a whole frame (or preface) yet: call again with more input; the
    /// input given so far must be given again.
    Partial,
    /// `consumed` bytes used; drop them and call again with the rest.
    Frame {
        consumed: usize,
        event: Option<Event<'a>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Preface,
    Ready,
    /// A connection error was sent; nothing more is read.
    Failed(ConnError),
}

/// Our GOAWAY (RFC 9113 §6.8): not sent, or sent with this last stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GoAway {
    None,
    Sent(u32),
}

/// A header block being assembled from HEADERS + CONTINUATION.
pub(crate) struct Block {
    pub stream: u32,
    pub end_stream: bool,
    pub priority: Option<Priority>,
    pub bytes: Vec<u8>,
    /// CONTINUATION frames so far.
    pub continuations: u32,
}

/// One HTTP/2 connection, server side, sans I/O: feed it bytes with
/// [`Connection::recv`], write what [`Connection::output`] holds.
pub struct Connection {
    pub(crate) cfg: Config,
    pub(crate) phase: Phase,
    pub(crate) peer: PeerSettings,
    pub(crate) decoder: Decoder,
    pub(crate) fields: FieldList,
    pub(crate) streams: HashMap<u32, Stream>,
    pub(crate) closed: VecDeque<(u32, Closer)>,
    /// The highest stream the peer opened (or tried to): above it, idle.
    pub(crate) max_peer_stream: u32,
    /// The highest stream we processed: GOAWAY's last-stream-id.
    pub(crate) last_processed: u32,
    pub(crate) send_conn: SendWindow,
    pub(crate) recv_conn: RecvWindow,
    pub(crate) block: Option<Block>,
    /// The header block buffer, kept between blocks (no allocation per request).
    pub(crate) block_buf: Vec<u8>,
    pub(crate) out: Vec<u8>,
    pub(crate) goaway: GoAway,
    pub(crate) peer_goaway: bool,
    pub(crate) total_bytes: u64,
    pub(crate) payload_bytes: u64,
    pub(crate) reset_budget: u32,
    pub(crate) priority_budget: u32,
    pub(crate) new_streams: u32,
    /// The peer acknowledged our SETTINGS: until then it may use the
    /// protocol's initial window (§6.9.2), not ours.
    pub(crate) settings_acked: bool,
    /// RFC 7540 §5.3's dependency tree, for the order streams send in.
    pub(crate) tree: crate::priority::Tree,
}

impl Connection {
    /// A connection whose SETTINGS (and the connection window raised to
    /// 2^31 - 1, as nginx does) are already in [`Connection::output`]: the
    /// server may send them before the client's preface arrives (§3.4).
    pub fn new(cfg: Config) -> Connection {
        let mut out = Vec::with_capacity(64);
        let max_frame = limits::MAX_RECV_FRAME_SIZE;
        settings::put_ours(
            &mut out,
            cfg.max_concurrent_streams,
            cfg.initial_window,
            cfg.max_header_list_size,
            max_frame,
        );
        frame::put_window_update(&mut out, 0, limits::MAX_WINDOW - limits::DEFAULT_WINDOW);
        Connection {
            cfg,
            phase: Phase::Preface,
            peer: PeerSettings::default(),
            decoder: Decoder::default(),
            fields: FieldList::default(),
            streams: HashMap::new(),
            closed: VecDeque::new(),
            max_peer_stream: 0,
            last_processed: 0,
            send_conn: SendWindow::new(limits::DEFAULT_WINDOW),
            recv_conn: RecvWindow::new(limits::MAX_WINDOW),
            block: None,
            block_buf: Vec::new(),
            out,
            goaway: GoAway::None,
            peer_goaway: false,
            total_bytes: 0,
            payload_bytes: 0,
            reset_budget: limits::RAPID_RESET_BUDGET,
            priority_budget: cfg.max_concurrent_streams.max(limits::PRIORITY_LIMIT_MIN),
            new_streams: 0,
            settings_acked: false,
            tree: crate::priority::Tree::default(),
        }
    }

    /// Call before each batch of input read from the socket: nginx allows
    /// at most 2 × max concurrent streams to be opened per read event
    /// (REFUSED_STREAM past that), which bounds rapid reset per read.
    pub fn start_read(&mut self) {
        self.new_streams = 0;
    }

    /// Processes the preface or one frame from the start of `input`.
    /// A connection error queues GOAWAY and is returned, and every later
    /// call returns it again: write the output, then close.
    pub fn recv<'a>(&mut self, input: &'a [u8]) -> Result<Progress<'a>, ConnError> {
        match self.phase {
            Phase::Failed(e) => return Err(e),
            Phase::Preface => return self.recv_preface(input),
            _ => {}
        }
        let Some(h) = FrameHeader::parse(input) else {
            return Ok(Progress::Partial);
        };
        // nginx advertises the largest SETTINGS_MAX_FRAME_SIZE and reads
        // frames as a stream; its test client sends a request's header
        // block in one HEADERS frame past 2^14 (h2_headers.t, a 32k
        // `:path`). A header frame is taken up to the header block's own
        // bound, which buffers the block anyway; other frames keep 2^14.
        let header_frame = matches!(h.kind, Kind::Headers | Kind::Continuation)
            && h.len as usize <= self.cfg.max_header_block_size;
        if h.len > limits::MAX_RECV_FRAME_SIZE && !header_frame {
            return Err(self.fail(
                ErrorCode::FrameSizeError,
                "client sent frame larger than SETTINGS_MAX_FRAME_SIZE",
            ));
        }
        if h.kind == Kind::PushPromise {
            // nginx refuses it from the frame header, before any payload
            // (h2.t "client-initiated PUSH_PROMISE").
            return Err(self.fail(ErrorCode::ProtocolError, "client sent PUSH_PROMISE frame"));
        }
        let total = HEADER_LEN + h.len as usize;
        let Some(payload) = input.get(HEADER_LEN..total) else {
            self.scan_partial_block(&h, &input[HEADER_LEN..])?;
            return Ok(Progress::Partial);
        };
        self.total_bytes += total as u64;
        match self.frame(h, payload) {
            Ok(event) => {
                if self.total_bytes / limits::FLOOD_RATIO
                    > self.payload_bytes + limits::FLOOD_ALLOWANCE
                {
                    return Err(self.fail(ErrorCode::NoError, "http2 flood detected"));
                }
                if self.out.len() > limits::MAX_UNSENT_OUTPUT {
                    return Err(self.fail(
                        ErrorCode::EnhanceYourCalm,
                        "http2 flood detected: output not read",
                    ));
                }
                Ok(Progress::Frame {
                    consumed: total,
                    event,
                })
            }
            Err(Violation::Conn(code, reason)) => Err(self.fail(code, reason)),
            Err(Violation::Stream(stream, code, reason)) => {
                // MadeYouReset (CVE-2025-8671): a peer that makes us reset
                // open streams spends the same budget as one resetting them.
                if self.streams.contains_key(&stream) {
                    self.reset_budget = self.reset_budget.saturating_sub(1);
                    if self.reset_budget == 0 {
                        let why = "client made the server reset too many streams";
                        return Err(self.fail(ErrorCode::EnhanceYourCalm, why));
                    }
                }
                self.reset_local(stream, code);
                let event = Some(Event::Reset {
                    stream,
                    code,
                    remote: false,
                    reason,
                });
                Ok(Progress::Frame {
                    consumed: total,
                    event,
                })
            }
        }
    }

    /// RFC 9113 3.4 has the client's SETTINGS right after the preface;
    /// nginx takes any frame there (ngx_http_v2_state_preface_end goes to
    /// the frame head), and nginx's own test client starts with the ACK of
    /// the server's SETTINGS: a drop-in takes it too
    /// (tests/errors.rs `preface_and_first_frame`).
    fn recv_preface<'a>(&mut self, input: &'a [u8]) -> Result<Progress<'a>, ConnError> {
        let n = input.len().min(PREFACE.len());
        if input[..n] != PREFACE[..n] {
            return Err(self.fail(ErrorCode::ProtocolError, "invalid http2 connection preface"));
        }
        if n < PREFACE.len() {
            return Ok(Progress::Partial);
        }
        self.phase = Phase::Ready;
        Ok(Progress::Frame {
            consumed: PREFACE.len(),
            event: None,
        })
    }

    /// nginx decodes a header block as it arrives, so an integer too long
    /// to be valid ends the connection before the frame is whole (h2_headers.t
    /// "too long index"); the same check runs here on a partial HEADERS
    /// frame (not padded, no priority: the plain case a client sends).
    fn scan_partial_block(&mut self, h: &FrameHeader, partial: &[u8]) -> Result<(), ConnError> {
        if h.kind == Kind::Headers
            && self.block.is_none()
            && !h.has(frame::flags::PADDED | frame::flags::PRIORITY)
            && crate::hpack::scan_partial(partial).is_err()
        {
            if h.stream % 2 == 1 && h.stream > self.max_peer_stream {
                self.last_processed = h.stream;
            }
            return Err(self.fail(
                ErrorCode::CompressionError,
                "client sent invalid header block",
            ));
        }
        Ok(())
    }

    /// Sequencing rules that hold whatever the frame: nothing but
    /// CONTINUATION inside a header block (§6.10).
    fn frame<'a>(
        &mut self,
        h: FrameHeader,
        payload: &'a [u8],
    ) -> Result<Option<Event<'a>>, Violation> {
        if let Some(b) = &self.block
            && (h.kind != Kind::Continuation || h.stream != b.stream)
        {
            return Err(Violation::Conn(
                ErrorCode::ProtocolError,
                "client sent frame inside a header block",
            ));
        }
        match h.kind {
            Kind::Data => self.on_data(h, payload),
            Kind::Headers => self.on_headers(h, payload),
            Kind::Continuation => self.on_continuation(h, payload),
            Kind::Priority => self.on_priority(h, payload),
            Kind::RstStream => self.on_rst_stream(h, payload),
            Kind::Settings => self.on_settings(h, payload),
            Kind::PushPromise => Err(Violation::Conn(
                ErrorCode::ProtocolError,
                "client sent PUSH_PROMISE frame",
            )),
            Kind::Ping => self.on_ping(h, payload),
            Kind::GoAway => self.on_goaway(h, payload),
            Kind::WindowUpdate => self.on_window_update(h, payload),
            Kind::Unknown(_) => Ok(None),
        }
    }

    /// Queues GOAWAY for a connection error; the connection reads no more.
    pub(crate) fn fail(&mut self, code: ErrorCode, reason: &'static str) -> ConnError {
        let e = ConnError { code, reason };
        frame::put_goaway(&mut self.out, self.last_processed, code.to_u32());
        self.phase = Phase::Failed(e);
        self.goaway = GoAway::Sent(self.last_processed);
        e
    }

    /// Remembers a closed stream, forgetting the oldest past the bound.
    pub(crate) fn remember_closed(&mut self, stream: u32, by: Closer) {
        if self.closed.len() == limits::CLOSED_STREAMS_REMEMBERED {
            self.closed.pop_front();
        }
        self.closed.push_back((stream, by));
        self.tree.close(stream);
    }

    pub(crate) fn closed_by(&self, stream: u32) -> Option<Closer> {
        self.closed
            .iter()
            .rev()
            .find(|(s, _)| *s == stream)
            .map(|(_, c)| *c)
    }

    /// What the unconsumed `input` (the bytes [`Connection::recv`] left
    /// as [`Progress::Partial`]) waits to complete, for the engine's
    /// per-stream timers: a header block (a HEADERS frame cut short, or
    /// CONTINUATION still to come) or a DATA frame of a stream. nginx arms
    /// `client_header_timeout` (`ngx_http_v2_state_headers_save`) or
    /// `client_body_timeout` (the request body's read timer) for them.
    pub fn incomplete(&self, input: &[u8]) -> Option<Incomplete> {
        // A stream already seen (trailers, or one timed out) has no
        // header timer.
        if let Some(b) = self.block.as_ref() {
            return (b.stream > self.max_peer_stream).then_some(Incomplete::Headers(b.stream));
        }
        if !matches!(self.phase, Phase::Ready) {
            return None;
        }
        let h = FrameHeader::parse(input)?;
        match h.kind {
            Kind::Headers if h.stream % 2 == 1 && h.stream > self.max_peer_stream => {
                Some(Incomplete::Headers(h.stream))
            }
            Kind::Data if self.streams.contains_key(&h.stream) => Some(Incomplete::Data(h.stream)),
            _ => None,
        }
    }

    /// The stream's request did not arrive in time (its header block or
    /// its body): RST_STREAM PROTOCOL_ERROR, as nginx's
    /// `ngx_http_v2_close_stream` for a timed-out stream. A stream whose
    /// HEADERS are still incomplete counts as opened and closed by us, so
    /// the rest of its header block is decoded (for HPACK) and dropped.
    /// False: no such stream (closed meanwhile).
    pub fn time_out(&mut self, stream: u32) -> bool {
        if self.streams.contains_key(&stream) {
            self.reset_local(stream, ErrorCode::ProtocolError);
            return true;
        }
        if stream % 2 == 1 && stream > self.max_peer_stream {
            self.max_peer_stream = stream;
            if !matches!(self.goaway, GoAway::Sent(_)) {
                self.last_processed = stream;
            }
            self.reset_local(stream, ErrorCode::ProtocolError);
            return true;
        }
        false
    }

    /// Sends RST_STREAM for a stream error and forgets the stream.
    pub(crate) fn reset_local(&mut self, stream: u32, code: ErrorCode) {
        frame::put_rst_stream(&mut self.out, stream, code.to_u32());
        if self.streams.remove(&stream).is_some() || self.closed_by(stream).is_none() {
            self.remember_closed(stream, Closer::Us);
        }
    }

    /// Removes a stream whose both directions ended. A stream that ends
    /// normally gives one back to the rapid-reset budget.
    pub(crate) fn maybe_close(&mut self, stream: u32) {
        if self.streams.get(&stream).is_some_and(Stream::is_closed) {
            self.streams.remove(&stream);
            self.remember_closed(stream, Closer::Peer);
            self.reset_budget = (self.reset_budget + 1).min(limits::RAPID_RESET_BUDGET);
        }
    }
}
