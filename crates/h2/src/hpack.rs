//! HPACK glue (RFC 7541).
//!
//! Decoding uses `loona-hpack` (maintained with the loona server; integers
//! capped at 5 octets, Huffman padding and EOS checked, every failure an
//! error rather than a panic; fuzzed here through `fuzz_targets/h2_frames`).
//! Around it this module adds what HTTP/2 needs and the crate leaves out:
//! the dynamic table may not be grown past our SETTINGS_HEADER_TABLE_SIZE
//! (else a peer could make the table hold 2^28 bytes), and the decoded list
//! is bounded by SETTINGS_MAX_HEADER_LIST_SIZE while decoding still runs to
//! the end of the block, so the table stays in step with the peer's (the
//! HPACK bomb: a few bytes of indexed references to one big entry).
//!
//! Encoding is our own and stateless: static-table references and literals
//! "without indexing" (§6.2.2), never the dynamic table. A response head
//! therefore encodes the same way on every connection, so an encoded block
//! can be cached with the response, and the peer's SETTINGS_HEADER_TABLE_SIZE
//! never has to be tracked. Strings go unencoded (no Huffman): simpler, and
//! responses heads are small beside their bodies.

use crate::limits::HEADER_TABLE_SIZE;

/// A decoded field list in one buffer (no allocation per field).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldList {
    bytes: Vec<u8>,
    /// (start, name length, value length) in `bytes`.
    spans: Vec<(usize, usize, usize)>,
}

impl FieldList {
    pub fn push(&mut self, name: &[u8], value: &[u8]) {
        self.spans.push((self.bytes.len(), name.len(), value.len()));
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
    }

    /// The fields in order, as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.spans
            .iter()
            .map(|&(s, n, v)| (&self.bytes[s..s + n], &self.bytes[s + n..s + n + v]))
    }

    /// The first value of `name` (names are lowercase in HTTP/2).
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// Why a header block could not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Not valid HPACK: a connection error COMPRESSION_ERROR (RFC 9113 §4.3).
    Compression,
    /// Valid, but the list is larger than `max_list`: the request is
    /// refused, the connection goes on (the table is in step).
    ListTooLarge,
}

/// The connection's HPACK decoder.
pub struct Decoder {
    inner: loona_hpack::Decoder<'static>,
}

impl Default for Decoder {
    fn default() -> Self {
        let mut inner = loona_hpack::Decoder::new();
        inner.set_max_allowed_table_size(HEADER_TABLE_SIZE as usize);
        Decoder { inner }
    }
}

impl Decoder {
    /// Decodes one whole header block into `out` (cleared first). The size
    /// of the list is counted as RFC 9113 §6.5.2 counts it.
    pub fn decode(
        &mut self,
        block: &[u8],
        max_list: usize,
        out: &mut FieldList,
    ) -> Result<(), DecodeError> {
        out.clear();
        let mut size = 0usize;
        let mut over = false;
        self.inner
            .decode_with_cb(block, |n, v| {
                size = size.saturating_add(n.len() + v.len() + 32);
                if size > max_list {
                    over = true;
                } else {
                    out.push(&n, &v);
                }
            })
            .map_err(|_| DecodeError::Compression)?;
        if over {
            out.clear();
            return Err(DecodeError::ListTooLarge);
        }
        Ok(())
    }
}

/// The static table (RFC 7541 Appendix A), index = position + 1.
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Appends an HPACK integer with an `n`-bit prefix whose high bits are `first` (§5.1).
fn put_int(out: &mut Vec<u8>, first: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(first | v as u8);
        return;
    }
    out.push(first | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_int(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// Appends one field, encoded without touching any dynamic table: the
/// static entry when name and value match one, else a literal without
/// indexing, its name indexed when the static table has it (§6.1, §6.2.2).
/// `name` must be lowercase (RFC 9113 §8.2.1); the caller's head builder
/// guarantees it.
pub fn encode_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let mut name_index = 0;
    for (i, &(n, v)) in STATIC.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                return put_int(out, 0x80, 7, i + 1);
            }
            if name_index == 0 {
                name_index = i + 1;
            }
        }
    }
    put_int(out, 0x00, 4, name_index);
    if name_index == 0 {
        put_str(out, name);
    }
    put_str(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_fields_decode_back() {
        let mut block = Vec::new();
        let fields: [(&[u8], &[u8]); 5] = [
            (b":status", b"200"),
            (b":status", b"302"),
            (b"content-type", b"text/html"),
            (b"x-custom", &[b'v'; 300]),
            (b"server", b"peregrine"),
        ];
        for (n, v) in fields {
            encode_field(&mut block, n, v);
        }
        assert_eq!(block[0], 0x88, ":status 200 is static entry 8");
        let mut out = FieldList::default();
        Decoder::default()
            .decode(&block, 1 << 20, &mut out)
            .unwrap();
        assert_eq!(out.iter().collect::<Vec<_>>(), fields.to_vec());
        assert_eq!(out.get(b"server"), Some(&b"peregrine"[..]));
    }

    #[test]
    fn rfc7541_c3_requests_decode_with_the_dynamic_table() {
        // RFC 7541 C.3.1 and C.3.2: the second block refers to the entry
        // the first added.
        let mut d = Decoder::default();
        let mut out = FieldList::default();
        let c31 = b"\x82\x86\x84\x41\x0fwww.example.com";
        d.decode(c31, 4096, &mut out).unwrap();
        assert_eq!(out.get(b":authority"), Some(&b"www.example.com"[..]));
        let c32 = b"\x82\x86\x84\xbe\x58\x08no-cache";
        d.decode(c32, 4096, &mut out).unwrap();
        assert_eq!(out.get(b":authority"), Some(&b"www.example.com"[..]));
        assert_eq!(out.get(b"cache-control"), Some(&b"no-cache"[..]));
    }

    #[test]
    fn hpack_bomb_is_bounded_and_the_table_stays_in_step() {
        // One 4000-byte entry added, then referenced 1000 times: 4 MB of
        // headers from ~5 KB of block.
        let mut block = vec![0x40];
        put_str(&mut block, b"x-bomb");
        put_str(&mut block, &[b'a'; 4000]);
        block.extend(std::iter::repeat_n(0xbe, 1000));
        let mut d = Decoder::default();
        let mut out = FieldList::default();
        assert_eq!(
            d.decode(&block, 32 * 1024, &mut out),
            Err(DecodeError::ListTooLarge)
        );
        assert!(out.is_empty());
        // The entry is still in the table: the next block can use it.
        d.decode(&[0xbe], 32 * 1024, &mut out).unwrap();
        assert_eq!(out.get(b"x-bomb").map(|v| v.len()), Some(4000));
    }

    #[test]
    fn table_growth_past_our_setting_and_garbage_are_compression_errors() {
        let mut out = FieldList::default();
        let mut grow = Vec::new();
        put_int(&mut grow, 0x20, 5, 1 << 20);
        grow.push(0x82);
        assert_eq!(
            Decoder::default().decode(&grow, 4096, &mut out),
            Err(DecodeError::Compression)
        );
        for bad in [
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff][..],
            &[0x80],
            &[0xc0],
            &[0x00, 0x85],
            &[0x3f],
        ] {
            assert_eq!(
                Decoder::default().decode(bad, 4096, &mut out),
                Err(DecodeError::Compression),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn long_integers_encode_per_rfc7541_c1() {
        let mut out = Vec::new();
        put_int(&mut out, 0, 5, 1337);
        assert_eq!(out, [31, 154, 10]);
        out.clear();
        put_int(&mut out, 0, 5, 10);
        assert_eq!(out, [10]);
    }
}
