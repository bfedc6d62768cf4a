//! stub_status counters, kept per worker and summed by the reader.
//!
//! nginx keeps one set of counters in shared memory updated with atomic
//! adds by every worker. Here each worker owns a cache-line-aligned block
//! that only it writes (plain load + store, no locked instruction, no line
//! bouncing between cores); a stub_status request sums all blocks. Blocks
//! outlive their worker so `accepts`/`handled`/`requests` stay cumulative
//! across restarts and reloads, as nginx's shared counters do.
//!
//! The same blocks carry the Prometheus counters of `metrics on;`
//! (requests by server block and status class, bytes, the duration
//! histogram): fixed-size arrays, so counting a request is a handful of
//! plain stores with no allocation and no lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use peregrine_core::metrics::{
    DURATION_SLOTS, MAX_SERVER_SLOTS, MetricsSnapshot, STATUS_CLASSES, duration_slot, status_class,
};
use peregrine_core::{StatusSource, StubStatus};

/// Server slots: [`MAX_SERVER_SLOTS`] blocks plus the shared "other" slot.
const SERVER_SLOTS: usize = MAX_SERVER_SLOTS + 1;

/// One worker's counters. Aligned to 128 bytes: adjacent-line prefetch
/// pairs 64-byte lines on x86, so two workers never share a pair.
#[repr(align(128))]
#[derive(Debug)]
pub struct Counters {
    active: AtomicU64,
    accepts: AtomicU64,
    handled: AtomicU64,
    requests: AtomicU64,
    reading: AtomicU64,
    writing: AtomicU64,
    waiting: AtomicU64,
    /// Finished requests by server slot and status class.
    by_status: [[AtomicU64; STATUS_CLASSES]; SERVER_SLOTS],
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Non-cumulative histogram slots and the sum in microseconds.
    duration: [AtomicU64; DURATION_SLOTS],
    duration_sum_us: AtomicU64,
    /// Open-file cache hits, misses; memory cache hits, misses.
    caches: [AtomicU64; 4],
}

impl Default for Counters {
    fn default() -> Self {
        Counters::new()
    }
}

/// One finished request, as the metrics count it.
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    /// The server block's index in the worker's configuration.
    pub server: Option<usize>,
    pub status: u16,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub duration: Duration,
}

/// The gauges a connection moves between (nginx's Reading/Writing/Waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gauge {
    Reading,
    Writing,
    Waiting,
    /// Counted in none of the three (lingering close), only in `active`.
    None,
}

/// [`add`] of an unsigned amount.
fn add_u(c: &AtomicU64, delta: u64) {
    let v = c.load(Ordering::Relaxed);
    c.store(v.wrapping_add(delta), Ordering::Relaxed);
}

/// Single-writer add: only the owning worker writes, so no read-modify-write
/// instruction is needed; readers may see a value a moment old.
fn add(c: &AtomicU64, delta: i64) {
    let v = c.load(Ordering::Relaxed);
    c.store(v.wrapping_add_signed(delta), Ordering::Relaxed);
}

impl Counters {
    fn new() -> Self {
        let zero = AtomicU64::default;
        Counters {
            active: zero(),
            accepts: zero(),
            handled: zero(),
            requests: zero(),
            reading: zero(),
            writing: zero(),
            waiting: zero(),
            by_status: std::array::from_fn(|_| std::array::from_fn(|_| zero())),
            bytes_in: zero(),
            bytes_out: zero(),
            duration: std::array::from_fn(|_| zero()),
            duration_sum_us: zero(),
            caches: std::array::from_fn(|_| zero()),
        }
    }

    /// Counts a finished request for the metrics.
    pub fn finished(&self, f: &Finished) {
        let slot = f
            .server
            .map_or(MAX_SERVER_SLOTS, |i| i.min(MAX_SERVER_SLOTS));
        if let Some(c) = self
            .by_status
            .get(slot)
            .and_then(|row| row.get(status_class(f.status)))
        {
            add(c, 1);
        }
        add_u(&self.bytes_in, f.bytes_in);
        add_u(&self.bytes_out, f.bytes_out);
        let us = u64::try_from(f.duration.as_micros()).unwrap_or(u64::MAX);
        if let Some(c) = self.duration.get(duration_slot(us)) {
            add(c, 1);
        }
        add_u(&self.duration_sum_us, us);
    }

