//! stub_status counters, kept per worker and summed by the reader.
//!
//! nginx keeps one set of counters in shared memory updated with atomic
//! adds by every worker. Here each worker owns a cache-line-aligned block
//! that only it writes (plain load + store, no locked instruction, no line
//! bouncing between cores); a stub_status request sums all blocks. Blocks
//! outlive their worker so `accepts`/`handled`/`requests` stay cumulative
//! across restarts and reloads, as nginx's shared counters do.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use peregrine_core::{StatusSource, StubStatus};

/// One worker's counters. Aligned to 128 bytes: adjacent-line prefetch
/// pairs 64-byte lines on x86, so two workers never share a pair.
#[repr(align(128))]
#[derive(Default, Debug)]
pub struct Counters {
    active: AtomicU64,
    accepts: AtomicU64,
    handled: AtomicU64,
    requests: AtomicU64,
    reading: AtomicU64,
    writing: AtomicU64,
    waiting: AtomicU64,
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

/// Single-writer add: only the owning worker writes, so no read-modify-write
/// instruction is needed; readers may see a value a moment old.
fn add(c: &AtomicU64, delta: i64) {
    let v = c.load(Ordering::Relaxed);
    c.store(v.wrapping_add_signed(delta), Ordering::Relaxed);
}

impl Counters {
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

/// All workers' counter blocks, ever.
#[derive(Default, Debug)]
pub struct Registry {
    slots: RwLock<Vec<Arc<Counters>>>,
    free: Mutex<Vec<usize>>,
}

/// A worker's claim on a block; give it back with [`Registry::release`].
pub struct Slot {
    pub index: usize,
    pub counters: Arc<Counters>,
}

impl Registry {
    pub fn acquire(&self) -> Slot {
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
        let counters = Arc::new(Counters::default());
        slots.push(counters.clone());
        Slot {
            index: slots.len() - 1,
            counters,
        }
    }

    /// Called once the owning worker thread has ended.
    pub fn release(&self, slot: Slot) {
        slot.counters.clear_gauges();
        if let Ok(mut f) = self.free.lock() {
            f.push(slot.index);
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_workers_and_keeps_totals_after_release() {
        let reg = Registry::default();
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
    fn counters_do_not_share_cache_lines() {
        assert!(std::mem::align_of::<Counters>() >= 128);
    }
}
