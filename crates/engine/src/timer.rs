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
//!
//! The worker asks for the next deadline on every event-loop turn, so the
//! wheel keeps one occupancy bit per slot: finding the next non-empty slot
//! scans `SLOTS / 64` words instead of up to `SLOTS` vectors (a keep-alive
//! timeout of 65 s sits 1,300 slots ahead of the cursor).

use std::time::{Duration, Instant};

/// Wheel resolution.
pub const TICK: Duration = Duration::from_millis(50);
/// Slots per revolution (SLOTS × TICK = 204.8 s, beyond the usual timeouts).
const SLOTS: usize = 4096;
/// Words of the occupancy bitmap.
const WORDS: usize = SLOTS / 64;
/// [`TICK`] in nanoseconds; a whole number of ticks per second keeps the
/// tick computation in 64-bit arithmetic (no 128-bit division per arm).
const TICK_NANOS: u64 = TICK.as_nanos() as u64;
const TICKS_PER_SEC: u64 = 1_000_000_000 / TICK_NANOS;
const _: () = assert!(1_000_000_000_u64.is_multiple_of(TICK_NANOS) && SLOTS.is_multiple_of(64));

/// `d` in nanoseconds, saturating (a `u64` holds 584 years).
fn duration_nanos(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(d.subsec_nanos()))
}

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
    /// Bit `i` set ⇔ `slots[i]` is not empty.
    occupied: [u64; WORDS],
    /// Connection key → (slot, index in slot) of its armed entry.
    pos: Vec<Option<(u32, u32)>>,
    armed: usize,
    /// The last `now` seen by [`Timers::arm`] and its nanoseconds since
    /// `origin`: every arm of one loop turn passes the same `now`, and the
    /// `Instant` subtraction is the dearest part of arming.
    last_now: (Instant, u64),
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
            occupied: [0; WORDS],
            pos: Vec::new(),
            armed: 0,
            last_now: (origin, 0),
        }
    }

    /// The tick containing `t` (rounded down).
    fn tick_of(&self, t: Instant) -> u64 {
        let d = t.saturating_duration_since(self.origin);
        d.as_secs()
            .saturating_mul(TICKS_PER_SEC)
            .saturating_add(u64::from(d.subsec_nanos()) / TICK_NANOS)
    }

    fn mark(&mut self, slot: usize) {
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    fn unmark_if_empty(&mut self, slot: usize) {
        if self.slots[slot].is_empty() {
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
    }

    /// How many slots after `start` (0 = `start` itself, circularly) the
    /// first occupied one is.
    fn next_occupied(&self, start: usize) -> Option<usize> {
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(first.trailing_zeros() as usize - b0);
        }
        for i in 1..=WORDS {
            let w = (w0 + i) % WORDS;
            let mut bits = self.occupied[w];
            if i == WORDS {
                // Back at the start word: only the slots before `start`.
                bits &= (1u64 << b0).wrapping_sub(1);
            }
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                return Some((slot + SLOTS - start) % SLOTS);
            }
        }
        None
    }

    /// Arms (or re-arms) connection `key` for `now + d`.
    pub fn arm(&mut self, key: usize, now: Instant, d: Duration) {
        self.disarm(key);
        if now != self.last_now.0 {
            let since = now.saturating_duration_since(self.origin);
            self.last_now = (now, duration_nanos(since));
        }
        let at = self.last_now.1.saturating_add(duration_nanos(d));
        // Rounded up: never fire early.
        let due = (at / TICK_NANOS + 1).max(self.cursor);
        let slot = (due % SLOTS as u64) as usize;
        let list = &mut self.slots[slot];
        list.push(Entry { key, due });
        let idx = (list.len() - 1) as u32;
        if self.pos.len() <= key {
            self.pos.resize(key + 1, None);
        }
        self.pos[key] = Some((slot as u32, idx));
        self.mark(slot);
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
            self.unmark_if_empty(slot);
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
        let start = (self.cursor % SLOTS as u64) as usize;
        let t = self.cursor + self.next_occupied(start)? as u64;
        let nanos = t.saturating_mul(TICK_NANOS);
        Some(self.origin + Duration::from_nanos(nanos))
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
            // Skip empty slots, but never past `now_tick + 1`: a later arm
            // of a tick not reached yet must still land ahead of the cursor.
            match self.next_occupied(slot) {
                Some(0) => {}
                Some(d) => {
                    self.cursor = (self.cursor + d as u64).min(now_tick + 1);
                    continue;
                }
                None => break,
            }
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

    /// The occupancy bitmap agrees with a plain scan of the slots for
    /// arms and disarms spread over the whole wheel, wrap-around included.
    #[test]
    fn next_deadline_matches_a_full_scan() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        let scan = |t: &Timers| {
            (0..SLOTS as u64)
                .map(|i| t.cursor + i)
                .find(|x| !t.slots[(x % SLOTS as u64) as usize].is_empty())
                .map(|x| t.origin + Duration::from_nanos(x * TICK_NANOS))
        };
        // Move the cursor into the middle of a word so wrap-around matters.
        t.expire(t0 + TICK * 3000 + TICK / 2, &mut Vec::new());
        let now = t0 + TICK * 3000;
        for k in 0..200usize {
            let d = TICK * ((k * 37 % (SLOTS - 2)) as u32);
            t.arm(k, now, d);
            assert_eq!(t.next_deadline(), scan(&t), "after arming {k}");
        }
        for k in (0..200usize).step_by(3) {
            t.disarm(k);
            assert_eq!(t.next_deadline(), scan(&t), "after disarming {k}");
        }
        let mut out = Vec::new();
        for step in 1..300u32 {
            t.expire(now + TICK * (step * 17), &mut out);
            assert_eq!(t.next_deadline(), scan(&t), "after expiring to {step}");
        }
        assert_eq!(t.armed, 0);
        assert_eq!(t.occupied, [0; WORDS]);
    }

    #[test]
    fn tick_math_matches_division() {
        let t0 = Instant::now();
        let t = Timers::new(t0);
        for ms in [0u64, 1, 49, 50, 51, 999, 1000, 1049, 65_000, 3_600_123] {
            let at = t0 + Duration::from_millis(ms);
            assert_eq!(t.tick_of(at), ms / 50, "{ms} ms");
        }
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
