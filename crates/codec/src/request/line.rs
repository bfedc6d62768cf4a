//! The request line, byte for byte as nginx's `ngx_http_parse_request_line`
//! accepts it: method `[A-Z_-]+`, one or more spaces, an origin-form
//! (`/…`) or absolute-form (`scheme://host[:port][/…]`) target — for
//! CONNECT the authority-form `host:port` only (nginx 1.29.3+) — spaces,
//! `HTTP/major.minor`, optional trailing spaces, CRLF or bare LF.

use crate::{HttpError, HttpErrorKind as K, Method, Version};
use std::ops::Range;

/// A complete, valid request line; positions index the parsed buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestLine {
    pub method: Method,
    pub method_span: Range<usize>,
    pub target: Range<usize>,
    /// Host and port of an absolute-form or authority-form target, as
    /// nginx's `host_start..host_end` (not yet validated as a Host).
    pub host: Option<Range<usize>>,
    /// Where the path starts inside the target span (`None`: absolute-form
    /// target without a path, which nginx treats as `/`).
    pub path_start: Option<usize>,
    pub version: Version,
    /// The line without its line ending.
    pub line: Range<usize>,
    /// Index just past the terminating LF.
    pub end: usize,
    /// What the one pass over the target learnt (see [`TargetScan`]).
    pub scan: TargetScan,
}

/// Facts gathered while the target's bytes are checked, so that no later
/// pass has to look at them again: where the path ends, whether the target
/// needs a UTF-8 check at all, whether the path needs normalising.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TargetScan {
    /// Index of the first `?` or `#` from the path's start on, else the
    /// target's end: the path is `path_start..path_end`.
    pub path_end: usize,
    /// A byte ≥ 0x80: the target must be checked as UTF-8. A target of
    /// ASCII bytes only is UTF-8 by construction.
    pub non_ascii: bool,
    /// The path has `%` or a `/.`: decoding or dot-segment resolution may
    /// change it (what [`crate::uri::normalize_with`] does).
    pub path_escapes: bool,
    /// The path has `//` (merged under `merge_slashes on`).
    pub path_double_slash: bool,
}

fn bad(kind: K) -> HttpError {
    HttpError::new(400, kind)
}

/// Bytes nginx accepts inside a target after the first character: anything
/// but controls, space and DEL (nginx 1.21.1+ rejects control characters and
/// spaces in the request line).
const fn target_byte(b: u8) -> bool {
    b > 0x20 && b != 0x7f
}

fn method_byte(b: u8) -> bool {
    b.is_ascii_uppercase() || b == b'_' || b == b'-'
}

/// The `N` bytes at `p`, if there are that many: compared as one array,
/// which compiles to one or two integer compares instead of `N` byte ones.
fn word<const N: usize>(buf: &[u8], p: usize) -> Option<[u8; N]> {
    buf.get(p..p.checked_add(N)?)?.try_into().ok()
}

/// Target byte classes: 0 for the bytes that only pass (most of them).
const T_END: u8 = 1;
const T_HIGH: u8 = 2;
/// `% / ? #`: they split the path from the query or make the path need
/// normalising (`.` only does after a `/`, which [`after_slash`] checks).
const T_MARK: u8 = 4;

