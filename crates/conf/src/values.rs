//! nginx's value syntaxes: numbers, sizes, offsets, times, flags.
//!
//! Transcribed from ngx_parse.c / ngx_string.c rather than taken from a crate
//! because the accepted forms are nginx's own (e.g. `1h30m` but not `30m1h`,
//! `ms` only where milliseconds are meant, no sign, no spaces) and a
//! drop-in must accept exactly those.

use std::time::Duration;

/// nginx's `ngx_atoi`: decimal digits only, no sign, no overflow.
pub fn parse_number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // nginx's numbers are `ngx_int_t` (signed): keep within i64.
    s.parse::<u64>().ok().filter(|&n| n <= i64::MAX as u64)
}

fn scaled(s: &str, units: &[(u8, u64)]) -> Option<u64> {
    let last = *s.as_bytes().last()?;
    let (digits, scale) = match units.iter().find(|(u, _)| *u == last) {
        Some(&(_, scale)) => (&s[..s.len() - 1], scale),
        None => (s, 1),
    };
    let n = parse_number(digits)?.checked_mul(scale)?;
    (n <= i64::MAX as u64).then_some(n)
}

const KB: u64 = 1024;
const MB: u64 = 1024 * 1024;
const GB: u64 = 1024 * 1024 * 1024;

/// A size or offset: `512`, `4k`/`4K`, `10m`/`10M`, `1g`/`1G` (bytes), as
/// nginx's `ngx_parse_offset` (`client_max_body_size`) reads it.
pub fn parse_size(s: &str) -> Option<u64> {
    scaled(
        s,
        &[
            (b'k', KB),
            (b'K', KB),
            (b'm', MB),
            (b'M', MB),
            (b'g', GB),
            (b'G', GB),
        ],
    )
}

/// A buffer size as nginx's `ngx_parse_size` reads it (its size slots:
/// `client_body_buffer_size`, `gzip_buffers`, ...): only `k` and `m` units.
pub fn parse_buf_size(s: &str) -> Option<u64> {
    scaled(s, &[(b'k', KB), (b'K', KB), (b'm', MB), (b'M', MB)])
}

/// A buffer size (`ngx_parse_size`: `k`, `m`) held in memory.
pub fn parse_mem_size(s: &str) -> Option<usize> {
    parse_buf_size(s).and_then(|n| usize::try_from(n).ok())
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Start,
    Year,
    Month,
    Week,
    Day,
    Hour,
    Min,
    Sec,
    Msec,
}

/// nginx's `ngx_parse_time`: a sum of `N unit` parts in decreasing unit order
/// (`1h30m`, `500ms`, `2d`), units `y M w d h m s ms`; a bare number (or a
/// trailing bare part) is seconds. `is_sec` is nginx's flag for directives
/// kept in seconds: those take `y` and `M` but not `ms`; millisecond
/// directives take `ms` but not `y` and `M`. Returns the total in the
/// directive's unit (seconds if `is_sec`, else milliseconds), which nginx
/// bounds by `NGX_MAX_INT_T_VALUE`: `open_file_cache_valid` takes
/// 9223372036854775807 (seconds) while `send_timeout` takes at most
/// 9223372036854775 (seconds, as milliseconds).
fn parse_time_units(s: &str, is_sec: bool) -> Option<u64> {
    const MAX: u64 = i64::MAX as u64;
    let per_sec = if is_sec { 1 } else { 1000 };
    let mut step = if is_sec { Step::Start } else { Step::Month };
    let mut value: u64 = 0;
    let mut total: u64 = 0;
    let mut valid = false;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        if b.is_ascii_digit() {
            value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            if value > MAX {
                return None;
            }
            valid = true;
            continue;
        }
        let (next, scale_s) = match b {
            b'y' if step == Step::Start => (Step::Year, 365 * 86_400),
            b'M' if step < Step::Month => (Step::Month, 30 * 86_400),
            b'w' if step < Step::Week => (Step::Week, 7 * 86_400),
            b'd' if step < Step::Day => (Step::Day, 86_400),
            b'h' if step < Step::Hour => (Step::Hour, 3_600),
            b'm' if bytes.get(i) == Some(&b's') => {
                if is_sec || step >= Step::Msec {
                    return None;
                }
                i += 1;
                (Step::Msec, 0)
            }
            b'm' if step < Step::Min => (Step::Min, 60),
            b's' if step < Step::Sec => (Step::Sec, 1),
            _ => return None,
        };
        step = next;
        let part = if next == Step::Msec {
            value
        } else {
            value.checked_mul(scale_s)?.checked_mul(per_sec)?
        };
        total = total.checked_add(part)?;
        value = 0;
    }
    if !valid {
        return None;
    }
    let rest = value.checked_mul(per_sec)?;
    total.checked_add(rest).filter(|&t| t <= MAX)
}

