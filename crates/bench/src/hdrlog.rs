//! `--hdr-log`: HdrHistogram's standard interval log (the format of
//! HdrHistogram's `HistogramLogWriter`, read by HdrHistogram's log
//! processor and plotter), one histogram of latencies in µs per second,
//! written as each second completes so memory stays constant.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry,
};

use crate::error::BenchError;
use crate::worker::Interval;

/// Seconds a finished interval waits for late reports from other threads
/// before it is written (threads ship an interval within one scan tick).
pub const INTERVAL_GRACE_SECS: usize = 2;

/// An open interval log.
pub struct HdrLog {
    path: PathBuf,
    out: BufWriter<File>,
    pending: BTreeMap<usize, Histogram<u64>>,
    serializer: V2DeflateSerializer,
}

impl HdrLog {
    /// Creates the file and writes the log header.
    pub fn create(path: &Path, base: SystemTime, urls: &[String]) -> Result<HdrLog, BenchError> {
        let f = File::create(path).map_err(|e| BenchError::file(path, e))?;
        let mut out = BufWriter::new(f);
        let mut serializer = V2DeflateSerializer::new();
        let mut b = IntervalLogWriterBuilder::new();
        b.add_comment(&format!("peregrine bench {}", urls.join(" ")))
            .add_comment("Latencies in microseconds, one interval per second")
            .with_start_time(base)
            .with_base_time(base);
        b.begin_log_with(&mut out, &mut serializer)
            .map_err(|e| BenchError::file(path, e))?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )
        .map_err(|e| BenchError::file(path, e))?;
        Ok(HdrLog {
            path: path.to_path_buf(),
            out,
            pending: BTreeMap::new(),
            serializer,
        })
    }

    /// Takes the intervals the threads sent and writes those older than
    /// `now_sec - INTERVAL_GRACE_SECS`.
    pub fn take(&mut self, rx: &Receiver<Interval>, now_sec: usize) -> Result<(), BenchError> {
        self.receive(rx);
        let ready: Vec<usize> = self
            .pending
            .keys()
            .copied()
            .filter(|s| s.saturating_add(INTERVAL_GRACE_SECS) < now_sec)
            .collect();
        for sec in ready {
            if let Some(h) = self.pending.remove(&sec) {
                self.write(sec, &h, Duration::from_secs(1))?;
            }
        }
        Ok(())
    }

    /// Adds what the threads sent to the pending intervals.
    fn receive(&mut self, rx: &Receiver<Interval>) {
        while let Ok((sec, h)) = rx.try_recv() {
            let slot = self
                .pending
                .entry(sec)
                .or_insert_with(crate::stats::new_interval_histogram);
            let _ = slot.add(&h);
        }
    }

    fn write(
        &mut self,
        sec: usize,
        h: &Histogram<u64>,
        length: Duration,
    ) -> Result<(), BenchError> {
        let mut w = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut self.out, &mut self.serializer)
            .map_err(|e| BenchError::file(&self.path, e))?;
        w.write_histogram(h, Duration::from_secs(sec as u64), length, None)
            .map_err(|e| BenchError::file(&self.path, std::io::Error::other(e.to_string())))
    }

    /// Writes the intervals left and flushes the file. The last interval
    /// is as long as the run lasted in it (`elapsed` from the start), so
    /// the log says how long the run took: `merge` reads it back.
    pub fn finish(&mut self, rx: &Receiver<Interval>, elapsed: Duration) -> Result<(), BenchError> {
        self.receive(rx);
        let last = self.pending.keys().next_back().copied();
        for (sec, h) in std::mem::take(&mut self.pending) {
            let mut length = Duration::from_secs(1);
            if Some(sec) == last {
                let rest = elapsed.saturating_sub(Duration::from_secs(sec as u64));
                if !rest.is_zero() && rest < length {
                    length = rest;
                }
            }
            self.write(sec, &h, length)?;
        }
        self.out
            .flush()
            .map_err(|e| BenchError::file(&self.path, e))
    }
}

/// What a log adds up to.
pub struct LogTotal {
    /// Every interval's latencies.
    pub latencies: Histogram<u64>,
    /// Seconds from the log's start to the end of its last interval.
    pub time_taken: f64,
}

/// Reads every interval histogram of a log and adds them up; the time
/// taken is where the last interval ends (the timestamps count from the
/// run's start, the log's base time).
pub fn read_total(path: &Path) -> Result<LogTotal, BenchError> {
    let bytes = std::fs::read(path).map_err(|e| BenchError::file(path, e))?;
    let mut total = crate::stats::new_histogram();
    let mut end = Duration::ZERO;
    for entry in IntervalLogIterator::new(&bytes) {
        let entry = entry.map_err(|e| BenchError::Merge {
            path: path.into(),
            reason: format!("{e:?}"),
        })?;
        if let LogEntry::Interval(iv) = entry {
            let h = crate::json::decode(iv.encoded_histogram()).map_err(|reason| {
                BenchError::Merge {
                    path: path.into(),
                    reason,
                }
            })?;
            let _ = total.add(&h);
            end = end.max(iv.start_timestamp() + iv.duration());
        }
    }
    Ok(LogTotal {
        latencies: total,
        time_taken: end.as_secs_f64(),
    })
}
