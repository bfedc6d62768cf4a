//! HTTP dates (RFC 9110 §5.6.7) and nginx's log timestamps.
//!
//! Hand-written: the formats are fixed-width, the hot path (`Date:` on every
//! response) must not allocate, and parsing follows nginx's
//! `ngx_parse_http_time` leniency (see [`parse_http_date`]), which the
//! `httpdate` crate does not. The workspace's one HTTP-date parser: core's
//! conditional and range requests and compress's `gzip_proxied expired` call
//! it.

use std::time::{SystemTime, UNIX_EPOCH};

const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Broken-down UTC time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tm {
    year: i64,
    /// 1..=12
    month: u32,
    day: u32,
    hour: u32,
    min: u32,
    sec: u32,
    /// 0 = Thursday (1970-01-01), as `DAYS`.
    wday: usize,
}

/// Days since 1970-01-01 to the civil date (year, month 1..=12, day) in the
/// proleptic Gregorian calendar (Howard Hinnant's `civil_from_days`). The
/// one calendar routine of the workspace: core and log call it too.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Civil date to days since 1970-01-01 (`days_from_civil`), the inverse of
/// [`civil_from_days`].
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn tm(unix_secs: i64) -> Tm {
    let days = unix_secs.div_euclid(86_400);
    let secs = unix_secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    Tm {
        year,
        month,
        day,
        hour: secs / 3600,
        min: secs / 60 % 60,
        sec: secs % 60,
        wday: days.rem_euclid(7) as usize,
    }
}

fn put2(out: &mut [u8], at: usize, v: u32) {
    if let Some(s) = out.get_mut(at..at + 2) {
        s[0] = b'0' + (v / 10 % 10) as u8;
        s[1] = b'0' + (v % 10) as u8;
    }
}

/// Four-digit year; years outside 0..=9999 are clamped (HTTP dates cannot
/// express them).
fn put4(out: &mut [u8], at: usize, y: i64) {
    let y = y.clamp(0, 9999) as u32;
    put2(out, at, y / 100);
    put2(out, at + 2, y % 100);
}

fn put3(out: &mut [u8], at: usize, s: &[u8; 3]) {
    if let Some(d) = out.get_mut(at..at + 3) {
        d.copy_from_slice(s);
    }
}

/// IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 §5.6.7).
pub fn fmt_http_date(unix_secs: i64, out: &mut [u8; 29]) {
    let t = tm(unix_secs);
    *out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    put3(out, 0, DAYS[t.wday % 7]);
    put2(out, 5, t.day);
    put3(out, 8, MONTHS[(t.month as usize + 11) % 12]);
    put4(out, 12, t.year);
    put2(out, 17, t.hour);
    put2(out, 20, t.min);
    put2(out, 23, t.sec);
}

/// nginx's error-log timestamp: `2026/11/30 08:14:14` (local time).
pub fn fmt_error_log(unix_secs: i64, utc_offset_secs: i32, out: &mut [u8; 19]) {
    let t = tm(unix_secs + i64::from(utc_offset_secs));
    *out = *b"1970/01/01 00:00:00";
    put4(out, 0, t.year);
    put2(out, 5, t.month);
    put2(out, 8, t.day);
    put2(out, 11, t.hour);
    put2(out, 14, t.min);
    put2(out, 17, t.sec);
}

/// The three forms of RFC 9110 §5.6.7, named as in `ngx_parse_http_time`.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// `Tue, 10 Nov 2002 23:50:13` (IMF-fixdate)
    Rfc822,
    /// `Tuesday, 10-Dec-02 23:50:13`
    Rfc850,
    /// `Tue Dec 10 23:50:13 2002` (asctime)
    Isoc,
}

/// Days in each month of a non-leap year.
const MDAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/// Byte `i`, or NUL past the end: nginx reads its NUL-terminated copy of
/// the header that far, and NUL matches nothing it looks for.
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

/// The month (0 = January) named at `p`, told apart by the letters nginx
/// looks at and no others (`Jxn` is June, `Nxx` November).
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

/// ` HH:MM:SS` at `p` (ranges are checked by the caller, as nginx does).
fn clock(v: &[u8], p: usize) -> Option<(u32, u32, u32)> {
    if at(v, p) != b' ' || at(v, p + 3) != b':' || at(v, p + 6) != b':' {
        return None;
    }
    Some((two(v, p + 1)?, two(v, p + 4)?, two(v, p + 7)?))
}