static TARGET_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if !target_byte(c) {
            T_END
        } else if c >= 0x80 {
            T_HIGH
        } else if matches!(c, b'%' | b'/' | b'?' | b'#') {
            T_MARK
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Parses the request line starting at `start` (leading empty lines already
/// skipped). `Ok(None)`: valid so far but incomplete.
#[inline(always)]
pub(crate) fn parse_line(buf: &[u8], start: usize) -> Result<Option<RequestLine>, HttpError> {
    match plain_get(buf, start) {
        Some(line) => Ok(Some(line)),
        None => parse_line_general(buf, start),
    }
}

/// [`parse_line`] for any line.
#[inline(never)]
pub(crate) fn parse_line_general(
    buf: &[u8],
    start: usize,
) -> Result<Option<RequestLine>, HttpError> {
    let at = |p: usize| buf.get(p).copied();
    let Some((method, mut p)) = parse_method(buf, start)? else {
        return Ok(None);
    };
    let method_span = start..p;
    while at(p) == Some(b' ') {
        p += 1;
    }

    // Target.
    let target_start = p;
    let parts = if method == Method::Connect {
        parse_connect_target(buf, p)?
    } else {
        parse_target(buf, p)?
    };
    let Some((host, path_start, scan, target_end)) = parts else {
        return Ok(None);
    };
    p = target_end;
    // `parse_target` stops at a space; nginx answers a target ended by a line
    // ending (HTTP/0.9) itself, which Peregrine refuses.
    while at(p) == Some(b' ') {
        p += 1;
    }
    let Some((version, line_stop, end)) = parse_ending(buf, p)? else {
        return Ok(None);
    };
    Ok(Some(RequestLine {
        method,
        method_span,
        target: target_start..target_end,
        host,
        path_start,
        version,
        line: start..line_stop,
        end,
        scan,
    }))
}

/// The usual line — `GET `, an origin-form target, one space,
/// `HTTP/1.1`, CRLF — as the general parser reads it, without its
/// branches for what this line does not have; `None` for anything else
/// (including a target with a byte the general parser answers with an
/// error), which the general parser then decides.
#[inline(always)]
fn plain_get(buf: &[u8], start: usize) -> Option<RequestLine> {
    if word::<5>(buf, start)? != *b"GET /" {
        return None;
    }
    let target = start + 4;
    let (scan, k) = scan_tail(buf, target, target + 1)?;
    if buf.get(k) != Some(&b' ') || word::<10>(buf, k + 1)? != *b"HTTP/1.1\r\n" {
        return None;
    }
    Some(RequestLine {
        method: Method::Get,
        method_span: start..start + 3,
        target: target..k,
        host: None,
        path_start: Some(target),
        version: Version::Http11,
        line: start..k + 9,
        end: k + 11,
        scan,
    })
}

/// The method token at `start` and where it ends (at the space after it).
/// `GET ` is nearly every request: four bytes compared at once decide what
/// the byte loop and `Method::from_bytes` would.
fn parse_method(buf: &[u8], start: usize) -> Result<Option<(Method, usize)>, HttpError> {
    if word::<4>(buf, start) == Some(*b"GET ") {
        return Ok(Some((Method::Get, start + 3)));
    }
    let mut p = start;
    while let Some(b) = buf.get(p).copied() {
        if b == b' ' {
            break;
        }
        if !method_byte(b) {
            return Err(bad(K::InvalidMethod));
        }
        p += 1;
    }
    if p == buf.len() {
        return Ok(None);
    }
    if p == start {
        return Err(bad(K::InvalidMethod));
    }
    let method = Method::from_bytes(buf.get(start..p).unwrap_or(&[]));
    Ok(Some((method, p)))
}

/// The version and line ending at `p`: `(version, where $request stops,
/// index past the LF)`. The common `HTTP/1.1\r\n` is decided at once; anything
/// else takes the general path, which gives the same answer for those ten
/// bytes.
fn parse_ending(buf: &[u8], mut p: usize) -> Result<Option<(Version, usize, usize)>, HttpError> {
    if word::<8>(buf, p) == Some(*b"HTTP/1.1") && word::<2>(buf, p + 8) == Some(*b"\r\n") {
        return Ok(Some((Version::Http11, p + 8, p + 10)));
    }
    let Some(version) = parse_version(buf, &mut p)? else {
        return Ok(None);
    };
    let Some((line_stop, end)) = line_ending(buf, p)? else {
        return Ok(None);
    };
    Ok(Some((version, line_stop, end)))
}

/// Optional spaces, then CRLF or LF. Returns where `$request` stops (it
/// keeps the trailing spaces, as nginx's `request_end` does) and the index
/// past the LF.
fn line_ending(buf: &[u8], mut p: usize) -> Result<Option<(usize, usize)>, HttpError> {
    let at = |p: usize| buf.get(p).copied();
    while at(p) == Some(b' ') {
        p += 1;
    }
    let stop = p;
    match at(p) {
        None => Ok(None),
        Some(b'\n') => Ok(Some((stop, p + 1))),
        Some(b'\r') => match at(p + 1) {
            None => Ok(None),
            Some(b'\n') => Ok(Some((stop, p + 2))),
            Some(_) => Err(bad(K::InvalidRequestLine)),
        },
        Some(_) => Err(bad(K::InvalidRequestLine)),
    }
}

type TargetParts = (Option<Range<usize>>, Option<usize>, TargetScan, usize);

/// Parses origin-form or absolute-form up to the space that ends it.
fn parse_target(buf: &[u8], start: usize) -> Result<Option<TargetParts>, HttpError> {
    let at = |p: usize| buf.get(p).copied();
    let mut p = start;
    let mut host = None;
    let path_start;
    match at(p) {
        None => return Ok(None),
        Some(b'/') => path_start = Some(p),
        Some(b) if b.is_ascii_alphabetic() => {
            // scheme = [a-z0-9+.-]+ (nginx lowercases before comparing).
            while let Some(b) = at(p) {
                if b == b':' {
                    break;
                }
                if !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) {
                    return Err(bad(K::InvalidTarget));
                }
                p += 1;
            }
            for want in [b':', b'/', b'/'] {
                match at(p) {
                    None => return Ok(None),
                    Some(b) if b == want => p += 1,
                    Some(_) => return Err(bad(K::InvalidTarget)),
                }
            }
            let Some(h) = parse_authority(buf, &mut p)? else {
                return Ok(None);
            };
            host = Some(h);
            path_start = match at(p) {
                Some(b'/') | Some(b'?') => Some(p),
                _ => None,
            };
        }
        Some(_) => return Err(bad(K::InvalidTarget)),
    }
    // A leading `/` starts the path: `scan_tail` looks only at the byte
    // after it (`//`, `/.`), not at it.
    let from = if at(p) == Some(b'/') { p + 1 } else { p };
    let Some((scan, k)) = scan_tail(buf, p, from) else {
        return Ok(None);
    };
    match buf.get(k) {
        Some(b' ') => Ok(Some((host, path_start, scan, k))),
        // HTTP/0.9 simple request: nginx answers it with a bare body;
        // Peregrine refuses it (documented deviation).
        Some(b'\r' | b'\n') => Err(bad(K::Http09)),
        _ => Err(bad(K::InvalidTarget)),
    }
}

/// The rest of the target from `from` (`p`, the path's start or where it
/// would start, or the byte after a `/` there) to the first byte that is
/// not a target byte, whose index it returns with what it saw; `None` when
/// the bytes run out first. The bytes outside `% / ? #` and the
/// non-ASCII ones are passed over eight at a time ([`plain_target_run`]).
#[inline(always)]
fn scan_tail(buf: &[u8], p: usize, from: usize) -> Option<(TargetScan, usize)> {
    let mut scan = TargetScan::default();
    if from > p {
        after_slash(buf, from, &mut scan);
    }
    let mut path_end = None;
    let mut i = from;
    loop {
        // Ordinary bytes in a loop of their own; a `match` per byte would
        // compile to a jump table.
        i += plain_target_run(buf.get(i..)?);
        let b = *buf.get(i)?;
        match TARGET_CLASS[usize::from(b)] {
            T_END => break,
            T_HIGH => scan.non_ascii = true,
            _ if path_end.is_some() => {}
            _ => match b {
                b'?' | b'#' => path_end = Some(i),
                b'%' => scan.path_escapes = true,
                b'/' => after_slash(buf, i + 1, &mut scan),
                _ => {}
            },
        }
        i += 1;
    }
    scan.path_end = path_end.unwrap_or(i);
    Some((scan, i))
}

/// How many bytes at the start of `s` are of class 0 in [`TARGET_CLASS`]
/// (or may be `!` or `'`, which the caller passes over as well): eight
/// at a time (SWAR) while none stops, then one at a time.
///
/// In a word `x`, the top bit of a byte is set in `x | (x + 1…)` for bytes
/// ≥ 0x7f, in `x - 0x21…` for bytes < 0x21, and in `y - 1… & !y` for
/// `y = 0` — here `y` is `x ^ 0x23…` with bits 1 and 2 cleared (zero for
/// `#`, `%`, `!`, `'`) or `x ^ 0x2f…` with bit 4 cleared (`/`, `?`). A
/// carry or borrow only runs upwards from a byte these flag, so the
/// lowest flag is exact: it is the first byte that stops the run, or a
/// `!` or `'`.
fn plain_target_run(s: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |y: u64| y.wrapping_sub(ONES) & !y;
    let mut chunks = s.chunks_exact(8);
    let mut base = 0;
    for chunk in chunks.by_ref() {
        let x = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]));
        let flags = (x
            | x.wrapping_add(ONES)
            | x.wrapping_sub(ONES * 0x21)
            | zero((x ^ (ONES * 0x23)) & (ONES * 0xf9))
            | zero((x ^ (ONES * 0x2f)) & (ONES * 0xef)))
            & HIGH;
        if flags != 0 {
            return base + (flags.trailing_zeros() / 8) as usize;
        }
        base += 8;
    }
    let tail = chunks.remainder();
    base + tail
        .iter()
        .position(|&b| TARGET_CLASS[usize::from(b)] != 0)
        .unwrap_or(tail.len())
}

