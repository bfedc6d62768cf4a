//! Incremental request-body decoder: Content-Length and chunked
//! (RFC 9112 §7.1), following nginx's `ngx_http_parse_chunked` so the
//! connection stays in step whether the body is read or discarded.
//!
//! Hand-written because the decoder must be resumable at any byte and
//! report payload spans in place (no copying); `httparse::parse_chunk_size`
//! only covers the size line and accepts sizes nginx refuses.

use crate::{BodyKind, HttpError, HttpErrorKind};
use std::ops::Range;

/// nginx refuses a chunk size that would overflow `off_t` (it checks before
/// each hex digit: `size > NGX_MAX_OFF_T_VALUE / 16`).
const MAX_CHUNK_SIZE_BEFORE_DIGIT: u64 = (i64::MAX as u64) / 16;
/// nginx also refuses a size within 9 of `off_t`'s maximum (its
/// `ctx->size > NGX_MAX_OFF_T_VALUE - 9` check, room for the framing left).
const MAX_CHUNK_SIZE: u64 = i64::MAX as u64 - 9;

/// Result of one [`BodyDecoder::decode`] call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyProgress {
    /// Bytes of `input` consumed (framing and payload). When `data` is not
    /// empty, `data.end == consumed`: call again with the rest.
    pub consumed: usize,
    /// Payload bytes within `input` (for chunked, one chunk piece at a time).
    pub data: Range<usize>,
    /// The body is complete (the bytes after `consumed` belong to the next request).
    pub done: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Content-Length bytes left.
    Length(u64),
    /// Start of a chunk-size line: a hex digit is required.
    SizeStart,
    Size(u64),
    /// Chunk extension (ignored, as nginx): up to the line end.
    Ext(u64),
    /// CR seen after the size line; LF required.
    SizeLf(u64),
    Data(u64),
    /// After chunk data: CRLF or LF required.
    DataEnd,
    DataLf,
    /// After the last chunk: start of a trailer line or the final empty line.
    TrailerStart,
    Trailer,
    TrailerLf,
    LastLf,
    Done,
}

/// Decodes a request body incrementally so the connection stays in step
/// whether the body is read or discarded.
#[derive(Clone, Debug)]
pub struct BodyDecoder {
    state: State,
}

fn invalid() -> HttpError {
    HttpError::new(400, HttpErrorKind::InvalidChunkedBody)
}

