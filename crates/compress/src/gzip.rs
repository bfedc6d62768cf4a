//! gzip output as ngx_http_gzip_filter_module writes it.
//!
//! nginx runs zlib's raw deflate and frames it itself: a fixed 10-byte
//! header (no name, no mtime, XFL 0, OS 3 = Unix), then the deflate stream,
//! then CRC-32 and the input size modulo 2^32, both little-endian (RFC 1952
//! §2.3). For a body of known length it shrinks zlib's window and memLevel
//! (ngx_http_gzip_filter_memory) so small bodies cost less memory; memLevel
//! also sizes the deflate block buffer, so matching it matters for matching
//! nginx's output size.

use zlib_rs::{Deflate, DeflateConfig, DeflateFlush, Method, Status, Strategy};

use crate::CompressError;

/// The header nginx writes (`gzheader` in ngx_http_gzip_filter_module.c).
pub const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];

/// `gzip_window` default: 32 KiB (zlib's MAX_WBITS).
pub const DEFAULT_WBITS: u8 = 15;
/// `gzip_hash` default: 128 KiB (zlib's MAX_MEM_LEVEL - 1).
pub const DEFAULT_MEMLEVEL: u8 = 8;
/// zlib's usable window is this much smaller than `1 << wbits`
/// (MIN_LOOKAHEAD), which nginx accounts for when shrinking it.
const ZLIB_WINDOW_SLACK: u64 = 262;
/// Size of the encoder's scratch output buffer (one deflate call's room).
const OUT_CHUNK: usize = 16 * 1024;

/// `gzip_comp_level` bounds.
pub const MIN_LEVEL: i32 = 1;
pub const MAX_LEVEL: i32 = 9;

/// ngx_http_gzip_filter_memory: window bits and memLevel for a body of
/// `content_length` bytes (unknown or empty: the defaults). Each halving of
/// the window also halves the hash table.
pub fn nginx_memory(content_length: Option<u64>) -> (u8, u8) {
    let (mut wbits, mut memlevel) = (DEFAULT_WBITS, DEFAULT_MEMLEVEL);
    if let Some(len) = content_length.filter(|&l| l > 0) {
        // Stops at 9 at the latest: (1 << 8) - 262 is negative.
        while wbits > 9 && len + ZLIB_WINDOW_SLACK < (1u64 << (wbits - 1)) {
            wbits -= 1;
            memlevel = memlevel.saturating_sub(1);
        }
        memlevel = memlevel.max(1);
    }
    (wbits, memlevel)
}

/// The zlib-rs level giving zlib's (and so nginx's) output for `level`.
///
/// zlib-rs follows zlib-ng, whose level 1 is "deflate_quick" (static Huffman
/// codes only, several percent larger than zlib's level 1) and whose level 2
/// uses the match parameters of zlib's level 1. Other levels keep their
/// number.
fn zlib_rs_level(level: i32) -> i32 {
    if level == 1 { 2 } else { level }
}

/// A streaming gzip encoder.
pub struct GzipEncoder {
    deflate: Deflate,
    /// Deflate writes here, then the bytes are appended to the caller's
    /// buffer: no zeroing of fresh output room on every call.
    scratch: Box<[u8]>,
    crc: u32,
    size: u32,
    header_done: bool,
    finished: bool,
}

impl GzipEncoder {
    /// `level` is `gzip_comp_level` (1..=9).
    pub fn new(level: i32, content_length: Option<u64>) -> Result<GzipEncoder, CompressError> {
        if !(MIN_LEVEL..=MAX_LEVEL).contains(&level) {
            return Err(CompressError::Level {
                coding: "gzip",
                level,
                min: MIN_LEVEL,
                max: MAX_LEVEL,
            });
        }
        let (wbits, memlevel) = nginx_memory(content_length);
        let config = DeflateConfig {
            level: zlib_rs_level(level),
            method: Method::Deflated,
            // Negative: a raw deflate stream; the gzip framing is ours.
            window_bits: -i32::from(wbits),
            mem_level: i32::from(memlevel),
            strategy: Strategy::Default,
        };
        Ok(GzipEncoder {
            deflate: Deflate::new_with_config(config),
            scratch: vec![0; OUT_CHUNK].into_boxed_slice(),
            crc: 0,
            size: 0,
            header_done: false,
            finished: false,
        })
    }

