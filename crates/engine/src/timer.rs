//! Per-worker connection timeouts: a hashed timing wheel with O(1) arm,
//! disarm and expiry per connection, and memory bounded by the number of
//! connections (at most one entry each).
//!
//! Time is cut into [`TICK`]s; slot `t % SLOTS` holds the timers due at
//! tick `t`, `t + SLOTS`, ... (each entry keeps its due tick, so a timer
//! longer than a revolution waits for its own turn). The wheel knows where
//! each connection's entry sits, so an entry that must move is moved
//! (swap-remove), never duplicated: entries cannot pile up with the request
//! rate. A timer fires at most one tick late, never early (nginx may fire
//! up to 300 ms early).
//!
//! Arming and disarming are lazy, as nginx's timers are
//! (`NGX_TIMER_LAZY_DELAY`): a keep-alive connection disarms at each
//! request and re-arms when it is answered, thousands of times a second,
//! so those calls only record what the connection wants. The entry in the
//! wheel moves only when the new deadline is earlier than where it sits;
//! when an entry's tick comes and its connection wants a later one (or
//! none), it moves there (or is dropped) instead of firing. Unlike nginx,
//! nothing fires early.
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
/// [`TICK`] in nanoseconds: ticks are computed from nanoseconds since the
/// origin in 64-bit arithmetic (no 128-bit division per arm).
const TICK_NANOS: u64 = TICK.as_nanos() as u64;
const _: () = assert!(SLOTS.is_multiple_of(64));

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

/// Where a connection's entry sits in the wheel and when it should fire.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// Slot of the entry, if one is in the wheel; `NO_SLOT` otherwise.
    slot: u32,
    /// Index of the entry in its slot.
    idx: u32,
    /// The due tick of the entry in the wheel (a copy of its `Entry::due`):
    /// re-arming compares against it without touching the slot's list.
    sits: u64,
    /// The tick the connection is armed for; `NOT_ARMED` when disarmed.
    want: u64,
}

/// `Place::want` of a disarmed connection.
const NOT_ARMED: u64 = u64::MAX;
/// `Place::slot` of a connection with no entry in the wheel.
const NO_SLOT: u32 = u32::MAX;
const _: () = assert!(SLOTS < NO_SLOT as usize);

#[derive(Debug)]
pub struct Timers {
    origin: Instant,
    /// The next tick to process: every tick before it has fired.
    cursor: u64,
    slots: Vec<Vec<Entry>>,
    /// Bit `i` set ⇔ `slots[i]` is not empty.
    occupied: [u64; WORDS],
    /// Connection key → its entry and wanted tick.
    pos: Vec<Place>,
    /// Connections armed (wanting a tick).
    armed: usize,
    /// Entries in the wheel (armed, or disarmed and not yet dropped).
    entries: usize,
    /// The last `now` seen by [`Timers::arm`] and its nanoseconds since
    /// `origin` (see [`Timers::set_clock`]).
    last_now: (Instant, u64),
    /// The tick of the first occupied slot from the cursor (`Some(None)`:
    /// none), as [`Timers::next_deadline`] found it and inserts have kept
    /// it since; `None` when it must be scanned for again. The worker asks
    /// every loop turn, and a keep-alive timeout sits a thousand slots
    /// ahead: the scan is worth keeping.
    first: Option<Option<u64>>,
}

