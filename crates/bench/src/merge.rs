//! `peregrine bench merge FILE...`: one report from several generator
//! machines. `--json` files carry the counters and the four histograms, so
//! their sum is exact: percentiles are those of the combined histogram,
//! never an average of percentiles. `--hdr-log` files carry latencies
//! and, in their intervals' times, how long the run took; they yield the
//! percentile table and the time taken.

use std::path::{Path, PathBuf};

use crate::error::BenchError;
use crate::json::Summary;
use crate::report::{self, ReportOpts, RunInfo};
use crate::stats::Stats;

/// The merged figures.
#[derive(Debug)]
pub struct Merged {
    pub stats: Stats,
    pub info: RunInfo,
    pub urls: Vec<String>,
    pub threads: usize,
}

fn load_json(path: &Path, text: &str) -> Result<Summary, BenchError> {
    serde_json::from_str(text).map_err(|e| BenchError::Merge {
        path: path.into(),
        reason: e.to_string(),
    })
}

/// Combines the files: counters add up, connections add up, the time
/// taken is the longest (the machines ran side by side).
pub fn merge(files: &[PathBuf]) -> Result<Merged, BenchError> {
    let mut out: Option<Merged> = None;
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|e| BenchError::file(path, e))?;
        let (stats, info, urls, threads) = if text.trim_start().starts_with('{') {
            let s = load_json(path, &text)?;
            let stats = s.to_stats().map_err(|reason| BenchError::Merge {
                path: path.clone(),
                reason,
            })?;
            (stats, s.info, s.urls, s.threads)
        } else {
            // The log has latencies and, in its intervals' times, how
            // long the run took (without it the report said 0.000 s).
            let total = crate::hdrlog::read_total(path)?;
            let mut stats = Stats {
                complete: total.latencies.len(),
                ..Stats::default()
            };
            let _ = stats.total.add(&total.latencies);
            let info = RunInfo {
                time_taken: total.time_taken,
                ..RunInfo::default()
            };
            (stats, info, Vec::new(), 0)
        };
        match &mut out {
            None => {
                out = Some(Merged {
                    stats,
                    info,
                    urls,
                    threads,
                })
            }
            Some(m) => {
                m.stats.merge(&stats);
                m.info.concurrency += info.concurrency;
                m.info.time_taken = m.info.time_taken.max(info.time_taken);
                m.threads += threads;
                for u in urls {
                    if !m.urls.contains(&u) {
                        m.urls.push(u);
                    }
                }
            }
        }
    }
    let mut m = out.ok_or_else(|| BenchError::Usage("merge: no files".into()))?;
    m.info.server_software = m.stats.server.clone().unwrap_or_default();
    Ok(m)
}

/// Runs `merge` and prints ab's report or JSON.
pub fn run(files: &[PathBuf], json: bool) -> Result<i32, BenchError> {
    let m = merge(files)?;
    if json {
        let s = Summary::new(&m.stats, &m.info, m.urls, m.threads, None);
        println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
    } else {
        println!("Merged {} result files\n\n", files.len());
        print!(
            "{}",
            report::render(&m.stats, &m.info, ReportOpts::default())
        );
    }
    Ok(0)
}
