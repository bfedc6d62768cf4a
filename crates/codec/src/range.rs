//! `Range` request header (RFC 9110 §14.2) exactly as nginx's
//! `ngx_http_range_parse` (range filter module, 1.22) decides it.
//!
//! Hand-written because nginx's answers are not RFC 9110's in the corners
//! that matter for byte-identical responses: syntax errors are 416 (not
//! "ignore"), ranges whose total exceeds the file (overlaps) are ignored
//! (full 200), a zero-length file ignores satisfiable-looking ranges, and
//! spaces are allowed around numbers. Verified against nginx with raw sockets.

/// What a `Range` header asks for, as nginx's range filter decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RangeSpec {
    /// No range processing: send the full 200 response (absent header, not
    /// `bytes=`, overlapping ranges totalling more than the size, an empty
    /// file, or more ranges than `max_ranges`).
    None,
    /// Inclusive (first, last) byte positions clipped to the size, in request
    /// order; never empty.
    Ranges(Vec<(u64, u64)>),
    /// 416 Range Not Satisfiable (`Content-Range: bytes */size`).
    Unsatisfiable,
}

/// nginx's `max_ranges` default: unlimited.
pub const UNLIMITED_RANGES: u32 = u32::MAX;

/// nginx's largest `off_t`; numbers above it are 416.
const MAX_OFF: u64 = i64::MAX as u64;

/// Parses `value` for a representation of `size` bytes with unlimited ranges.
pub fn parse_range(value: &str, size: u64) -> RangeSpec {
    parse_range_limited(value, size, UNLIMITED_RANGES)
}

/// Parses with nginx's `max_ranges` (0 disables range processing; more
/// ranges than the limit means the full response).
pub fn parse_range_limited(value: &str, size: u64, max_ranges: u32) -> RangeSpec {
    let v = value.as_bytes();
    if max_ranges == 0 || v.len() < 7 || !v[..6].eq_ignore_ascii_case(b"bytes=") {
        return RangeSpec::None;
    }
    match parse_set(&v[6..], size.min(MAX_OFF), max_ranges) {
        Ok(ranges) => RangeSpec::Ranges(ranges),
        Err(spec) => spec,
    }
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn spaces(&mut self) {
        while self.peek() == Some(b' ') {
            self.i += 1;
        }
    }
    /// One or more digits, 416 on overflow of `off_t` or no digit.
    fn number(&mut self) -> Result<u64, RangeSpec> {
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(RangeSpec::Unsatisfiable);
        }
        let mut n: u64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(c - b'0')))
                .filter(|&n| n <= MAX_OFF)
                .ok_or(RangeSpec::Unsatisfiable)?;
            self.i += 1;
        }
        Ok(n)
    }
    /// At the end of the header value.
    fn at_end(&self) -> bool {
        self.peek().is_none()
    }

    /// Spaces, then the end of the value or a `,` (not consumed).
    fn end_of_range(&mut self) -> Result<(), RangeSpec> {
        self.spaces();
        if self.at_end() || self.peek() == Some(b',') {
            Ok(())
        } else {
            Err(RangeSpec::Unsatisfiable)
        }
    }

    /// One `first-last`, `first-` or `-suffix` as [start, end), clipped.
    fn range(&mut self, size: u64) -> Result<(u64, u64), RangeSpec> {
        self.spaces();
        if self.peek() == Some(b'-') {
            self.i += 1;
            let n = self.number()?;
            self.end_of_range()?;
            return Ok((size.saturating_sub(n), size));
        }
        let start = self.number()?;
        self.spaces();
        if self.peek() != Some(b'-') {
            return Err(RangeSpec::Unsatisfiable);
        }
        self.i += 1;
        self.spaces();
        if self.at_end() || self.peek() == Some(b',') {
            return Ok((start, size));
        }
        let last = self.number()?;
        self.end_of_range()?;
        Ok((start, if last >= size { size } else { last + 1 }))
    }
}