    /// Adds the cache lookups of the request just finished (the counts are
    /// deltas, so a block reused by a later worker keeps counting up).
    pub fn caches(&self, c: peregrine_core::metrics::CacheCounts) {
        let deltas = [
            c.open_file_hits,
            c.open_file_misses,
            c.memory_hits,
            c.memory_misses,
        ];
        for (slot, d) in self.caches.iter().zip(deltas) {
            if d != 0 {
                add_u(slot, d);
            }
        }
    }

    fn gauge(&self, g: Gauge) -> Option<&AtomicU64> {
        match g {
            Gauge::Reading => Some(&self.reading),
            Gauge::Writing => Some(&self.writing),
            Gauge::Waiting => Some(&self.waiting),
            Gauge::None => None,
        }
    }

    /// A connection was accepted (and handled: Peregrine never drops an
    /// accepted connection for lack of memory, so handled == accepts unless
    /// `worker_connections` was exceeded).
    pub fn accepted(&self, handled: bool) {
        add(&self.accepts, 1);
        if handled {
            add(&self.handled, 1);
            add(&self.active, 1);
        }
    }

    pub fn closed(&self) {
        add(&self.active, -1);
    }

    /// A request started (first byte read): nginx's `ngx_stat_requests++`.
    pub fn request(&self) {
        add(&self.requests, 1);
    }

    /// Moves one connection from gauge `from` to gauge `to`.
    pub fn shift(&self, from: Gauge, to: Gauge) {
        if from == to {
            return;
        }
        if let Some(c) = self.gauge(from) {
            add(c, -1);
        }
        if let Some(c) = self.gauge(to) {
            add(c, 1);
        }
    }

    fn read(&self) -> StubStatus {
        StubStatus {
            active: self.active.load(Ordering::Relaxed),
            accepts: self.accepts.load(Ordering::Relaxed),
            handled: self.handled.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            reading: self.reading.load(Ordering::Relaxed),
            writing: self.writing.load(Ordering::Relaxed),
            waiting: self.waiting.load(Ordering::Relaxed),
        }
    }

