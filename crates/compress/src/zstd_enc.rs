//! zstd output as zstd-nginx-module's filter produces it: one frame at
//! `zstd_comp_level` (default 1), no dictionary, no pledged size (the module
//! streams without telling zstd the length).

use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};

use crate::CompressError;

/// Output room reserved in the caller's buffer per encoder call.
const OUT_CHUNK: usize = 16 * 1024;

pub struct ZstdEncoder {
    inner: Encoder<'static>,
    finished: bool,
}

/// The levels zstd-nginx-module accepts: zstd's range without 0 (which
/// zstd reads as "default").
pub fn level_ok(level: i32) -> bool {
    level != 0 && zstd::compression_level_range().contains(&level)
}

impl ZstdEncoder {
    pub fn new(level: i32) -> Result<ZstdEncoder, CompressError> {
        if !level_ok(level) {
            let range = zstd::compression_level_range();
            return Err(CompressError::Level {
                coding: "zstd",
                level,
                min: *range.start(),
                max: *range.end(),
            });
        }
        let inner = Encoder::new(level).map_err(|e| CompressError::Zstd(e.to_string()))?;
        Ok(ZstdEncoder {
            inner,
            finished: false,
        })
    }

    pub fn write(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CompressError> {
        if self.finished {
            return Err(CompressError::Finished);
        }
        let mut src = InBuffer::around(input);
        loop {
            let start = out.len();
            out.reserve(OUT_CHUNK);
            // zstd writes into the spare capacity and extends the length.
            let mut dst = OutBuffer::around_pos(out, start);
            let r = self.inner.run(&mut src, &mut dst);
            let produced = dst.pos() - start;
            r.map_err(|e| CompressError::Zstd(e.to_string()))?;
            // A full output chunk may mean more is waiting.
            if src.pos() == input.len() && produced < out.capacity() - start {
                return Ok(());
            }
        }
    }

    pub fn flush(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        self.drain(out, false)
    }

    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        self.drain(out, true)?;
        self.finished = true;
        Ok(())
    }

    /// ZSTD_e_flush or ZSTD_e_end until zstd reports nothing left.
    fn drain(&mut self, out: &mut Vec<u8>, end: bool) -> Result<(), CompressError> {
        if self.finished {
            return Err(CompressError::Finished);
        }
        loop {
            let start = out.len();
            out.reserve(OUT_CHUNK);
            let mut dst = OutBuffer::around_pos(out, start);
            let r = if end {
                self.inner.finish(&mut dst, false)
            } else {
                self.inner.flush(&mut dst)
            };
            let remaining = r.map_err(|e| CompressError::Zstd(e.to_string()))?;
            if remaining == 0 {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert!(level_ok(1) && level_ok(19) && level_ok(22) && level_ok(-5));
        assert!(!level_ok(0) && !level_ok(23));
        assert!(matches!(
            ZstdEncoder::new(0),
            Err(CompressError::Level { .. })
        ));
        assert!(matches!(
            ZstdEncoder::new(99),
            Err(CompressError::Level { .. })
        ));
    }
}
