//! One event-loop thread: a mio poll over its share of the connections,
//! driving each through connect → write → read, counting every outcome in
//! ab's classes and recording latencies in histograms.
//!
//! Failure classes, as ab counts them:
//! - Connect: connect() refused/unreachable, or not done within `-s`.
//! - Receive: a read error (reset); without `-r` the whole test stops,
//!   as ab exits on `apr_socket_recv` errors.
//! - Length: the body length differs from the first response's (unless
//!   `-l`), which includes bodies cut short by an early close.
//! - Exceptions: unparseable responses, a close before any response byte
//!   on a fresh connection, a failed send, and responses not received
//!   within `-s`.
//!
//! A kept-alive connection that the server closes (or resets) before any
//! byte of the next response is the normal end of keep-alive: the request
//! is resent once on a new connection and not counted (ab: "server has
//! legitimately shut down an idle keep alive request").

use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::{Events, Poll};

use crate::cli;
use crate::conn::{Conn, Phase, SocketOpts};
use crate::error::BenchError;
use crate::plan::{Plan, Shared};
use crate::stats::{Stats, new_interval_histogram};

/// Read buffer per thread: large enough that one read drains a typical
/// socket receive queue.
pub const READ_BUF_BYTES: usize = 64 * 1024;
/// Events taken per epoll_wait.
pub const EVENTS_CAPACITY: usize = 1024;
/// How often timeouts, the stop flag and interval histograms are checked
/// when no event arrives.
pub const SCAN_INTERVAL: Duration = Duration::from_millis(20);
/// `-g` lines are buffered per thread up to this size before the shared
/// file lock is taken.
pub const GNUPLOT_FLUSH_BYTES: usize = 64 * 1024;

/// One second's latency histogram from one thread, for `--hdr-log`.
pub type Interval = (usize, Histogram<u64>);

mod io;
mod outcome;

#[derive(Clone, Copy, Debug)]
enum Failure {
    Connect,
    Receive,
    Exception,
    Timeout,
}

/// The open-model clock: request k is due at `t0 + k / rate`.
#[derive(Debug)]
struct RateClock {
    t0: Instant,
    period: f64,
    next: u64,
}

impl RateClock {
    /// Saturates far in the future (a rate so low that the next request
    /// is centuries away never comes due).
    fn due(&self) -> Instant {
        Duration::try_from_secs_f64(self.period * self.next as f64)
            .ok()
            .and_then(|d| self.t0.checked_add(d))
            .unwrap_or_else(|| self.t0 + Duration::from_secs(cli::MAX_TIME_SECS as u64))
    }
}

/// What a thread measured.
#[derive(Debug)]
pub struct Outcome {
    pub stats: Stats,
    pub last_done: Option<Instant>,
}

/// A thread's event loop and its connections.
pub struct Worker<'a> {
    plan: &'a Plan,
    shared: &'a Shared,
    poll: Poll,
    conns: Vec<Conn>,
    deadlines: Vec<Instant>,
    buf: Vec<u8>,
    stats: Stats,
    idle: Vec<usize>,
    rate: Option<RateClock>,
    exhausted: bool,
    last_done: Option<Instant>,
    opts: SocketOpts,
    interval: Option<Interval>,
    tx: Option<Sender<Interval>>,
    gnuplot: Option<String>,
    any_good: bool,
    /// End of `--duration`/`-t`: responses completing later are not
    /// counted (the time taken is the duration).
    end: Option<Instant>,
}

