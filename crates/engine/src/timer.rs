//! Per-worker connection timeouts at O(1) cost per operation.
//!
//! Each timeout length in use (client_header_timeout, keepalive_timeout,
//! send_timeout, ... — a handful of distinct values) has its own FIFO queue:
//! deadlines pushed into one queue are `now + d` with a non-decreasing
//! `now`, so each queue is sorted by construction and the earliest deadline
//! of the worker is the minimum of the queue fronts. Re-arming does not
//! search: the connection bumps its timer generation and pushes a new entry;
//! stale entries are skipped when they reach the front.
//!
//! Like nginx (`NGX_TIMER_LAZY_DELAY`, 300 ms), a re-arm within
//! [`LAZY_DELAY`] of the armed deadline keeps the armed entry, so a busy
//! connection does not push an entry per write; a timeout may then fire up
//! to that much early, as it may in nginx.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// nginx's `NGX_TIMER_LAZY_DELAY`.
pub const LAZY_DELAY: Duration = Duration::from_millis(300);

/// A connection's armed timer: which entry is live.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimerState {
    /// The armed deadline, if any.
    pub deadline: Option<Instant>,
    /// Generation of the live entry; older entries are stale.
    pub generation: u32,
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    key: usize,
    generation: u32,
}

#[derive(Debug, Default)]
pub struct Timers {
    queues: Vec<(Duration, VecDeque<Entry>)>,
    /// Worker-wide generation counter: connection slots are reused, so a
    /// stale entry of a closed connection must not match its successor.
    next_generation: u32,
}

impl Timers {
    /// Arms (or re-arms) `state` for `now + d`, for connection `key`.
    pub fn arm(&mut self, state: &mut TimerState, key: usize, now: Instant, d: Duration) {
        let at = now + d;
        if let Some(cur) = state.deadline
            && cur <= at
            && at - cur < LAZY_DELAY
        {
            return;
        }
        self.next_generation = self.next_generation.wrapping_add(1);
        state.generation = self.next_generation;
        state.deadline = Some(at);
        let q = match self.queues.iter().position(|(qd, _)| *qd == d) {
            Some(i) => &mut self.queues[i].1,
            None => {
                self.queues.push((d, VecDeque::new()));
                let last = self.queues.len() - 1;
                &mut self.queues[last].1
            }
        };
        q.push_back(Entry {
            at,
            key,
            generation: state.generation,
        });
    }

    /// Disarms: the queued entry becomes stale.
    pub fn disarm(state: &mut TimerState) {
        state.deadline = None;
    }

    /// The earliest queued deadline (possibly stale: waking early is harmless).
    pub fn next_deadline(&self) -> Option<Instant> {
        self.queues
            .iter()
            .filter_map(|(_, q)| q.front().map(|e| e.at))
            .min()
    }

    /// Pops every entry due at `now`, calling `fire(key, generation)`; the
    /// caller checks the generation against the connection's [`TimerState`]
    /// (and disarms it) to tell live entries from stale ones.
    pub fn expire(&mut self, now: Instant, mut fire: impl FnMut(usize, u32)) {
        for (_, q) in &mut self.queues {
            while let Some(e) = q.front() {
                if e.at > now {
                    break;
                }
                let (key, generation) = (e.key, e.generation);
                q.pop_front();
                fire(key, generation);
            }
        }
    }

    /// Whether the entry `(generation)` is the live one of `state`; if so the
    /// timer is consumed.
    pub fn take_if_live(state: &mut TimerState, generation: u32) -> bool {
        if state.deadline.is_some() && state.generation == generation {
            state.deadline = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(t: &mut Timers, states: &mut [TimerState], now: Instant) -> Vec<usize> {
        let mut out = Vec::new();
        t.expire(now, |k, g| {
            if Timers::take_if_live(&mut states[k], g) {
                out.push(k);
            }
        });
        out.sort();
        out
    }

    #[test]
    fn fires_in_deadline_order_across_lengths() {
        let mut t = Timers::default();
        let mut s = [TimerState::default(); 3];
        let t0 = Instant::now();
        t.arm(&mut s[0], 0, t0, Duration::from_secs(10));
        t.arm(&mut s[1], 1, t0, Duration::from_secs(2));
        t.arm(
            &mut s[2],
            2,
            t0 + Duration::from_secs(1),
            Duration::from_secs(10),
        );
        assert_eq!(t.next_deadline(), Some(t0 + Duration::from_secs(2)));
        assert!(fired(&mut t, &mut s, t0 + Duration::from_secs(1)).is_empty());
        assert_eq!(fired(&mut t, &mut s, t0 + Duration::from_secs(2)), vec![1]);
        assert_eq!(fired(&mut t, &mut s, t0 + Duration::from_secs(10)), vec![0]);
        assert_eq!(fired(&mut t, &mut s, t0 + Duration::from_secs(11)), vec![2]);
        assert_eq!(t.next_deadline(), None);
    }

    #[test]
    fn rearm_and_disarm_make_entries_stale() {
        let mut t = Timers::default();
        let mut s = [TimerState::default(); 2];
        let t0 = Instant::now();
        t.arm(&mut s[0], 0, t0, Duration::from_secs(5));
        t.arm(
            &mut s[0],
            0,
            t0 + Duration::from_secs(3),
            Duration::from_secs(5),
        );
        t.arm(&mut s[1], 1, t0, Duration::from_secs(5));
        Timers::disarm(&mut s[1]);
        assert!(fired(&mut t, &mut s, t0 + Duration::from_secs(5)).is_empty());
        assert_eq!(fired(&mut t, &mut s, t0 + Duration::from_secs(8)), vec![0]);
    }

    #[test]
    fn lazy_rearm_keeps_entry_within_delay() {
        let mut t = Timers::default();
        let mut s = [TimerState::default(); 1];
        let t0 = Instant::now();
        t.arm(&mut s[0], 0, t0, Duration::from_secs(5));
        let g = s[0].generation;
        t.arm(
            &mut s[0],
            0,
            t0 + Duration::from_millis(100),
            Duration::from_secs(5),
        );
        assert_eq!(s[0].generation, g);
        assert_eq!(t.queues[0].1.len(), 1);
        // A shorter timeout is never deferred.
        t.arm(
            &mut s[0],
            0,
            t0 + Duration::from_millis(100),
            Duration::from_secs(1),
        );
        assert_ne!(s[0].generation, g);
        assert_eq!(
            fired(&mut t, &mut s, t0 + Duration::from_millis(1100)),
            vec![0]
        );
    }
}
