//! HPACK's Huffman code (RFC 7541 §5.2, Appendix B). The encoder codes a
//! response's string when that makes it shorter, as nginx's
//! `ngx_http_v2_string_encode` does (h2_headers.t checks it); strings of
//! rare characters, which coding makes longer, go as they are.
//!
//! The code is canonical (the codes of one length are consecutive and
//! longer codes follow shorter ones), so a decoder needs, per length, the
//! first code and how many codes have it; a test checks that property of
//! the table. Decoding goes bit by bit: request heads are short and the
//! step is a few comparisons.

/// (code, length in bits) of symbols 0..=255 and EOS (256), Appendix B.
const CODES: [(u32, u8); 257] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    (0x3fffffff, 30),
];

const EOS: u16 = 256;
const MAX_LEN: usize = 30;

/// Per length: the first code, the number of codes, and where their
/// symbols start in [`Table::syms`].
struct Table {
    first: [u32; MAX_LEN + 1],
    count: [u32; MAX_LEN + 1],
    start: [u16; MAX_LEN + 1],
    syms: [u16; 257],
}

const fn build() -> Table {
    let mut t = Table {
        first: [0; MAX_LEN + 1],
        count: [0; MAX_LEN + 1],
        start: [0; MAX_LEN + 1],
        syms: [0; 257],
    };
    let mut n = 0;
    let mut len = 1;
    while len <= MAX_LEN {
        t.start[len] = n as u16;
        // Symbols of this length in code order (within a length the
        // codes rise with the symbol, Appendix B).
        let mut s = 0;
        while s < 257 {
            if CODES[s].1 as usize == len {
                if t.count[len] == 0 {
                    t.first[len] = CODES[s].0;
                }
                t.count[len] += 1;
                t.syms[n] = s as u16;
                n += 1;
            }
            s += 1;
        }
        len += 1;
    }
    t
}

static TABLE: Table = build();

/// Why a Huffman string could not be decoded (a COMPRESSION_ERROR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadHuffman;

/// The padding RFC 7541 §5.2 allows after the last symbol: at most 7 bits,
/// all 1 (the start of EOS); longer is a decoding error (h2spec hpack 5.2/1).
const MAX_PADDING: usize = 7;

/// The one longer padding taken: a whole byte of ones after a code that
/// ends on a byte boundary. nginx's test client (Test::Nginx::HTTP2's
/// `huff`) always appends padding, 8 bits in that case, and nginx's
/// decoder takes it; 9 to 15 bits (a code ending mid-byte and a further
/// 0xff, as h2spec sends) stay an error.
const BYTE_ALIGNED_PADDING: usize = 8;

/// Appends the decoded `src` to `out`.
pub fn decode(src: &[u8], out: &mut Vec<u8>) -> Result<(), BadHuffman> {
    let t = &TABLE;
    let (mut acc, mut len) = (0u32, 0usize);
    for &byte in src {
        for shift in (0..8).rev() {
            acc = (acc << 1) | u32::from((byte >> shift) & 1);
            len += 1;
            let first = t.first[len];
            if t.count[len] > 0 && acc >= first && acc - first < t.count[len] {
                let sym = t.syms[t.start[len] as usize + (acc - first) as usize];
                if sym == EOS {
                    return Err(BadHuffman); // §5.2: EOS in a string is an error
                }
                out.push(sym as u8);
                acc = 0;
                len = 0;
            } else if len >= MAX_LEN {
                return Err(BadHuffman);
            }
        }
    }
    let ones = if len == 0 { 0 } else { (1u32 << len) - 1 };
    if (len > MAX_PADDING && len != BYTE_ALIGNED_PADDING) || acc != ones {
        return Err(BadHuffman);
    }
    Ok(())
}

