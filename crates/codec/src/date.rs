//! HTTP dates (RFC 9110 §5.6.7) and nginx's log timestamps.
//!
//! Hand-written: the formats are fixed-width, the hot path (`Date:` on every
//! response, `$time_local` on every log line) must not allocate, and parsing
//! follows nginx's `ngx_parse_http_time` leniency (weekday not checked,
//! trailing text ignored, two-digit years below 70 are 20xx), which the
//! `httpdate` crate does not.

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

/// Parses IMF-fixdate, RFC 850 and asctime dates (RFC 9110 §5.6.7) as
/// nginx's `ngx_parse_http_time` does. `None` when invalid.
pub fn parse_http_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    // Skip the weekday: up to ',' (IMF/RFC 850) or ' ' (asctime).
    let sep = b.iter().position(|&c| c == b',' || c == b' ')?;
    let asctime = b.get(sep) == Some(&b' ');
    let mut p = sep + 1;
    while b.get(p) == Some(&b' ') {
        p += 1;
    }
    let mut cur = Cursor { b, p };
    if b.len().saturating_sub(cur.p) < 18 {
        return None;
    }
    let (year, month, day);
    if asctime {
        month = cur.month()?;
        cur.lit(b' ')?;
        if cur.peek() == Some(b' ') {
            cur.p += 1;
        }
        let d1 = cur.digit()?;
        day = match cur.peek() {
            Some(b' ') => d1,
            _ => d1 * 10 + cur.digit()?,
        };
        cur.lit(b' ')?;
    } else {
        day = cur.num(2)?;
        let dash = match cur.next()? {
            b' ' => false,
            b'-' => true,
            _ => return None,
        };
        month = cur.month()?;
        cur.lit(if dash { b'-' } else { b' ' })?;
        year = if dash {
            let y = cur.num(2)?;
            i64::from(y + if y < 70 { 2000 } else { 1900 })
        } else {
            i64::from(cur.num(4)?)
        };
        cur.lit(b' ')?;
        return finish(&mut cur, year, month, day);
    }
    let (hour, min, sec) = cur.clock()?;
    cur.lit(b' ')?;
    year = i64::from(cur.num(4)?);
    to_unix(year, month, day, hour, min, sec)
}

fn finish(cur: &mut Cursor<'_>, year: i64, month: u32, day: u32) -> Option<i64> {
    let (hour, min, sec) = cur.clock()?;
    to_unix(year, month, day, hour, min, sec)
}

fn to_unix(year: i64, month: u32, day: u32, hour: u32, min: u32, sec: u32) -> Option<i64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let mdays = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if hour > 23 || min > 59 || sec > 59 || day == 0 || day > *mdays.get(month as usize - 1)? {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + i64::from(hour * 3600 + min * 60 + sec))
}

struct Cursor<'a> {
    b: &'a [u8],
    p: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.p).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.p += 1;
        Some(c)
    }
    fn lit(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }
    fn digit(&mut self) -> Option<u32> {
        let c = self.next()?;
        c.is_ascii_digit().then(|| u32::from(c - b'0'))
    }
    fn num(&mut self, n: usize) -> Option<u32> {
        (0..n).try_fold(0, |acc, _| Some(acc * 10 + self.digit()?))
    }
    fn month(&mut self) -> Option<u32> {
        let m = self.b.get(self.p..self.p + 3)?;
        let i = MONTHS.iter().position(|x| &x[..] == m)?;
        self.p += 3;
        Some(i as u32 + 1)
    }
    fn clock(&mut self) -> Option<(u32, u32, u32)> {
        let h = self.num(2)?;
        self.lit(b':')?;
        let m = self.num(2)?;
        self.lit(b':')?;
        Some((h, m, self.num(2)?))
    }
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
    fn rejects() {
        for s in [
            "",
            "Sun, 06 Nov 1994",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 30 Feb 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "1994-11-06T08:49:37Z",
        ] {
            assert_eq!(parse_http_date(s), None, "{s}");
        }
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT"),
            Some(951_782_400)
        );
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
