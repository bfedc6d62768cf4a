//! One header line, scanned as nginx's `ngx_http_parse_header_line` (1.22)
//! does: a name of `[A-Za-z0-9-]` (plus `_` with `underscores_in_headers`),
//! other printable bytes making the line "invalid" (skipped under
//! `ignore_invalid_headers`), controls/space/DEL in the name or NUL anywhere
//! being fatal (400); the value is trimmed of spaces (not tabs); a run of CRs
//! may precede the LF; a line with no colon is a header with an empty value.

use super::known::{Known, known_name};
use super::{Limits, plain_run};
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
    /// past the LF. `keep` is false when nginx skips the line. `known`:
    /// the name is one of the common ones (see `known`), whose kind and
    /// bit need not be worked out again.
    Header {
        name: Range<usize>,
        value: Range<usize>,
        end: usize,
        keep: bool,
        known: Option<&'static Known>,
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
    let mut i = 0;
    loop {
        i += plain_run(rest.get(i..).unwrap_or(&[]), &NAME_CLASS);
        let Some(&b) = rest.get(i) else {
            return Ok(None);
        };
        match NAME_CLASS[usize::from(b)] {
            STOP => return Ok(Some((i, b == b':', invalid))),
            UNDERSCORE => invalid |= !limits.underscores_in_headers,
            FATAL => return Err(bad()),
            _ => invalid = true,
        }
        i += 1;
    }
}

/// Index of the first CR, LF or NUL in `v`: where a value stops.
///
/// A word at a time (SWAR), two words a step: `(x - 0x0e…) & !x & 0x80…`
/// flags the bytes below 0x0e, and its lowest flag is exact (a borrow only
/// runs upwards from a flagged byte), so the first flagged byte is the
/// first byte below 0x0e. CR, LF and NUL all are; a tab or another low
/// control byte there is passed over and the next flag of the same word
/// looked at (a byte it flags is checked, so a false flag above a true one
/// costs a look and nothing else).
/// Under callgrind this costs about half of `memchr3`'s setup and dispatch
/// on the short values of real heads; the head goes on after a value, so
/// the byte-wise tail is reached only at its end. Inlined into the line
/// scanner: as a call it cost some 25 instructions a line more.
#[inline(always)]
fn find_cr_lf_nul(v: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let stop = |b: u8| matches!(b, b'\r' | b'\n' | 0);
    let low = |x: u64| x.wrapping_sub(ONES * 0x0e) & !x & HIGH;
    // The first flagged byte that is a stop byte, in `chunk` at `base`. A
    // flag above a flagged byte may be false (a borrow), never missing.
    let first_stop = |chunk: &[u8], mut flags: u64, base: usize| {
        while flags != 0 {
            let k = (flags.trailing_zeros() / 8) as usize;
            if chunk.get(k).is_some_and(|&b| stop(b)) {
                return Some(base + k);
            }
            flags &= flags - 1;
        }
        None
    };
    // Sixteen bytes a step (most values are longer than eight), over
    // whole chunks: no index arithmetic to check.
    let mut chunks = v.chunks_exact(16);
    let mut base = 0;
    for chunk in chunks.by_ref() {
        let (lo, hi) = chunk.split_at(8);
        let word = |w: &[u8]| u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or([0; 8]));
        let (a, b) = (low(word(lo)), low(word(hi)));
        if a | b != 0 {
            let found = first_stop(lo, a, base).or_else(|| first_stop(hi, b, base + 8));
            if found.is_some() {
                return found;
            }
        }
        base += 16;
    }
    let mut tail = chunks.remainder();
    if let Some((w, rest)) = tail.split_first_chunk::<8>() {
        if let Some(k) = first_stop(w, low(u64::from_le_bytes(*w)), base) {
            return Some(k);
        }
        (tail, base) = (rest, base + 8);
    }
    tail.iter().position(|&b| stop(b)).map(|k| base + k)
}

/// Where `text` starts and ends without the spaces (not tabs) around it.
/// Nearly every value has one space before it and none after: decided
/// from three bytes; the loops only run for other values.
#[inline(always)]
fn trim_spaces(text: &[u8]) -> (usize, usize) {
    let k = text.len();
    if let ([b' ', first, ..], Some(last)) = (text, text.last())
        && *first != b' '
        && *last != b' '
    {
        return (1, k);
    }
    let lead = text.iter().position(|&b| b != b' ').unwrap_or(k);
    let trail = text
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(lead, |j| j + 1);
    (lead, trail)
}

/// The start of a line that is not a header name: the empty line ending
/// the head (exactly one optional CR before the LF), or an error.
#[cold]
fn not_a_name(rest: &[u8]) -> Result<Scanned, HttpError> {
    match rest {
        [] | [b'\r'] => Ok(Scanned::Incomplete),
        [b'\n', ..] => Ok(Scanned::EndOfHead(1)),
        [b'\r', b'\n', ..] => Ok(Scanned::EndOfHead(2)),
        // `\r` then anything else, or a name starting with `:`.
        _ => Err(bad()),
    }
}

/// A line with no colon: a header with an empty value.
#[cold]
fn no_colon(rest: &[u8], i: usize, keep: bool) -> Result<Scanned, HttpError> {
    let Some(end) = line_end(rest, i)? else {
        return Ok(Scanned::Incomplete);
    };
    Ok(Scanned::Header {
        name: 0..i,
        value: i..i,
        end,
        keep,
        known: None,
    })
}