impl Place {
    fn default_disarmed() -> Place {
        Place {
            slot: NO_SLOT,
            idx: 0,
            sits: 0,
            want: NOT_ARMED,
        }
    }
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
            entries: 0,
            last_now: (origin, 0),
            first: None,
        }
    }

    /// The tick containing `t` (rounded down), through the clock that
    /// [`Timers::arm`] keeps: a loop turn that armed timers at `t` does not
    /// subtract `Instant`s again to expire them.
    fn tick_of(&mut self, t: Instant) -> u64 {
        if t != self.last_now.0 {
            self.set_clock(t);
        }
        self.last_now.1 / TICK_NANOS
    }

    fn mark(&mut self, slot: usize) {
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    fn unmark_if_empty(&mut self, slot: usize) {
        if self.slots[slot].is_empty() {
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            self.first = None;
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

    /// Arms (or re-arms) connection `key` for `now + d`. Inlined: a
    /// keep-alive connection re-arms on every response, and the common case
    /// (its entry already sits at or before the new tick) is a little
    /// integer work on the connection's own `Place`.
    #[inline]
    pub fn arm(&mut self, key: usize, now: Instant, d: Duration) {
        if now != self.last_now.0 {
            self.set_clock(now);
        }
        let at = self.last_now.1.saturating_add(duration_nanos(d));
        // Rounded up: never fire early.
        let due = (at / TICK_NANOS + 1).max(self.cursor);
        if let Some(p) = self.pos.get_mut(key) {
            if p.want == NOT_ARMED {
                self.armed += 1;
            }
            p.want = due;
            // An entry at or before the new tick will move on when it comes up.
            if p.slot != NO_SLOT && p.sits <= due {
                return;
            }
        }
        self.place(key, due);
    }

    /// Nanoseconds from the wheel's origin to `now`, through the clock
    /// [`Timers::arm`] keeps (one `Instant` subtraction a loop turn): a
    /// cheap monotonic stamp for the connections (`keepalive_time`).
    pub fn nanos(&mut self, now: Instant) -> u64 {
        if now != self.last_now.0 {
            self.set_clock(now);
        }
        self.last_now.1
    }

    /// The nanoseconds since `origin` of a new loop turn's `now`: every
    /// arm of one turn passes the same `now`, and the `Instant` subtraction
    /// is the dearest part of arming.
    #[inline(never)]
    fn set_clock(&mut self, now: Instant) {
        let since = now.saturating_duration_since(self.origin);
        self.last_now = (now, duration_nanos(since));
    }

    /// The slow part of [`Timers::arm`]: a key never seen, or an entry that
    /// must move to an earlier tick (or into the wheel).
    #[inline(never)]
    fn place(&mut self, key: usize, due: u64) {
        if self.pos.len() <= key {
            self.pos.resize(key + 1, Place::default_disarmed());
            self.pos[key].want = due;
            self.armed += 1;
        }
        self.unlink(key);
        self.insert(key, due);
    }

    /// Disarms connection `key`'s timer, if armed. Its entry, if any, is
    /// dropped when its tick comes up (or reused by the next arm).
    #[inline]
    pub fn disarm(&mut self, key: usize) {
        if let Some(p) = self.pos.get_mut(key)
            && p.want != NOT_ARMED
        {
            p.want = NOT_ARMED;
            self.armed -= 1;
        }
    }

    /// Puts `key`'s entry in the slot of `due`.
    fn insert(&mut self, key: usize, due: u64) {
        let slot = (due % SLOTS as u64) as usize;
        let list = &mut self.slots[slot];
        list.push(Entry { key, due });
        let idx = (list.len() - 1) as u32;
        let p = &mut self.pos[key];
        p.slot = slot as u32;
        p.idx = idx;
        p.sits = due;
        self.mark(slot);
        self.entries += 1;
        if let Some(first) = &mut self.first {
            // The tick at which the cursor reaches this slot (a later
            // revolution's entry counts there too, as in the scan).
            let t = self.cursor + due.saturating_sub(self.cursor) % SLOTS as u64;
            *first = Some(first.map_or(t, |f| f.min(t)));
        }
    }

    /// Takes `key`'s entry out of the wheel, if it is in.
    fn unlink(&mut self, key: usize) {
        let Some(p) = self.pos.get_mut(key).filter(|p| p.slot != NO_SLOT) else {
            return;
        };
        let (slot, idx) = (p.slot, p.idx);
        p.slot = NO_SLOT;
        let (slot, idx) = (slot as usize, idx as usize);
        let list = &mut self.slots[slot];
        if idx < list.len() {
            list.swap_remove(idx);
            if let Some(moved) = list.get(idx)
                && let Some(p) = self.pos.get_mut(moved.key)
            {
                p.idx = idx as u32;
            }
            self.unmark_if_empty(slot);
            self.entries -= 1;
        }
    }

    #[cfg(test)]
    pub fn is_armed(&self, key: usize) -> bool {
        self.pos.get(key).is_some_and(|p| p.want != NOT_ARMED)
    }

    /// When the worker should wake up next: the first tick with an entry
    /// (possibly one of a later revolution: waking early is harmless).
    pub fn next_deadline(&mut self) -> Option<Instant> {
        if self.armed == 0 {
            // Entries left by disarms wait for the next wake-up.
            return None;
        }
        let t = match self.first {
            Some(first) => first,
            None => {
                let start = (self.cursor % SLOTS as u64) as usize;
                let first = self.next_occupied(start).map(|d| self.cursor + d as u64);
                self.first = Some(first);
                first
            }
        }?;
        let nanos = t.saturating_mul(TICK_NANOS);
        Some(self.origin + Duration::from_nanos(nanos))
    }

    /// Disarms and appends to `due` every connection whose timer expired.
    /// A wheel with no entries returns at once: every loop turn expires
    /// the stream side's wheel too, empty without `stream { }`, and the
    /// clock (an `Instant` subtraction) is not worth reading for nothing.
    /// Inlined up to the tick test: most loop turns fall within the tick
    /// the last one passed (the cursor is ahead of `now`), and the call
    /// with its register saves cost each such turn some 35 instructions.
    #[inline]
    pub fn expire(&mut self, now: Instant, due: &mut Vec<usize>) {
        if self.entries == 0 {
            return;
        }
        let now_tick = self.tick_of(now);
        if self.cursor > now_tick {
            // Nothing due, and the walk below would change nothing.
            return;
        }
        self.expire_to(now_tick, due);
    }

    /// The walk of [`Timers::expire`] from the cursor to `now_tick`.
    #[inline(never)]
    fn expire_to(&mut self, now_tick: u64, due: &mut Vec<usize>) {
        while self.cursor <= now_tick && self.entries > 0 {
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
                if e.due > self.cursor {
                    i += 1;
                    continue;
                }
                // Removed by swap: index `i` now holds another entry.
                self.unlink(e.key);
                let want = self.pos[e.key].want;
                if want == NOT_ARMED {
                    // Disarmed since: dropped.
                } else if want > self.cursor {
                    // Re-armed for later since: moves there.
                    self.insert(e.key, want);
                } else {
                    self.pos[e.key].want = NOT_ARMED;
                    self.armed -= 1;
                    due.push(e.key);
                }
            }
            self.cursor += 1;
        }
        self.cursor = self.cursor.max(now_tick + 1);
        if self
            .first
            .is_some_and(|f| f.is_some_and(|t| t < self.cursor))
        {
            self.first = None;
        }
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

    /// Every entry's `Place` says where it is and what it is due at, and
    /// no other `Place` claims an entry.
    fn consistent(t: &Timers) -> bool {
        let listed = t.slots.iter().enumerate().all(|(slot, list)| {
            list.iter().enumerate().all(|(idx, e)| {
                let p = t.pos[e.key];
                (p.slot as usize, p.idx as usize, p.sits) == (slot, idx, e.due)
            })
        });
        let placed = t.pos.iter().filter(|p| p.slot != NO_SLOT).count();
        listed && placed == t.entries
    }

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

    /// The first occupied tick from the cursor on, by looking at every
    /// slot: the reference the bitmap and the kept first tick are checked
    /// against.
    fn first_occupied_by_scan(t: &Timers) -> Option<u64> {
        (0..SLOTS as u64)
            .map(|i| t.cursor + i)
            .find(|x| !t.slots[(x % SLOTS as u64) as usize].is_empty())
    }

    /// The occupancy bitmap agrees with a plain scan of the slots for
    /// arms and disarms spread over the whole wheel, wrap-around included.
    #[test]
    fn next_deadline_matches_a_full_scan() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        let scan = |t: &Timers| {
            first_occupied_by_scan(t).map(|x| t.origin + Duration::from_nanos(x * TICK_NANOS))
        };
        // Move the cursor into the middle of a word so wrap-around matters.
        t.expire(t0 + TICK * 3000 + TICK / 2, &mut Vec::new());
        let now = t0 + TICK * 3000;
        for k in 0..200usize {
            // Some of a later revolution (keys neither disarmed nor
            // re-armed below): they count at their slot, as the scan does.
            let ticks = if k % 30 == 5 {
                SLOTS + 3 + k % 7
            } else {
                k * 37 % (SLOTS - 2)
            };
            let d = TICK * (ticks as u32);
            t.arm(k, now, d);
            assert_eq!(t.next_deadline(), scan(&t), "after arming {k}");
            assert!(consistent(&t));
        }
        for k in (0..200usize).step_by(3) {
            t.disarm(k);
            assert_eq!(t.next_deadline(), scan(&t), "after disarming {k}");
            // Earlier again: the entry moves.
            t.arm(k + 1, now, TICK * ((k % 50) as u32));
            assert!(consistent(&t));
        }
        let mut out = Vec::new();
        for step in 1..300u32 {
            t.expire(now + TICK * (step * 17), &mut out);
            assert_eq!(t.next_deadline(), scan(&t), "after expiring to {step}");
            assert!(consistent(&t));
        }
        assert_eq!(t.armed, 0);
        assert_eq!(t.occupied, [0; WORDS]);
    }

    /// Random arms (some a revolution ahead), disarms and expiries: the
    /// kept first tick always agrees with a scan of the slots.
    #[test]
    fn kept_first_tick_agrees_with_a_scan() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        let scan = first_occupied_by_scan;
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut now = t0;
        let mut fired = Vec::new();
        for step in 0..20_000 {
            match rand(10) {
                0..=5 => {
                    let ticks = match rand(4) {
                        0 => SLOTS as u64 + rand(SLOTS as u64),
                        1 => rand(4),
                        _ => rand(1300),
                    };
                    t.arm(rand(64) as usize, now, TICK * ticks as u32);
                }
                6 | 7 => t.disarm(rand(64) as usize),
                _ => {
                    now += TICK * rand(200) as u32 + Duration::from_millis(rand(50));
                    t.expire(now, &mut fired);
                }
            }
            if t.armed > 0 {
                let want = scan(&t).map(|x| t.origin + Duration::from_nanos(x * TICK_NANOS));
                assert_eq!(t.next_deadline(), want, "step {step}");
            }
        }
    }

    /// Lazy re-arming: a busy connection's entry stays put while its
    /// deadline moves later, fires nothing early, and moves when its tick
    /// comes; an earlier deadline moves it at once; a disarmed entry is
    /// dropped without firing; a closed connection's key reused by a new
    /// one gets the new one's deadline.
    #[test]
    fn lazy_rearm_fires_at_the_last_deadline_only() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
        // Keep-alive: 65 s, re-armed every 10 ms for 2 s.
        for i in 0..200u32 {
            t.disarm(1);
            t.arm(1, t0 + Duration::from_millis(10) * i, 65 * S);
        }
        assert_eq!(t.entries, 1);
        let last = t0 + Duration::from_millis(1990) + 65 * S;
        assert!(
            fired(&mut t, t0 + 66 * S).is_empty(),
            "not at the first deadline"
        );
        assert!(fired(&mut t, last - TICK).is_empty());
        assert_eq!(fired(&mut t, last + 2 * TICK), vec![1]);
        // An earlier deadline (a 5 s header timeout after a 65 s one).
        t.arm(2, last, 65 * S);
        t.arm(2, last, 5 * S);
        assert_eq!(fired(&mut t, last + 5 * S + 2 * TICK), vec![2]);
        // Disarmed: dropped, nothing fires, nothing stays.
        t.arm(3, last, S);
        t.disarm(3);
        assert!(fired(&mut t, last + 10 * S).is_empty());
        assert_eq!((t.armed, t.entries), (0, 0));
        // A key reused after a close keeps no trace of the old deadline.
        let now = last + 10 * S;
        t.arm(4, now, 60 * S);
        t.disarm(4);
        t.arm(4, now, 2 * S);
        assert_eq!(fired(&mut t, now + 2 * S + 2 * TICK), vec![4]);
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn tick_math_matches_division() {
        let t0 = Instant::now();
        let mut t = Timers::new(t0);
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