/// Notes what the byte at `i`, which follows a `/` of the path, makes of
/// it: `/.` may start a dot segment, `//` is merged. (A `.` there cannot be
/// a `?` or `#`, so it is inside the path; looking from the `/` rather
/// than from every `.` keeps `.` an ordinary byte of the scan.)
fn after_slash(buf: &[u8], i: usize, scan: &mut TargetScan) {
    match buf.get(i) {
        Some(b'.') => scan.path_escapes = true,
        Some(b'/') => scan.path_double_slash = true,
        _ => {}
    }
}

/// CONNECT's authority-form target, as nginx 1.29.3+: `host:port` with a
/// port of at least one digit, then a space (no path, no HTTP/0.9 form).
/// Its path is `/`, as nginx's (`uri_start` on the `/` of `HTTP/`). nginx
/// 1.22 read it as an absolute-form target (so `host:port` was 400 there).
fn parse_connect_target(buf: &[u8], start: usize) -> Result<Option<TargetParts>, HttpError> {
    let mut p = start;
    let Some(host) = parse_authority(buf, &mut p)? else {
        return Ok(None);
    };
    let port = buf
        .get(host.clone())
        .and_then(|h| h.iter().rposition(|&b| b == b':'));
    let has_port = port.is_some_and(|c| host.start + c + 1 < host.end);
    if buf.get(p) != Some(&b' ') || !has_port || buf.get(host.end - 1) == Some(&b']') {
        return Err(bad(K::InvalidTarget));
    }
    let scan = TargetScan {
        path_end: p,
        ..TargetScan::default()
    };
    Ok(Some((Some(host), None, scan, p)))
}

