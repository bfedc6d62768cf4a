//! Calendar arithmetic and the per-second cache of formatted timestamps.
//!
//! Hand-written rather than taken from `chrono`/`time`: the whole need is
//! "unix seconds → Y/M/D h:m:s in UTC" (Howard Hinnant's `civil_from_days`,
//! twenty lines), and the hot path wants fixed-size byte arrays it can copy,
//! not a formatting API.
//!
//! Time zone: local time with its offset, as nginx (`localtime_r`), from
//! the zone the `tz` module reads (`TZ`, else `/etc/localtime`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::tz::{UTC, Zone, local_zone};

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
}

/// Converts seconds since the epoch (may be negative) to a UTC civil time.
pub(crate) fn civil(unix: i64) -> Civil {
    let rem = unix.rem_euclid(86_400);
    let (year, month, day) = peregrine_codec::date::civil_from_days(unix.div_euclid(86_400));
    Civil {
        year,
        month,
        day,
        hour: (rem / 3600) as u32,
        min: (rem / 60 % 60) as u32,
        sec: (rem % 60) as u32,
    }
}

/// Milliseconds since the epoch; times before it count as 0 (a clock that
/// far off is not worth a signed type on every log line).
pub(crate) fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis()
        .try_into()
        .unwrap_or(u64::MAX)
}

fn two(out: &mut [u8], v: u32) {
    out[0] = b'0' + (v / 10 % 10) as u8;
    out[1] = b'0' + (v % 10) as u8;
}

fn four(out: &mut [u8], v: i64) {
    // Years outside 0..=9999 cannot come from a sane clock; clamp so the
    // fixed-width layout (as nginx's `%4d`) stays intact.
    let v = v.clamp(0, 9999) as u32;
    two(&mut out[..2], v / 100);
    two(&mut out[2..], v % 100);
}

/// Length of `30/Nov/2026:08:14:14 +0000`.
pub(crate) const LOCAL_LEN: usize = 26;
/// Length of `2026-11-30T08:14:14+00:00`.
pub(crate) const ISO_LEN: usize = 25;
/// Length of `2026/11/30 08:14:14` (error log).
pub(crate) const ERR_LEN: usize = 19;

/// Local broken-down time and the offset it was computed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Local {
    pub civil: Civil,
    /// Minutes east of UTC.
    pub offset: i32,
}

impl Local {
    /// The time at `unix` in `zone`; the offset in whole minutes as nginx
    /// (`tm_gmtoff / 60`, truncated).
    pub(crate) fn in_zone(unix: i64, zone: &Zone) -> Local {
        Self::with_offset(unix, zone.offset_at(unix) / 60)
    }

    pub(crate) fn with_offset(unix: i64, offset: i32) -> Local {
        Local {
            civil: civil(unix.saturating_add(i64::from(offset) * 60)),
            offset,
        }
    }

    /// `+hh` and `mm` of the offset (nginx: `%c%02i%02i`).
    fn sign_hh_mm(&self) -> (u8, u32, u32) {
        let sign = if self.offset < 0 { b'-' } else { b'+' };
        let abs = self.offset.unsigned_abs();
        (sign, abs / 60, abs % 60)
    }
}

pub(crate) fn fmt_local(l: &Local) -> [u8; LOCAL_LEN] {
    let c = &l.civil;
    let mut b = *b"00/Jan/0000:00:00:00 +0000";
    two(&mut b[0..2], c.day);
    let m = MONTHS[(c.month.clamp(1, 12) - 1) as usize];
    b[3..6].copy_from_slice(m);
    four(&mut b[7..11], c.year);
    two(&mut b[12..14], c.hour);
    two(&mut b[15..17], c.min);
    two(&mut b[18..20], c.sec);
    let (sign, hh, mm) = l.sign_hh_mm();
    b[21] = sign;
    two(&mut b[22..24], hh);
    two(&mut b[24..26], mm);
    b
}

pub(crate) fn fmt_iso(l: &Local) -> [u8; ISO_LEN] {
    let c = &l.civil;
    let mut b = *b"0000-00-00T00:00:00+00:00";
    four(&mut b[0..4], c.year);
    two(&mut b[5..7], c.month);
    two(&mut b[8..10], c.day);
    two(&mut b[11..13], c.hour);
    two(&mut b[14..16], c.min);
    two(&mut b[17..19], c.sec);
    let (sign, hh, mm) = l.sign_hh_mm();
    b[19] = sign;
    two(&mut b[20..22], hh);
    two(&mut b[23..25], mm);
    b
}

pub(crate) fn fmt_err(l: &Local) -> [u8; ERR_LEN] {
    let c = &l.civil;
    let mut b = *b"0000/00/00 00:00:00";
    four(&mut b[0..4], c.year);
    two(&mut b[5..7], c.month);
    two(&mut b[8..10], c.day);
    two(&mut b[11..13], c.hour);
    two(&mut b[14..16], c.min);
    two(&mut b[17..19], c.sec);
    b
}

