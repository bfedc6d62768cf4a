//! The accounting side of a worker: a response's timings and counters,
//! ab's failure classes, retries of closed kept-alive connections, and
//! the `-s` timeouts.

use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{Failure, GNUPLOT_FLUSH_BYTES, Worker};
use crate::conn::Phase;
use crate::error::BenchError;
use crate::plan::ABORT_AFTER_FAILURES;
use crate::response::{Eof, Response};
use crate::stats::{Timing, new_interval_histogram};

impl Worker<'_> {
    /// Accounts one complete response.
    pub(super) fn response(&mut self, i: usize, r: Response, now: Instant) {
        let c = &mut self.conns[i];
        c.in_flight = c.in_flight.saturating_sub(1);
        if self.end.is_some_and(|e| now >= e) {
            return;
        }
        let us = |d: Duration| d.as_micros().min(u64::MAX as u128) as u64;
        let t = Timing {
            connect_us: us(c.connected.saturating_duration_since(c.start)),
            wait_us: us(c
                .first_byte
                .unwrap_or(now)
                .saturating_duration_since(c.write_done)),
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
        if self.interval.is_some() {
            self.ship_interval(sec);
            if let Some((_, h)) = &mut self.interval {
                let _ = h.record(t.total_us);
            }
        }
        if self.gnuplot.is_some() {
            self.gnuplot_line(start, t);
        }
    }

    /// Sends the interval histogram to the main thread once second `sec`
    /// has begun (for `--hdr-log`).
    pub(super) fn ship_interval(&mut self, sec: usize) {
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

    pub(super) fn gnuplot_line(&mut self, start: Instant, t: Timing) {
        let wall = self.shared.wall_start + start.saturating_duration_since(self.shared.start);
        if let Some(g) = &mut self.gnuplot {
            crate::files::gnuplot_line(g, wall, t);
        }
        self.flush_gnuplot(false);
    }

    pub(super) fn flush_gnuplot(&mut self, force: bool) {
        let (Some(g), Some(file)) = (&mut self.gnuplot, &self.plan.gnuplot) else {
            return;
        };
        if (force || g.len() >= GNUPLOT_FLUSH_BYTES)
            && let Ok(mut f) = file.lock()
        {
            let _ = f.write_all(g.as_bytes());
            g.clear();
        }
    }

    pub(super) fn on_eof(&mut self, i: usize) {
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

    pub(super) fn on_recv_error(&mut self, i: usize, e: io::Error) {
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

    pub(super) fn connect_failed(&mut self, i: usize, e: io::Error) {
        let n = self.shared.connect_failures.fetch_add(1, Ordering::Relaxed) + 1;
        if n > ABORT_AFTER_FAILURES && !self.shared.any_good.load(Ordering::Relaxed) {
            self.shared.abort(BenchError::Aborted {
                failures: ABORT_AFTER_FAILURES,
                last: e.to_string(),
            });
        }
        if self.plan.verbosity >= 1 {
            eprintln!(
                "connect to {}: {e}",
                self.plan.targets[self.conns[i].target].addr
            );
        }
        self.fail(i, Failure::Connect);
    }

    /// Counts every unanswered request of the batch as failed.
    pub(super) fn fail(&mut self, i: usize, why: Failure) {
        let c = &mut self.conns[i];
        // Past the end of a timed run nothing more is counted.
        let n = if self.end.is_some_and(|e| Instant::now() >= e) {
            0
        } else {
            c.in_flight
        };
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

    pub(super) fn batch_done(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.phase = Phase::Idle;
        if !self.plan.keepalive {
            c.close();
        }
        self.idle.push(i);
    }

    /// Expires requests older than `-s` and ships finished seconds.
    pub(super) fn scan(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let phase = self.conns[i].phase;
            if phase != Phase::Idle && now >= self.deadlines[i] {
                let why = if phase == Phase::Connecting {
                    Failure::Connect
                } else {
                    Failure::Timeout
                };
                self.fail(i, why);
            }
        }
        let sec = now.saturating_duration_since(self.shared.start).as_secs() as usize;
        self.ship_interval(sec);
    }
}
