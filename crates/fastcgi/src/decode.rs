//! The response side: the application's byte stream turned into events, as
//! nginx's `ngx_http_fastcgi_process_record` and its input filters read it.
//!
//! Each header byte is judged as it arrives, in nginx's order (version,
//! type, request id high byte, low byte), so an error is reported at the
//! same byte and with the same words as nginx's error log. Record content is
//! reported in place, as ranges of the caller's input, piece by piece: no
//! copying and no need for a whole record to arrive.
//!
//! Differences from nginx, both about records nginx never provokes:
//! - `GET_VALUES_RESULT` and `UNKNOWN_TYPE` (answers to management records,
//!   which nginx never sends) are skipped and reported as
//!   [`Event::Ignored`], whatever their request id; nginx calls them an
//!   invalid record type. An engine that wants nginx's refusal turns the
//!   event into [`DecodeError::InvalidType`].
//! - [`Event::End`] comes once the whole `END_REQUEST` record (content and
//!   padding) has arrived; nginx without `fastcgi_keep_conn` stops reading
//!   at its header. The statuses are in the content, so they need it.

use crate::{HEADER_LEN, Header, RecordType, VERSION};
use std::ops::Range;

/// A protocol error, worded as nginx's error log words it (level `error`;
/// nginx answers 502 and closes the upstream connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("upstream sent unsupported FastCGI protocol version: {0}")]
    UnsupportedVersion(u8),
    #[error("upstream sent invalid FastCGI record type: {0}")]
    InvalidType(u8),
    #[error("upstream sent unexpected FastCGI request id high byte: {0}")]
    RequestIdHigh(u8),
    #[error("upstream sent unexpected FastCGI request id low byte: {0}")]
    RequestIdLow(u8),
}

/// `protocolStatus` of `END_REQUEST` (FastCGI 1.0 §5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolStatus {
    RequestComplete,
    /// The application cannot multiplex and was sent a second request.
    CantMpxConn,
    /// The application is out of some resource (e.g. database connections).
    Overloaded,
    /// The application does not know the role asked for.
    UnknownRole,
    Other(u8),
}

impl ProtocolStatus {
    pub fn from_u8(b: u8) -> ProtocolStatus {
        match b {
            0 => ProtocolStatus::RequestComplete,
            1 => ProtocolStatus::CantMpxConn,
            2 => ProtocolStatus::Overloaded,
            3 => ProtocolStatus::UnknownRole,
            n => ProtocolStatus::Other(n),
        }
    }
}

/// The content of `END_REQUEST` (§5.5). A record shorter than the
/// specification's 8 bytes reads as if zero-filled; nginx reads neither field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndRequest {
    pub app_status: u32,
    pub protocol_status: ProtocolStatus,
}

/// What one [`Decoder::decode`] call found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// `STDOUT` content: `input[range]`.
    Stdout(Range<usize>),
    /// `STDERR` content: `input[range]` (nginx logs each piece as
    /// `FastCGI sent in stderr: "..."` with [`stderr_text`] of it).
    Stderr(Range<usize>),
    /// An empty `STDOUT` record: the application closed its output. Before
    /// the response head is complete nginx calls this
    /// [`crate::HeadError::PrematureStdout`].
    StdoutEnd,
    /// The request is over; nothing after it belongs to this request.
    End(EndRequest),
    /// A management record skipped whole (see the module docs).
    Ignored(RecordType),
}

/// Result of one [`Decoder::decode`] call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of input used. With an event, the event's range ends at or
    /// before it: call again with `input[consumed..]`. Without one, either
    /// all of input was used (more is needed) or the decoder is done.
    pub consumed: usize,
    pub event: Option<Event>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Collecting a record header; `got` bytes so far.
    Header {
        buf: [u8; HEADER_LEN],
        got: usize,
    },
    /// `STDOUT` or `STDERR` content, then `padding`.
    Data {
        stdout: bool,
        left: usize,
        padding: usize,
    },
    /// Bytes to skip (padding, an ignored record) before the next header.
    Skip(usize),
    /// `END_REQUEST`: its first 8 content bytes, the content left, the
    /// content and padding left.
    End {
        body: [u8; 8],
        got: usize,
        content: usize,
        left: usize,
    },
    Done,
    /// An error was found; it is returned again on every call.
    Failed(DecodeError),
}

const NEW_HEADER: State = State::Header {
    buf: [0; HEADER_LEN],
    got: 0,
};

/// Decodes one request's response stream. Feed it whatever has arrived.
#[derive(Clone, Debug)]
pub struct Decoder {
    request_id: u16,
    state: State,
}

impl Decoder {
    /// A decoder for the records of `request_id` (nginx: [`crate::NGINX_REQUEST_ID`]).
    pub fn new(request_id: u16) -> Decoder {
        Decoder {
            request_id,
            state: NEW_HEADER,
        }
    }

    /// `END_REQUEST` has been read whole; later bytes are not this request's
    /// (nginx keeps an upstream connection only if none follow).
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Between records: no header, content or padding is half read. An
    /// upstream that closes elsewhere closed prematurely.
    pub fn at_record_boundary(&self) -> bool {
        matches!(self.state, State::Header { got: 0, .. } | State::Done)
    }