/// `$time_local` and `$time_iso8601` for one second, recomputed only when
/// the second changes (nginx likewise keeps `ngx_cached_http_log_time`).
/// One per worker: it is plain data, no sharing.
#[derive(Debug, Clone)]
pub struct TimeCache {
    zone: &'static Zone,
    sec: Option<u64>,
    local: [u8; LOCAL_LEN],
    iso: [u8; ISO_LEN],
}

impl Default for TimeCache {
    fn default() -> Self {
        Self::new()
    }
}

impl TimeCache {
    /// A cache in the process's local zone.
    pub fn new() -> Self {
        Self::in_zone(local_zone())
    }

    /// A cache printing UTC whatever the local zone (tests, tools).
    pub fn utc() -> Self {
        Self::in_zone(&UTC)
    }

    pub(crate) fn in_zone(zone: &'static Zone) -> Self {
        TimeCache {
            zone,
            sec: None,
            local: [0; LOCAL_LEN],
            iso: [0; ISO_LEN],
        }
    }

    fn refresh(&mut self, unix_sec: u64) {
        if self.sec != Some(unix_sec) {
            let l = Local::in_zone(i64::try_from(unix_sec).unwrap_or(i64::MAX / 2), self.zone);
            self.local = fmt_local(&l);
            self.iso = fmt_iso(&l);
            self.sec = Some(unix_sec);
        }
    }

    /// `30/Nov/2026:08:14:14 +0000` for the given second.
    pub fn local(&mut self, unix_sec: u64) -> &[u8] {
        self.refresh(unix_sec);
        &self.local
    }

    /// `2026-11-30T08:14:14+00:00` for the given second.
    pub fn iso8601(&mut self, unix_sec: u64) -> &[u8] {
        self.refresh(unix_sec);
        &self.iso
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(unix: i64) -> Local {
        Local::in_zone(unix, &UTC)
    }

    #[test]
    fn known_dates() {
        // 1796037017 was logged by nginx 1.22.1 as 30/Nov/2026:11:10:17 +0000.
        let l = utc(1_796_037_017);
        assert_eq!(&fmt_local(&l), b"30/Nov/2026:11:10:17 +0000");
        assert_eq!(&fmt_iso(&l), b"2026-11-30T11:10:17+00:00");
        assert_eq!(&fmt_err(&l), b"2026/11/30 11:10:17");
        assert_eq!(&fmt_local(&utc(0)), b"01/Jan/1970:00:00:00 +0000");
        // Leap day, and the day after a century non-leap year.
        assert_eq!(&fmt_err(&utc(951_782_400)), b"2000/02/29 00:00:00");
        assert_eq!(&fmt_err(&utc(4_107_542_400)), b"2100/03/01 00:00:00");
        assert_eq!(&fmt_err(&utc(-1)), b"1969/12/31 23:59:59");
    }

    #[test]
    fn offsets_like_nginx() {
        // `TZ=Asia/Kolkata` and `TZ=America/St_Johns` (-03:30) under nginx
        // print these forms (`%c%02i%02i`, ISO with a colon).
        let east = Local::with_offset(1_796_037_017, 330);
        assert_eq!(&fmt_local(&east), b"30/Nov/2026:16:40:17 +0530");
        assert_eq!(&fmt_iso(&east), b"2026-11-30T16:40:17+05:30");
        let west = Local::with_offset(1_796_037_017, -210);
        assert_eq!(&fmt_local(&west), b"30/Nov/2026:07:40:17 -0330");
        assert_eq!(&fmt_iso(&west), b"2026-11-30T07:40:17-03:30");
        assert_eq!(&fmt_err(&west), b"2026/11/30 07:40:17");
    }

    #[test]
    fn zone_from_tzdata_like_nginx() {
        // nginx 1.22.1 with TZ=America/St_Johns logged $msec 1796038434.493
        // as `30/Nov/2026:08:03:54 -0330` and `2026-11-30T08:03:54-03:30`.
        let Some(zone) = crate::tz::load(Some("America/St_Johns")) else {
            return; // tzdata not installed: nothing to compare with
        };
        let mut t = TimeCache::in_zone(Box::leak(Box::new(zone)));
        assert_eq!(t.local(1_796_038_434), b"30/Nov/2026:08:03:54 -0330");
        assert_eq!(t.iso8601(1_796_038_434), b"2026-11-30T08:03:54-03:30");
    }

    #[test]
    fn every_day_round_trips() {
        // Walk 1600..2400 day by day: the day/month must advance by exactly one.
        let mut prev = civil(-11_676_096_000);
        assert_eq!((prev.year, prev.month, prev.day), (1600, 1, 1));
        for d in 1..(800 * 366) {
            let c = civil(-11_676_096_000 + d * 86_400);
            let same_month = c.month == prev.month && c.year == prev.year;
            if same_month {
                assert_eq!(c.day, prev.day + 1);
            } else {
                assert_eq!(c.day, 1);
                assert!(prev.day >= 28);
            }
            prev = c;
        }
    }

    #[test]
    fn cache_follows_the_second() {
        let mut t = TimeCache::utc();
        assert_eq!(t.local(0), b"01/Jan/1970:00:00:00 +0000");
        assert_eq!(t.iso8601(61), b"1970-01-01T00:01:01+00:00");
        assert_eq!(t.local(61), b"01/Jan/1970:00:01:01 +0000");
    }
}
