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

use std::io::{self, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::{Events, Interest, Poll, Token};

use crate::conn::{self, Conn, Phase, SocketOpts};
use crate::error::BenchError;
use crate::plan::{ABORT_AFTER_FAILURES, Plan, Shared};
use crate::response::{Eof, Response};
use crate::stats::{Stats, Timing, new_interval_histogram};

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
    fn due(&self) -> Instant {
        self.t0 + Duration::from_secs_f64(self.period * self.next as f64)
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
        let poll = Poll::new().map_err(|source| BenchError::Io { context: "epoll", source })?;
        let now = Instant::now();
        let n = plan.targets.len().max(1);
        Ok(Worker {
            plan,
            shared,
            poll,
            conns: (0..conns).map(|i| Conn::new((first_conn + i) % n, now)).collect(),
            deadlines: vec![now; conns],
            buf: vec![0; READ_BUF_BYTES],
            stats: Stats::default(),
            idle: (0..conns).rev().collect(),
            rate: rate.map(|r| RateClock { t0: now, period: 1.0 / r, next: 0 }),
            exhausted: false,
            last_done: None,
            opts: SocketOpts { windowsize: plan.windowsize, bind: plan.bind },
            interval: plan.intervals.then(|| (0, new_interval_histogram())),
            tx,
            gnuplot: plan.gnuplot.as_ref().map(|_| String::new()),
            any_good: false,
        })
    }

    /// Runs until the budget is spent and answered, the duration ends, or
    /// another thread stops the test.
    pub fn run(mut self) -> Outcome {
        let mut events = Events::with_capacity(EVENTS_CAPACITY);
        let end = self.plan.duration.map(|d| self.shared.start + d);
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
            let mut wake = next_scan;
            if let Some(rc) = &self.rate
                && !self.idle.is_empty()
            {
                wake = wake.min(rc.due());
            }
            if let Some(e) = end {
                wake = wake.min(e);
            }
            let timeout = wake.saturating_duration_since(now);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout))
                && e.kind() != io::ErrorKind::Interrupted
            {
                self.shared.abort(BenchError::Io { context: "epoll_wait", source: e });
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

    fn finish(mut self) -> Outcome {
        self.flush_gnuplot(true);
        if let (Some(iv), Some(tx)) = (self.interval.take(), &self.tx) {
            let _ = tx.send(iv);
        }
        Outcome { stats: self.stats, last_done: self.last_done }
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

    /// Sends the current batch, connecting first when needed.
    fn send(&mut self, i: usize, now: Instant) {
        self.deadlines[i] = now + self.plan.timeout;
        let c = &mut self.conns[i];
        c.written = 0;
        c.first_byte = None;
        if c.stream.is_some() {
            c.connected = c.start;
            c.phase = Phase::Writing;
            self.write(i, false);
            return;
        }
        let addr = self.plan.targets[c.target].addr;
        match conn::connect(addr, self.opts) {
            Ok(mut s) => {
                let reg = self.poll.registry().register(&mut s, Token(i), Interest::READABLE | Interest::WRITABLE);
                c.stream = Some(s);
                c.phase = Phase::Connecting;
                if let Err(e) = reg {
                    self.connect_failed(i, e);
                }
            }
            Err(e) => self.connect_failed(i, e),
        }
    }

    /// `closed`: the peer's FIN (or an error) is already queued behind
    /// the data, so reading must go on to the end of the stream: no new
    /// edge will announce it.
    fn handle(&mut self, i: usize, readable: bool, closed: bool) {
        match self.conns[i].phase {
            Phase::Connecting => self.on_connect(i, readable),
            Phase::Writing => self.write(i, readable),
            Phase::Reading => self.read(i, closed),
            Phase::Idle => {
                if readable && self.conns[i].stream.is_some() {
                    self.read(i, closed);
                }
            }
        }
    }

    fn on_connect(&mut self, i: usize, readable: bool) {
        let Some(s) = &self.conns[i].stream else { return };
        let err = match s.take_error() {
            Ok(Some(e)) | Err(e) => Some(e),
            Ok(None) => match s.peer_addr() {
                Ok(_) => None,
                // Not connected yet: a spurious wake-up.
                Err(e) if e.kind() == io::ErrorKind::NotConnected && !readable => return,
                Err(e) => Some(e),
            },
        };
        if let Some(e) = err {
            self.connect_failed(i, e);
            return;
        }
        let c = &mut self.conns[i];
        c.connected = Instant::now();
        c.phase = Phase::Writing;
        self.write(i, readable);
    }

    fn write(&mut self, i: usize, readable: bool) {
        let c = &mut self.conns[i];
        let t = &self.plan.targets[c.target];
        let len = t.request.len() * c.batch as usize;
        let Some(bytes) = t.batch.get(..len) else { return };
        let Some(s) = c.stream.as_mut() else { return };
        while c.written < len {
            match s.write(&bytes[c.written..]) {
                Ok(0) => {
                    self.send_failed(i);
                    return;
                }
                Ok(n) => {
                    c.written += n;
                    self.stats.bytes_sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.send_failed(i);
                    return;
                }
            }
        }
        c.write_done = Instant::now();
        c.phase = Phase::Reading;
        if readable {
            self.read(i, true);
        }
    }

    fn send_failed(&mut self, i: usize) {
        if self.retry(i) {
            return;
        }
        self.stats.write_errors += 1;
        self.fail(i, Failure::Exception);
    }

    /// Resends the unanswered requests on a fresh connection when the
    /// kept-alive one was closed under them; false when that is not the
    /// case (or was already tried).
    fn retry(&mut self, i: usize) -> bool {
        let c = &mut self.conns[i];
        if !c.reused || c.retried || c.parser.in_progress() {
            return false;
        }
        c.close();
        c.retried = true;
        c.batch = c.in_flight;
        self.send(i, Instant::now());
        true
    }

    fn read(&mut self, i: usize, drain: bool) {
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            let Some(s) = self.conns[i].stream.as_mut() else { break };
            match s.read(&mut buf) {
                Ok(0) => {
                    self.on_eof(i);
                    break;
                }
                Ok(n) => {
                    self.stats.bytes_read += n as u64;
                    // A short read drained the socket (Linux TCP copies all
                    // queued data up to the buffer size), so waiting for the
                    // next edge is safe and saves the EAGAIN read, unless a
                    // FIN already sits behind the data.
                    if !self.consume(i, &buf[..n]) || (n < buf.len() && !drain) {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.on_recv_error(i, e);
                    break;
                }
            }
        }
        self.buf = buf;
    }

    /// Feeds bytes to the parser; false when the batch or socket ended.
    fn consume(&mut self, i: usize, mut data: &[u8]) -> bool {
        let now = Instant::now();
        while !data.is_empty() {
            let c = &mut self.conns[i];
            if c.in_flight == 0 {
                // Bytes nobody asked for: the stream is out of step.
                c.close();
                c.phase = Phase::Idle;
                return false;
            }
            if c.first_byte.is_none() {
                c.first_byte = Some(now);
            }
            let want_server = self.stats.server.is_none();
            match c.parser.feed(data, self.plan.head, want_server) {
                Ok((used, done)) => {
                    data = &data[used..];
                    if let Some(r) = done {
                        let keep = r.keep_alive && self.plan.keepalive;
                        self.response(i, r, now);
                        let c = &mut self.conns[i];
                        c.first_byte = None;
                        if !keep {
                            self.shared.give_back(c.in_flight);
                            c.in_flight = 0;
                            c.close();
                        } else {
                            c.reused = true;
                        }
                        if self.conns[i].in_flight == 0 {
                            self.batch_done(i);
                            return false;
                        }
                    }
                }
                Err(e) => {
                    if self.plan.verbosity >= 2 {
                        println!("WARNING: {e}");
                    }
                    self.fail(i, Failure::Exception);
                    return false;
                }
            }
        }
        true
    }

    /// Accounts one complete response.
    fn response(&mut self, i: usize, r: Response, now: Instant) {
        let c = &mut self.conns[i];
        c.in_flight = c.in_flight.saturating_sub(1);
        let us = |d: Duration| d.as_micros().min(u64::MAX as u128) as u64;
        let t = Timing {
            connect_us: us(c.connected.saturating_duration_since(c.start)),
            wait_us: us(c.first_byte.unwrap_or(now).saturating_duration_since(c.write_done)),
            total_us: us(now.saturating_duration_since(c.start)),
        };
        let start = c.start;
        let st = &mut self.stats;
        st.complete += 1;
        st.body_bytes += r.body_bytes;
        st.record(t);
        if !(200..300).contains(&r.status) {
            st.non_2xx += 1;
            if self.plan.verbosity >= 2 {
                println!("WARNING: Response code not 2xx ({})", r.status);
            }
        } else if self.plan.verbosity >= 3 {
            println!("LOG: Response code = {}", r.status);
        }
        if self.shared.length_differs(r.body_bytes) && !self.plan.variable_length {
            st.failed_length += 1;
        }
        if self.plan.keepalive && r.keep_alive {
            st.keepalive += 1;
        }
        if st.server.is_none() {
            st.server = r.server;
        }
        if !self.any_good {
            self.any_good = true;
            self.shared.any_good.store(true, Ordering::Relaxed);
        }
        let sec = now.saturating_duration_since(self.shared.start).as_secs() as usize;
        st.tick(sec);
        self.last_done = Some(now);
        if let Some((cur, h)) = &mut self.interval {
            if *cur != sec {
                let old = std::mem::replace(h, new_interval_histogram());
                if let Some(tx) = &self.tx {
                    let _ = tx.send((*cur, old));
                }
                *cur = sec;
            }
            let _ = h.record(t.total_us);
        }
        if self.gnuplot.is_some() {
            self.gnuplot_line(start, t);
        }
    }

    fn gnuplot_line(&mut self, start: Instant, t: Timing) {
        let wall = self.shared.wall_start + start.saturating_duration_since(self.shared.start);
        if let Some(g) = &mut self.gnuplot {
            crate::files::gnuplot_line(g, wall, t);
        }
        self.flush_gnuplot(false);
    }

    fn flush_gnuplot(&mut self, force: bool) {
        let (Some(g), Some(file)) = (&mut self.gnuplot, &self.plan.gnuplot) else { return };
        if (force || g.len() >= GNUPLOT_FLUSH_BYTES)
            && let Ok(mut f) = file.lock()
        {
            let _ = f.write_all(g.as_bytes());
            g.clear();
        }
    }

    fn on_eof(&mut self, i: usize) {
        let now = Instant::now();
        let c = &mut self.conns[i];
        match c.parser.eof() {
            Eof::Clean if c.in_flight == 0 => {
                c.close();
            }
            Eof::Clean => {
                if !self.retry(i) {
                    self.fail(i, Failure::Exception);
                }
            }
            Eof::Complete(r) => {
                self.response(i, r, now);
                let c = &mut self.conns[i];
                self.shared.give_back(c.in_flight);
                c.in_flight = 0;
                c.close();
                self.batch_done(i);
            }
            Eof::Truncated { status, .. } => {
                c.in_flight = c.in_flight.saturating_sub(1);
                self.shared.give_back(c.in_flight);
                c.in_flight = 1;
                if status == 0 {
                    self.fail(i, Failure::Exception);
                } else {
                    // ab reads to the close and compares lengths: a body cut
                    // short is a Length failure.
                    self.stats.complete += 1;
                    self.stats.failed_length += 1;
                    let c = &mut self.conns[i];
                    c.in_flight = 0;
                    c.close();
                    self.batch_done(i);
                }
            }
        }
    }

    fn on_recv_error(&mut self, i: usize, e: io::Error) {
        if self.retry(i) {
            return;
        }
        if self.conns[i].in_flight == 0 {
            self.conns[i].close();
            return;
        }
        if self.plan.verbosity >= 1 {
            eprintln!("apr_socket_recv: {e}");
        }
        self.fail(i, Failure::Receive);
        if !self.plan.recv_errors_ok {
            self.shared.abort(BenchError::Receive(e.to_string()));
        }
    }

    fn connect_failed(&mut self, i: usize, e: io::Error) {
        let n = self.shared.connect_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if n > ABORT_AFTER_FAILURES && !self.shared.any_good.load(Ordering::Relaxed) {
            self.shared.abort(BenchError::Aborted { failures: ABORT_AFTER_FAILURES, last: e.to_string() });
        }
        if self.plan.verbosity >= 1 {
            eprintln!("connect to {}: {e}", self.plan.targets[self.conns[i].target].addr);
        }
        self.fail(i, Failure::Connect);
    }

    /// Counts every unanswered request of the batch as failed.
    fn fail(&mut self, i: usize, why: Failure) {
        let c = &mut self.conns[i];
        let n = c.in_flight;
        let st = &mut self.stats;
        st.complete += n;
        match why {
            Failure::Connect => st.failed_connect += n,
            Failure::Receive => st.failed_receive += n,
            Failure::Exception => st.failed_exceptions += n,
            Failure::Timeout => {
                st.failed_exceptions += n;
                st.timeouts += n;
            }
        }
        c.in_flight = 0;
        c.close();
        self.batch_done(i);
    }

    fn batch_done(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.phase = Phase::Idle;
        if !self.plan.keepalive {
            c.close();
        }
        self.idle.push(i);
    }

    /// Expires requests older than `-s` and ships finished seconds.
    fn scan(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let phase = self.conns[i].phase;
            if phase != Phase::Idle && now >= self.deadlines[i] {
                let why = if phase == Phase::Connecting { Failure::Connect } else { Failure::Timeout };
                self.fail(i, why);
            }
        }
        let sec = now.saturating_duration_since(self.shared.start).as_secs() as usize;
        if let Some((cur, h)) = &mut self.interval
            && *cur < sec
        {
            let old = std::mem::replace(h, new_interval_histogram());
            if let Some(tx) = &self.tx {
                let _ = tx.send((*cur, old));
            }
            *cur = sec;
        }
    }
}
