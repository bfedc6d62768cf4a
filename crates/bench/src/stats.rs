//! What a run measured: four HDR histograms of ab's Connection Times rows
//! (connect, processing, waiting, total), ab's counters, and the
//! completions per second. Memory is constant in the number of requests:
//! each histogram is a fixed set of buckets, never a list of samples.

use hdrhistogram::Histogram;

/// Significant decimal digits kept by every histogram: 3 digits means
/// any recorded latency is reported within 0.1% of its true value.
pub const HIST_SIGFIGS: u8 = 3;
/// Highest latency covered by the first allocation (60 s in µs, about
/// 200 KiB of buckets); histograms auto-resize past it.
pub const HIST_INITIAL_MAX_US: u64 = 60_000_000;

/// A histogram of microseconds.
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_max(HIST_INITIAL_MAX_US, HIST_SIGFIGS)
        .unwrap_or_else(|_| Histogram::new(HIST_SIGFIGS).unwrap_or_else(|_| unreachable_hist()));
    h.auto(true);
    h
}

/// A histogram that starts tiny and grows with the largest value, for the
/// per-second intervals of `--hdr-log` (thousands of them per run).
pub fn new_interval_histogram() -> Histogram<u64> {
    let mut h = Histogram::new(HIST_SIGFIGS).unwrap_or_else(|_| unreachable_hist());
    h.auto(true);
    h
}

#[cold]
fn unreachable_hist() -> Histogram<u64> {
    // 3 significant figures and a one-hour bound are valid parameters; this
    // path only exists so that no constructor result is unwrapped.
    Histogram::new(2).unwrap_or_else(|_| std::process::abort())
}

/// The timings of one response, in microseconds, with ab's meanings:
/// connect = connect() done − start, wait = first byte − request written,
/// total = last byte − start (start is the intended send time in rate mode).
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub connect_us: u64,
    pub wait_us: u64,
    pub total_us: u64,
}

/// ab's failure classes and counters, plus the histograms.
#[derive(Clone, Debug)]
pub struct Stats {
    pub total: Histogram<u64>,
    pub connect: Histogram<u64>,
    pub processing: Histogram<u64>,
    pub waiting: Histogram<u64>,
    /// Requests that ended, well or not (ab's "Complete requests").
    pub complete: u64,
    pub failed_connect: u64,
    pub failed_receive: u64,
    pub failed_length: u64,
    pub failed_exceptions: u64,
    /// Among the exceptions: responses not received within `-s`.
    pub timeouts: u64,
    /// ab's "Write errors" (sending the request failed).
    pub write_errors: u64,
    pub non_2xx: u64,
    pub keepalive: u64,
    /// ab's "Total transferred": every byte read.
    pub bytes_read: u64,
    /// ab's "HTML transferred": body bytes.
    pub body_bytes: u64,
    /// ab's "Total body sent" counts request bytes.
    pub bytes_sent: u64,
    /// Completions in each second since the start.
    pub per_second: Vec<u64>,
    /// The first `Server` header seen.
    pub server: Option<String>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            total: new_histogram(),
            connect: new_histogram(),
            processing: new_histogram(),
            waiting: new_histogram(),
            complete: 0,
            failed_connect: 0,
            failed_receive: 0,
            failed_length: 0,
            failed_exceptions: 0,
            timeouts: 0,
            write_errors: 0,
            non_2xx: 0,
            keepalive: 0,
            bytes_read: 0,
            body_bytes: 0,
            bytes_sent: 0,
            per_second: Vec::new(),
            server: None,
        }
    }
}

impl Stats {
    /// ab's "Failed requests".
    pub fn failed(&self) -> u64 {
        self.failed_connect + self.failed_receive + self.failed_length + self.failed_exceptions
    }

    /// Records a response's timings.
    pub fn record(&mut self, t: Timing) {
        // Saturating record: an auto-resizing histogram only refuses values
        // beyond u64 range, which cannot come from a Duration in µs here.
        let _ = self.total.record(t.total_us);
        let _ = self.connect.record(t.connect_us);
        let _ = self
            .processing
            .record(t.total_us.saturating_sub(t.connect_us));
        let _ = self.waiting.record(t.wait_us);
    }

    /// Counts a completion in second `sec` of the run.
    pub fn tick(&mut self, sec: usize) {
        if self.per_second.len() <= sec {
            self.per_second.resize(sec + 1, 0);
        }
        self.per_second[sec] += 1;
    }

    /// Adds another thread's (or machine's) figures to these.
    pub fn merge(&mut self, o: &Stats) {
        let _ = self.total.add(&o.total);
        let _ = self.connect.add(&o.connect);
        let _ = self.processing.add(&o.processing);
        let _ = self.waiting.add(&o.waiting);
        self.complete += o.complete;
        self.failed_connect += o.failed_connect;
        self.failed_receive += o.failed_receive;
        self.failed_length += o.failed_length;
        self.failed_exceptions += o.failed_exceptions;
        self.timeouts += o.timeouts;
        self.write_errors += o.write_errors;
        self.non_2xx += o.non_2xx;
        self.keepalive += o.keepalive;
        self.bytes_read += o.bytes_read;
        self.body_bytes += o.body_bytes;
        self.bytes_sent += o.bytes_sent;
        if self.per_second.len() < o.per_second.len() {
            self.per_second.resize(o.per_second.len(), 0);
        }
        for (a, b) in self.per_second.iter_mut().zip(&o.per_second) {
            *a += b;
        }
        if self.server.is_none() {
            self.server.clone_from(&o.server);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_merge() {
        let mut a = Stats::default();
        a.record(Timing {
            connect_us: 100,
            wait_us: 200,
            total_us: 1000,
        });
        a.tick(0);
        a.complete = 1;
        let mut b = Stats::default();
        b.record(Timing {
            connect_us: 0,
            wait_us: 50,
            total_us: 3000,
        });
        b.tick(2);
        b.complete = 1;
        b.failed_length = 1;
        a.merge(&b);
        assert_eq!(a.total.len(), 2);
        assert_eq!(a.complete, 2);
        assert_eq!(a.failed(), 1);
        assert_eq!(a.per_second, vec![1, 0, 1]);
        assert!(a.processing.equivalent(a.processing.max(), 3000));
    }
}
