//! Byte ranges (RFC 9110 §14) exactly as nginx's range filter decides them.
//!
//! The workspace's one `Range` parser: a line-by-line port of
//! `ngx_http_range_parse` (1.22), because nginx's answers hinge on details no
//! RFC reading gives (spaces allowed around the numbers, overlapping ranges
//! whose sum exceeds the file turning the whole header off, `bytes=0-` on an
//! empty file being ignored rather than 416). Public only so the fuzz crate
//! can reach it; the server's caller is the static file handler.

/// The outcome of a `Range` header against a representation of `size` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ranges {
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
pub fn parse(value: &str, size: u64) -> Ranges {
    parse_max(value, size, None)
}

/// nginx's per-range overhead estimate of a multipart answer (its boundary
/// and part headers) and the slack allowed on top of the file, when
/// `max_ranges` is not set: a multipart answer much larger than the file
/// is refused (`ngx_http_range_parse`, nginx 1.27.2 on).
const PART_OVERHEAD: u64 = 256;
const MULTIPART_SLACK: u64 = 4096;

/// [`parse`] with `max_ranges` (`None`: unlimited; callers handle 0, which
/// turns ranges off before parsing): more ranges than that are ignored.
pub fn parse_max(value: &str, size: u64, max_ranges: Option<u32>) -> Ranges {
    let mut budget = max_ranges.map_or(u64::MAX, u64::from);
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
            // nginx's `size > NGX_MAX_OFF_T_VALUE - (end - start)`, turned
            // around so that a size past off_t (never a file's) cannot
            // underflow: `total` never exceeds MAX_OFF.
            if end - start > MAX_OFF - total {
                return Ranges::Unsatisfiable;
            }
            total += end - start;
            ranges.push((start, end));
            if budget == 0 {
                return Ranges::Ignore;
            }
            budget -= 1;
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
    if ranges.len() == 1 {
        return Ranges::Satisfiable(ranges);
    }
    if total > size {
        return Ranges::Ignore;
    }
    let overhead = PART_OVERHEAD.saturating_mul(ranges.len() as u64);
    if max_ranges.is_none() && total.saturating_add(overhead) > size.saturating_add(MULTIPART_SLACK)
    {
        return Ranges::Ignore;
    }
    Ranges::Satisfiable(ranges)
}

