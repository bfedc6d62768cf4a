//! One header line, scanned as nginx's `ngx_http_parse_header_line` (1.22)
//! does: a name of `[A-Za-z0-9-]` (plus `_` with `underscores_in_headers`),
//! other printable bytes making the line "invalid" (skipped under
//! `ignore_invalid_headers`), controls/space/DEL in the name or NUL anywhere
//! being fatal (400); the value is trimmed of spaces (not tabs); a run of CRs
//! may precede the LF; a line with no colon is a header with an empty value.

use super::Limits;
use crate::{HttpError, HttpErrorKind};
use std::ops::Range;

/// Outcome of scanning from the start of a line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// Valid so far; more bytes needed.
    Incomplete,
    /// The empty line ending the head; index just past its LF.
    EndOfHead(usize),
    /// A header line; positions relative to the scanned slice, `end` just
    /// past the LF. `keep` is false when nginx skips the line.
    Header {
        name: Range<usize>,
        value: Range<usize>,
        end: usize,
        keep: bool,
    },
}

fn bad() -> HttpError {
    HttpError::new(400, HttpErrorKind::InvalidHeader)
}

/// Name byte classes of nginx's header state machine, as a table so the
/// name loop is one load and one compare per byte.
const OK: u8 = 0;
const UNDERSCORE: u8 = 1;
/// Controls, space, DEL: 400 since nginx 1.21.1.
const FATAL: u8 = 2;
/// Other bytes: the line is "invalid".
const INVALID: u8 = 3;
/// `:`, CR, LF: the name ends.
const STOP: u8 = 4;

static NAME_CLASS: [u8; 256] = {
    let mut t = [INVALID; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' => OK,
            b'_' => UNDERSCORE,
            b':' | b'\r' | b'\n' => STOP,
            0..=0x20 | 0x7f => FATAL,
            _ => INVALID,
        };
        b += 1;
    }
    t
};

/// Where a line ends: after `at` (a CR or LF position) there may be more
/// CRs, then the LF. Returns the index past the LF.
fn line_end(rest: &[u8], mut at: usize) -> Result<Option<usize>, HttpError> {
    loop {
        match rest.get(at) {
            None => return Ok(None),
            Some(b'\r') => at += 1,
            Some(b'\n') => return Ok(Some(at + 1)),
            Some(_) => return Err(bad()),
        }
    }
}

/// The name: up to `:` or the line end. Returns (its length, whether a
/// colon ends it, whether nginx calls it invalid), `None` when incomplete.
fn scan_name(rest: &[u8], limits: &Limits) -> Result<Option<(usize, bool, bool)>, HttpError> {
    let mut invalid = false;
    for (i, &b) in rest.iter().enumerate() {
        match NAME_CLASS[usize::from(b)] {
            OK => {}
            STOP => return Ok(Some((i, b == b':', invalid))),
            UNDERSCORE => invalid |= !limits.underscores_in_headers,
            FATAL => return Err(bad()),
            _ => invalid = true,
        }
    }
    Ok(None)
}

