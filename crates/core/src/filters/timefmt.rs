//! `strftime` for SSI's `config timefmt` and `$date_local`/`$date_gmt`
//! (nginx calls the C library's). The local time is UTC: Peregrine keeps
//! no time zone database (a documented difference; `%Z` says `UTC` for
//! local time, `GMT` for `$date_gmt` as nginx's).

use std::fmt::Write;
use std::time::SystemTime;

/// nginx's default `timefmt` (`ngx_http_ssi_timefmt`).
pub const DEFAULT_TIMEFMT: &str = "%A, %d-%b-%Y %H:%M:%S %Z";

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// `t` formatted by `fmt`; `gmt`: `%Z` is `GMT`.
pub fn format(fmt: &str, t: SystemTime, gmt: bool) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = peregrine_codec::date::civil_from_days(days);
    let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
    let wday = (days + 4).rem_euclid(7) as usize;
    const CUM: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = CUM[m as usize - 1] + d + u32::from(m > 2 && is_leap(y));
    let mut out = String::with_capacity(fmt.len() + 16);
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let _ = match chars.next() {
            Some('a') => write!(out, "{}", &DAYS[wday][..3]),
            Some('A') => write!(out, "{}", DAYS[wday]),
            Some('b') | Some('h') => write!(out, "{}", &MONTHS[m as usize - 1][..3]),
            Some('B') => write!(out, "{}", MONTHS[m as usize - 1]),
            Some('d') => write!(out, "{d:02}"),
            Some('e') => write!(out, "{d:2}"),
            Some('H') => write!(out, "{hh:02}"),
            Some('I') => write!(out, "{:02}", (hh + 11) % 12 + 1),
            Some('j') => write!(out, "{yday:03}"),
            Some('m') => write!(out, "{m:02}"),
            Some('M') => write!(out, "{mm:02}"),
            Some('p') => write!(out, "{}", if hh < 12 { "AM" } else { "PM" }),
            Some('S') => write!(out, "{ss:02}"),
            Some('s') => write!(out, "{secs}"),
            Some('y') => write!(out, "{:02}", y.rem_euclid(100)),
            Some('Y') => write!(out, "{y}"),
            Some('Z') => write!(out, "{}", if gmt { "GMT" } else { "UTC" }),
            Some('z') => write!(out, "+0000"),
            Some('T') => write!(out, "{hh:02}:{mm:02}:{ss:02}"),
            Some('R') => write!(out, "{hh:02}:{mm:02}"),
            Some('D') => write!(out, "{m:02}/{d:02}/{:02}", y.rem_euclid(100)),
            Some('F') => write!(out, "{y}-{m:02}-{d:02}"),
            Some('u') => write!(out, "{}", if wday == 0 { 7 } else { wday }),
            Some('w') => write!(out, "{wday}"),
            Some('n') => out.write_char('\n'),
            Some('t') => out.write_char('\t'),
            Some('%') => write!(out, "%"),
            Some(o) => write!(out, "%{o}"),
            None => write!(out, "%"),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_like_strftime() {
        // 2026-12-02 13:05:09 UTC, a Wednesday, day 336.
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_216_709);
        assert_eq!(
            format(DEFAULT_TIMEFMT, t, true),
            "Wednesday, 02-Dec-2026 13:05:09 GMT"
        );
        assert_eq!(format("%s %j %e%%%y", t, false), "1796216709 336  2%26");
        let epoch = SystemTime::UNIX_EPOCH;
        assert_eq!(format("%a %F %T", epoch, true), "Thu 1970-01-01 00:00:00");
    }
}
