//! Byte ranges (RFC 9110 §14) exactly as nginx's range filter decides them.
//!
//! Private to core rather than the codec's `parse_range`: nginx's answers
//! hinge on details of `ngx_http_range_parse` (spaces allowed around the
//! numbers, overlapping ranges whose sum exceeds the file turning the whole
//! header off, `bytes=0-` on an empty file being ignored rather than 416), so
//! this is a line-by-line port kept next to its only user.

/// The outcome of a `Range` header against a representation of `size` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ranges {
    /// Ignore the header: send the whole representation (200).
    Ignore,
    /// 416 with `Content-Range: bytes */size`.
    Unsatisfiable,
    /// Half-open `[start, end)` ranges in request order (206).
    Satisfiable(Vec<(u64, u64)>),
}

/// nginx's `NGX_MAX_OFF_T_VALUE`.
const MAX_OFF: u64 = i64::MAX as u64;

/// Parses a `Range` value (`max_ranges` is unlimited, nginx's default).
pub(crate) fn parse(value: &str, size: u64) -> Ranges {
    let v = value.as_bytes();
    // nginx: at least `bytes=N`, `bytes=` compared case-insensitively.
    if v.len() < 7 || !v[..6].eq_ignore_ascii_case(b"bytes=") {
        return Ranges::Ignore;
    }
    // The header value is NUL-terminated in nginx; 0 plays that role here.
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let mut p = 6;
    let mut ranges = Vec::new();
    let mut total: u64 = 0;
    loop {
        let mut start: u64 = 0;
        let mut end: u64 = 0;
        let suffix;
        while at(p) == b' ' {
            p += 1;
        }
        let mut open_end = false;
        if at(p) != b'-' {
            if !at(p).is_ascii_digit() {
                return Ranges::Unsatisfiable;
            }
            while at(p).is_ascii_digit() {
                start = match start
                    .checked_mul(10)
                    .and_then(|s| s.checked_add(u64::from(at(p) - b'0')))
                {
                    Some(s) if s <= MAX_OFF => s,
                    _ => return Ranges::Unsatisfiable,
                };
                p += 1;
            }
            while at(p) == b' ' {
                p += 1;
            }
            if at(p) != b'-' {
                return Ranges::Unsatisfiable;
            }
            p += 1;
            while at(p) == b' ' {
                p += 1;
            }
            if at(p) == b',' || at(p) == 0 {
                end = size;
                open_end = true;
            }
            suffix = false;
        } else {
            suffix = true;
            p += 1;
        }
        if !open_end {
            if !at(p).is_ascii_digit() {
                return Ranges::Unsatisfiable;
            }
            while at(p).is_ascii_digit() {
                end = match end
                    .checked_mul(10)
                    .and_then(|e| e.checked_add(u64::from(at(p) - b'0')))
                {
                    Some(e) if e <= MAX_OFF => e,
                    _ => return Ranges::Unsatisfiable,
                };
                p += 1;
            }
            while at(p) == b' ' {
                p += 1;
            }
            if at(p) != b',' && at(p) != 0 {
                return Ranges::Unsatisfiable;
            }
            if suffix {
                start = size.saturating_sub(end);
                end = size.saturating_sub(1);
            }
            end = if end >= size { size } else { end + 1 };
        }
        if start < end {
            if total > MAX_OFF - (end - start) {
                return Ranges::Unsatisfiable;
            }
            total += end - start;
            ranges.push((start, end));
        } else if start == 0 {
            return Ranges::Ignore;
        }
        let sep = at(p);
        p += 1;
        if sep != b',' {
            break;
        }
    }
    if ranges.is_empty() {
        return Ranges::Unsatisfiable;
    }
    if total > size {
        return Ranges::Ignore;
    }
    Ranges::Satisfiable(ranges)
}

/// Whether `If-Range` lets the ranges apply (`ngx_http_range_header_filter`):
/// a quoted value must equal the ETag byte for byte, anything else must be
/// the Last-Modified date exactly.
pub(crate) fn if_range_matches(if_range: &str, etag: &str, mtime: i64) -> bool {
    if if_range.len() >= 2 && if_range.ends_with('"') {
        return if_range == etag;
    }
    crate::date::parse_http_date(if_range) == Some(mtime)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[(u64, u64)]) -> Ranges {
        Ranges::Satisfiable(v.to_vec())
    }

    #[test]
    fn single_and_suffix_and_open() {
        assert_eq!(parse("bytes=2-4", 20), s(&[(2, 5)]));
        assert_eq!(parse("bytes=-3", 20), s(&[(17, 20)]));
        assert_eq!(parse("bytes=15-", 20), s(&[(15, 20)]));
        assert_eq!(parse("bytes=15-100", 20), s(&[(15, 20)]));
        assert_eq!(parse("bytes=-100", 20), s(&[(0, 20)]));
        assert_eq!(parse("BYTES= 2 - 4 ", 20), s(&[(2, 5)]));
        assert_eq!(parse("bytes=2-4,-3", 20), s(&[(2, 5), (17, 20)]));
    }

    #[test]
    fn nginx_corner_cases() {
        assert_eq!(parse("bytes=30-", 20), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=-0", 20), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=0-", 0), Ranges::Ignore);
        assert_eq!(parse("bytes=5-2", 20), Ranges::Unsatisfiable);
        assert_eq!(
            parse("bytes=0-30,5-6", 20),
            Ranges::Ignore,
            "sum exceeds size"
        );
        assert_eq!(parse("bytes=a", 20), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=1-2;", 20), Ranges::Unsatisfiable);
        assert_eq!(parse("items=1-2", 20), Ranges::Ignore);
        assert_eq!(parse("bytes=", 20), Ranges::Ignore);
        assert_eq!(
            parse("bytes=99999999999999999999-", 20),
            Ranges::Unsatisfiable
        );
        assert_eq!(parse("bytes=1-2,", 20), Ranges::Unsatisfiable);
    }

    #[test]
    fn never_panics_on_any_prefix() {
        let v = "bytes= 1 -2 , -3,4-,-,99999999999999999999999,x";
        for i in 0..=v.len() {
            for size in [0, 1, 5, 100] {
                let _ = parse(&v[..i], size);
            }
        }
    }

    #[test]
    fn if_range() {
        assert!(if_range_matches("\"a-1\"", "\"a-1\"", 0));
        assert!(!if_range_matches("\"a-2\"", "\"a-1\"", 0));
        assert!(if_range_matches(
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "\"x\"",
            784_111_777
        ));
        assert!(!if_range_matches(
            "Sun, 06 Nov 1994 08:49:38 GMT",
            "\"x\"",
            784_111_777
        ));
    }
}