/// The loop of `ngx_http_range_parse`; ranges are [start, end) internally.
fn parse_set(b: &[u8], size: u64, max_ranges: u32) -> Result<Vec<(u64, u64)>, RangeSpec> {
    let mut p = P { b, i: 0 };
    let mut out = Vec::new();
    let mut total: u64 = 0;
    let mut left = max_ranges;
    loop {
        let (start, end) = p.range(size)?;
        if start < end {
            out.push((start, end - 1));
            total = total.saturating_add(end - start);
            if left == 0 {
                return Err(RangeSpec::None);
            }
            left -= 1;
        } else if start == 0 {
            // Only reachable for an empty representation: nginx sends it whole.
            return Err(RangeSpec::None);
        }
        if p.peek() != Some(b',') {
            break;
        }
        p.i += 1;
    }
    if out.is_empty() {
        return Err(RangeSpec::Unsatisfiable);
    }
    if total > size {
        return Err(RangeSpec::None);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use RangeSpec::{None as Full, Ranges, Unsatisfiable as U416};

    #[test]
    fn nginx_cases_ten_bytes() {
        // (header, expected) for a 10-byte file, each checked against nginx 1.22.
        let cases: &[(&str, RangeSpec)] = &[
            ("bytes=0-0", Ranges(vec![(0, 0)])),
            ("bytes=-0", U416),
            ("bytes=0-", Ranges(vec![(0, 9)])),
            ("bytes=5-2", U416),
            ("bytes=20-", U416),
            ("bytes=1-2,x", U416),
            ("bytes=x", U416),
            ("bytes=1-2, 4-5", Ranges(vec![(1, 2), (4, 5)])),
            ("bytes= 1 - 2 ", Ranges(vec![(1, 2)])),
            ("bytes=0-9,0-9", Full),
            ("bytes=0-4,3-9", Full),
            ("Bytes=1-2", Ranges(vec![(1, 2)])),
            ("bytes=1-2;", U416),
            ("bytes=-20", Ranges(vec![(0, 9)])),
            ("bytes=9-100", Ranges(vec![(9, 9)])),
            ("bytes=10-20,1-2", Ranges(vec![(1, 2)])),
            ("bytes=,1-2", U416),
            ("bytes=1-2,", U416),
            ("bytes=", Full),
            ("items=1-2", Full),
            ("bytes=99999999999999999999-", U416),
            ("bytes=1-2\t", U416),
        ];
        for (h, want) in cases {
            assert_eq!(&parse_range(h, 10), want, "{h}");
        }
    }

    #[test]
    fn nginx_cases_empty_file() {
        let cases: &[(&str, RangeSpec)] = &[
            ("bytes=0-0", Full),
            ("bytes=-0", Full),
            ("bytes=0-", Full),
            ("bytes=5-2", U416),
            ("bytes=20-", U416),
            ("bytes=1-2, 4-5", U416),
            ("bytes=-20", Full),
        ];
        for (h, want) in cases {
            assert_eq!(&parse_range(h, 0), want, "{h}");
        }
    }

    #[test]
    fn max_ranges() {
        assert_eq!(parse_range_limited("bytes=1-2", 10, 0), Full);
        assert_eq!(
            parse_range_limited("bytes=1-2", 10, 1),
            Ranges(vec![(1, 2)])
        );
        assert_eq!(parse_range_limited("bytes=1-2,4-5", 10, 1), Full);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_ranges_are_inside(s in "bytes=[0-9 ,-]{0,30}", size in 0u64..100) {
            if let Ranges(r) = parse_range(&s, size) {
                proptest::prop_assert!(!r.is_empty());
                for (a, b) in r {
                    proptest::prop_assert!(a <= b && b < size);
                }
            }
        }

        #[test]
        fn arbitrary_text(s in "\\PC{0,30}", size in proptest::prelude::any::<u64>()) {
            let _ = parse_range(&s, size);
        }
    }
}