/// The bytes `src` takes Huffman-coded, padding included.
pub fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src
        .iter()
        .map(|&b| usize::from(CODES[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// Appends `src` Huffman-coded; the last byte is padded with ones (the
/// start of EOS, §5.2).
pub fn encode(src: &[u8], out: &mut Vec<u8>) {
    // At most 7 bits wait between symbols and a code is at most 30 bits
    // long: the accumulator never holds more than 37.
    let (mut acc, mut bits) = (0u64, 0u32);
    for &b in src {
        let (code, len) = CODES[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        let pad = 8 - bits;
        out.push(((acc << pad) | ((1 << pad) - 1)) as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_is_canonical() {
        // The decoder's assumption: per length the codes are consecutive,
        // rise with the symbol, and each length starts after the previous.
        let mut next = 0u32;
        for len in 1..=MAX_LEN {
            let codes: Vec<u32> = (0..257)
                .filter(|&s| CODES[s].1 as usize == len)
                .map(|s| CODES[s].0)
                .collect();
            for (i, c) in codes.iter().enumerate() {
                assert_eq!(*c, next + i as u32, "length {len}");
            }
            next = (next + codes.len() as u32) << 1;
        }
    }

    #[test]
    fn rfc7541_c4_strings_decode() {
        let mut out = Vec::new();
        decode(
            b"\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff",
            &mut out,
        )
        .unwrap();
        assert_eq!(out, b"www.example.com");
        out.clear();
        decode(b"\xa8\xeb\x10\x64\x9c\xbf", &mut out).unwrap();
        assert_eq!(out, b"no-cache");
    }

    #[test]
    fn rfc7541_c4_strings_encode() {
        let mut out = Vec::new();
        encode(b"www.example.com", &mut out);
        assert_eq!(out, b"\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff");
        assert_eq!(encoded_len(b"www.example.com"), out.len());
        out.clear();
        encode(b"no-cache", &mut out);
        assert_eq!(out, b"\xa8\xeb\x10\x64\x9c\xbf");
    }

    #[test]
    fn every_byte_round_trips() {
        // Each symbol alone (every code length, every padding), and all of
        // them in a row.
        let all: Vec<u8> = (0..=255).collect();
        for s in all.chunks(1).chain([&all[..]]) {
            let mut coded = Vec::new();
            encode(s, &mut coded);
            assert_eq!(coded.len(), encoded_len(s));
            let mut back = Vec::new();
            decode(&coded, &mut back).unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn padding_and_eos_rules() {
        let mut out = Vec::new();
        // "a" is 00011: 3 bits of padding, ones.
        assert_eq!(decode(&[0b0001_1111], &mut out), Ok(()));
        assert_eq!(out, b"a");
        // Padding with a zero bit.
        assert_eq!(decode(&[0b0001_1110], &mut out), Err(BadHuffman));
        // A code ending mid-byte and a further byte of ones: 11 bits of
        // padding, over §5.2's 7 (h2spec hpack 5.2/1); two bytes too.
        assert_eq!(decode(&[0b0001_1111, 0xff], &mut out), Err(BadHuffman));
        assert_eq!(
            decode(&[0b0001_1111, 0xff, 0xff], &mut out),
            Err(BadHuffman)
        );
        // h2spec's own bytes: "test" (20 bits) padded to 32.
        assert_eq!(decode(&[0x49, 0x50, 0x9f, 0xff], &mut out), Err(BadHuffman));
        assert_eq!(decode(&[0x49, 0x50, 0x9f], &mut out), Ok(()));
        // nginx's test client pads a byte-aligned code with a whole byte:
        // "&" is 11111000 (8 bits).
        out.clear();
        assert_eq!(decode(&[0b1111_1000, 0xff], &mut out), Ok(()));
        assert_eq!(out, b"&");
        assert_eq!(
            decode(&[0b1111_1000, 0xff, 0xff], &mut out),
            Err(BadHuffman)
        );
        // The EOS symbol itself.
        assert_eq!(decode(&[0xff, 0xff, 0xff, 0xfc], &mut out), Err(BadHuffman));
        for b in 0..=255u8 {
            let _ = decode(&[b, b, b], &mut out);
        }
    }
}
