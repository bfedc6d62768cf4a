//! HTTP dates (RFC 9110 §5.6.7) for Last-Modified and the conditional
//! headers, and the autoindex listing date.
//!
//! Private to core: the codec's date helpers did not exist when this was
//! written; the parser mirrors nginx's `ngx_parse_http_time`, which accepts
//! the three RFC 9110 forms (IMF-fixdate, RFC 850, asctime) and answers "no
//! date" for anything else (nginx then treats the header as not matching).

/// Seconds since the epoch → (year, month 1..=12, day, hour, min, sec, weekday 0=Sun).
fn civil(secs: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days_from_civil inverse.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    let wday = (days + 4).rem_euclid(7) as u32;
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
        wday,
    )
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

const WDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
pub(crate) const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Appends the IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`.
pub(crate) fn push_http_date(out: &mut Vec<u8>, secs: i64) {
    use std::io::Write;
    let (y, m, d, hh, mm, ss, wd) = civil(secs);
    let _ = write!(
        out,
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        WDAYS[wd as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        hh,
        mm,
        ss
    );
}

/// Appends the autoindex date `30-Nov-2026 11:12` (nginx: `%02d-%s-%d %02d:%02d`).
pub(crate) fn push_autoindex_date(out: &mut Vec<u8>, secs: i64) {
    use std::io::Write;
    let (y, m, d, hh, mm, _, _) = civil(secs);
    let _ = write!(
        out,
        "{:02}-{}-{} {:02}:{:02}",
        d,
        MONTHS[(m - 1) as usize],
        y,
        hh,
        mm
    );
}

fn month(b: &[u8]) -> Option<u32> {
    MONTHS
        .iter()
        .position(|m| m.as_bytes() == b)
        .map(|i| i as u32 + 1)
}

fn num(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Parses `HH:MM:SS`.
fn hms(b: &[u8]) -> Option<(u32, u32, u32)> {
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, s) = (num(&b[0..2])?, num(&b[3..5])?, num(&b[6..8])?);
    (h <= 23 && m <= 59 && s <= 59).then_some((h, m, s))
}

/// Parses an HTTP date in any of the three RFC 9110 forms, as
/// `ngx_parse_http_time` does; `None` when it is not one.
pub(crate) fn parse_http_date(value: &str) -> Option<i64> {
    let v = value.trim_matches(|c| c == ' ' || c == '\t').as_bytes();
    let comma = v.iter().position(|&c| c == b',');
    let fields: Vec<&[u8]> = v
        .split(|&c| c == b' ' || c == b'-')
        .filter(|f| !f.is_empty())
        .collect();
    let (day, mon, year, time) = match comma {
        // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`;
        // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
        Some(_) => {
            if fields.len() != 6 || fields[5] != b"GMT" {
                return None;
            }
            let mut year = num(fields[3])? as i64;
            if fields[3].len() == 2 {
                // nginx: two-digit years are 19xx (`year += 1900`).
                year += 1900;
            } else if fields[3].len() != 4 {
                return None;
            }
            (num(fields[1])?, month(fields[2])?, year, hms(fields[4])?)
        }
        // asctime: `Sun Nov  6 08:49:37 1994`.
        None => {
            if fields.len() != 5 || fields[4].len() != 4 {
                return None;
            }
            (
                num(fields[2])?,
                month(fields[1])?,
                num(fields[4])? as i64,
                hms(fields[3])?,
            )
        }
    };
    if !(1..=31).contains(&day) || year < 1970 {
        return None;
    }
    let days = days_from_civil(year, mon, day);
    Some(days * 86_400 + i64::from(time.0) * 3600 + i64::from(time.1) * 60 + i64::from(time.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_the_three_forms() {
        let mut out = Vec::new();
        push_http_date(&mut out, 784_111_777);
        assert_eq!(out, b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_http_date("Sun Nov  6 08:49:37 1994"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37"), None);
        assert_eq!(parse_http_date("garbage"), None);
        assert_eq!(parse_http_date(""), None);
        assert_eq!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 28:49:37 GMT"), None);
    }

    #[test]
    fn round_trips_every_day_for_years() {
        for day in 0..20_000i64 {
            let t = day * 86_400 + 3661;
            let mut out = Vec::new();
            push_http_date(&mut out, t);
            let s = std::str::from_utf8(&out).unwrap();
            assert_eq!(parse_http_date(s), Some(t), "{s}");
        }
    }

    #[test]
    fn autoindex_date() {
        let mut out = Vec::new();
        push_autoindex_date(&mut out, 784_111_777);
        assert_eq!(out, b"06-Nov-1994 08:49");
    }
}