/// host = reg-name of `[a-zA-Z0-9.-]` or an IP literal in brackets, then an
/// optional `:digits` port. Leaves `p` on the byte after the authority and
/// returns the host with its port (nginx validates the port with the host).
fn parse_authority(buf: &[u8], p: &mut usize) -> Result<Option<Range<usize>>, HttpError> {
    let at = |p: usize| buf.get(p).copied();
    let start = *p;
    if at(*p) == Some(b'[') {
        loop {
            *p += 1;
            match at(*p) {
                None => return Ok(None),
                Some(b']') => {
                    *p += 1;
                    break;
                }
                Some(b) if b.is_ascii_alphanumeric() || b":.-_~!$&'()*+,;=".contains(&b) => {}
                Some(_) => return Err(bad(K::InvalidTarget)),
            }
        }
    } else {
        while let Some(b) = at(*p) {
            if !(b.is_ascii_alphanumeric() || b == b'.' || b == b'-') {
                break;
            }
            *p += 1;
        }
    }
    if at(*p) == Some(b':') {
        *p += 1;
        while at(*p).is_some_and(|b| b.is_ascii_digit()) {
            *p += 1;
        }
    }
    match at(*p) {
        None => Ok(None),
        Some(b'/' | b'?' | b' ') => Ok(Some(start..*p)),
        Some(b'\r' | b'\n') => Err(bad(K::Http09)),
        Some(_) => Err(bad(K::InvalidTarget)),
    }
}