/// The longest time a directive yields: nginx's millisecond bound. Second
/// directives accept larger values (as nginx does) but are clamped to it,
/// so that no user of the configuration overflows adding one to an
/// `Instant` (about 292 million years either way).
pub const MAX_TIME: Duration = Duration::from_millis(i64::MAX as u64);

/// A time as nginx's millisecond directives take it (`keepalive_timeout`,
/// `send_timeout`, ...): `30` (seconds), `30s`, `1m`, `1h30m`, `500ms`, `2d`,
/// `1w`. `M` (30 days) and `y` (365 days) are taken by [`parse_time_sec`] only,
/// as in nginx.
pub fn parse_time(s: &str) -> Option<Duration> {
    parse_time_units(s, false).map(Duration::from_millis)
}

/// A time as nginx's second directives take it (`open_file_cache_valid`,
/// `inactive=`, `flush=`, the Keep-Alive header timeout): units `y M w d h m s`,
/// no `ms`; at most [`MAX_TIME`].
pub fn parse_time_sec(s: &str) -> Option<Duration> {
    parse_time_units(s, true).map(|n| Duration::from_secs(n).min(MAX_TIME))
}

/// `on` / `off`, exactly (nginx compares case-insensitively).
pub fn parse_flag(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("on") {
        Some(true)
    } else if s.eq_ignore_ascii_case("off") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0"), Some(0));
        assert_eq!(parse_number("65535"), Some(65535));
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("-1"), None);
        assert_eq!(parse_number("+1"), None);
        assert_eq!(parse_number("1x"), None);
        assert_eq!(parse_number("99999999999999999999"), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("10m"), Some(10 << 20));
        assert_eq!(parse_size("10M"), Some(10 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_buf_size("1m"), Some(1 << 20));
        assert_eq!(parse_buf_size("1g"), None);
        assert_eq!(parse_mem_size("4k"), Some(4096));
        for bad in [
            "",
            "k",
            "1x",
            "1kb",
            "-1k",
            "1.5m",
            " 1",
            "99999999999999999g",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn times() {
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(parse_time("30"), ms(30_000));
        assert_eq!(parse_time("30s"), ms(30_000));
        assert_eq!(parse_time("1m"), ms(60_000));
        assert_eq!(parse_time("1h30m"), ms(5_400_000));
        assert_eq!(parse_time("500ms"), ms(500));
        assert_eq!(parse_time("1s500ms"), ms(1_500));
        assert_eq!(parse_time("1m30"), ms(90_000));
        assert_eq!(parse_time("2d"), ms(2 * 86_400_000));
        assert_eq!(parse_time("1w"), ms(7 * 86_400_000));
        assert_eq!(parse_time("0"), ms(0));
        for bad in [
            "", "s", "1x", "30m1h", "1s1s", "1y", "1M", "-1", "1 s", "ms",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
        assert_eq!(
            parse_time_sec("1y"),
            Some(Duration::from_secs(365 * 86_400))
        );
        assert_eq!(parse_time_sec("1M"), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_time_sec("60"), Some(Duration::from_secs(60)));
        assert_eq!(parse_time_sec("1ms"), None);
        assert_eq!(parse_time("99999999999999999999999"), None);
        // nginx -t 1.22.1 bounds each in its own unit (found by the
        // differential check, examples/nginx_diff.rs).
        assert_eq!(
            parse_time("9223372036854775"),
            ms(9_223_372_036_854_775_000)
        );
        assert_eq!(parse_time("9223372036854776"), None);
        assert_eq!(parse_time_sec("9223372036854775807"), Some(MAX_TIME));
        assert_eq!(parse_time_sec("106751991167300d"), Some(MAX_TIME));
        assert_eq!(parse_time_sec("9223372036854775808"), None);
        assert_eq!(parse_time_sec("292471208677y"), Some(MAX_TIME));
        assert_eq!(parse_time_sec("292471208678y"), None);
    }

    #[test]
    fn flags() {
        assert_eq!(parse_flag("on"), Some(true));
        assert_eq!(parse_flag("OFF"), Some(false));
        assert_eq!(parse_flag("yes"), None);
    }

    proptest! {
        #[test]
        fn no_panics(s in "[0-9kKmMgGyMwdhs]{0,30}") {
            let _ = (parse_size(&s), parse_time(&s), parse_time_sec(&s));
        }

        #[test]
        fn sizes_round_trip(n in 0u64..(1 << 40)) {
            prop_assert_eq!(parse_size(&n.to_string()), Some(n));
            prop_assert_eq!(parse_size(&format!("{n}k")), Some(n * 1024));
        }

        #[test]
        fn times_round_trip(h in 0u64..1000, m in 0u64..60, s in 0u64..60) {
            let want = Duration::from_secs(h * 3600 + m * 60 + s);
            prop_assert_eq!(parse_time(&format!("{h}h{m}m{s}s")), Some(want));
        }
    }
}
