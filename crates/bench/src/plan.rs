//! The immutable description of a run shared by every event-loop thread,
//! and the few atomics they coordinate through (request budget, stop flag,
//! the first response's length that ab's Length check compares with).

use std::net::SocketAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::error::BenchError;

/// ab's "Test aborted after 10 failures": connection failures tolerated
/// before the first success.
pub const ABORT_AFTER_FAILURES: u64 = 10;

/// One URL's address and the bytes sent for it.
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: SocketAddr,
    /// One request.
    pub request: Vec<u8>,
    /// `pipeline` copies of the request back to back.
    pub batch: Vec<u8>,
}

/// Everything a worker needs to know; built once.
#[derive(Debug)]
pub struct Plan {
    pub targets: Vec<Target>,
    pub keepalive: bool,
    pub head: bool,
    pub timeout: Duration,
    pub pipeline: usize,
    pub variable_length: bool,
    pub recv_errors_ok: bool,
    pub windowsize: Option<usize>,
    pub bind: Option<SocketAddr>,
    pub verbosity: u32,
    /// Total requests per second across threads (open model), if any.
    pub rate: Option<f64>,
    /// When to stop sending (`-t` / `--duration`).
    pub duration: Option<Duration>,
    /// Record per-second interval histograms (for `--hdr-log`).
    pub intervals: bool,
    /// Per-request lines for `-g`.
    pub gnuplot: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
}

/// What the threads share while running.
#[derive(Debug)]
pub struct Shared {
    /// Requests not yet claimed.
    remaining: AtomicU64,
    pub stop: AtomicBool,
    /// Body length of the first response (u64::MAX until one arrives).
    doclen: AtomicU64,
    pub any_good: AtomicBool,
    pub connect_failures: AtomicU64,
    pub abort: Mutex<Option<BenchError>>,
    pub start: Instant,
    pub wall_start: SystemTime,
}

/// Doc length not yet known.
const DOCLEN_UNSET: u64 = u64::MAX;

impl Shared {
    pub fn new(requests: u64) -> Shared {
        Shared {
            remaining: AtomicU64::new(requests),
            stop: AtomicBool::new(false),
            doclen: AtomicU64::new(DOCLEN_UNSET),
            any_good: AtomicBool::new(false),
            connect_failures: AtomicU64::new(0),
            abort: Mutex::new(None),
            start: Instant::now(),
            wall_start: SystemTime::now(),
        }
    }

    /// Claims up to `max` requests from the budget; 0 when it is spent.
    pub fn claim(&self, max: u64) -> u64 {
        let mut got = 0;
        let _ = self
            .remaining
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                got = r.min(max);
                (got > 0).then_some(r - got)
            });
        got
    }

    /// Returns requests that were claimed but will not be sent.
    pub fn give_back(&self, n: u64) {
        if n > 0 {
            self.remaining.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub fn remaining(&self) -> u64 {
        self.remaining.load(Ordering::Relaxed)
    }

    /// ab's Length check: true when `len` differs from the first
    /// response's body length (which this call sets when it is the first).
    pub fn length_differs(&self, len: u64) -> bool {
        match self
            .doclen
            .compare_exchange(DOCLEN_UNSET, len, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => false,
            Err(first) => first != len,
        }
    }

    /// The first response's body length, if any arrived.
    pub fn doclen(&self) -> Option<u64> {
        Some(self.doclen.load(Ordering::Relaxed)).filter(|d| *d != DOCLEN_UNSET)
    }

    /// Stops every thread with `err` (the first error wins).
    pub fn abort(&self, err: BenchError) {
        if let Ok(mut slot) = self.abort.lock() {
            slot.get_or_insert(err);
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget() {
        let s = Shared::new(5);
        assert_eq!(s.claim(3), 3);
        assert_eq!(s.claim(3), 2);
        assert_eq!(s.claim(1), 0);
        s.give_back(1);
        assert_eq!(s.claim(4), 1);
    }

    #[test]
    fn doclen_first_wins() {
        let s = Shared::new(0);
        assert_eq!(s.doclen(), None);
        assert!(!s.length_differs(10));
        assert!(!s.length_differs(10));
        assert!(s.length_differs(11));
        assert_eq!(s.doclen(), Some(10));
    }
}