/// Whether `If-Range` lets the ranges apply (`ngx_http_range_header_filter`):
/// a quoted value must equal the ETag byte for byte, anything else must be
/// the Last-Modified date exactly.
/// Without an ETag (`etag off`, `add_header ETag ""`) or a Last-Modified
/// time, that comparison fails.
pub(crate) fn if_range_matches(if_range: &str, etag: Option<&str>, mtime: Option<i64>) -> bool {
    if if_range.len() >= 2 && if_range.ends_with('"') {
        return etag == Some(if_range);
    }
    mtime.is_some() && peregrine_codec::date::parse_http_date(if_range) == mtime
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

    /// Each case sent to nginx 1.22 for a 10-byte file (cases kept from the
    /// codec's former parser when it was merged into this one).
    fn ten_bytes() -> Vec<(&'static str, Ranges)> {
        const U416: Ranges = Ranges::Unsatisfiable;
        const IGNORE: Ranges = Ranges::Ignore;
        vec![
            ("bytes=0-0", s(&[(0, 1)])),
            ("bytes=-0", U416),
            ("bytes=0-", s(&[(0, 10)])),
            ("bytes=5-2", U416),
            ("bytes=20-", U416),
            ("bytes=1-2,x", U416),
            ("bytes=x", U416),
            ("bytes=1-2, 4-5", s(&[(1, 3), (4, 6)])),
            ("bytes= 1 - 2 ", s(&[(1, 3)])),
            ("bytes=0-9,0-9", IGNORE),
            ("bytes=0-4,3-9", IGNORE),
            ("Bytes=1-2", s(&[(1, 3)])),
            ("bytes=1-2;", U416),
            ("bytes=-20", s(&[(0, 10)])),
            ("bytes=9-100", s(&[(9, 10)])),
            ("bytes=10-20,1-2", s(&[(1, 3)])),
            ("bytes=,1-2", U416),
            ("bytes=1-2,", U416),
            ("bytes=", IGNORE),
            ("items=1-2", IGNORE),
            ("bytes=99999999999999999999-", U416),
            ("bytes=1-2\t", U416),
        ]
    }

    #[test]
    fn nginx_cases_ten_bytes() {
        for (h, want) in ten_bytes() {
            assert_eq!(parse(h, 10), want, "{h:?}");
        }
    }

    #[test]
    fn nginx_cases_empty_file() {
        // An empty file: whatever would start at 0 turns range processing
        // off; anything else is 416 (nginx 1.22).
        let cases: &[(&str, Ranges)] = &[
            ("bytes=0-0", Ranges::Ignore),
            ("bytes=-0", Ranges::Ignore),
            ("bytes=0-", Ranges::Ignore),
            ("bytes=-20", Ranges::Ignore),
            ("bytes=5-2", Ranges::Unsatisfiable),
            ("bytes=20-", Ranges::Unsatisfiable),
            ("bytes=1-2, 4-5", Ranges::Unsatisfiable),
        ];
        for (h, want) in cases {
            assert_eq!(&parse(h, 0), want, "{h:?}");
        }
    }

    #[test]
    fn total_past_off_t_is_416() {
        // ngx_http_range_parse: `if (size > NGX_MAX_OFF_T_VALUE - (end -
        // start)) return NGX_HTTP_RANGE_NOT_SATISFIABLE`, checked before the
        // sum is compared with the size (which would ignore the header).
        assert_eq!(parse("bytes=0-,0-", MAX_OFF), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=0-", MAX_OFF), s(&[(0, MAX_OFF)]));
        assert_eq!(
            parse("bytes=1-,0-0", MAX_OFF),
            s(&[(1, MAX_OFF), (0, 1)]),
            "a sum of exactly off_t's maximum is fine"
        );
        // Sizes past off_t come from no file; they must not panic.
        assert_eq!(parse("bytes=0-", u64::MAX), Ranges::Unsatisfiable);
        assert_eq!(parse("bytes=1-2", u64::MAX), s(&[(1, 3)]));
    }

    #[test]
    fn every_prefix_of_the_nginx_cases_stays_inside() {
        for (h, _) in ten_bytes() {
            for i in 0..=h.len() {
                for size in [0, 1, 10, MAX_OFF, u64::MAX] {
                    if let Ranges::Satisfiable(r) = parse(&h[..i], size) {
                        assert!(!r.is_empty());
                        assert!(r.iter().all(|&(a, b)| a < b && b <= size), "{h:?}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn ranges_are_non_empty_and_inside(v in "bytes=[0-9 ,-]{0,30}", size in 0u64..100) {
            if let Ranges::Satisfiable(r) = parse(&v, size) {
                proptest::prop_assert!(!r.is_empty());
                for (a, b) in r {
                    proptest::prop_assert!(a < b && b <= size);
                }
            }
        }

        #[test]
        fn arbitrary_text(v in "\\PC{0,30}", size in proptest::prelude::any::<u64>()) {
            let _ = parse(&v, size);
        }
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
        assert!(if_range_matches("\"a-1\"", Some("\"a-1\""), Some(0)));
        assert!(!if_range_matches("\"a-2\"", Some("\"a-1\""), Some(0)));
        assert!(!if_range_matches("\"a-1\"", None, Some(0)), "no ETag");
        assert!(if_range_matches(
            "Sun, 06 Nov 1994 08:49:37 GMT",
            Some("\"x\""),
            Some(784_111_777)
        ));
        assert!(!if_range_matches(
            "Sun, 06 Nov 1994 08:49:38 GMT",
            Some("\"x\""),
            Some(784_111_777)
        ));
        assert!(!if_range_matches("bad", None, None), "no Last-Modified");
    }

    /// `max_ranges N`: up to N ranges are answered, one more makes the
    /// header ignored; bad ranges past the limit are not counted (nginx
    /// counts only satisfiable ones).
    #[test]
    fn max_ranges() {
        let v = "bytes=0-9, -10, 10-19";
        assert_eq!(parse_max(v, 1000, Some(2)), Ranges::Ignore);
        assert_eq!(
            parse_max("bytes=0-9, -10", 1000, Some(2)),
            s(&[(0, 10), (990, 1000)])
        );
        assert_eq!(
            parse_max("bytes=0-9, -10, 10000-", 1000, Some(2)),
            s(&[(0, 10), (990, 1000)])
        );
        assert_eq!(parse_max("bytes=0-9", 1000, Some(1)), s(&[(0, 10)]));
        assert_eq!(
            parse_max(v, 1000, None),
            s(&[(0, 10), (990, 1000), (10, 20)])
        );
    }

    /// Without `max_ranges`, a multipart answer far larger than the file
    /// is refused: 256 bytes counted per part, 4096 bytes of slack.
    #[test]
    fn multipart_overhead_without_max_ranges() {
        let many = format!("bytes={}", vec!["0-0"; 20].join(","));
        assert_eq!(parse_max(&many, 100, None), Ranges::Ignore);
        assert!(matches!(
            parse_max(&many, 100, Some(100)),
            Ranges::Satisfiable(r) if r.len() == 20
        ));
        assert!(matches!(
            parse_max(&many, 10_000, None),
            Ranges::Satisfiable(r) if r.len() == 20
        ));
    }
}