impl BodyDecoder {
    pub fn new(kind: BodyKind) -> Self {
        let state = match kind {
            BodyKind::None | BodyKind::Length(0) => State::Done,
            BodyKind::Length(n) => State::Length(n),
            BodyKind::Chunked => State::SizeStart,
        };
        BodyDecoder { state }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes framing from `input` until a piece of payload, the end of the
    /// body, or the end of `input`. `consumed == 0` with `!done` means more
    /// input is needed.
    pub fn decode(&mut self, input: &[u8]) -> Result<BodyProgress, HttpError> {
        let mut p = 0;
        loop {
            if let State::Length(n) | State::Data(n) = self.state {
                let avail = input.len() - p;
                let take = usize::try_from(n).map_or(avail, |n| n.min(avail));
                if take == 0 {
                    return Ok(self.progress(p, p..p));
                }
                let left = n - take as u64;
                self.state = match (self.state, left) {
                    (State::Length(_), 0) => State::Done,
                    (State::Length(_), _) => State::Length(left),
                    (_, 0) => State::DataEnd,
                    _ => State::Data(left),
                };
                return Ok(self.progress(p + take, p..p + take));
            }
            if self.state == State::Done {
                return Ok(self.progress(p, p..p));
            }
            let Some(&b) = input.get(p) else {
                return Ok(self.progress(p, p..p));
            };
            p += 1;
            self.state = self.step(b)?;
        }
    }

    fn progress(&self, consumed: usize, data: Range<usize>) -> BodyProgress {
        BodyProgress {
            consumed,
            data,
            done: self.is_done(),
        }
    }

    /// One framing byte of the chunked grammar. Lines end with CRLF only:
    /// since nginx 1.29.4 a bare LF in a chunked body is an error (and so
    /// is an LF inside a chunk extension or a trailer line).
    fn step(&self, b: u8) -> Result<State, HttpError> {
        let after_size = |size: u64| {
            if size == 0 {
                State::TrailerStart
            } else {
                State::Data(size)
            }
        };
        Ok(match self.state {
            State::SizeStart => State::Size(u64::from(hex(b).ok_or_else(invalid)?)),
            State::Size(size) => match b {
                b'\r' => State::SizeLf(size),
                b';' | b' ' | b'\t' => State::Ext(size),
                _ => {
                    let d = hex(b).ok_or_else(invalid)?;
                    if size > MAX_CHUNK_SIZE_BEFORE_DIGIT {
                        return Err(invalid());
                    }
                    let size = size * 16 + u64::from(d);
                    if size > MAX_CHUNK_SIZE {
                        return Err(invalid());
                    }
                    State::Size(size)
                }
            },
            State::Ext(size) => match b {
                b'\r' => State::SizeLf(size),
                b'\n' => return Err(invalid()),
                _ => State::Ext(size),
            },
            State::SizeLf(size) if b == b'\n' => after_size(size),
            State::DataEnd if b == b'\r' => State::DataLf,
            State::DataLf if b == b'\n' => State::SizeStart,
            State::TrailerStart => match b {
                b'\r' => State::LastLf,
                b'\n' => return Err(invalid()),
                _ => State::Trailer,
            },
            State::Trailer => match b {
                b'\r' => State::TrailerLf,
                b'\n' => return Err(invalid()),
                _ => State::Trailer,
            },
            State::TrailerLf if b == b'\n' => State::TrailerStart,
            State::LastLf if b == b'\n' => State::Done,
            _ => return Err(invalid()),
        })
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in pieces split at `cuts`, collecting payload; returns
    /// (payload, bytes consumed, done).
    fn run(
        kind: BodyKind,
        input: &[u8],
        split: usize,
    ) -> Result<(Vec<u8>, usize, bool), HttpError> {
        let mut d = BodyDecoder::new(kind);
        let mut out = Vec::new();
        let mut off = 0;
        let mut avail = split.min(input.len());
        loop {
            let piece = &input[off..avail];
            let pr = d.decode(piece)?;
            out.extend_from_slice(&piece[pr.data.clone()]);
            assert!(pr.data.is_empty() || pr.data.end == pr.consumed);
            off += pr.consumed;
            if pr.done {
                assert!(d.is_done());
                return Ok((out, off, true));
            }
            if pr.consumed == 0 {
                if avail == input.len() {
                    return Ok((out, off, false));
                }
                avail = input.len();
            }
        }
    }

    fn all_splits(kind: BodyKind, input: &[u8]) -> Result<(Vec<u8>, usize, bool), HttpError> {
        let whole = run(kind, input, input.len());
        for s in 0..input.len() {
            assert_eq!(run(kind, input, s), whole, "split at {s}");
        }
        whole
    }

    #[test]
    fn content_length() {
        let (data, used, done) = all_splits(BodyKind::Length(5), b"hello GET").unwrap();
        assert_eq!((&data[..], used, done), (&b"hello"[..], 5, true));
        let (data, _, done) = all_splits(BodyKind::Length(5), b"hel").unwrap();
        assert_eq!((&data[..], done), (&b"hel"[..], false));
        assert!(BodyDecoder::new(BodyKind::None).is_done());
        assert!(BodyDecoder::new(BodyKind::Length(0)).is_done());
    }

    #[test]
    fn chunked() {
        let body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        let (data, used, done) = all_splits(BodyKind::Chunked, body).unwrap();
        assert_eq!(&data[..], b"hello world");
        assert_eq!(used, body.len() - 4);
        assert!(done);
        // Upper-case hex, leading zeros.
        let body = b"00A\r\nabcdefghij\r\n0\r\n\r\n";
        let (data, used, done) = all_splits(BodyKind::Chunked, body).unwrap();
        assert_eq!(
            (&data[..], used, done),
            (&b"abcdefghij"[..], body.len(), true)
        );
    }

    #[test]
    fn chunked_incomplete() {
        let (data, _, done) = all_splits(BodyKind::Chunked, b"5\r\nhel").unwrap();
        assert_eq!((&data[..], done), (&b"hel"[..], false));
        let (_, _, done) = all_splits(BodyKind::Chunked, b"0\r\n").unwrap();
        assert!(!done);
    }

    #[test]
    fn chunked_errors() {
        let bad: &[&[u8]] = &[
            b"x\r\n",
            b"\r\n",
            b"-1\r\n",
            b"5\r\nhelloX",
            b"5\rX",
            b"0\r\n\rX",
            b"0\r\nT: 1\rX",
            b"8000000000000000\r\n",
            b"ffffffffffffffffff\r\n",
            b"7ffffffffffffff7\r\n",
            b"0x5\r\n",
            b"+5\r\n",
            // A bare LF anywhere (nginx 1.29.4 and later).
            b"5\nhello\r\n",
            b"5\r\nhello\n",
            b"0\r\n\n",
            b"0\r\nT: 1\n",
            b"5;x\n",
        ];
        for b in bad {
            let r = all_splits(BodyKind::Chunked, b);
            assert_eq!(r.map(|_| ()).unwrap_err().status, 400, "{b:?}");
        }
        // Extensions (after `;`, space or tab) are skipped, as nginx does.
        let r = all_splits(
            BodyKind::Chunked,
            b"5 x\r\nhello\r\n3\t;a=\"b\"\r\nabc\r\n0\r\n\r\n",
        );
        assert_eq!(r.unwrap(), (b"helloabc".to_vec(), 32, true));
        // The largest size nginx accepts still parses.
        let r = all_splits(BodyKind::Chunked, b"7ffffffffffffff6\r\nab");
        assert_eq!(r.unwrap().0, b"ab");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), split in 0usize..200) {
            let _ = run(BodyKind::Chunked, &bytes, split);
            let _ = run(BodyKind::Length(50), &bytes, split);
        }
    }
}
