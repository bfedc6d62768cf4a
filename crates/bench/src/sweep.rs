//! `--sweep 100,1000,5000`: the same test at each concurrency level, with
//! and/or without keep-alive, as a table and (with `--plot`) a chart: what
//! the seed articles built by hand from one ab run per level.

use std::fmt::Write as _;

use crate::cli::SweepKeepalive;
use crate::config::Config;
use crate::error::BenchError;
use crate::plot::{self, SweepPoint};

/// Mode names in the table and the chart legend.
pub const MODE_KEEPALIVE: &str = "keep-alive";
pub const MODE_CLOSE: &str = "close";

/// The table printed after a sweep.
pub fn table(points: &[SweepPoint]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:<12}{:>12}{:>14}{:>16}{:>10}{:>10}",
        "mode", "concurrency", "requests/s", "transfer KB/s", "p50 ms", "p99 ms"
    );
    for p in points {
        let _ = writeln!(
            o,
            "{:<12}{:>12}{:>14.2}{:>16.2}{:>10.3}{:>10.3}",
            p.mode,
            p.concurrency,
            p.requests_per_sec,
            p.transfer_kbytes_per_sec,
            p.p50_ms,
            p.p99_ms
        );
    }
    o
}

/// Runs every point; a point that fails is reported and skipped.
pub fn run(cfg: &Config) -> Result<i32, BenchError> {
    let modes: &[(bool, &str)] = match cfg.sweep_keepalive {
        SweepKeepalive::On => &[(true, MODE_KEEPALIVE)],
        SweepKeepalive::Off => &[(false, MODE_CLOSE)],
        SweepKeepalive::Both => &[(true, MODE_KEEPALIVE), (false, MODE_CLOSE)],
    };
    let mut points = Vec::new();
    'modes: for &(keepalive, mode) in modes {
        for &c in &cfg.sweep {
            if cfg.duration.is_none() && c > cfg.requests {
                eprintln!(
                    "sweep: skipping concurrency {c}: greater than -n {}",
                    cfg.requests
                );
                continue;
            }
            if !cfg.quiet && !cfg.json {
                eprintln!("sweep: {mode} at concurrency {c}");
            }
            let r = crate::run::execute(cfg, c, keepalive, true)?;
            if r.interrupted {
                eprintln!("sweep: interrupted");
                break 'modes;
            }
            let t = r.info.time_taken;
            let per = |x: f64| if t > 0.0 { x / t } else { 0.0 };
            points.push(SweepPoint {
                mode: mode.to_string(),
                concurrency: c,
                requests_per_sec: per(r.stats.complete as f64),
                transfer_kbytes_per_sec: per(r.stats.bytes_read as f64 / 1024.0),
                p50_ms: r.stats.total.value_at_quantile(0.5) as f64 / 1000.0,
                p99_ms: r.stats.total.value_at_quantile(0.99) as f64 / 1000.0,
            });
        }
    }
    if cfg.json {
        let rows: Vec<serde_json::Value> = points
            .iter()
            .map(|p| {
                serde_json::json!({
                    "mode": p.mode, "concurrency": p.concurrency,
                    "requests_per_second": p.requests_per_sec,
                    "transfer_kbytes_per_sec": p.transfer_kbytes_per_sec,
                    "p50_ms": p.p50_ms, "p99_ms": p.p99_ms,
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        print!("{}", table(&points));
    }
    if let Some(p) = &cfg.plot {
        plot::draw_sweep(p, &points)?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_layout() {
        let p = SweepPoint {
            mode: MODE_KEEPALIVE.into(),
            concurrency: 100,
            requests_per_sec: 1234.5,
            transfer_kbytes_per_sec: 10.0,
            p50_ms: 1.0,
            p99_ms: 2.5,
        };
        let t = table(&[p]);
        assert_eq!(t.lines().count(), 2);
        assert!(
            t.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("keep-alive           100       1234.50")),
            "{t}"
        );
    }
}
