//! Streaming encoders with bounded memory, one per coding.
//!
//! Each encoder holds only its codec's state (for gzip at most zlib's
//! 256 KiB at the default window and memLevel, as nginx's own estimate in
//! ngx_http_gzip_filter_memory; for brotli its window, at most
//! `1 << brotli::DEFAULT_WBITS`; for zstd its level's window) and appends
//! output to the caller's buffer as it goes: the body never has to be held
//! whole.

use crate::CompressError;
use crate::brotli_enc::BrotliEncoder;
use crate::coding::Coding;
use crate::gzip::GzipEncoder;
use crate::zstd_enc::ZstdEncoder;

/// A streaming encoder for one response body.
pub struct Encoder {
    inner: Inner,
}

enum Inner {
    Gzip(GzipEncoder),
    // Boxed: brotli's state is several kilobytes inline.
    Brotli(Box<BrotliEncoder>),
    Zstd(ZstdEncoder),
}

impl Encoder {
    /// An encoder at `level` (`gzip_comp_level` 1..=9, `brotli_comp_level`
    /// 0..=11, `zstd_comp_level` zstd's range without 0), for a body of
    /// unknown length.
    pub fn new(coding: Coding, level: i32) -> Result<Encoder, CompressError> {
        Encoder::with_length_hint(coding, level, None)
    }

    /// As [`Encoder::new`], for a body whose length is known: gzip and
    /// brotli then size their window as nginx's modules do (smaller
    /// memory, and the same output as nginx).
    pub fn with_length_hint(
        coding: Coding,
        level: i32,
        content_length: Option<u64>,
    ) -> Result<Encoder, CompressError> {
        let inner = match coding {
            Coding::Gzip => Inner::Gzip(GzipEncoder::new(level, content_length)?),
            Coding::Brotli => Inner::Brotli(Box::new(BrotliEncoder::new(level, content_length)?)),
            Coding::Zstd => Inner::Zstd(ZstdEncoder::new(level)?),
        };
        Ok(Encoder { inner })
    }

    pub fn coding(&self) -> Coding {
        match self.inner {
            Inner::Gzip(_) => Coding::Gzip,
            Inner::Brotli(_) => Coding::Brotli,
            Inner::Zstd(_) => Coding::Zstd,
        }
    }

    /// Compresses `input`, appending whatever output is ready to `out`.
    pub fn write(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CompressError> {
        match &mut self.inner {
            Inner::Gzip(e) => e.write(input, out),
            Inner::Brotli(e) => e.write(input, out),
            Inner::Zstd(e) => e.write(input, out),
        }
    }

    /// Makes everything written so far decodable by the client (what nginx
    /// does on a buffer with the `flush` flag: Z_SYNC_FLUSH and its
    /// equivalents).
    pub fn flush(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        match &mut self.inner {
            Inner::Gzip(e) => e.flush(out),
            Inner::Brotli(e) => e.flush(out),
            Inner::Zstd(e) => e.flush(out),
        }
    }

    /// Ends the stream, appending the rest of the output (and gzip's
    /// trailer). Any further call fails with [`CompressError::Finished`].
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        match &mut self.inner {
            Inner::Gzip(e) => e.finish(out),
            Inner::Brotli(e) => e.finish(out),
            Inner::Zstd(e) => e.finish(out),
        }
    }
}

/// Compresses a whole body at once (for bodies kept compressed in memory).
/// The output is what the streaming encoder gives for a body of this known
/// length, which for gzip and brotli is also what nginx sends.
pub fn compress_all(coding: Coding, level: i32, input: &[u8]) -> Result<Vec<u8>, CompressError> {
    let mut e = Encoder::with_length_hint(coding, level, Some(input.len() as u64))?;
    let mut out = Vec::with_capacity(input.len() / 3 + 64);
    e.write(input, &mut out)?;
    e.finish(&mut out)?;
    Ok(out)
}

#[cfg(test)]
#[path = "encoder_tests.rs"]
mod tests;