/// `HTTP/` major `.` minor, as nginx: major 1-9 first digit, anything above
/// 1 is 505; minor at most three digits; 1.x with x ≥ 1 is HTTP/1.1.
fn parse_version(buf: &[u8], p: &mut usize) -> Result<Option<Version>, HttpError> {
    let at = |p: usize| buf.get(p).copied();
    for &want in b"HTTP/" {
        match at(*p) {
            None => return Ok(None),
            Some(b) if b == want => *p += 1,
            Some(_) => return Err(bad(K::InvalidRequestLine)),
        }
    }
    // The major version must be exactly 1: a first digit of 2-9, or any
    // second digit (10+), is 505 as soon as it is seen.
    let unsupported = || HttpError::new(505, K::UnsupportedVersion);
    match at(*p) {
        None => return Ok(None),
        Some(b'1') => *p += 1,
        Some(b'2'..=b'9') => return Err(unsupported()),
        Some(_) => return Err(bad(K::InvalidVersion)),
    }
    match at(*p) {
        None => return Ok(None),
        Some(b'.') => *p += 1,
        Some(b'0'..=b'9') => return Err(unsupported()),
        Some(_) => return Err(bad(K::InvalidVersion)),
    }
    let mut minor: u32 = match at(*p) {
        None => return Ok(None),
        Some(b @ b'0'..=b'9') => u32::from(b - b'0'),
        Some(_) => return Err(bad(K::InvalidVersion)),
    };
    *p += 1;
    loop {
        match at(*p) {
            None => return Ok(None),
            Some(b @ b'0'..=b'9') => {
                if minor > 99 {
                    return Err(bad(K::InvalidVersion));
                }
                minor = minor * 10 + u32::from(b - b'0');
            }
            Some(b' ' | b'\r' | b'\n') => break,
            Some(_) => return Err(bad(K::InvalidVersion)),
        }
        *p += 1;
    }
    Ok(Some(if minor == 0 {
        Version::Http10
    } else {
        Version::Http11
    }))
}

#[cfg(test)]
mod tests {
    use super::{TARGET_CLASS, parse_line_general, plain_get, plain_target_run};

    /// Where the fast path answers, the general parser gives the same
    /// line: on random lines around `GET /… HTTP/1.1` made of the bytes
    /// that matter to either.
    #[test]
    fn plain_get_agrees_with_general() {
        let alphabet = b"GET /a.%?#\r\n\t\x7f\xc3HTP1";
        let mut next = crate::request::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut answered = 0;
        for _ in 0..300_000 {
            let mut line = b"\r\nGET /a/b.c?d HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
            for _ in 0..next() % 4 {
                let at = next() % line.len();
                let b = alphabet[next() % alphabet.len()];
                match next() % 3 {
                    0 => line[at] = b,
                    1 => line.insert(at, b),
                    _ => drop(line.remove(at)),
                }
            }
            let cut = line.len() - next() % 8;
            let buf = &line[..cut];
            if let Some(fast) = plain_get(buf, 2) {
                answered += 1;
                assert_eq!(parse_line_general(buf, 2), Ok(Some(fast)), "{buf:?}");
            }
        }
        assert!(answered > 10_000, "{answered}");
    }

    /// The word-wise run stops where a byte-wise one over [`TARGET_CLASS`]
    /// would, or earlier at a `!` or `'`, wherever the byte sits and
    /// whatever bytes (carries, borrows) come after it.
    #[test]
    fn plain_target_run_agrees_with_bytewise() {
        let stops = [
            b' ', b'\0', b'\t', 0x7f, 0x80, 0xff, b'%', b'/', b'?', b'#', b'!', b'\'',
        ];
        let plain = b"aZ09.-_~&=+$,;:@[]\"()*";
        let mut next = crate::request::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for len in 0..40 {
            for _ in 0..200 {
                let mut v: Vec<u8> = (0..len).map(|_| plain[next() % plain.len()]).collect();
                for _ in 0..next() % 3 {
                    if len > 0 {
                        v[next() % len] = stops[next() % stops.len()];
                    }
                }
                let want = v
                    .iter()
                    .position(|&b| TARGET_CLASS[usize::from(b)] != 0)
                    .unwrap_or(len);
                let got = plain_target_run(&v);
                assert!(
                    got == want || got < want && matches!(v[got], b'!' | b'\''),
                    "{v:?}: {got}, not {want}"
                );
            }
        }
    }
}
