//! The request line, byte for byte as nginx's `ngx_http_parse_request_line`
//! (1.22) accepts it: method `[A-Z_-]+`, one or more spaces, an origin-form
//! (`/…`) or absolute-form (`scheme://host[:port][/…]`) target, spaces,
//! `HTTP/major.minor`, optional trailing spaces, CRLF or bare LF.

use crate::{HttpError, HttpErrorKind as K, Method, Version};
use std::ops::Range;

/// A complete, valid request line; positions index the parsed buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestLine {
    pub method: Method,
    pub method_span: Range<usize>,
    pub target: Range<usize>,
    /// Host of an absolute-form target (not yet validated as a Host).
    pub host: Option<Range<usize>>,
    /// Where the path starts inside the target span (`None`: absolute-form
    /// target without a path, which nginx treats as `/`).
    pub path_start: Option<usize>,
    pub version: Version,
    /// The line without its line ending.
    pub line: Range<usize>,
    /// Index just past the terminating LF.
    pub end: usize,
}

fn bad(kind: K) -> HttpError {
    HttpError::new(400, kind)
}

/// Bytes nginx accepts inside a target after the first character: anything
/// but controls, space and DEL (nginx 1.21.1+ rejects control characters and
/// spaces in the request line).
fn target_byte(b: u8) -> bool {
    b > 0x20 && b != 0x7f
}

fn method_byte(b: u8) -> bool {
    b.is_ascii_uppercase() || b == b'_' || b == b'-'
}

/// Parses the request line starting at `start` (leading empty lines already
/// skipped). `Ok(None)`: valid so far but incomplete.
pub(crate) fn parse_line(buf: &[u8], start: usize) -> Result<Option<RequestLine>, HttpError> {
    let mut p = start;
    let at = |p: usize| buf.get(p).copied();

    // Method.
    while let Some(b) = at(p) {
        if b == b' ' {
            break;
        }
        if !method_byte(b) {
            return Err(bad(K::InvalidMethod));
        }
        p += 1;
    }
    let Some(_) = at(p) else { return Ok(None) };
    if p == start {
        return Err(bad(K::InvalidMethod));
    }
    let method_span = start..p;
    while at(p) == Some(b' ') {
        p += 1;
    }

    // Target.
    let target_start = p;
    let (host, path_start, target_end) = match parse_target(buf, p)? {
        Some(t) => t,
        None => return Ok(None),
    };
    p = target_end;
    // `parse_target` stops at a space; nginx answers a target ended by a line
    // ending (HTTP/0.9) itself, which Peregrine refuses.
    while at(p) == Some(b' ') {
        p += 1;
    }
    let Some(version) = parse_version(buf, &mut p)? else {
        return Ok(None);
    };
    let Some((line_stop, end)) = line_ending(buf, p)? else {
        return Ok(None);
    };
    Ok(Some(RequestLine {
        method: Method::from_bytes(buf.get(method_span.clone()).unwrap_or(&[])),
        method_span,
        target: target_start..target_end,
        host,
        path_start,
        version,
        line: start..line_stop,
        end,
    }))
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

type TargetParts = (Option<Range<usize>>, Option<usize>, usize);

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
    // The first byte that is not a target byte decides: one pass, two
    // comparisons per byte.
    let tail = buf.get(p..).unwrap_or(&[]);
    let Some(k) = tail.iter().position(|&b| !target_byte(b)) else {
        return Ok(None);
    };
    match tail.get(k) {
        Some(b' ') => Ok(Some((host, path_start, p + k))),
        // HTTP/0.9 simple request: nginx answers it with a bare body;
        // Peregrine refuses it (documented deviation).
        Some(b'\r' | b'\n') => Err(bad(K::Http09)),
        _ => Err(bad(K::InvalidTarget)),
    }
}

/// host = reg-name of `[a-zA-Z0-9.-]` or an IP literal in brackets, then an
/// optional `:digits` port. Leaves `p` on the byte after the authority.
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
    let host = start..*p;
    if at(*p) == Some(b':') {
        *p += 1;
        while at(*p).is_some_and(|b| b.is_ascii_digit()) {
            *p += 1;
        }
    }
    match at(*p) {
        None => Ok(None),
        Some(b'/' | b'?' | b' ') => Ok(Some(host)),
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