pub(crate) fn scan_line(rest: &[u8], limits: &Limits) -> Result<Scanned, HttpError> {
    // The empty line: exactly one optional CR before the LF.
    match rest.first() {
        None => return Ok(Scanned::Incomplete),
        Some(b'\n') => return Ok(Scanned::EndOfHead(1)),
        Some(b'\r') => {
            return match rest.get(1) {
                None => Ok(Scanned::Incomplete),
                Some(b'\n') => Ok(Scanned::EndOfHead(2)),
                Some(_) => Err(bad()),
            };
        }
        // A line starting with whitespace is obs-fold (RFC 9112 §5.2): 400.
        Some(b':') => return Err(bad()),
        Some(_) => {}
    }
    let Some((i, colon, invalid)) = scan_name(rest, limits)? else {
        return Ok(Scanned::Incomplete);
    };
    let name = 0..i;
    // Non-ASCII names cannot be exposed as `str`: skipped even with
    // `ignore_invalid_headers off` (documented deviation).
    let keep =
        !(invalid && (limits.ignore_invalid_headers || !rest.get(..i).unwrap_or(&[]).is_ascii()));
    if !colon {
        let Some(end) = line_end(rest, i)? else {
            return Ok(Scanned::Incomplete);
        };
        return Ok(Scanned::Header {
            name,
            value: i..i,
            end,
            keep,
        });
    }
    let mut v0 = i + 1;
    let tail = rest.get(v0..).unwrap_or(&[]);
    let Some(stop) = memchr::memchr3(b'\r', b'\n', 0, tail).map(|k| v0 + k) else {
        return Ok(Scanned::Incomplete);
    };
    if rest.get(stop) == Some(&0) {
        return Err(bad());
    }
    let Some(end) = line_end(rest, stop)? else {
        return Ok(Scanned::Incomplete);
    };
    let mut v1 = stop;
    while v0 < v1 && rest.get(v0) == Some(&b' ') {
        v0 += 1;
    }
    while v1 > v0 && rest.get(v1 - 1) == Some(&b' ') {
        v1 -= 1;
    }
    Ok(Scanned::Header {
        name,
        value: v0..v1,
        end,
        keep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(s: &[u8]) -> Result<Scanned, HttpError> {
        scan_line(s, &Limits::default())
    }

    fn header(name: Range<usize>, value: Range<usize>, end: usize, keep: bool) -> Scanned {
        Scanned::Header {
            name,
            value,
            end,
            keep,
        }
    }

    #[test]
    fn lines() {
        assert_eq!(scan(b"\r\n"), Ok(Scanned::EndOfHead(2)));
        assert_eq!(scan(b"\nX"), Ok(Scanned::EndOfHead(1)));
        assert_eq!(scan(b"Host: a\r\n"), Ok(header(0..4, 6..7, 9, true)));
        assert_eq!(scan(b"Host:a  \n"), Ok(header(0..4, 5..6, 9, true)));
        assert_eq!(scan(b"X:\t v \t\r\n"), Ok(header(0..1, 2..7, 9, true)));
        assert_eq!(scan(b"X: b\r\r\n"), Ok(header(0..1, 3..4, 7, true)));
        assert_eq!(scan(b"XY\r\n"), Ok(header(0..2, 2..2, 4, true)));
        assert_eq!(scan(b"X:\r\n"), Ok(header(0..1, 2..2, 4, true)));
        assert_eq!(scan(b"X_Y: 1\n"), Ok(header(0..3, 5..6, 7, false)));
        assert_eq!(scan(b"X@Y: 1\n"), Ok(header(0..3, 5..6, 7, false)));
        assert_eq!(scan(b"X: a\x01\x7f\xff\n"), Ok(header(0..1, 3..7, 8, true)));
    }

    #[test]
    fn incomplete_and_errors() {
        for s in [&b""[..], b"\r", b"Ho", b"Host: a", b"Host: a\r", b"XY\r\r"] {
            assert_eq!(scan(s), Ok(Scanned::Incomplete), "{s:?}");
        }
        for s in [
            &b"\r\r\n"[..],
            b"\rX",
            b":x\r\n",
            b" X: 1\r\n",
            b"\tX: 1\r\n",
            b"X Y: 1\r\n",
            b"X : 1\r\n",
            b"X\x7f: 1\r\n",
            b"X\0",
            b"X: a\0b\r\n",
            b"X: a\rb\r\n",
            b"XY\rZ\r\n",
        ] {
            assert_eq!(scan(s), Err(bad()), "{s:?}");
        }
    }

    #[test]
    fn limits_switches() {
        let l = Limits {
            underscores_in_headers: true,
            ..Limits::default()
        };
        assert_eq!(scan_line(b"X_Y: 1\n", &l), Ok(header(0..3, 5..6, 7, true)));
        let l = Limits {
            ignore_invalid_headers: false,
            ..Limits::default()
        };
        assert_eq!(scan_line(b"X@Y: 1\n", &l), Ok(header(0..3, 5..6, 7, true)));
        assert_eq!(
            scan_line(b"X\xffY: 1\n", &l),
            Ok(header(0..3, 5..6, 7, false))
        );
    }
}
