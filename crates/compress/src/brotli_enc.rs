//! Brotli output as ngx_brotli's filter produces it: quality
//! `brotli_comp_level`, window `brotli_window` (default 512 KiB) shrunk to
//! the smallest power of two holding a body of known length (but see
//! [`FAST_HASHER_MIN_WBITS`]).

use brotli::enc::StandardAlloc;
use brotli::enc::encode::{
    BrotliEncoderOperation, BrotliEncoderParameter, BrotliEncoderStateStruct,
};
use brotli::enc::interface::{PredictionModeContextMap, StaticCommand};
use brotli::{InputPair, InputReferenceMut};

use crate::CompressError;

/// `brotli_comp_level` bounds (BROTLI_MIN_QUALITY, BROTLI_MAX_QUALITY).
pub const MIN_LEVEL: i32 = 0;
pub const MAX_LEVEL: i32 = 11;
/// BROTLI_MIN_WINDOW_BITS.
pub const MIN_WBITS: u32 = 10;
/// ngx_brotli's `brotli_window` default, 512k.
pub const DEFAULT_WBITS: u32 = 19;
/// The smallest window used at qualities 5..=8. With a window of 64 KiB
/// or less brotli switches those qualities to its "forgetful chain" hashers
/// (H40-H42), which in the brotli crate cost ten times as much CPU (a 20 KB
/// page at quality 6: 37 ms against 3.4 ms, measured under load) for the
/// same output size (5,590 bytes either way). ngx_brotli would shrink the
/// window below this for small bodies; Peregrine does not, for those
/// qualities.
const FAST_HASHER_MIN_WBITS: u32 = 17;
/// Size of the encoder's scratch output buffer.
const OUT_CHUNK: usize = 16 * 1024;

/// ngx_brotli's window for a body of `content_length` bytes.
pub fn window_bits(content_length: Option<u64>) -> u32 {
    match content_length.filter(|&l| l > 0) {
        None => DEFAULT_WBITS,
        Some(len) => {
            let mut wbits = MIN_WBITS;
            while wbits < DEFAULT_WBITS && len > (1u64 << wbits) {
                wbits += 1;
            }
            wbits
        }
    }
}

/// The window actually used: ngx_brotli's, kept at
/// [`FAST_HASHER_MIN_WBITS`] or more for qualities 5..=8.
fn encoder_window_bits(level: i32, content_length: Option<u64>) -> u32 {
    let wbits = window_bits(content_length);
    if (5..=8).contains(&level) {
        wbits.max(FAST_HASHER_MIN_WBITS)
    } else {
        wbits
    }
}

pub struct BrotliEncoder {
    state: BrotliEncoderStateStruct<StandardAlloc>,
    /// The encoder writes here, then the bytes are appended to the
    /// caller's buffer.
    scratch: Box<[u8]>,
    finished: bool,
}

impl BrotliEncoder {
    pub fn new(level: i32, content_length: Option<u64>) -> Result<BrotliEncoder, CompressError> {
        if !(MIN_LEVEL..=MAX_LEVEL).contains(&level) {
            return Err(CompressError::Level {
                coding: "br",
                level,
                min: MIN_LEVEL,
                max: MAX_LEVEL,
            });
        }
        // In 0..=11 after the check above.
        let quality = level.unsigned_abs();
        let lgwin = encoder_window_bits(level, content_length);
        let mut state = BrotliEncoderStateStruct::new(StandardAlloc::default());
        let ok = state.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_QUALITY, quality)
            && state.set_parameter(BrotliEncoderParameter::BROTLI_PARAM_LGWIN, lgwin);
        if !ok {
            return Err(CompressError::Brotli);
        }
        Ok(BrotliEncoder {
            state,
            scratch: vec![0; OUT_CHUNK].into_boxed_slice(),
            finished: false,
        })
    }

    pub fn write(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CompressError> {
        self.run(input, out, BrotliEncoderOperation::BROTLI_OPERATION_PROCESS)
    }

    pub fn flush(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        self.run(&[], out, BrotliEncoderOperation::BROTLI_OPERATION_FLUSH)
    }

    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        self.run(&[], out, BrotliEncoderOperation::BROTLI_OPERATION_FINISH)?;
        self.finished = true;
        Ok(())
    }

    /// Feeds all of `input` with `op` and collects everything the encoder
    /// has to say (for FINISH: until the stream is finished).
    fn run(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        op: BrotliEncoderOperation,
    ) -> Result<(), CompressError> {
        if self.finished {
            return Err(CompressError::Finished);
        }
        let mut callback = |_: &mut PredictionModeContextMap<InputReferenceMut>,
                            _: &mut [StaticCommand],
                            _: InputPair,
                            _: &mut StandardAlloc| ();
        let mut in_offset = 0;
        loop {
            let mut avail_in = input.len() - in_offset;
            let mut avail_out = OUT_CHUNK;
            let mut out_offset = 0;
            let ok = self.state.compress_stream(
                op,
                &mut avail_in,
                input,
                &mut in_offset,
                &mut avail_out,
                &mut self.scratch,
                &mut out_offset,
                &mut None,
                &mut callback,
            );
            out.extend_from_slice(&self.scratch[..out_offset]);
            if !ok {
                return Err(CompressError::Brotli);
            }
            let drained = avail_in == 0 && !self.state.has_more_output();
            let done = match op {
                BrotliEncoderOperation::BROTLI_OPERATION_FINISH => self.state.is_finished(),
                _ => drained,
            };
            if done {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_follows_ngx_brotli() {
        assert_eq!(window_bits(None), 19);
        assert_eq!(window_bits(Some(0)), 19);
        assert_eq!(window_bits(Some(1)), 10);
        assert_eq!(window_bits(Some(1024)), 10);
        assert_eq!(window_bits(Some(1025)), 11);
        assert_eq!(window_bits(Some(123_000)), 17);
        assert_eq!(window_bits(Some(10_000_000)), 19);
    }

    #[test]
    fn middle_qualities_keep_a_large_window() {
        assert_eq!(encoder_window_bits(6, Some(1000)), 17);
        assert_eq!(encoder_window_bits(8, Some(1 << 18)), 18);
        assert_eq!(encoder_window_bits(5, None), 19);
        assert_eq!(encoder_window_bits(4, Some(1000)), 10);
        assert_eq!(encoder_window_bits(9, Some(1000)), 10);
        assert_eq!(encoder_window_bits(1, Some(5000)), 13);
    }

    #[test]
    fn levels_out_of_range() {
        for level in [-1, 12, i32::MIN] {
            assert!(matches!(
                BrotliEncoder::new(level, None),
                Err(CompressError::Level { .. })
            ));
        }
        assert!(BrotliEncoder::new(0, None).is_ok());
        assert!(BrotliEncoder::new(11, Some(5)).is_ok());
    }
}