    /// Consumes `input` up to the next event or its end. After an error
    /// every call returns that error (the stream cannot be resynchronised).
    pub fn decode(&mut self, input: &[u8]) -> Result<Progress, DecodeError> {
        let mut p = 0;
        loop {
            let avail = input.len() - p;
            match self.state {
                State::Failed(e) => return Err(e),
                State::Done => return Ok(Progress::none(p)),
                _ if avail == 0 => return Ok(Progress::none(p)),
                State::Header { mut buf, got } => {
                    let b = input[p];
                    if let Err(e) = self.judge(&buf, got, b) {
                        self.state = State::Failed(e);
                        return Err(e);
                    }
                    p += 1;
                    buf[got] = b;
                    if got + 1 < HEADER_LEN {
                        self.state = State::Header { buf, got: got + 1 };
                    } else if let Some(ev) = self.start(&Header::from_bytes(&buf)) {
                        return Ok(Progress::event(p, ev));
                    }
                }
                State::Data {
                    stdout,
                    left,
                    padding,
                } => {
                    let take = left.min(avail);
                    self.state = match left - take {
                        0 => skip(padding),
                        left => State::Data {
                            stdout,
                            left,
                            padding,
                        },
                    };
                    let range = p..p + take;
                    let ev = if stdout {
                        Event::Stdout(range)
                    } else {
                        Event::Stderr(range)
                    };
                    return Ok(Progress::event(p + take, ev));
                }
                State::Skip(left) => {
                    let take = left.min(avail);
                    p += take;
                    self.state = skip(left - take);
                }
                State::End {
                    mut body,
                    got,
                    content,
                    left,
                } => {
                    let take = left.min(avail);
                    let keep = take.min(content).min(body.len() - got);
                    body[got..got + keep].copy_from_slice(&input[p..p + keep]);
                    p += take;
                    if left == take {
                        self.state = State::Done;
                        return Ok(Progress::event(p, Event::End(end_request(&body))));
                    }
                    self.state = State::End {
                        body,
                        got: got + keep,
                        content: content - take.min(content),
                        left: left - take,
                    };
                }
            }
        }
    }

    /// Judges header byte `i` as nginx's state machine does.
    fn judge(&self, buf: &[u8; HEADER_LEN], i: usize, b: u8) -> Result<(), DecodeError> {
        let management = matches!(
            RecordType::from_u8(buf[1]),
            RecordType::GetValuesResult | RecordType::UnknownType
        );
        let [id_hi, id_lo] = self.request_id.to_be_bytes();
        match i {
            0 if b != VERSION => Err(DecodeError::UnsupportedVersion(b)),
            1 => match RecordType::from_u8(b) {
                RecordType::Stdout | RecordType::Stderr | RecordType::EndRequest => Ok(()),
                RecordType::GetValuesResult | RecordType::UnknownType => Ok(()),
                _ => Err(DecodeError::InvalidType(b)),
            },
            2 if !management && b != id_hi => Err(DecodeError::RequestIdHigh(b)),
            3 if !management && b != id_lo => Err(DecodeError::RequestIdLow(b)),
            _ => Ok(()),
        }
    }

    /// Sets the state for a complete, judged header; returns an event the
    /// header alone makes.
    fn start(&mut self, h: &Header) -> Option<Event> {
        let len = usize::from(h.content_length);
        let padding = usize::from(h.padding_length);
        let (state, event) = match h.kind {
            RecordType::Stdout if len == 0 => (skip(padding), Some(Event::StdoutEnd)),
            RecordType::Stdout | RecordType::Stderr if len > 0 => {
                let stdout = h.kind == RecordType::Stdout;
                let st = State::Data {
                    stdout,
                    left: len,
                    padding,
                };
                (st, None)
            }
            RecordType::EndRequest => {
                let st = State::End {
                    body: [0; 8],
                    got: 0,
                    content: len,
                    left: len + padding,
                };
                (st, None)
            }
            RecordType::Stderr => (skip(padding), None),
            kind => (skip(len + padding), Some(Event::Ignored(kind))),
        };
        self.state = state;
        if let (State::End { left: 0, .. }, None) = (state, &event) {
            self.state = State::Done;
            return Some(Event::End(end_request(&[0; 8])));
        }
        event
    }
}

/// The text nginx logs for one piece of stderr (`FastCGI sent in stderr:
/// "..."`): trailing CR, LF, `.` and spaces cut, the first byte always kept
/// (the loop in `ngx_http_fastcgi_process_header` and its input filters).
pub fn stderr_text(piece: &[u8]) -> &[u8] {
    let mut end = piece.len();
    while end > 1 && matches!(piece[end - 1], b'\r' | b'\n' | b'.' | b' ') {
        end -= 1;
    }
    &piece[..end]
}

fn skip(n: usize) -> State {
    if n == 0 { NEW_HEADER } else { State::Skip(n) }
}

fn end_request(body: &[u8; 8]) -> EndRequest {
    EndRequest {
        app_status: u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
        protocol_status: ProtocolStatus::from_u8(body[4]),
    }
}

impl Progress {
    fn none(consumed: usize) -> Progress {
        Progress {
            consumed,
            event: None,
        }
    }

    fn event(consumed: usize, event: Event) -> Progress {
        Progress {
            consumed,
            event: Some(event),
        }
    }
}

#[cfg(test)]
mod tests;
