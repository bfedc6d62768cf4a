//! Per-worker pools of buffers.
//!
//! A connection borrows a read buffer when bytes arrive and gives it back
//! when nothing unparsed remains, so an idle keep-alive connection holds no
//! buffer (nginx frees its header buffer on keep-alive the same way). The
//! pool keeps a bounded number of spare buffers so steady state allocates
//! nothing and an idle worker does not hoard memory. (Exchanges are pooled
//! whole by their own module, `exchange::ExchangePool`.)

/// Capacity of a fresh read buffer: one `recv` of this much takes a typical
/// request head, or several pipelined ones, at once. Heads beyond it grow
/// the buffer up to the codec's large-header limits.
pub const READ_BUF_SIZE: usize = 4096;
/// Chunk read from a file per `pread` when `sendfile` is off (nginx's
/// `output_buffers` default is 2 × 32k).
pub const FILE_BUF_SIZE: usize = 32 * 1024;
/// Spare buffers (each kind) kept per worker; more are freed.
pub const POOL_MAX: usize = 256;
/// A returned buffer larger than this (grown for a huge head) is freed
/// rather than kept, so the pool's memory stays bounded.
const KEEP_MAX_CAPACITY: usize = 64 * 1024;

#[derive(Default)]
pub struct Pool {
    read: Vec<Vec<u8>>,
    file: Vec<Vec<u8>>,
}

fn take(list: &mut Vec<Vec<u8>>, cap: usize) -> Vec<u8> {
    list.pop().unwrap_or_else(|| Vec::with_capacity(cap))
}

fn give(list: &mut Vec<Vec<u8>>, mut b: Vec<u8>) {
    if list.len() < POOL_MAX && b.capacity() <= KEEP_MAX_CAPACITY {
        b.clear();
        list.push(b);
    }
}

impl Pool {
    /// A read buffer, fully initialised (its length is its size: the
    /// connection tracks the filled range itself, so `read` can fill it
    /// without re-zeroing per call).
    #[inline]
    pub fn read_buf(&mut self) -> Vec<u8> {
        self.read.pop().unwrap_or_else(|| vec![0; READ_BUF_SIZE])
    }
    /// Always inlined: every kept-alive response gives its buffer back
    /// (as a call it cost the plain request some 30 instructions).
    #[inline(always)]
    pub fn put_read_buf(&mut self, b: Vec<u8>) {
        if self.read.len() < POOL_MAX && b.len() <= KEEP_MAX_CAPACITY {
            self.read.push(b);
        }
    }
    pub fn file_buf(&mut self) -> Vec<u8> {
        take(&mut self.file, FILE_BUF_SIZE)
    }
    pub fn put_file_buf(&mut self, b: Vec<u8>) {
        give(&mut self.file, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_and_bounds() {
        let mut p = Pool::default();
        let b = p.read_buf();
        assert_eq!(b.len(), READ_BUF_SIZE);
        let ptr = b.as_ptr();
        p.put_read_buf(b);
        let b2 = p.read_buf();
        assert_eq!(b2.as_ptr(), ptr);
        p.put_read_buf(vec![0; KEEP_MAX_CAPACITY + 1]);
        assert!(p.read.is_empty(), "oversized buffers are dropped");
    }
}
