//! POSIX `TZ` rules (`CET-1CEST,M3.5.0,M10.5.0/3`): the footer of TZif
//! files, which governs every instant after the file's last transition
//! ("slim" zone files list none after a zone's last rule change), and
//! `TZ` values that are rules rather than zone names.
//!
//! Hand-written with the TZif reader (see `tz`): glibc's `tzset` grammar,
//! POSIX.1-2017 §8.3 with RFC 8536 §3.3's extension (hours in -167..=167).

/// When a change happens: the day rule and the local time of day (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Change {
    day: Day,
    time: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Day {
    /// `Jn`: day 1..=365, February 29 never counted.
    Julian1(u16),
    /// `n`: day 0..=365, February 29 counted.
    Julian0(u16),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    Month { m: u8, w: u8, d: u8 },
}

/// A parsed rule; offsets in seconds east of UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rule {
    std: i32,
    dst: Option<(i32, Change, Change)>,
}

/// glibc's default when a DST name has no rules: the US rules.
const DEFAULT_START: Change = Change {
    day: Day::Month { m: 3, w: 2, d: 0 },
    time: 7200,
};
const DEFAULT_END: Change = Change {
    day: Day::Month { m: 11, w: 1, d: 0 },
    time: 7200,
};

impl Rule {
    /// Parses a rule; `None` when malformed.
    pub(crate) fn parse(s: &str) -> Option<Rule> {
        let mut p = Parser { s: s.as_bytes() };
        p.name()?;
        let std = -p.offset()?;
        if p.s.is_empty() {
            return Some(Rule { std, dst: None });
        }
        p.name()?;
        let dst_off = if p.s.first().is_some_and(|c| *c != b',') {
            -p.offset()?
        } else {
            std + 3600
        };
        let (start, end) = if p.s.is_empty() {
            (DEFAULT_START, DEFAULT_END)
        } else {
            p.eat(b',')?;
            let start = p.change()?;
            p.eat(b',')?;
            (start, p.change()?)
        };
        p.s.is_empty().then_some(Rule {
            std,
            dst: Some((dst_off, start, end)),
        })
    }

    /// The standard offset (what a rule means when DST is not evaluated).
    pub(crate) fn std_offset(&self) -> i32 {
        self.std
    }

    /// Seconds east of UTC at `unix`.
    pub(crate) fn offset_at(&self, unix: i64) -> i32 {
        let Some((dst, start, end)) = self.dst else {
            return self.std;
        };
        let local_days = (unix + i64::from(self.std)).div_euclid(86_400);
        let (year, _, _) = peregrine_codec::date::civil_from_days(local_days);
        // Start is given in standard local time, end in daylight local time.
        let s = start_of_day(year, start.day) + start.time - i64::from(self.std);
        let e = start_of_day(year, end.day) + end.time - i64::from(dst);
        let in_dst = if s < e {
            s <= unix && unix < e
        } else {
            // Southern hemisphere: DST spans the new year.
            !(e <= unix && unix < s)
        };
        if in_dst { dst } else { self.std }
    }
}

struct Parser<'a> {
    s: &'a [u8],
}

impl Parser<'_> {
    fn eat(&mut self, c: u8) -> Option<()> {
        let (&first, rest) = self.s.split_first()?;
        (first == c).then(|| self.s = rest)
    }

    /// `ABC` (3+ letters) or `<+0530>` (quoted).
    fn name(&mut self) -> Option<()> {
        let len = if self.s.first() == Some(&b'<') {
            self.s.iter().position(|&c| c == b'>')? + 1
        } else {
            let n = self
                .s
                .iter()
                .take_while(|c| c.is_ascii_alphabetic())
                .count();
            if n < 3 {
                return None;
            }
            n
        };
        self.s = &self.s[len..];
        Some(())
    }

    fn number(&mut self, max: i64) -> Option<i64> {
        let n = self.s.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > 3 {
            return None;
        }
        let v = std::str::from_utf8(&self.s[..n]).ok()?.parse().ok()?;
        self.s = &self.s[n..];
        (v <= max).then_some(v)
    }

    /// `[+-]hh[:mm[:ss]]` in seconds (POSIX: positive is west for offsets).
    fn hms(&mut self, max_hours: i64) -> Option<i64> {
        let sign = match self.s.first() {
            Some(b'-') => -1,
            Some(b'+') => 1,
            _ => 0,
        };
        if sign != 0 {
            self.s = &self.s[1..];
        }
        let mut secs = self.number(max_hours)? * 3600;
        for unit in [60, 1] {
            if self.eat(b':').is_none() {
                break;
            }
            secs += self.number(59)? * unit;
        }
        Some(if sign < 0 { -secs } else { secs })
    }

    fn offset(&mut self) -> Option<i32> {
        i32::try_from(self.hms(24)?).ok()
    }

    fn change(&mut self) -> Option<Change> {
        let day = match self.s.first()? {
            b'J' => {
                self.s = &self.s[1..];
                Day::Julian1(u16::try_from(self.number(365)?).ok().filter(|&n| n >= 1)?)
            }
            b'M' => {
                self.s = &self.s[1..];
                let m = self.number(12)?;
                self.eat(b'.')?;
                let w = self.number(5)?;
                self.eat(b'.')?;
                let d = self.number(6)?;
                if m == 0 || w == 0 {
                    return None;
                }
                Day::Month {
                    m: m as u8,
                    w: w as u8,
                    d: d as u8,
                }
            }
            _ => Day::Julian0(u16::try_from(self.number(365)?).ok()?),
        };
        let time = if self.eat(b'/').is_some() {
            self.hms(167)?
        } else {
            7200
        };
        Some(Change { day, time })
    }
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

