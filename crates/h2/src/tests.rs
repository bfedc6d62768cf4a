//! Connection tests: each input is run whole and split at every byte (at
//! a stride for the large flood inputs), and every run must produce the
//! same events, output and verdict, as the HTTP/1 codec's tests do.

use crate::frame::{FrameHeader, Kind, PREFACE, flags};
use crate::{Config, Connection, ErrorCode, Progress, hpack};

/// What a run produced: events (Debug text, so that borrowed data is
/// compared by value), the output frames, and the connection error.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub events: Vec<String>,
    pub out: Vec<(Kind, u8, u32, Vec<u8>)>,
    pub error: Option<(ErrorCode, &'static str)>,
}

impl Outcome {
    pub fn goaway(&self) -> Option<ErrorCode> {
        self.out
            .iter()
            .rev()
            .find(|f| f.0 == Kind::GoAway)
            .map(|f| ErrorCode::from_u32(be32(&f.3[4..8])))
    }

    pub fn rst(&self, stream: u32) -> Option<ErrorCode> {
        self.out
            .iter()
            .find(|f| f.0 == Kind::RstStream && f.2 == stream)
            .map(|f| ErrorCode::from_u32(be32(&f.3)))
    }

    pub fn count(&self, kind: Kind) -> usize {
        self.out.iter().filter(|f| f.0 == kind).count()
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub(crate) fn frames(mut b: &[u8]) -> Vec<(Kind, u8, u32, Vec<u8>)> {
    let mut v = Vec::new();
    while let Some(h) = FrameHeader::parse(b) {
        let end = 9 + h.len as usize;
        v.push((h.kind, h.flags, h.stream, b[9..end].to_vec()));
        b = &b[end..];
    }
    v
}

/// Feeds `chunks` in order through a buffer, as an engine would.
fn feed(
    conn: &mut Connection,
    chunks: &[&[u8]],
) -> (Vec<String>, Option<(ErrorCode, &'static str)>) {
    let mut buf = Vec::new();
    let mut events = Vec::new();
    for chunk in chunks {
        conn.start_read();
        buf.extend_from_slice(chunk);
        let mut pos = 0;
        loop {
            match conn.recv(&buf[pos..]) {
                Ok(Progress::Partial) => break,
                Ok(Progress::Frame { consumed, event }) => {
                    if let Some(e) = event {
                        events.push(format!("{e:?}"));
                    }
                    pos += consumed;
                }
                Err(e) => return (events, Some((e.code, e.reason))),
            }
        }
        buf.drain(..pos);
    }
    (events, None)
}

fn outcome(cfg: Config, chunks: &[&[u8]]) -> Outcome {
    let mut conn = Connection::new(cfg);
    let (events, error) = feed(&mut conn, chunks);
    // Our SETTINGS and connection WINDOW_UPDATE come first, always.
    let mut out = frames(conn.output());
    assert_eq!((out[0].0, out[1].0), (Kind::Settings, Kind::WindowUpdate));
    out.drain(..2);
    Outcome { events, out, error }
}

/// Runs the input whole and split at every byte (or `stride` bytes) and
/// checks that every run agrees.
pub(crate) fn run_with(cfg: Config, input: &[u8]) -> Outcome {
    let whole = outcome(cfg, &[input]);
    let stride = if input.len() > 4096 {
        input.len() / 97 + 1
    } else {
        1
    };
    for k in (0..=input.len()).step_by(stride) {
        let split = outcome(cfg, &[&input[..k], &input[k..]]);
        assert_eq!(split, whole, "split at {k}");
    }
    whole
}

pub(crate) fn run(input: &[u8]) -> Outcome {
    run_with(Config::default(), input)
}

// ---- a client that writes frames ----

pub(crate) fn frame(kind: Kind, f: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = FrameHeader {
        len: payload.len() as u32,
        kind,
        flags: f,
        stream,
    }
    .encode()
    .to_vec();
    v.extend_from_slice(payload);
    v
}

pub(crate) fn block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut b = Vec::new();
    for (n, v) in fields {
        hpack::encode_field(&mut b, n.as_bytes(), v.as_bytes());
    }
    b
}

pub(crate) const GET: [(&str, &str); 4] = [
    (":method", "GET"),
    (":scheme", "https"),
    (":path", "/"),
    (":authority", "a"),
];
pub(crate) const POST: [(&str, &str); 5] = [
    (":method", "POST"),
    (":scheme", "https"),
    (":path", "/p"),
    (":authority", "a"),
    ("content-length", "5"),
];

/// The client preface with an empty SETTINGS frame, and the ACK of ours.
pub(crate) fn start() -> Vec<u8> {
    let mut v = PREFACE.to_vec();
    v.extend(frame(Kind::Settings, 0, 0, &[]));
    v.extend(frame(Kind::Settings, flags::ACK, 0, &[]));
    v
}

pub(crate) fn get(stream: u32) -> Vec<u8> {
    frame(
        Kind::Headers,
        flags::END_HEADERS | flags::END_STREAM,
        stream,
        &block(&GET),
    )
}

pub(crate) fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

mod attacks;
mod errors;
mod exchange;
mod malformed;
mod sending;
mod soup;
