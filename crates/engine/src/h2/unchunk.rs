//! Takes the chunked framing off a body core framed itself for HTTP/1.1
//! (an autoindex listing, a compressed memory-cache variant, a body that
//! `add_trailer` made chunked): HTTP/2 frames bodies with DATA, and the
//! trailer section becomes a HEADERS frame after them (RFC 9113 §8.1, as
//! nginx's `ngx_http_v2_create_trailers`).
//!
//! The framing is in core's memory pieces; a file piece is always whole
//! inside one chunk (core frames a file as `size CRLF`, the file, `CRLF`),
//! so it passes as it is and is never read here.

use std::collections::VecDeque;

use super::stream::{Mem, Piece};

/// Trailer fields, `(name, value)`, names lowercase.
pub(super) type Trailers = Vec<(Vec<u8>, Vec<u8>)>;

/// Where the walk through the chunked framing is.
enum At {
    /// Reading a chunk-size line (its bytes so far).
    Size(Vec<u8>),
    /// Inside a chunk's data: bytes left.
    Data(u64),
    /// After a chunk's data: bytes of its CRLF still to skip.
    DataEnd(u8),
    /// After the last chunk: the trailer section and the blank line.
    Trailers(Vec<u8>),
}

/// The body without its framing, and the trailer fields (names
/// lowercased, §8.2.1). A malformed framing (core's own, so it cannot
/// be) yields what was decoded.
pub(super) fn unchunk(pieces: VecDeque<Piece>) -> (VecDeque<Piece>, Trailers) {
    let mut out = VecDeque::with_capacity(pieces.len());
    let mut at = At::Size(Vec::new());
    for p in pieces {
        match p {
            Piece::Mem { data, pos } => {
                let mut b = &data.bytes()[pos..];
                while !b.is_empty() {
                    b = step(&mut at, b, &mut out);
                }
            }
            Piece::File { file, offset, left } => {
                if let At::Data(n) = &mut at {
                    *n = n.saturating_sub(left);
                    if *n == 0 {
                        at = At::DataEnd(2);
                    }
                }
                out.push_back(Piece::File { file, offset, left });
            }
        }
    }
    let trailers = match at {
        At::Trailers(t) => fields(&t),
        _ => Vec::new(),
    };
    (out, trailers)
}

/// Consumes what it can of `b` in the state `at`; returns the rest.
fn step<'a>(at: &mut At, b: &'a [u8], out: &mut VecDeque<Piece>) -> &'a [u8] {
    match at {
        At::Size(line) => {
            let Some(nl) = b.iter().position(|&c| c == b'\n') else {
                line.extend_from_slice(b);
                return &[];
            };
            line.extend_from_slice(&b[..nl]);
            let hex = line.split(|&c| c == b';').next().unwrap_or(b"");
            let size = std::str::from_utf8(hex)
                .ok()
                .and_then(|s| u64::from_str_radix(s.trim(), 16).ok());
            *at = match size {
                Some(0) => At::Trailers(Vec::new()),
                Some(n) => At::Data(n),
                // Not chunked after all: nothing more is taken.
                None => At::Trailers(Vec::new()),
            };
            &b[nl + 1..]
        }
        At::Data(n) => {
            let k = usize::try_from(*n).unwrap_or(usize::MAX).min(b.len());
            out.push_back(Piece::Mem {
                data: Mem::Owned(b[..k].to_vec()),
                pos: 0,
            });
            *n -= k as u64;
            if *n == 0 {
                *at = At::DataEnd(2);
            }
            &b[k..]
        }
        At::DataEnd(left) => {
            let k = usize::from(*left).min(b.len());
            *left -= k as u8;
            if *left == 0 {
                *at = At::Size(Vec::new());
            }
            &b[k..]
        }
        At::Trailers(t) => {
            t.extend_from_slice(b);
            &[]
        }
    }
}

/// The `name: value` lines of a trailer section, up to the blank line.
fn fields(section: &[u8]) -> Trailers {
    section
        .split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            let colon = l.iter().position(|&c| c == b':')?;
            let value = l[colon + 1..].trim_ascii();
            Some((l[..colon].to_ascii_lowercase(), value.to_vec()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(b: &[u8]) -> Piece {
        Piece::Mem {
            data: Mem::Owned(b.to_vec()),
            pos: 0,
        }
    }

    fn body(pieces: &VecDeque<Piece>) -> Vec<u8> {
        let mut v = Vec::new();
        for p in pieces {
            if let Piece::Mem { data, pos } = p {
                v.extend_from_slice(&data.bytes()[*pos..]);
            }
        }
        v
    }

    #[test]
    fn framing_comes_off_split_anywhere() {
        let whole = b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nX-Var: a b\r\nX-Two:2\r\n\r\n";
        for k in 0..=whole.len() {
            let (b, t) = unchunk(VecDeque::from([mem(&whole[..k]), mem(&whole[k..])]));
            assert_eq!(body(&b), b"abcde", "split at {k}");
            assert_eq!(
                t,
                [
                    (b"x-var".to_vec(), b"a b".to_vec()),
                    (b"x-two".to_vec(), b"2".to_vec())
                ],
                "split at {k}"
            );
        }
        let (b, t) = unchunk(VecDeque::from([mem(b"3\r\nabc\r\n0\r\n\r\n")]));
        assert_eq!((body(&b), t.len()), (b"abc".to_vec(), 0));
    }

    #[test]
    fn a_file_inside_a_chunk_passes_whole() {
        let file = std::rc::Rc::new(std::fs::File::open("/dev/null").expect("/dev/null"));
        let pieces = VecDeque::from([
            mem(b"8\r\n"),
            Piece::File {
                file,
                offset: 0,
                left: 8,
            },
            mem(b"\r\n0\r\nx-var: localhost\r\n\r\n"),
        ]);
        let (b, t) = unchunk(pieces);
        assert_eq!(b.len(), 1);
        assert!(matches!(b[0], Piece::File { left: 8, .. }));
        assert_eq!(t, [(b"x-var".to_vec(), b"localhost".to_vec())]);
    }
}