    fn header(&mut self, out: &mut Vec<u8>) {
        if !self.header_done {
            out.extend_from_slice(&GZIP_HEADER);
            self.header_done = true;
        }
    }

    pub fn write(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CompressError> {
        if self.finished {
            return Err(CompressError::Finished);
        }
        self.header(out);
        self.crc = zlib_rs::crc32::crc32(self.crc, input);
        // RFC 1952 ISIZE is the length modulo 2^32.
        self.size = self.size.wrapping_add(input.len() as u32);
        self.run(input, out, DeflateFlush::NoFlush).map(|_| ())
    }

    /// Z_SYNC_FLUSH: everything written so far becomes decodable.
    pub fn flush(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        if self.finished {
            return Err(CompressError::Finished);
        }
        self.header(out);
        self.run(&[], out, DeflateFlush::SyncFlush).map(|_| ())
    }

    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        if self.finished {
            return Err(CompressError::Finished);
        }
        self.header(out);
        self.run(&[], out, DeflateFlush::Finish)?;
        out.extend_from_slice(&self.crc.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        self.finished = true;
        Ok(())
    }

    /// Feeds `input` with `flush`, growing `out` until zlib has consumed
    /// all input and has no more output pending (or the stream ended).
    fn run(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        flush: DeflateFlush,
    ) -> Result<Status, CompressError> {
        let mut consumed = 0;
        loop {
            let (in0, out0) = (self.deflate.total_in(), self.deflate.total_out());
            let status = self
                .deflate
                .compress(&input[consumed..], &mut self.scratch, flush)
                .map_err(|e| CompressError::Deflate(e.as_str()))?;
            let produced = (self.deflate.total_out() - out0) as usize;
            consumed += (self.deflate.total_in() - in0) as usize;
            out.extend_from_slice(&self.scratch[..produced]);
            let done = match flush {
                DeflateFlush::Finish => status == Status::StreamEnd,
                // Output room left over means zlib had nothing more to say.
                _ => consumed == input.len() && produced < OUT_CHUNK,
            };
            if done {
                return Ok(status);
            }
            if produced == 0 && status == Status::BufError && consumed == input.len() {
                return Ok(status);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_matches_nginx_formula() {
        assert_eq!(nginx_memory(None), (15, 8));
        assert_eq!(nginx_memory(Some(0)), (15, 8));
        assert_eq!(nginx_memory(Some(1)), (9, 2));
        assert_eq!(nginx_memory(Some(300)), (10, 3));
        // 5000 < 8192 - 262 but not < 4096 - 262.
        assert_eq!(nginx_memory(Some(5000)), (13, 6));
        // The window halves while the body fits the smaller one with zlib's
        // 262 bytes of lookahead to spare.
        assert_eq!(nginx_memory(Some(16_384 - 262)), (15, 8));
        assert_eq!(nginx_memory(Some(16_384 - 262 - 1)), (14, 7));
        assert_eq!(nginx_memory(Some(123_000)), (15, 8));
    }

    #[test]
    fn header_and_trailer() {
        let mut e = GzipEncoder::new(6, None).unwrap();
        let mut out = Vec::new();
        e.write(b"hello hello hello", &mut out).unwrap();
        e.finish(&mut out).unwrap();
        assert_eq!(&out[..10], &GZIP_HEADER);
        let n = out.len();
        assert_eq!(&out[n - 4..], &17u32.to_le_bytes());
        assert_eq!(
            &out[n - 8..n - 4],
            &zlib_rs::crc32::crc32(0, b"hello hello hello").to_le_bytes()
        );
        assert!(matches!(e.finish(&mut out), Err(CompressError::Finished)));
        assert!(matches!(
            e.write(b"x", &mut out),
            Err(CompressError::Finished)
        ));
    }

    #[test]
    fn levels_out_of_range() {
        for level in [0, 10, -1] {
            assert!(matches!(
                GzipEncoder::new(level, None),
                Err(CompressError::Level { .. })
            ));
        }
    }
}