impl<'a> Worker<'a> {
    /// A worker over `conns` connections (spread over the targets
    /// round-robin from `first_conn`), sending `rate` requests/s if set.
    pub fn new(
        plan: &'a Plan,
        shared: &'a Shared,
        conns: usize,
        first_conn: usize,
        rate: Option<f64>,
        tx: Option<Sender<Interval>>,
    ) -> Result<Worker<'a>, BenchError> {
        let poll = Poll::new().map_err(|source| BenchError::Io {
            context: "epoll",
            source,
        })?;
        let now = Instant::now();
        let n = plan.targets.len().max(1);
        Ok(Worker {
            plan,
            shared,
            poll,
            conns: (0..conns)
                .map(|i| Conn::new((first_conn + i) % n, now))
                .collect(),
            deadlines: vec![now; conns],
            buf: vec![0; READ_BUF_BYTES],
            stats: Stats::default(),
            idle: (0..conns).rev().collect(),
            rate: rate.map(|r| RateClock {
                t0: now,
                period: 1.0 / r,
                next: 0,
            }),
            exhausted: false,
            last_done: None,
            opts: SocketOpts {
                windowsize: plan.windowsize,
                bind: plan.bind,
            },
            interval: plan.intervals.then(|| (0, new_interval_histogram())),
            tx,
            gnuplot: plan.gnuplot.as_ref().map(|_| String::new()),
            any_good: false,
            end: plan.duration.map(|d| shared.start + d),
        })
    }

    /// Runs until the budget is spent and answered, the duration ends, or
    /// another thread stops the test.
    pub fn run(mut self) -> Outcome {
        let mut events = Events::with_capacity(EVENTS_CAPACITY);
        let end = self.end;
        let mut next_scan = Instant::now() + SCAN_INTERVAL;
        loop {
            let now = Instant::now();
            if self.shared.stopped() || end.is_some_and(|e| now >= e) {
                break;
            }
            self.start_idle(now);
            if self.exhausted && self.conns.iter().all(|c| c.phase == Phase::Idle) {
                if self.shared.remaining() == 0 || self.rate.is_some() {
                    break;
                }
                // Another connection gave requests back (a retried batch).
                self.exhausted = false;
                self.idle = (0..self.conns.len()).collect();
                continue;
            }
            let timeout = self.wake_at(next_scan).saturating_duration_since(now);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout))
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                self.shared.abort(BenchError::Io {
                    context: "epoll_wait",
                    source: e,
                });
                break;
            }
            for ev in events.iter() {
                let i = ev.token().0;
                if i < self.conns.len() {
                    let closed = ev.is_read_closed() || ev.is_error();
                    self.handle(i, ev.is_readable() || closed, closed);
                }
            }
            let now = Instant::now();
            if now >= next_scan {
                self.scan(now);
                next_scan = now + SCAN_INTERVAL;
            }
        }
        self.finish()
    }

    /// When the loop must wake without events: the next scan, the next
    /// due request of the open model (when a connection is free to send
    /// it), or the end of a timed run.
    fn wake_at(&self, next_scan: Instant) -> Instant {
        let mut wake = next_scan;
        if let Some(rc) = &self.rate
            && !self.idle.is_empty()
        {
            wake = wake.min(rc.due());
        }
        if let Some(e) = self.end {
            wake = wake.min(e);
        }
        wake
    }

    fn finish(mut self) -> Outcome {
        self.flush_gnuplot(true);
        if let (Some(iv), Some(tx)) = (self.interval.take(), &self.tx) {
            let _ = tx.send(iv);
        }
        Outcome {
            stats: self.stats,
            last_done: self.last_done,
        }
    }

    /// Gives work to idle connections: all of them in the closed model,
    /// those whose send time has come in the open model.
    fn start_idle(&mut self, now: Instant) {
        if self.rate.is_some() {
            while !self.idle.is_empty() && !self.exhausted {
                let Some(rc) = &mut self.rate else { break };
                let due = rc.due();
                if due > now {
                    break;
                }
                if self.shared.claim(1) == 0 {
                    self.exhausted = true;
                    break;
                }
                rc.next += 1;
                if let Some(i) = self.idle.pop() {
                    self.begin(i, 1, due, now);
                }
            }
            return;
        }
        let n = self.idle.len();
        for _ in 0..n {
            if self.exhausted {
                break;
            }
            let Some(i) = self.idle.pop() else { break };
            let k = self.shared.claim(self.plan.pipeline as u64);
            if k == 0 {
                self.exhausted = true;
                if let Some(c) = self.conns.get_mut(i) {
                    c.close();
                }
                break;
            }
            self.begin(i, k, now, now);
        }
    }

    /// Starts a batch of `k` requests on slot `i`.
    fn begin(&mut self, i: usize, k: u64, start: Instant, now: Instant) {
        let c = &mut self.conns[i];
        c.batch = k;
        c.in_flight = k;
        c.start = start;
        c.retried = false;
        self.send(i, now);
    }
}
