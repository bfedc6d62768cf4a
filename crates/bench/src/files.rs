//! ab's side files: `-e` (CSV of the percentage of requests served within
//! a time) and `-g` (gnuplot TSV, one line per request, written as the
//! requests complete so memory stays constant; ab writes them sorted by
//! total time, which would need every sample in memory).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use peregrine_codec::date::civil_from_days;

use crate::error::BenchError;
use crate::stats::Timing;

/// The header line of ab's `-g` file.
pub const GNUPLOT_HEADER: &str = "starttime\tseconds\tctime\tdtime\tttime\twait\n";

/// ab's `ap_round_ms`: microseconds to whole milliseconds, rounding half up.
pub fn round_ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// Writes ab's `-e` file: "Percentage served,Time in ms" then 0..=100.
pub fn write_csv(path: &Path, total: &Histogram<u64>) -> Result<(), BenchError> {
    let mut out = String::from("Percentage served,Time in ms\n");
    for i in 0..=100u32 {
        let us = match i {
            0 => total.min(),
            100 => total.max(),
            _ => total.value_at_quantile(f64::from(i) / 100.0),
        };
        let _ = writeln!(out, "{i},{:.3}", us as f64 / 1000.0);
    }
    std::fs::write(path, out).map_err(|e| BenchError::file(path, e))
}

/// Creates the `-g` file with its header.
pub fn create_gnuplot(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, BenchError> {
    let f = std::fs::File::create(path).map_err(|e| BenchError::file(path, e))?;
    let mut w = std::io::BufWriter::new(f);
    w.write_all(GNUPLOT_HEADER.as_bytes())
        .map_err(|e| BenchError::file(path, e))?;
    Ok(w)
}

/// Appends one `-g` line for a request that started at `wall`.
pub fn gnuplot_line(out: &mut String, wall: SystemTime, t: Timing) {
    let secs = wall
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "{}\t{}\t{}\t{}\t{}\t{}",
        ctime(secs),
        secs,
        round_ms(t.connect_us),
        round_ms(t.total_us.saturating_sub(t.connect_us)),
        round_ms(t.total_us),
        round_ms(t.wait_us)
    );
}

/// `apr_ctime` layout ("Mon Nov 30 11:09:04 2026"), in UTC: the generator
/// runs in containers where the local zone is UTC anyway, and reading the
/// zone database is not worth it for a log column.
pub fn ctime(unix: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix / 86_400;
    let rem = unix % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        y
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn ctime_layout() {
        assert_eq!(ctime(0), "Thu Jan 01 00:00:00 1970");
        assert_eq!(ctime(1_796_036_944), "Mon Nov 30 11:09:04 2026");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn rounding() {
        assert_eq!(round_ms(499), 0);
        assert_eq!(round_ms(500), 1);
        assert_eq!(round_ms(1499), 1);
    }

    #[test]
    fn csv_file() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).expect("record");
        }
        let dir = std::env::temp_dir().join(format!("pb-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("p.csv");
        write_csv(&p, &h).expect("write");
        let text = std::fs::read_to_string(&p).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 102);
        assert_eq!(lines[0], "Percentage served,Time in ms");
        assert!(lines[1].starts_with("0,1.000"));
        assert!(lines[51].starts_with("50,50"));
        assert!(lines[101].starts_with("100,1000."));
        let _ = std::fs::remove_dir_all(dir);
    }
}
