//! Per-worker connection timeouts: a hashed timing wheel with O(1) arm,
//! disarm and expiry per connection, and memory bounded by the number of
//! armed timers (at most one per connection).
//!
//! Time is cut into [`TICK`]s; slot `t % SLOTS` holds the timers due at
//! tick `t`, `t + SLOTS`, ... (each entry keeps its due tick, so a timer
//! longer than a revolution waits for its own turn). The wheel knows where
//! each connection's entry sits, so re-arming moves it (swap-remove) rather
//! than leaving a stale entry behind: a keep-alive connection re-arms
//! twice per request, and stale entries would pile up with the request
//! rate. A timer fires at most one tick late, never early (nginx may fire
//! up to 300 ms early, `NGX_TIMER_LAZY_DELAY`).

use std::time::{Duration, Instant};

/// Wheel resolution.
pub const TICK: Duration = Duration::from_millis(50);
/// Slots per revolution (SLOTS × TICK = 204.8 s, beyond the usual timeouts).
const SLOTS: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: usize,
    due: u64,
}

#[derive(Debug)]
pub struct Timers {
    origin: Instant,
    /// The next tick to process: every tick before it has fired.
    cursor: u64,
    slots: Vec<Vec<Entry>>,
    /// Connection key → (slot, index in slot) of its armed entry.
    pos: Vec<Option<(u32, u32)>>,
    armed: usize,
}

impl Default for Timers {
    fn default() -> Self {
        Timers::new(Instant::now())
    }
}

impl Timers {
    pub fn new(origin: Instant) -> Timers {
        Timers {
            origin,
            cursor: 0,
            slots: vec![Vec::new(); SLOTS],
            pos: Vec::new(),
            armed: 0,
        }
    }

    /// The tick containing `t` (rounded down).
    fn tick_of(&self, t: Instant) -> u64 {
        let d = t.saturating_duration_since(self.origin);
        u64::try_from(d.as_nanos() / TICK.as_nanos()).unwrap_or(u64::MAX)
    }

    /// Arms (or re-arms) connection `key` for `now + d`.
    pub fn arm(&mut self, key: usize, now: Instant, d: Duration) {
        self.disarm(key);
        // Rounded up: never fire early.
        let due = (self.tick_of(now + d) + 1).max(self.cursor);
        let slot = (due % SLOTS as u64) as usize;
        let list = &mut self.slots[slot];
        list.push(Entry { key, due });
        if self.pos.len() <= key {
            self.pos.resize(key + 1, None);
        }
        self.pos[key] = Some((slot as u32, (list.len() - 1) as u32));
        self.armed += 1;
    }

    /// Disarms connection `key`'s timer, if armed.
    pub fn disarm(&mut self, key: usize) {
        let Some((slot, idx)) = self.pos.get_mut(key).and_then(Option::take) else {
            return;
        };
        let (slot, idx) = (slot as usize, idx as usize);
        let list = &mut self.slots[slot];
        if idx < list.len() {
            list.swap_remove(idx);
            if let Some(moved) = list.get(idx)
                && let Some(p) = self.pos.get_mut(moved.key)
            {
                *p = Some((slot as u32, idx as u32));
            }
        }
        self.armed -= 1;
    }

    #[cfg(test)]
    pub fn is_armed(&self, key: usize) -> bool {
        self.pos.get(key).is_some_and(Option::is_some)
    }

    /// When the worker should wake up next: the first tick with an entry
    /// (possibly one of a later revolution: waking early is harmless).
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.armed == 0 {
            return None;
        }
        (0..SLOTS as u64)
            .map(|i| self.cursor + i)
            .find(|t| !self.slots[(t % SLOTS as u64) as usize].is_empty())
            .map(|t| self.origin + TICK * u32::try_from(t).unwrap_or(u32::MAX))
    }

    /// Disarms and appends to `due` every connection whose timer expired.
    pub fn expire(&mut self, now: Instant, due: &mut Vec<usize>) {
        let now_tick = self.tick_of(now);
        if self.armed == 0 {
            self.cursor = self.cursor.max(now_tick + 1);
            return;
        }
        while self.cursor <= now_tick && self.armed > 0 {
            let slot = (self.cursor % SLOTS as u64) as usize;
            let mut i = 0;
            while i < self.slots[slot].len() {
                let e = self.slots[slot][i];
                if e.due <= self.cursor {
                    self.disarm(e.key);
                    due.push(e.key);
                } else {
                    i += 1;
                }
            }
            self.cursor += 1;
        }
        self.cursor = self.cursor.max(now_tick + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(t: &mut Timers, now: Instant) -> Vec<usize> {
        let mut out = Vec::new();
        t.expire(now, &mut out);
        out.sort();
        out
    }

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn fires_in_deadline_order_never_early() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        t.arm(0, t0, 10 * S);
        t.arm(1, t0, 2 * S);
        t.arm(2, t0 + S, 10 * S);
        let next = t.next_deadline().unwrap();
        assert!(
            next >= t0 + 2 * S && next <= t0 + 2 * S + 2 * TICK,
            "{:?}",
            next - t0
        );
        assert!(fired(&mut t, t0 + S).is_empty());
        assert!(fired(&mut t, t0 + 2 * S - TICK).is_empty());
        assert_eq!(fired(&mut t, t0 + 2 * S + 2 * TICK), vec![1]);
        assert!(fired(&mut t, t0 + 10 * S - TICK).is_empty());
        assert_eq!(fired(&mut t, t0 + 10 * S + 2 * TICK), vec![0]);
        assert_eq!(fired(&mut t, t0 + 12 * S), vec![2]);
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn rearm_and_disarm_leave_nothing_behind() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        for i in 0..1000u32 {
            t.arm(7, t0 + TICK * i, 5 * S);
        }
        assert_eq!(t.slots.iter().map(Vec::len).sum::<usize>(), 1);
        t.arm(8, t0, 5 * S);
        t.disarm(8);
        t.disarm(8);
        assert!(!t.is_armed(8));
        assert!(fired(&mut t, t0 + 6 * S).is_empty());
        assert_eq!(fired(&mut t, t0 + TICK * 1000 + 6 * S), vec![7]);
        assert_eq!(t.armed, 0);
    }

    #[test]
    fn swap_remove_keeps_positions_right() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        for k in 0..5 {
            t.arm(k, t0, S);
        }
        t.disarm(1);
        t.disarm(0);
        t.arm(3, t0, 3 * S);
        assert_eq!(fired(&mut t, t0 + 2 * S), vec![2, 4]);
        assert_eq!(fired(&mut t, t0 + 4 * S), vec![3]);
    }

    #[test]
    fn longer_than_a_revolution_and_idle_gaps() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        let long = TICK * (SLOTS as u32) + 3 * S;
        t.arm(1, t0, long);
        assert!(
            fired(&mut t, t0 + 3 * S + TICK * 2).is_empty(),
            "same slot, later revolution"
        );
        assert_eq!(fired(&mut t, t0 + long + 2 * TICK), vec![1]);
        // Nothing armed for a long while, then a short timer.
        let later = t0 + Duration::from_secs(3600);
        t.expire(later, &mut Vec::new());
        t.arm(2, later, S);
        assert!(fired(&mut t, later + S - TICK).is_empty());
        assert_eq!(fired(&mut t, later + S + 2 * TICK), vec![2]);
    }
}
