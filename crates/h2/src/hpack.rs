//! HPACK (RFC 7541): our decoder and our encoder.
//!
//! The decoder is ours so that it answers hostile input as nginx's does
//! (`ngx_http_v2_state_header_block` and its states): a block cut short
//! inside an integer or a string is FRAME_SIZE_ERROR ("client sent header
//! block with incorrect length"), any other bad encoding (index 0 or past
//! both tables, an integer over 4 continuation octets, bad Huffman, a table
//! size update past our SETTINGS_HEADER_TABLE_SIZE or after a field) is
//! COMPRESSION_ERROR. Every failure is an error value, never a panic; the
//! fuzz target `h2_frames` feeds it random blocks. Bounds: the dynamic
//! table holds at most [`HEADER_TABLE_SIZE`] bytes (a peer cannot grow
//! it), a field's name and value at most `max_field` bytes each and the
//! list at most `max_list` (nginx's `large_client_header_buffers` size and
//! size × number: the HPACK bomb, a few bytes of indexed references to one
//! big entry, stops there). Decoding of an over-long list still runs to the
//! end of the block, so the table stays in step with the peer's.
//!
//! Encoding is stateless: static-table references and literals "without
//! indexing" (§6.2.2), never the dynamic table. A response head therefore
//! encodes the same way on every connection, so an encoded block can be
//! cached with the response, and the peer's SETTINGS_HEADER_TABLE_SIZE
//! never has to be tracked. Strings go unencoded (no Huffman): simpler, and
//! responses heads are small beside their bodies.

use std::collections::VecDeque;

use crate::huffman;
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
    /// The block ends inside an integer or a string: nginx's
    /// FRAME_SIZE_ERROR.
    Length,
    /// Valid, but a field or the list is larger than allowed (nginx:
    /// "client sent too large header", ENHANCE_YOUR_CALM).
    ListTooLarge,
}

/// nginx's NGX_HTTP_V2_INT_OCTETS: an integer may take this many octets
/// (the prefix and 3 continuations, values up to 2^21 + prefix); longer
/// ones are COMPRESSION_ERROR. Bounds the work of a hostile integer.
const INT_OCTETS: usize = 4;

/// RFC 7541 §4.1: each entry counts its name, value and 32.
const ENTRY_OVERHEAD: usize = 32;

/// A dynamic table entry: name and value.
type Entry = (Box<[u8]>, Box<[u8]>);

/// The connection's HPACK decoder and its dynamic table.
pub struct Decoder {
    /// Newest first (index 62 is the front).
    table: VecDeque<Entry>,
    size: usize,
    /// The current maximum (the last size update), at most the limit.
    max_size: usize,
    /// Strings decoded from Huffman, reused.
    name_buf: Vec<u8>,
    value_buf: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max_size: HEADER_TABLE_SIZE as usize,
            name_buf: Vec::new(),
            value_buf: Vec::new(),
        }
    }
}

/// Reads an integer with an `n`-bit prefix at `*pos` (§5.1).
fn read_int(b: &[u8], pos: &mut usize, n: u32) -> Result<usize, DecodeError> {
    let max = (1usize << n) - 1;
    let first = *b.get(*pos).ok_or(DecodeError::Length)?;
    *pos += 1;
    let mut v = usize::from(first) & max;
    if v < max {
        return Ok(v);
    }
    for i in 0..INT_OCTETS - 1 {
        let Some(&octet) = b.get(*pos) else {
            return Err(DecodeError::Length);
        };
        *pos += 1;
        v += usize::from(octet & 0x7f) << (7 * i);
        if octet < 0x80 {
            return Ok(v);
        }
    }
    Err(DecodeError::Compression)
}