/// Called for every header line: inlined so that its result is not
/// passed through memory.
#[inline(always)]
pub(crate) fn scan_line(rest: &[u8], limits: &Limits) -> Result<Scanned, HttpError> {
    // A line starting with whitespace is obs-fold (RFC 9112 §5.2): 400, as
    // the name scan finds (space and tab are FATAL name bytes).
    match rest.first() {
        // The empty line ending the head comes once a request: inline.
        Some(b'\r') if rest.get(1) == Some(&b'\n') => return Ok(Scanned::EndOfHead(2)),
        Some(b'\r' | b'\n' | b':') | None => return not_a_name(rest),
        Some(_) => {}
    }
    // A common name is recognised a word at a time; the byte-wise scan
    // would find the same (see `known`).
    let known = known_name(rest);
    let (i, colon, invalid) = match known {
        Some(k) => (k.len, true, false),
        None => match scan_name(rest, limits)? {
            Some(name) => name,
            None => return Ok(Scanned::Incomplete),
        },
    };
    // Non-ASCII names cannot be exposed as `str`: skipped even with
    // `ignore_invalid_headers off` (documented deviation).
    let keep =
        !(invalid && (limits.ignore_invalid_headers || !rest.get(..i).unwrap_or(&[]).is_ascii()));
    if !colon {
        return no_colon(rest, i, keep);
    }
    let v0 = i + 1;
    let value = rest.get(v0..).unwrap_or(&[]);
    let Some(k) = find_cr_lf_nul(value) else {
        return Ok(Scanned::Incomplete);
    };
    let stop = v0 + k;
    // CRLF and bare LF decided here; NUL, and CRs before the LF, below.
    let end = match value.get(k..k + 2) {
        Some([b'\r', b'\n']) => stop + 2,
        Some([b'\n', _]) => stop + 1,
        _ if value.get(k) == Some(&0) => return Err(bad()),
        _ => match line_end(rest, stop)? {
            Some(end) => end,
            None => return Ok(Scanned::Incomplete),
        },
    };
    let (lead, trail) = trim_spaces(value.get(..k).unwrap_or(&[]));
    Ok(Scanned::Header {
        name: 0..i,
        value: v0 + lead..v0 + trail,
        end,
        keep,
        known,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(s: &[u8]) -> Result<Scanned, HttpError> {
        scan_with(s, &Limits::default())
    }

    /// The scan without `known`, which `known`'s tests check.
    fn scan_with(s: &[u8], l: &Limits) -> Result<Scanned, HttpError> {
        scan_line(s, l).map(|scanned| match scanned {
            Scanned::Header {
                name,
                value,
                end,
                keep,
                known: _,
            } => header(name, value, end, keep),
            other => other,
        })
    }

    fn header(name: Range<usize>, value: Range<usize>, end: usize, keep: bool) -> Scanned {
        Scanned::Header {
            name,
            value,
            end,
            keep,
            known: None,
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

    /// Where the word-wise name match answers, the byte-wise scan gives
    /// the same name, ended by a colon, valid: on random lines made of
    /// known names' bytes in both cases and the bytes that end or spoil a
    /// name.
    #[test]
    fn known_names_agree_with_scan_name() {
        let alphabet = b"acceptHOSTnigrl-_:\r\n @xyz";
        let mut next = crate::request::xorshift(0x2545_f491_4f6c_dd1du64);
        let stems = [
            "accept",
            "accept-encoding",
            "host",
            "connection",
            "cookie",
            "user-agent",
        ];
        for _ in 0..200_000 {
            let stem = stems[next() % 6];
            let mut line: Vec<u8> = stem
                .bytes()
                .map(|b| {
                    if next().is_multiple_of(2) {
                        b.to_ascii_uppercase()
                    } else {
                        b
                    }
                })
                .collect();
            for _ in 0..next() % 3 {
                let at = next() % (line.len() + 1);
                line.insert(at, alphabet[next() % alphabet.len()]);
            }
            line.extend_from_slice(b": v\r\n");
            if let Some(len) = known_name(&line).map(|k| k.len) {
                let scanned = scan_name(&line, &Limits::default());
                assert_eq!(scanned, Ok(Some((len, true, false))), "{line:?}");
            }
        }
    }

    /// The word-at-a-time search agrees with a byte-wise one wherever the
    /// stop byte sits, whatever low control bytes come before it.
    #[test]
    fn find_cr_lf_nul_agrees_with_bytewise() {
        // 0x0e and 0x0f right above a low byte get false flags (a borrow).
        let fill: [u8; 8] = [b'a', b'\t', 0x0e, 0x01, 0x0f, 0x0d, 0x7f, 0xff];
        for len in 0..40 {
            for seed in 0..64usize {
                let mut v: Vec<u8> = (0..len).map(|k| fill[(k * 7 + seed) % 8]).collect();
                if seed % 2 == 0 {
                    // Mostly without CR so the stop is LF or NUL, late.
                    v.iter_mut().filter(|b| **b == 0x0d).for_each(|b| *b = b'x');
                    if len > 0 {
                        v[(seed * 3) % len] = [b'\n', 0][seed % 4 / 2];
                    }
                }
                let want = v.iter().position(|&b| matches!(b, b'\r' | b'\n' | 0));
                assert_eq!(find_cr_lf_nul(&v), want, "{v:?}");
            }
        }
    }

    #[test]
    fn limits_switches() {
        let l = Limits {
            underscores_in_headers: true,
            ..Limits::default()
        };
        assert_eq!(scan_with(b"X_Y: 1\n", &l), Ok(header(0..3, 5..6, 7, true)));
        let l = Limits {
            ignore_invalid_headers: false,
            ..Limits::default()
        };
        assert_eq!(scan_with(b"X@Y: 1\n", &l), Ok(header(0..3, 5..6, 7, true)));
        assert_eq!(
            scan_with(b"X\xffY: 1\n", &l),
            Ok(header(0..3, 5..6, 7, false))
        );
    }
}
