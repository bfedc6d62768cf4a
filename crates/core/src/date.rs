//! HTTP dates (RFC 9110 §5.6.7) for Last-Modified and the conditional
//! headers, and the autoindex listing date.
//!
//! Formatting HTTP dates is the codec's; parsing them is the codec's
//! `peregrine_codec::date::parse_http_date` (nginx's `ngx_parse_http_time`),
//! called directly. The autoindex date format is here.

/// Seconds since the epoch → (year, month 1..=12, day, hour, minute) in UTC.
fn civil(secs: i64) -> (i64, u32, u32, u32, u32) {
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = peregrine_codec::date::civil_from_days(secs.div_euclid(86_400));
    (y, m, d, (rem / 3600) as u32, (rem % 3600 / 60) as u32)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Appends the IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT` (the codec's
/// formatter).
pub(crate) fn push_http_date(out: &mut Vec<u8>, secs: i64) {
    let mut buf = [0u8; 29];
    peregrine_codec::date::fmt_http_date(secs, &mut buf);
    out.extend_from_slice(&buf);
}

/// Appends the autoindex date `30-Nov-2026 11:12` (nginx: `%02d-%s-%d %02d:%02d`).
pub(crate) fn push_autoindex_date(out: &mut Vec<u8>, secs: i64) {
    use std::io::Write;
    let (y, m, d, hh, mm) = civil(secs);
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

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_codec::date::parse_http_date;

    #[test]
    fn formats_imf_fixdate() {
        let mut out = Vec::new();
        push_http_date(&mut out, 784_111_777);
        assert_eq!(out, b"Sun, 06 Nov 1994 08:49:37 GMT");
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
