//! Flow-control windows (RFC 9113 §5.2, §6.9). A send window may go
//! negative when the peer lowers SETTINGS_INITIAL_WINDOW_SIZE (§6.9.2), so
//! it is kept signed; no window may exceed 2^31 - 1.

use crate::limits::MAX_WINDOW;

/// What we may still send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendWindow(i64);

/// The window would pass 2^31 - 1: FLOW_CONTROL_ERROR (§6.9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

impl SendWindow {
    pub fn new(initial: u32) -> SendWindow {
        SendWindow(i64::from(initial))
    }

    /// Bytes that may be sent now (0 when the window is zero or below).
    pub fn available(&self) -> usize {
        self.0.max(0) as usize
    }

    /// Takes `n` bytes out; `n` was at most [`SendWindow::available`].
    pub fn consume(&mut self, n: usize) {
        self.0 -= n as i64;
    }

    /// Applies a WINDOW_UPDATE increment or an initial-size change.
    pub fn adjust(&mut self, delta: i64) -> Result<(), Overflow> {
        let w = self.0 + delta;
        if w > i64::from(MAX_WINDOW) {
            return Err(Overflow);
        }
        self.0 = w;
        Ok(())
    }
}

/// What the peer may still send, and the credit the engine has given back
/// but we have not announced yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvWindow {
    window: u32,
    released: u32,
    /// The window we keep topping up to.
    target: u32,
}

impl RecvWindow {
    pub fn new(initial: u32) -> RecvWindow {
        RecvWindow {
            window: initial,
            released: 0,
            target: initial,
        }
    }

    /// Accounts `n` received bytes (the whole DATA payload, padding
    /// included, §6.9.1). More than the window is FLOW_CONTROL_ERROR.
    pub fn receive(&mut self, n: u32) -> Result<(), Overflow> {
        self.window = self.window.checked_sub(n).ok_or(Overflow)?;
        Ok(())
    }

    /// Gives `n` consumed bytes back. Returns the WINDOW_UPDATE increment
    /// to send once the credit reaches half of the target (fewer, larger
    /// updates; nginx waits for a quarter of its 2^31 - 1 connection window).
    pub fn release(&mut self, n: u32) -> Option<u32> {
        self.released = self.released.saturating_add(n);
        let room = self.target.saturating_sub(self.window);
        self.released = self.released.min(room);
        if self.released == 0 || self.released < self.target / 2 {
            return None;
        }
        let inc = std::mem::take(&mut self.released);
        self.window += inc;
        Some(inc)
    }

    /// Opens the window up to `target` (no smaller than it was): the
    /// WINDOW_UPDATE increment to send, if any. The credit released and
    /// not yet announced is covered by it.
    pub fn grow(&mut self, target: u32) -> Option<u32> {
        let target = target.min(MAX_WINDOW);
        if target <= self.target {
            return None;
        }
        self.target = target;
        self.released = 0;
        let inc = target - self.window;
        self.window = target;
        (inc > 0).then_some(inc)
    }

    /// What the peer may still send.
    pub fn remaining(&self) -> u32 {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_window_goes_negative_and_overflow_is_caught() {
        let mut w = SendWindow::new(100);
        w.consume(100);
        assert_eq!(w.available(), 0);
        w.adjust(-50).unwrap();
        assert_eq!(w.available(), 0);
        w.adjust(60).unwrap();
        assert_eq!(w.available(), 10);
        assert_eq!(w.adjust(i64::from(MAX_WINDOW)), Err(Overflow));
        assert!(SendWindow::new(MAX_WINDOW).adjust(1).is_err());
        assert!(SendWindow::new(MAX_WINDOW - 1).adjust(1).is_ok());
    }

    #[test]
    fn recv_window_checks_and_batches_updates() {
        let mut w = RecvWindow::new(1000);
        w.receive(600).unwrap();
        assert_eq!(w.receive(401), Err(Overflow));
        assert_eq!(w.release(100), None);
        assert_eq!(w.release(400), Some(500));
        assert_eq!(w.remaining(), 900);
        // Credit beyond what was received is not announced.
        assert_eq!(w.release(5000), None);
        w.receive(900).unwrap();
        assert_eq!(w.release(900), Some(1000));
    }

    #[test]
    fn recv_window_grows_once_to_its_new_target() {
        let mut w = RecvWindow::new(10);
        w.receive(4).unwrap();
        assert_eq!(w.grow(5), None);
        assert_eq!(w.grow(100), Some(94));
        assert_eq!(w.remaining(), 100);
        assert_eq!(w.grow(u32::MAX), Some(MAX_WINDOW - 100));
        assert_eq!(w.grow(u32::MAX), None);
    }
}