pub(crate) use peregrine_codec::date::days_from_civil;

fn days_in_month(y: i64, m: u8) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Unix seconds of 00:00 (UTC-based day count) of the rule's day in `year`.
fn start_of_day(year: i64, day: Day) -> i64 {
    let jan1 = days_from_civil(year, 1, 1);
    let days = match day {
        Day::Julian1(n) => {
            let n = i64::from(n);
            jan1 + if is_leap(year) && n >= 60 { n } else { n - 1 }
        }
        Day::Julian0(n) => jan1 + i64::from(n),
        Day::Month { m, w, d } => {
            let first = days_from_civil(year, u32::from(m), 1);
            // 1970-01-01 was a Thursday (weekday 4).
            let wd_first = (first + 4).rem_euclid(7);
            let mut dom = 1 + (i64::from(d) - wd_first).rem_euclid(7) + 7 * (i64::from(w) - 1);
            while dom > i64::from(days_in_month(year, m)) {
                dom -= 7;
            }
            first + dom - 1
        }
    };
    days * 86_400
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let r = Rule::parse("CET-1CEST,M3.5.0,M10.5.0/3").expect("parses");
        assert_eq!(r.std_offset(), 3600);
        assert_eq!(Rule::parse("UTC0").map(|r| r.offset_at(0)), Some(0));
        assert_eq!(
            Rule::parse("<+0530>-5:30").map(|r| r.offset_at(0)),
            Some(19_800)
        );
        assert_eq!(Rule::parse("EST5").map(|r| r.offset_at(0)), Some(-18_000));
        for bad in [
            "",
            "EST",
            "XX1",
            "EST99",
            "CET-1CEST,M3.5.0",
            "CET-1CEST,M13.1.0,M1.1.0",
            "A<",
            "EST5EDT,M3.2.0,M11.1.0x",
        ] {
            assert_eq!(Rule::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        for d in [-1_000_000i64, -1, 0, 59, 11_016, 20_000, 1_000_000] {
            let c = crate::time::civil(d * 86_400);
            assert_eq!(days_from_civil(c.year, c.month, c.day), d);
        }
        // Last Sunday of March 2026 is the 29th; first Sunday of November the 1st.
        let mar = start_of_day(2026, Day::Month { m: 3, w: 5, d: 0 });
        assert_eq!(mar, days_from_civil(2026, 3, 29) * 86_400);
        let nov = start_of_day(2026, Day::Month { m: 11, w: 1, d: 0 });
        assert_eq!(nov, days_from_civil(2026, 11, 1) * 86_400);
        assert_eq!(
            start_of_day(2024, Day::Julian1(60)),
            days_from_civil(2024, 3, 1) * 86_400
        );
        assert_eq!(
            start_of_day(2024, Day::Julian0(59)),
            days_from_civil(2024, 2, 29) * 86_400
        );
    }

    #[test]
    fn transitions_at_the_right_instant() {
        let eu = Rule::parse("CET-1CEST,M3.5.0,M10.5.0/3").expect("parses");
        // 2026-03-29 01:00:00 UTC (02:00 CET) starts CEST.
        let start = days_from_civil(2026, 3, 29) * 86_400 + 3600;
        assert_eq!(eu.offset_at(start - 1), 3600);
        assert_eq!(eu.offset_at(start), 7200);
        // 2026-10-25 01:00:00 UTC (03:00 CEST) ends it.
        let end = days_from_civil(2026, 10, 25) * 86_400 + 3600;
        assert_eq!(eu.offset_at(end - 1), 7200);
        assert_eq!(eu.offset_at(end), 3600);
        // Southern hemisphere: Sydney has DST in January.
        let syd = Rule::parse("AEST-10AEDT,M10.1.0,M4.1.0/3").expect("parses");
        assert_eq!(syd.offset_at(days_from_civil(2026, 1, 15) * 86_400), 39_600);
        assert_eq!(syd.offset_at(days_from_civil(2026, 7, 15) * 86_400), 36_000);
    }
}