    /// After the owner exited (or panicked): its connections are gone.
    fn clear_gauges(&self) {
        for c in [&self.active, &self.reading, &self.writing, &self.waiting] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// All workers' counter blocks, ever, and the master's numbers.
#[derive(Default, Debug)]
pub struct Registry {
    slots: RwLock<Vec<Arc<Counters>>>,
    free: Mutex<Vec<usize>>,
    /// Blocks held by running workers.
    live: AtomicU64,
    reloads_ok: AtomicU64,
    reloads_failed: AtomicU64,
    /// A graceful shutdown has begun (`health_status`; set by the master).
    pub draining: std::sync::atomic::AtomicBool,
}

/// A worker's claim on a block; give it back with [`Registry::release`].
pub struct Slot {
    pub index: usize,
    pub counters: Arc<Counters>,
}

impl Registry {
    pub fn acquire(self: &Arc<Self>) -> Slot {
        self.live.fetch_add(1, Ordering::Relaxed);
        let reuse = self.free.lock().ok().and_then(|mut f| f.pop());
        let mut slots = self.slots.write().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = reuse
            && let Some(c) = slots.get(index)
        {
            return Slot {
                index,
                counters: c.clone(),
            };
        }
        let counters = Arc::new(Counters::new());
        slots.push(counters.clone());
        Slot {
            index: slots.len() - 1,
            counters,
        }
    }

    /// Called once the owning worker thread has ended.
    pub fn release(&self, slot: Slot) {
        self.live.fetch_sub(1, Ordering::Relaxed);
        slot.counters.clear_gauges();
        if let Ok(mut f) = self.free.lock() {
            f.push(slot.index);
        }
    }

    /// Counts a reload (master thread only).
    pub fn reloaded(&self, ok: bool) {
        let c = if ok {
            &self.reloads_ok
        } else {
            &self.reloads_failed
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Sums every block into a scrape.
    pub fn metrics(&self) -> MetricsSnapshot {
        let conns = self.sum();
        let mut m = MetricsSnapshot {
            requests: vec![[0; STATUS_CLASSES]; SERVER_SLOTS],
            reading: conns.reading,
            writing: conns.writing,
            waiting: conns.waiting,
            active: conns.active,
            accepted: conns.accepts,
            handled: conns.handled,
            workers: self.live.load(Ordering::Relaxed),
            reloads_ok: self.reloads_ok.load(Ordering::Relaxed),
            reloads_failed: self.reloads_failed.load(Ordering::Relaxed),
            ..MetricsSnapshot::default()
        };
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        for c in slots.iter() {
            for (row, src) in m.requests.iter_mut().zip(&c.by_status) {
                for (n, s) in row.iter_mut().zip(src) {
                    *n += get(s);
                }
            }
            m.bytes_received += get(&c.bytes_in);
            m.bytes_sent += get(&c.bytes_out);
            for (n, s) in m.duration.iter_mut().zip(&c.duration) {
                *n += get(s);
            }
            m.duration_sum_us += get(&c.duration_sum_us);
            m.caches.open_file_hits += get(&c.caches[0]);
            m.caches.open_file_misses += get(&c.caches[1]);
            m.caches.memory_hits += get(&c.caches[2]);
            m.caches.memory_misses += get(&c.caches[3]);
        }
        m
    }

    pub fn sum(&self) -> StubStatus {
        let slots = self.slots.read().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .map(|c| c.read())
            .fold(StubStatus::default(), |a, b| StubStatus {
                active: a.active + b.active,
                accepts: a.accepts + b.accepts,
                handled: a.handled + b.handled,
                requests: a.requests + b.requests,
                reading: a.reading + b.reading,
                writing: a.writing + b.writing,
                waiting: a.waiting + b.waiting,
            })
    }
}

/// What core's stub_status handler reads.
pub struct View(pub Arc<Registry>);

impl StatusSource for View {
    fn stub_status(&self) -> StubStatus {
        self.0.sum()
    }

    /// The scrape for core's `metrics` content handler: every worker's
    /// blocks summed, with the master's numbers.
    fn metrics(&self) -> Option<peregrine_core::metrics::MetricsSnapshot> {
        Some(self.0.metrics())
    }

    fn draining(&self) -> bool {
        self.0.draining.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_workers_and_keeps_totals_after_release() {
        let reg = Arc::new(Registry::default());
        let a = reg.acquire();
        let b = reg.acquire();
        a.counters.accepted(true);
        a.counters.shift(Gauge::None, Gauge::Waiting);
        a.counters.shift(Gauge::Waiting, Gauge::Reading);
        a.counters.request();
        b.counters.accepted(true);
        b.counters.accepted(false);
        b.counters.shift(Gauge::None, Gauge::Writing);
        let s = reg.sum();
        assert_eq!((s.active, s.accepts, s.handled, s.requests), (2, 3, 2, 1));
        assert_eq!((s.reading, s.writing, s.waiting), (1, 1, 0));
        reg.release(a);
        let s = reg.sum();
        assert_eq!((s.active, s.accepts, s.reading), (1, 3, 0));
        let c = reg.acquire();
        assert_eq!(c.index, 0, "freed slot is reused");
        b.counters.closed();
        c.counters.accepted(true);
        assert_eq!(reg.sum().active, 1);
    }

    #[test]
    fn metrics_sum_workers_exactly() {
        let reg = Arc::new(Registry::default());
        let a = reg.acquire();
        let b = reg.acquire();
        let req = |server, status, ms| Finished {
            server,
            status,
            bytes_in: 10,
            bytes_out: 100,
            duration: Duration::from_millis(ms),
        };
        a.counters.finished(&req(Some(0), 200, 0));
        a.counters.finished(&req(Some(0), 404, 3));
        b.counters.finished(&req(Some(1), 200, 20_000));
        b.counters.finished(&req(Some(500), 503, 1));
        b.counters.finished(&req(None, 200, 1));
        reg.reloaded(true);
        reg.reloaded(false);
        reg.reloaded(true);
        // Read through the status source, as core's metrics handler does.
        let view = View(reg.clone());
        let m = StatusSource::metrics(&view).unwrap();
        assert_eq!(m.requests[0], [0, 1, 0, 1, 0]);
        assert_eq!(m.requests[1], [0, 1, 0, 0, 0]);
        assert_eq!(m.requests[MAX_SERVER_SLOTS], [0, 1, 0, 0, 1]);
        assert_eq!((m.bytes_received, m.bytes_sent), (50, 500));
        assert_eq!(m.duration.iter().sum::<u64>(), 5);
        assert_eq!(m.duration[0], 1);
        assert_eq!(
            m.duration[DURATION_SLOTS - 1],
            1,
            "20 s is over the last bucket"
        );
        assert_eq!(m.duration_sum_us, 20_005_000);
        assert_eq!((m.workers, m.reloads_ok, m.reloads_failed), (2, 2, 1));
        reg.release(b);
        let m = StatusSource::metrics(&view).unwrap();
        assert_eq!(m.workers, 1);
        assert_eq!(m.bytes_sent, 500, "totals survive the worker");
    }

    #[test]
    fn counters_do_not_share_cache_lines() {
        assert!(std::mem::align_of::<Counters>() >= 128);
    }
}