/// Parses an HTTP date (IMF-fixdate, RFC 850 or asctime, RFC 9110 §5.6.7)
/// exactly as nginx's `ngx_parse_http_time`, which nginx uses for
/// If-Modified-Since, If-Unmodified-Since, If-Range and `gzip_proxied
/// expired`; `None` where nginx returns NGX_ERROR. Seconds since the epoch.
///
/// nginx's leniency (each point checked against nginx 1.22, pinned by the
/// tests): the weekday and whatever follows the time (the zone) are not
/// read; a month is told by the few letters nginx tests (`Nxx` is
/// November); day 0 is accepted (the month's day before the 1st); in the
/// asctime form the byte after the month is not checked; a two-digit RFC 850
/// year below 70 is 20xx.
///
/// One function, as `ngx_parse_http_time` is one pass over the value: the
/// position checks only make sense read in order against nginx's source.
pub fn parse_http_date(s: &str) -> Option<i64> {
    let v = s.as_bytes();
    let end = v.len();
    let mut form = None;
    let mut p = 0;
    while p < end {
        if v[p] == b',' {
            break;
        }
        if v[p] == b' ' {
            form = Some(Form::Isoc);
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
    if form.is_none() {
        day = two(v, p)?;
        p += 2;
        form = Some(match at(v, p) {
            b' ' if end - p >= 18 => Form::Rfc822,
            b'-' => Form::Rfc850,
            _ => return None,
        });
        p += 1;
    }
    let form = form?;
    let month = month_at(v, p)?;
    p += 3;
    if (form == Form::Rfc822 && at(v, p) != b' ') || (form == Form::Rfc850 && at(v, p) != b'-') {
        return None;
    }
    p += 1;
    let mut year = 0;
    match form {
        Form::Rfc822 => {
            year = two(v, p)? * 100 + two(v, p + 2)?;
            p += 4;
        }
        Form::Rfc850 => {
            year = two(v, p)?;
            year += if year < 70 { 2000 } else { 1900 };
            p += 2;
        }
        Form::Isoc => {
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
    if form == Form::Isoc {
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
    // Day 0 counts back from the 1st, as nginx's day arithmetic does.
    let days = days_from_civil(i64::from(year), month as u32 + 1, 1) + i64::from(day) - 1;
    let t = days * 86_400 + i64::from(hour * 3600 + min * 60 + sec);
    // nginx returns the time itself, so the one second before the epoch is
    // its NGX_ERROR (-1): that date is invalid there, and here too.
    (t != -1).then_some(t)
}

/// Seconds since the Unix epoch (negative before it).
pub fn unix_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// Caches the formatted `Date` value for the current second: formatting
/// happens once per second per worker, as nginx's cached `ngx_cached_http_time`.
#[derive(Clone, Debug)]
pub struct DateCache {
    secs: i64,
    buf: [u8; 29],
}

impl Default for DateCache {
    fn default() -> Self {
        Self::new()
    }
}

impl DateCache {
    pub fn new() -> Self {
        let mut buf = [0; 29];
        fmt_http_date(0, &mut buf);
        Self { secs: 0, buf }
    }

    /// The IMF-fixdate for `now` (29 bytes, no CRLF).
    pub fn get(&mut self, now: SystemTime) -> &[u8] {
        let secs = unix_secs(now);
        if secs != self.secs {
            self.secs = secs;
            fmt_http_date(secs, &mut self.buf);
        }
        &self.buf
    }

    /// The date of the last [`DateCache::get`] (the event loop updates it
    /// once per turn; a response copies it without reading the clock).
    pub fn current(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const T: i64 = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110 example)

    fn http(secs: i64) -> String {
        let mut b = [0; 29];
        fmt_http_date(secs, &mut b);
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn the_second_before_the_epoch_is_invalid_as_in_nginx() {
        assert_eq!(parse_http_date("Wed, 31 Dec 1969 23:59:59 GMT"), None);
        assert_eq!(parse_http_date("Wed, 31 Dec 1969 23:59:58 GMT"), Some(-2));
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    }

    #[test]
    fn formats() {
        assert_eq!(http(T), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(http(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
        let mut b = [0; 19];
        fmt_error_log(1_796_026_454, 0, &mut b);
        assert_eq!(&b, b"2026/11/30 08:14:14");
    }

    #[test]
    fn parses_three_formats() {
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(T));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(T));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(T));
        assert_eq!(parse_http_date("Sun Nov 06 08:49:37 1994"), Some(T));
        assert_eq!(parse_http_date("Thursday, 01-Jan-70 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Friday, 01-Jan-38 00:00:00 GMT"),
            Some(2_145_916_800)
        );
        // nginx ignores the weekday and the zone.
        assert_eq!(parse_http_date("Mon, 06 Nov 1994 08:49:37 XYZ"), Some(T));
    }

    #[test]
    fn more_dates() {
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:01 GMT"), Some(1));
        assert_eq!(
            parse_http_date("Mon, 30 Nov 2026 11:10:57 GMT"),
            Some(1_796_037_057)
        );
        assert_eq!(
            parse_http_date("Friday, 31-Dec-65 23:59:59 GMT"),
            Some(3_029_529_599)
        );
        assert_eq!(
            parse_http_date("Wednesday, 31-Dec-69 23:59:59 GMT"),
            Some(3_155_759_999)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00"), Some(0));
    }

    #[test]
    fn rejects() {
        for s in [
            "",
            "0",
            "-1",
            "Sun, 06 Nov 1994",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:60 GMT",
            "Sun, 30 Feb 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 36 Oct 1994 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 06 Xyz 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06-Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov  6 08:49:37 94",
            "Sun Nov x6 08:49:37 1994",
            "1994-11-06T08:49:37Z",
        ] {
            assert_eq!(parse_http_date(s), None, "{s}");
        }
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT"),
            Some(951_782_400)
        );
    }

    /// Where nginx is laxer than RFC 9110. Each value was sent to nginx 1.22
    /// as If-Modified-Since (`if_modified_since exact`) for a file of the
    /// resulting mtime and answered 304.
    #[test]
    fn nginx_leniency() {
        for s in [
            "Sun, 06 Nxx 1994 08:49:37 GMT",
            "Sun, 06 Nob 1994 08:49:37 GMT",
            "Sun Nov_ 6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Nov 1994 08:49:37GMT",
            "Sun, 06 Nov 1994 08:49:37 GMTxyz",
            "x,06 Nov 1994 08:49:37 GMT",
            ",06 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(s), Some(T), "{s}");
        }
        // Day 0 is the last day of the month before (31 Oct 1994).
        let oct31 = T - 6 * 86_400;
        assert_eq!(
            parse_http_date("Sun, 00 Nov 1994 08:49:37 GMT"),
            Some(oct31)
        );
        assert_eq!(parse_http_date("Sun Nov  0 08:49:37 1994"), Some(oct31));
        assert_eq!(
            parse_http_date("Sun, 31 Oct 1994 08:49:37 GMT"),
            Some(oct31)
        );
        assert_eq!(
            parse_http_date("Thu, 00 Jan 1970 00:00:00 GMT"),
            Some(-86_400)
        );
        assert_eq!(
            parse_http_date("Wed, 00 Mar 2000 00:00:00 GMT"),
            parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT")
        );
    }

    #[test]
    fn months_by_nginx_letters() {
        let jun = parse_http_date("Sun, 06 Jun 1994 08:49:37 GMT");
        assert!(jun.is_some());
        assert_eq!(parse_http_date("Sun, 06 Jxn 1994 08:49:37 GMT"), jun);
        for (i, m) in MONTHS.iter().enumerate() {
            let m = std::str::from_utf8(&m[..]).unwrap();
            let first = parse_http_date(&format!("Sun, 01 {m} 2001 00:00:00 GMT")).unwrap();
            let days_before: i64 = MDAYS[..i].iter().map(|&d| i64::from(d)).sum();
            assert_eq!(first, 978_307_200 + days_before * 86_400, "{m}");
        }
    }

    #[test]
    fn every_split_of_the_three_forms() {
        for s in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            for i in 0..=s.len() {
                let (head, tail) = s.split_at(i);
                // Everything up to the seconds is read; the asctime year
                // comes last.
                let whole = if s.ends_with("1994") {
                    i == s.len()
                } else {
                    i >= s.len() - 4
                };
                assert_eq!(parse_http_date(head).is_some(), whole, "{head:?}");
                let _ = parse_http_date(tail);
            }
        }
    }

    #[test]
    fn roundtrip() {
        for secs in [
            0,
            T,
            1_796_026_454,
            253_402_300_799,
            951_868_799,
            4_107_542_400,
        ] {
            assert_eq!(parse_http_date(&http(secs)), Some(secs), "{}", http(secs));
        }
    }

    #[test]
    fn cache_updates_each_second() {
        let mut c = DateCache::new();
        let t = UNIX_EPOCH + Duration::from_secs(T as u64);
        assert_eq!(c.get(t), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            c.get(t + Duration::from_millis(999)),
            b"Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            c.get(t + Duration::from_secs(1)),
            b"Sun, 06 Nov 1994 08:49:38 GMT"
        );
        assert_eq!(c.get(UNIX_EPOCH), b"Thu, 01 Jan 1970 00:00:00 GMT");
        c.get(t + Duration::from_secs(1));
        assert_eq!(c.current(), b"Sun, 06 Nov 1994 08:49:38 GMT");
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,40}") {
            let _ = parse_http_date(&s);
        }

        #[test]
        fn fmt_parse_roundtrip(secs in 0i64..253_402_300_799) {
            proptest::prop_assert_eq!(parse_http_date(&http(secs)), Some(secs));
        }
    }
}
