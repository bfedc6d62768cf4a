//! Replays nginx's header-buffer allocation to decide 414 / 494 exactly
//! where nginx would.
//!
//! nginx reads a head into a `client_header_buffer_size` buffer. When that
//! fills while a line is incomplete, it moves the partial line into a fresh
//! `large_client_header_buffers` buffer (`ngx_http_alloc_large_header_buffer`),
//! refusing when the partial line already fills `size` bytes or when all
//! `count` buffers are in use. Which buffer a byte lands in depends only on
//! line boundaries, so the engine's own buffering does not matter: we replay
//! the allocations over the line positions.

use super::Limits;
use crate::{HttpError, HttpErrorKind};

pub(crate) struct BufferSim {
    /// End (exclusive) of the buffer the current line is being read into.
    end: usize,
    /// `client_header_buffer_size`.
    first: usize,
    used: usize,
    count: usize,
    size: usize,
}

impl BufferSim {
    /// `start` is where the head starts in the caller's buffer.
    pub fn new(limits: &Limits, start: usize) -> Self {
        BufferSim {
            end: start.saturating_add(limits.header_buffer_size.max(1)),
            first: limits.header_buffer_size.max(1),
            used: 0,
            count: limits.large_header_buffers.0,
            size: limits.large_header_buffers.1,
        }
    }

    /// End of the buffer the current line is being read into: a line that
    /// ends by it is within reach, and committing it changes nothing.
    pub fn buffer_end(&self) -> usize {
        self.end
    }

    /// Index a line starting at `start` may extend to: the line (through its
    /// LF) must end at or before it, and an incomplete line fails once this
    /// many bytes have arrived.
    pub fn reach(&self, start: usize) -> usize {
        let can_alloc = self.used < self.count;
        if start >= self.end {
            // The previous line ended exactly at the buffer end: nginx takes
            // a fresh buffer without any length check.
            if can_alloc {
                start.saturating_add(self.size)
            } else {
                start
            }
        } else if can_alloc && self.end - start < self.size {
            start.saturating_add(self.size)
        } else {
            self.end
        }
    }

    /// Accounts for empty lines skipped before the request line, up to
    /// `to`. nginx rewinds a buffer that fills with nothing but CRLFs
    /// ("the client fills up the buffer with \r\n" in
    /// `ngx_http_alloc_large_header_buffer`), so they cost no buffers and are
    /// unlimited; only the request line's offset in the buffer matters.
    pub fn skip_empty(&mut self, to: usize) {
        while self.end <= to {
            self.end = self.end.saturating_add(self.first);
        }
    }

    /// Records that a line `start..end` was accepted (`end <= reach(start)`).
    pub fn commit(&mut self, start: usize, end: usize) {
        if end > self.end {
            self.used += 1;
            self.end = start.saturating_add(self.size);
        }
    }

    /// The error nginx gives when a line outgrows its reach.
    pub fn error(request_line: bool) -> HttpError {
        if request_line {
            HttpError::new(414, HttpErrorKind::UriTooLong)
        } else {
            HttpError::new(494, HttpErrorKind::HeaderTooLarge)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim() -> BufferSim {
        let l = Limits {
            header_buffer_size: 10,
            large_header_buffers: (2, 20),
            ..Limits::default()
        };
        BufferSim::new(&l, 0)
    }

    #[test]
    fn fits_first_buffer() {
        let s = sim();
        assert_eq!(s.reach(0), 20);
        assert_eq!(s.reach(5), 25);
    }

    #[test]
    fn no_move_when_partial_fills_a_large_buffer() {
        let l = Limits {
            header_buffer_size: 30,
            large_header_buffers: (2, 20),
            ..Limits::default()
        };
        let s = BufferSim::new(&l, 0);
        // 25 bytes already in the first buffer: nginx refuses to move them.
        assert_eq!(s.reach(5), 30);
        assert_eq!(s.reach(15), 35);
    }

    #[test]
    fn count_exhausted() {
        let mut s = sim();
        s.commit(0, 8);
        assert_eq!(s.reach(8), 28);
        s.commit(8, 26);
        assert_eq!(s.reach(26), 46);
        s.commit(26, 40);
        // Both large buffers used: the next line must end inside 26..46.
        assert_eq!(s.reach(40), 46);
        assert_eq!(BufferSim::error(false).status, 494);
        assert_eq!(BufferSim::error(true).status, 414);
    }

    #[test]
    fn line_ending_at_buffer_end() {
        let mut s = sim();
        s.commit(0, 10);
        assert_eq!(s.reach(10), 30);
        s.commit(10, 30);
        s.commit(30, 50);
        assert_eq!(s.reach(50), 50);
    }
}
