//! Fuzzes codec's HTTP-date parser (the port of nginx's
//! `ngx_parse_http_time` that conditional requests, `If-Range` and
//! `gzip_proxied expired` use): no panics; every accepted value lies in the
//! span the three forms can name; and inside the formatter's span (years
//! 0000..=9999, which `fmt_http_date` writes exactly) formatting the value
//! and parsing it again gives it back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_codec::date::{days_from_civil, fmt_http_date, parse_http_date};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    let Some(secs) = parse_http_date(value) else {
        return;
    };
    // The formatter clamps years to four digits, so only 0000-01-01 to
    // 9999-12-31 survive a round trip.
    let first = days_from_civil(0, 1, 1) * 86_400;
    let last = days_from_civil(9999, 12, 31) * 86_400 + 86_399;
    // nginx's day 0 reaches one day before the first of the month, so
    // "00 Jan 0000" is the only value below the formatter's span; four year
    // digits bound it above.
    assert!(
        (first - 86_400..=last).contains(&secs),
        "{value:?} parsed to {secs}, outside any HTTP date"
    );
    if secs < first {
        return;
    }
    let mut buf = [0u8; 29];
    fmt_http_date(secs, &mut buf);
    let formatted = std::str::from_utf8(&buf).expect("IMF-fixdate is ASCII");
    assert_eq!(
        parse_http_date(formatted),
        Some(secs),
        "{value:?} parsed to {secs}, formatted as {formatted:?}"
    );
});