/// Scans a block that is still arriving for what nginx, which decodes as
/// bytes come, would refuse before the rest: an integer over
/// [`INT_OCTETS`]. Only the representations' integers are read (strings
/// are skipped), so the table is not needed and nothing changes.
pub fn scan_partial(b: &[u8]) -> Result<(), DecodeError> {
    let mut pos = 0;
    let int = |pos: &mut usize, n| match read_int(b, pos, n) {
        Err(DecodeError::Length) => Ok(None),
        r => r.map(Some),
    };
    let string = |pos: &mut usize| -> Result<bool, DecodeError> {
        let Some(len) = int(pos, 7)? else {
            return Ok(false);
        };
        *pos += len;
        Ok(*pos <= b.len())
    };
    while let Some(&c) = b.get(pos) {
        let (prefix, literal) = match c {
            0x80..=0xff => (7, false),
            0x40..=0x7f => (6, true),
            0x20..=0x3f => (5, false),
            _ => (4, true),
        };
        let Some(index) = int(&mut pos, prefix)? else {
            return Ok(());
        };
        if literal && ((index == 0 && !string(&mut pos)?) || !string(&mut pos)?) {
            return Ok(());
        }
    }
    Ok(())
}

impl Decoder {
    /// Decodes one whole header block into `out` (cleared first): each
    /// name and value at most `max_field` bytes, the list's names and
    /// values (nginx's count) at most `max_list` bytes.
    pub fn decode(
        &mut self,
        block: &[u8],
        max_field: usize,
        max_list: usize,
        out: &mut FieldList,
    ) -> Result<(), DecodeError> {
        out.clear();
        let mut pos = 0;
        let mut size = 0usize;
        let mut over = false;
        let mut fields_seen = false;
        while pos < block.len() {
            let c = block[pos];
            let (name, value): (&[u8], &[u8]);
            if c & 0x80 != 0 {
                // §6.1 indexed field
                let i = read_int(block, &mut pos, 7)?;
                let (n, v) = self.entry(i)?;
                (name, value) = (n, v);
            } else if c & 0xe0 == 0x20 {
                // §6.3 size update: only before the first field (§4.2)
                let v = read_int(block, &mut pos, 5)?;
                if fields_seen || v > HEADER_TABLE_SIZE as usize {
                    return Err(DecodeError::Compression);
                }
                self.max_size = v;
                self.evict(0);
                continue;
            } else {
                // §6.2.1 (01), §6.2.2 (0000), §6.2.3 (0001)
                let indexing = c & 0x40 != 0;
                let i = read_int(block, &mut pos, if indexing { 6 } else { 4 })?;
                let mut name_buf = std::mem::take(&mut self.name_buf);
                let mut value_buf = std::mem::take(&mut self.value_buf);
                name_buf.clear();
                value_buf.clear();
                let r = self.literal(block, &mut pos, i, &mut name_buf, &mut value_buf);
                let r = r.map(|()| {
                    over |= name_buf.len() > max_field || value_buf.len() > max_field;
                    size = size.saturating_add(name_buf.len() + value_buf.len());
                    over |= size > max_list;
                    if !over {
                        out.push(&name_buf, &value_buf);
                    }
                    if indexing {
                        self.insert(&name_buf, &value_buf);
                    }
                });
                self.name_buf = name_buf;
                self.value_buf = value_buf;
                r?;
                fields_seen = true;
                continue;
            }
            fields_seen = true;
            over |= name.len() > max_field || value.len() > max_field;
            size = size.saturating_add(name.len() + value.len());
            over |= size > max_list;
            if !over {
                out.push(name, value);
            }
        }
        if over {
            out.clear();
            return Err(DecodeError::ListTooLarge);
        }
        Ok(())
    }

    /// A literal's name (indexed when `index` > 0) and value, into the buffers.
    fn literal(
        &self,
        b: &[u8],
        pos: &mut usize,
        index: usize,
        name: &mut Vec<u8>,
        value: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        if index == 0 {
            read_string(b, pos, name)?;
        } else {
            name.extend_from_slice(self.entry(index)?.0);
        }
        read_string(b, pos, value)
    }

