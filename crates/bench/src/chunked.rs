//! Incremental decoder of the chunked transfer coding (RFC 9112 §7.1).
//!
//! Hand-written because the generator only needs to find where a chunked
//! body ends and how many payload bytes it carried, on borrowed slices
//! that arrive split anywhere, without copying: the crates that decode
//! chunked bodies wrap a `Read` and copy the payload out.

/// Chunk sizes longer than this many hex digits overflow u64 (16 digits
/// = 64 bits), so they are refused.
pub const MAX_CHUNK_SIZE_DIGITS: u8 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Reading the hex size; `digits` seen so far.
    Size {
        value: u64,
        digits: u8,
    },
    /// Chunk extension (`;name=value`), skipped to the line end.
    Ext {
        value: u64,
    },
    /// Saw CR after the size line, want LF.
    SizeLf {
        value: u64,
    },
    Data {
        remaining: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    TrailerLine,
    TrailerEndLf,
    Done,
}

/// Malformed chunk framing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed chunked body")]
pub struct ChunkError;

/// The decoder. `feed` consumes bytes until the body ends or input runs out.
#[derive(Clone, Copy, Debug)]
pub struct Chunked {
    state: State,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked {
            state: State::Size {
                value: 0,
                digits: 0,
            },
        }
    }
}

/// What one `feed` call saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fed {
    /// Bytes of input consumed (all of them unless the body ended).
    pub consumed: usize,
    /// Payload bytes among them (chunk data, not framing).
    pub payload: u64,
    /// The terminating empty line was consumed.
    pub done: bool,
}

impl Chunked {
    /// Consumes framing and payload from `data`.
    pub fn feed(&mut self, data: &[u8]) -> Result<Fed, ChunkError> {
        let mut i = 0;
        let mut payload = 0u64;
        while i < data.len() {
            if let State::Data { remaining } = self.state {
                let take = remaining.min((data.len() - i) as u64);
                i += take as usize;
                payload += take;
                self.state = if take == remaining {
                    State::DataCr
                } else {
                    State::Data {
                        remaining: remaining - take,
                    }
                };
                continue;
            }
            let b = data[i];
            i += 1;
            self.state = self.step(b)?;
            if self.state == State::Done {
                return Ok(Fed {
                    consumed: i,
                    payload,
                    done: true,
                });
            }
        }
        Ok(Fed {
            consumed: i,
            payload,
            done: false,
        })
    }

    fn after_size(value: u64) -> State {
        if value == 0 {
            State::TrailerStart
        } else {
            State::Data { remaining: value }
        }
    }

    fn step(&self, b: u8) -> Result<State, ChunkError> {
        Ok(match self.state {
            State::Size { value, digits } => match b {
                b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                    if digits >= MAX_CHUNK_SIZE_DIGITS {
                        return Err(ChunkError);
                    }
                    let d = (b as char).to_digit(16).ok_or(ChunkError)? as u64;
                    State::Size {
                        value: value << 4 | d,
                        digits: digits + 1,
                    }
                }
                b';' | b' ' | b'\t' if digits > 0 => State::Ext { value },
                b'\r' if digits > 0 => State::SizeLf { value },
                b'\n' if digits > 0 => Self::after_size(value),
                _ => return Err(ChunkError),
            },
            State::Ext { value } => match b {
                b'\r' => State::SizeLf { value },
                b'\n' => Self::after_size(value),
                _ => State::Ext { value },
            },
            State::SizeLf { value } if b == b'\n' => Self::after_size(value),
            State::DataCr if b == b'\r' => State::DataLf,
            State::DataCr | State::DataLf if b == b'\n' => State::Size {
                value: 0,
                digits: 0,
            },
            State::TrailerStart => match b {
                b'\r' => State::TrailerEndLf,
                b'\n' => State::Done,
                _ => State::TrailerLine,
            },
            State::TrailerLine if b == b'\n' => State::TrailerStart,
            State::TrailerLine => State::TrailerLine,
            State::TrailerEndLf if b == b'\n' => State::Done,
            _ => return Err(ChunkError),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = b"5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nNEXT";

    fn run(parts: &[&[u8]]) -> Result<(usize, u64, bool), ChunkError> {
        let mut c = Chunked::default();
        let (mut consumed, mut payload) = (0, 0);
        for p in parts {
            let f = c.feed(p)?;
            consumed += f.consumed;
            payload += f.payload;
            if f.done {
                return Ok((consumed, payload, true));
            }
        }
        Ok((consumed, payload, false))
    }

    #[test]
    fn split_at_every_byte() {
        for cut in 0..=BODY.len() {
            let (a, b) = BODY.split_at(cut);
            let (consumed, payload, done) = run(&[a, b]).expect("valid");
            assert!(done, "cut {cut}");
            assert_eq!(payload, 15, "cut {cut}");
            assert_eq!(consumed, BODY.len() - 4, "cut {cut}");
        }
        let bytes: Vec<&[u8]> = BODY.chunks(1).collect();
        assert_eq!(run(&bytes).expect("valid"), (BODY.len() - 4, 15, true));
    }

    #[test]
    fn bare_lf_and_incomplete() {
        assert_eq!(run(&[b"3\nabc\n0\n\n"]).expect("valid"), (9, 3, true));
        assert_eq!(run(&[b"3\r\nab"]).expect("valid"), (5, 2, false));
    }

    #[test]
    fn malformed() {
        assert!(run(&[b"x\r\n"]).is_err());
        assert!(run(&[b"\r\n"]).is_err());
        assert!(run(&[b"3\r\nabcX"]).is_err());
        assert!(run(&[b"11111111111111111\r\n"]).is_err());
    }
}
