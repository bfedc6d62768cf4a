//! nginx's HTTP date parser (ngx_parse_http_time), for `gzip_proxied expired`.
//!
//! Hand-written because `gzip_proxied expired` must accept and reject
//! exactly the `Expires`/`Date` values nginx does: its parser ignores the
//! weekday and the zone name, accepts the three RFC 9110 §5.6.7 forms
//! (IMF-fixdate, RFC 850 with a two-digit year, asctime), and rejects
//! impossible days. A general date crate would differ on those edges.

/// Days in each month of a non-leap year.
const MDAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

#[derive(Clone, Copy, PartialEq)]
enum Fmt {
    /// `Tue, 10 Nov 2002 23:50:13`
    Rfc822,
    /// `Tuesday, 10-Dec-02 23:50:13`
    Rfc850,
    /// `Tue Dec 10 23:50:13 2002`
    Isoc,
}

fn at(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

fn digit(v: &[u8], i: usize) -> Option<u32> {
    let c = at(v, i);
    c.is_ascii_digit().then(|| u32::from(c - b'0'))
}

fn two(v: &[u8], i: usize) -> Option<u32> {
    Some(digit(v, i)? * 10 + digit(v, i + 1)?)
}

/// The month (0 = January) named at `p`, told apart by nginx's minimal
/// checks (only the letters it looks at matter: `Jxn` is June).
fn month_at(v: &[u8], p: usize) -> Option<usize> {
    Some(match at(v, p) {
        b'J' if at(v, p + 1) == b'a' => 0,
        b'J' if at(v, p + 2) == b'n' => 5,
        b'J' => 6,
        b'F' => 1,
        b'M' if at(v, p + 2) == b'r' => 2,
        b'M' => 4,
        b'A' if at(v, p + 1) == b'p' => 3,
        b'A' => 7,
        b'S' => 8,
        b'O' => 9,
        b'N' => 10,
        b'D' => 11,
        _ => return None,
    })
}

/// ` HH:MM:SS` at `p` (ranges are checked by the caller).
fn clock(v: &[u8], p: usize) -> Option<(u32, u32, u32)> {
    if at(v, p) != b' ' || at(v, p + 3) != b':' || at(v, p + 6) != b':' {
        return None;
    }
    Some((two(v, p + 1)?, two(v, p + 4)?, two(v, p + 7)?))
}

/// Seconds since the Unix epoch, or `None` where nginx returns NGX_ERROR.
///
/// One function, as ngx_parse_http_time is one pass over the value: the
/// position checks only make sense read in order against nginx's source.
pub fn parse_http_time(value: &str) -> Option<i64> {
    let v = value.as_bytes();
    let end = v.len();
    let mut fmt = None;
    let mut p = 0;
    while p < end {
        if v[p] == b',' {
            break;
        }
        if v[p] == b' ' {
            fmt = Some(Fmt::Isoc);
            break;
        }
        p += 1;
    }
    p += 1;
    while p < end && v[p] == b' ' {
        p += 1;
    }
    if end.saturating_sub(p) < 18 {
        return None;
    }
    let mut day = 0;
    if fmt.is_none() {
        day = two(v, p)?;
        p += 2;
        fmt = Some(match at(v, p) {
            b' ' if end - p >= 18 => Fmt::Rfc822,
            b'-' => Fmt::Rfc850,
            _ => return None,
        });
        p += 1;
    }
    let fmt = fmt?;
    let month = month_at(v, p)?;
    p += 3;
    if (fmt == Fmt::Rfc822 && at(v, p) != b' ') || (fmt == Fmt::Rfc850 && at(v, p) != b'-') {
        return None;
    }
    p += 1;
    let mut year = 0;
    match fmt {
        Fmt::Rfc822 => {
            year = two(v, p)? * 100 + two(v, p + 2)?;
            p += 4;
        }
        Fmt::Rfc850 => {
            year = two(v, p)?;
            year += if year < 70 { 2000 } else { 1900 };
            p += 2;
        }
        Fmt::Isoc => {
            if at(v, p) == b' ' {
                p += 1;
            }
            day = digit(v, p)?;
            p += 1;
            if at(v, p) != b' ' {
                day = day * 10 + digit(v, p)?;
                p += 1;
            }
            if end.saturating_sub(p) < 14 {
                return None;
            }
        }
    }
    let (hour, min, sec) = clock(v, p)?;
    p += 9;
    if fmt == Fmt::Isoc {
        if at(v, p) != b' ' {
            return None;
        }
        year = two(v, p + 1)? * 100 + two(v, p + 3)?;
    }
    if hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    if day == 29 && month == 1 {
        if !leap {
            return None;
        }
    } else if day > MDAYS[month] {
        return None;
    }
    Some(
        days_from_civil(year, month as u32 + 1, day) * 86_400
            + i64::from(hour * 3600 + min * 60 + sec),
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Gauss' formula with
/// the year starting in March, as nginx computes it).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let (mut y, mut m) = (i64::from(year), i64::from(month));
    m -= 2;
    if m <= 0 {
        m += 12;
        y -= 1;
    }
    365 * y + y / 4 - y / 100 + y / 400 + 367 * m / 12 - 31 + i64::from(day) - 719_527 + 31 + 28
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_formats() {
        let t = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_http_time("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_time("Sunday, 06-Nov-94 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_time("Sun Nov  6 08:49:37 1994"), Some(t));
        assert_eq!(parse_http_time("Thu, 01 Jan 1970 00:00:01 GMT"), Some(1));
        assert_eq!(parse_http_time("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_time("Mon, 30 Nov 2026 11:10:57 GMT"),
            Some(1_796_037_057)
        );
        assert_eq!(
            parse_http_time("Tue, 29 Feb 2000 00:00:00 GMT"),
            Some(951_782_400)
        );
        assert_eq!(
            parse_http_time("Friday, 31-Dec-65 23:59:59 GMT"),
            Some(3_029_529_599)
        );
    }

    #[test]
    fn rejects_what_nginx_rejects() {
        for bad in [
            "",
            "0",
            "-1",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Xyz 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn months_by_nginx_letters() {
        let jun = parse_http_time("Sun, 06 Jun 1994 08:49:37 GMT");
        assert!(jun.is_some());
        assert_eq!(parse_http_time("Sun, 06 Jxn 1994 08:49:37 GMT"), jun);
        for (i, m) in [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]
        .iter()
        .enumerate()
        {
            let t = parse_http_time(&format!("Sun, 01 {m} 2001 00:00:00 GMT")).unwrap();
            let prev = parse_http_time(&format!("Sun, 28 {m} 2001 00:00:00 GMT")).unwrap();
            assert_eq!(prev - t, 27 * 86_400, "{i} {m}");
        }
    }

    #[test]
    fn zone_and_weekday_are_ignored() {
        assert_eq!(
            parse_http_time("Xyz, 06 Nov 1994 08:49:37 PST"),
            parse_http_time("Sun, 06 Nov 1994 08:49:37 GMT")
        );
    }

    #[test]
    fn never_panics_on_truncations() {
        for s in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            for i in 0..=s.len() {
                let _ = parse_http_time(&s[..i]);
                let _ = parse_http_time(&s[i..]);
            }
        }
    }
}