    /// Entry `i` of the static table then the dynamic one (§2.3.3).
    fn entry(&self, i: usize) -> Result<(&[u8], &[u8]), DecodeError> {
        match i {
            0 => Err(DecodeError::Compression),
            1..=61 => {
                let (n, v) = STATIC[i - 1];
                Ok((n.as_bytes(), v.as_bytes()))
            }
            _ => self
                .table
                .get(i - 62)
                .map(|(n, v)| (&n[..], &v[..]))
                .ok_or(DecodeError::Compression),
        }
    }

    /// Adds an entry, evicting the oldest to make room (§4.4: an entry
    /// larger than the table empties it and is not added).
    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let need = name.len() + value.len() + ENTRY_OVERHEAD;
        if need > self.max_size {
            self.table.clear();
            self.size = 0;
            return;
        }
        self.evict(need);
        self.table.push_front((name.into(), value.into()));
        self.size += need;
    }

    /// Evicts until `room` more bytes fit under the current maximum.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            let Some((n, v)) = self.table.pop_back() else {
                break;
            };
            self.size -= n.len() + v.len() + ENTRY_OVERHEAD;
        }
    }
}

/// A string literal (§5.2), Huffman-decoded when its H bit is set.
fn read_string(b: &[u8], pos: &mut usize, out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let huffman = b.get(*pos).ok_or(DecodeError::Length)? & 0x80 != 0;
    let len = read_int(b, pos, 7)?;
    let end = pos.checked_add(len).ok_or(DecodeError::Length)?;
    let s = b.get(*pos..end).ok_or(DecodeError::Length)?;
    *pos = end;
    if huffman {
        huffman::decode(s, out).map_err(|_| DecodeError::Compression)
    } else {
        out.extend_from_slice(s);
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

/// A string literal (§5.2): Huffman-coded when that is shorter, as
/// nginx's `ngx_http_v2_string_encode` chooses.
fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    let coded = huffman::encoded_len(s);
    if coded < s.len() {
        put_int(out, 0x80, 7, coded);
        huffman::encode(s, out);
    } else {
        put_int(out, 0, 7, s.len());
        out.extend_from_slice(s);
    }
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
            .decode(&block, 1 << 20, 1 << 20, &mut out)
            .unwrap();
        assert_eq!(out.iter().collect::<Vec<_>>(), fields.to_vec());
        assert_eq!(out.get(b"server"), Some(&b"peregrine"[..]));
        // Huffman only where it is shorter (h2_headers.t): rare
        // characters go as they are, common ones coded.
        let mut block = Vec::new();
        encode_field(&mut block, b"x-a", b"aaaaa");
        encode_field(&mut block, b"x-b", b"{{{{{");
        assert!(!block.windows(5).any(|w| w == b"aaaaa"));
        assert!(block.windows(5).any(|w| w == b"{{{{{"));
        Decoder::default()
            .decode(&block, 1 << 20, 1 << 20, &mut out)
            .unwrap();
        assert_eq!(out.get(b"x-a"), Some(&b"aaaaa"[..]));
        assert_eq!(out.get(b"x-b"), Some(&b"{{{{{"[..]));
    }

    #[test]
    fn rfc7541_c3_requests_decode_with_the_dynamic_table() {
        // RFC 7541 C.3.1 and C.3.2: the second block refers to the entry
        // the first added.
        let mut d = Decoder::default();
        let mut out = FieldList::default();
        let c31 = b"\x82\x86\x84\x41\x0fwww.example.com";
        d.decode(c31, 4096, 4096, &mut out).unwrap();
        assert_eq!(out.get(b":authority"), Some(&b"www.example.com"[..]));
        let c32 = b"\x82\x86\x84\xbe\x58\x08no-cache";
        d.decode(c32, 4096, 4096, &mut out).unwrap();
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
            d.decode(&block, 8192, 32 * 1024, &mut out),
            Err(DecodeError::ListTooLarge)
        );
        assert!(out.is_empty());
        // The entry is still in the table: the next block can use it.
        d.decode(&[0xbe], 8192, 32 * 1024, &mut out).unwrap();
        assert_eq!(out.get(b"x-bomb").map(|v| v.len()), Some(4000));
    }

    #[test]
    fn table_growth_past_our_setting_and_garbage_are_compression_errors() {
        let mut out = FieldList::default();
        let mut grow = Vec::new();
        put_int(&mut grow, 0x20, 5, 1 << 20);
        grow.push(0x82);
        assert_eq!(
            Decoder::default().decode(&grow, 4096, 4096, &mut out),
            Err(DecodeError::Compression)
        );
        for bad in [
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff][..],
            &[0x80],
            &[0xc0],
            &[0x82, 0x3f, 0x01],
            &[0x40, 0x81, 0x00, 0x00],
        ] {
            assert_eq!(
                Decoder::default().decode(bad, 4096, 4096, &mut out),
                Err(DecodeError::Compression),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn cut_blocks_are_length_errors_and_long_integers_compression_errors() {
        let mut out = FieldList::default();
        let mut d = Decoder::default();
        // nginx's h2_headers.t: "invalid index length", "invalid literal
        // length" (FRAME_SIZE_ERROR), "too long index" (COMPRESSION_ERROR).
        for (bad, want) in [
            (&[0xff][..], DecodeError::Length),
            (&[0x42, 0xff], DecodeError::Length),
            (&[0x00, 0x85, b'a'], DecodeError::Length),
            (&[0xff, 0xff, 0xff, 0xff], DecodeError::Compression),
            (&[0x42, 0xff, 0xff, 0xff, 0xff], DecodeError::Compression),
        ] {
            assert_eq!(d.decode(bad, 4096, 4096, &mut out), Err(want), "{bad:?}");
        }
        assert_eq!(scan_partial(&[0xff, 0xff, 0xff]), Ok(()));
        assert_eq!(
            scan_partial(&[0x42, 0xff, 0xff, 0xff, 0xff]),
            Err(DecodeError::Compression)
        );
        assert_eq!(scan_partial(&[0x00, 0x05, b'a', b'b']), Ok(()));
    }

    #[test]
    fn size_updates_evict_and_must_come_first() {
        let mut d = Decoder::default();
        let mut out = FieldList::default();
        // Two entries added (x-foo newest), then the table shrunk to 61
        // bytes: only x-foo (5 + 5 + 32 = 42) stays, as h2_headers.t's
        // "updated table size" expects.
        let mut b = vec![0x82, 0x86, 0x84];
        b.push(0x40 | 51); // referer
        put_str(&mut b, b"foo");
        b.push(0x40);
        put_str(&mut b, b"x-foo");
        put_str(&mut b, b"X-Bar");
        d.decode(&b, 4096, 4096, &mut out).unwrap();
        let mut b2 = Vec::new();
        put_int(&mut b2, 0x20, 5, 61);
        b2.extend([0x82, 0xbe]);
        d.decode(&b2, 4096, 4096, &mut out).unwrap();
        assert_eq!(out.get(b"x-foo"), Some(&b"X-Bar"[..]));
        assert_eq!(
            d.decode(&[0xbf], 4096, 4096, &mut out),
            Err(DecodeError::Compression)
        );
        // After a field, a size update is an error (§4.2).
        let mut late = vec![0x82];
        put_int(&mut late, 0x20, 5, 100);
        assert_eq!(
            d.decode(&late, 4096, 4096, &mut out),
            Err(DecodeError::Compression)
        );
    }

    #[test]
    fn field_and_list_bounds() {
        let mut d = Decoder::default();
        let mut out = FieldList::default();
        let mut b = vec![0x00];
        put_str(&mut b, &[b'x'; 513]);
        put_str(&mut b, b"v");
        assert_eq!(
            d.decode(&b, 512, 4096, &mut out),
            Err(DecodeError::ListTooLarge)
        );
        assert!(d.decode(&b, 513, 4096, &mut out).is_ok());
        assert_eq!(
            d.decode(&b, 4096, 513, &mut out),
            Err(DecodeError::ListTooLarge)
        );
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
