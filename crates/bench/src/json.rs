//! `--json`: every figure of the report, the full percentile spectrum, the
//! per-second completions, and the four histograms in HdrHistogram's
//! compressed V2 encoding (base64) so that `merge` can combine the results
//! of several machines into exact percentiles.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use crate::report::{Row, RunInfo};
use crate::stats::Stats;

/// Identifies the layout of this document.
pub const SCHEMA: &str = "peregrine-bench/1";
/// Percentiles listed in `latency.percentiles`.
pub const SPECTRUM: [f64; 13] = [
    0.0, 50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 99.99, 99.999, 100.0,
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub complete: u64,
    pub failed: u64,
    pub failed_connect: u64,
    pub failed_receive: u64,
    pub failed_length: u64,
    pub failed_exceptions: u64,
    pub timeouts: u64,
    pub write_errors: u64,
    pub non_2xx: u64,
    pub keepalive: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bytes {
    pub total_transferred: u64,
    pub html_transferred: u64,
    pub sent: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentile {
    pub percentile: f64,
    pub ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub min_ms: f64,
    pub mean_ms: f64,
    pub stdev_ms: f64,
    pub max_ms: f64,
    pub percentiles: Vec<Percentile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionTimes {
    pub connect: Row,
    pub processing: Row,
    pub waiting: Row,
    pub total: Row,
}

/// Base64 of V2-deflate encoded histograms (microseconds).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Encoded {
    pub total: String,
    pub connect: String,
    pub processing: String,
    pub waiting: String,
}

/// The whole JSON document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema: String,
    pub info: RunInfo,
    pub urls: Vec<String>,
    pub threads: usize,
    /// `--rate`, when the open model was used.
    pub rate_requested: Option<f64>,
    pub requests: Counts,
    pub bytes: Bytes,
    pub requests_per_second: f64,
    pub time_per_request_ms: f64,
    pub time_per_request_all_ms: f64,
    pub transfer_rate_kbytes_per_sec: f64,
    pub latency: Latency,
    pub connection_times: ConnectionTimes,
    pub per_second: Vec<u64>,
    pub histograms: Encoded,
}

fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(buf),
        Err(_) => String::new(),
    }
}

/// Decodes a histogram written by `encode` (or by any HdrHistogram
/// implementation's base64 V2 encoding).
pub fn decode(s: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| e.to_string())?;
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("{e:?}"))?;
    h.auto(true);
    Ok(h)
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

impl Summary {
    pub fn new(
        s: &Stats,
        info: &RunInfo,
        urls: Vec<String>,
        threads: usize,
        rate: Option<f64>,
    ) -> Summary {
        let t = info.time_taken;
        let done = s.complete as f64;
        let per = |x: f64| if t > 0.0 && done > 0.0 { x } else { 0.0 };
        let h = &s.total;
        Summary {
            schema: SCHEMA.into(),
            info: info.clone(),
            urls,
            threads,
            rate_requested: rate,
            requests: Counts {
                complete: s.complete,
                failed: s.failed(),
                failed_connect: s.failed_connect,
                failed_receive: s.failed_receive,
                failed_length: s.failed_length,
                failed_exceptions: s.failed_exceptions,
                timeouts: s.timeouts,
                write_errors: s.write_errors,
                non_2xx: s.non_2xx,
                keepalive: s.keepalive,
            },
            bytes: Bytes {
                total_transferred: s.bytes_read,
                html_transferred: s.body_bytes,
                sent: s.bytes_sent,
            },
            requests_per_second: per(done / t),
            time_per_request_ms: per(info.concurrency as f64 * t * 1000.0 / done),
            time_per_request_all_ms: per(t * 1000.0 / done),
            transfer_rate_kbytes_per_sec: per(s.bytes_read as f64 / 1024.0 / t),
            latency: Latency {
                min_ms: ms(h.min() as f64),
                mean_ms: ms(h.mean()),
                stdev_ms: ms(h.stdev()),
                max_ms: ms(h.max() as f64),
                percentiles: SPECTRUM
                    .iter()
                    .map(|&p| Percentile {
                        percentile: p,
                        ms: ms(h.value_at_percentile(p) as f64),
                    })
                    .collect(),
            },
            connection_times: ConnectionTimes {
                connect: Row::of(&s.connect),
                processing: Row::of(&s.processing),
                waiting: Row::of(&s.waiting),
                total: Row::of(&s.total),
            },
            per_second: s.per_second.clone(),
            histograms: Encoded {
                total: encode(&s.total),
                connect: encode(&s.connect),
                processing: encode(&s.processing),
                waiting: encode(&s.waiting),
            },
        }
    }

    /// The counters and histograms back, for merging.
    pub fn to_stats(&self) -> Result<Stats, String> {
        let r = &self.requests;
        Ok(Stats {
            total: decode(&self.histograms.total)?,
            connect: decode(&self.histograms.connect)?,
            processing: decode(&self.histograms.processing)?,
            waiting: decode(&self.histograms.waiting)?,
            complete: r.complete,
            failed_connect: r.failed_connect,
            failed_receive: r.failed_receive,
            failed_length: r.failed_length,
            failed_exceptions: r.failed_exceptions,
            timeouts: r.timeouts,
            write_errors: r.write_errors,
            non_2xx: r.non_2xx,
            keepalive: r.keepalive,
            bytes_read: self.bytes.total_transferred,
            body_bytes: self.bytes.html_transferred,
            bytes_sent: self.bytes.sent,
            per_second: self.per_second.clone(),
            server: Some(self.info.server_software.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Timing;

    #[test]
    fn round_trip() {
        let mut s = Stats::default();
        for v in 1..=100u64 {
            s.record(Timing {
                connect_us: v,
                wait_us: v * 2,
                total_us: v * 100,
            });
        }
        s.complete = 100;
        s.failed_length = 3;
        let info = RunInfo {
            time_taken: 2.0,
            concurrency: 4,
            ..RunInfo::default()
        };
        let sum = Summary::new(&s, &info, vec!["http://h/".into()], 1, None);
        assert_eq!(sum.requests_per_second, 50.0);
        assert_eq!(sum.requests.failed, 3);
        let text = serde_json::to_string(&sum).expect("json");
        let back: Summary = serde_json::from_str(&text).expect("parse");
        assert_eq!(
            (&back.requests, &back.bytes, &back.histograms),
            (&sum.requests, &sum.bytes, &sum.histograms)
        );
        assert_eq!(back.info, sum.info);
        let st = back.to_stats().expect("stats");
        assert_eq!(st.total.len(), 100);
        assert_eq!(st.total.max(), s.total.max());
        let p: Vec<f64> = sum.latency.percentiles.iter().map(|p| p.ms).collect();
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    }
}
