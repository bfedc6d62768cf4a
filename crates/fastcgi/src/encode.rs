//! The request side: what nginx's `ngx_http_fastcgi_create_request` writes.
//! `BEGIN_REQUEST`, then the `PARAMS` stream ended by an empty record, then
//! the `STDIN` stream ended by an empty record, every record padded to 8.
//! Output is appended to the caller's `Vec<u8>` (no allocation when its
//! capacity suffices).
//!
//! One deliberate difference: nginx puts every param into a single `PARAMS`
//! record and refuses a request whose params pass 65,535 bytes ("fastcgi
//! request record is too big: N", 500). [`ParamsEncoder`] opens a new record
//! instead, at a pair boundary (PHP-FPM parses each `PARAMS` record on its
//! own, so a pair never straddles two). An engine that wants nginx's refusal
//! sums [`pair_len`] first.

use crate::{FLAG_KEEP_CONN, HEADER_LEN, Header, MAX_CONTENT, ROLE_RESPONDER, RecordType};
use crate::{ZEROS, padding_for, push_record};

/// nginx cuts the request body into `STDIN` records of 32 KiB
/// (`32 * 1024` in `ngx_http_fastcgi_create_request`), below the 65,535-byte
/// record limit and a multiple of 8, so no padding is needed but the last.
pub const STDIN_CHUNK: usize = 32 * 1024;

/// Lengths up to this are written in one byte, longer ones in four with the
/// top bit set (§3.4); a pair never passes [`MAX_CONTENT`], so 31 bits suffice.
const SHORT_LEN_MAX: usize = 127;

/// Why a request could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// One name-value pair (lengths included) does not fit in one record:
    /// PHP-FPM reads pairs record by record, so it cannot be sent.
    /// nginx's wording for its own (whole-params) limit.
    #[error("fastcgi request record is too big: {0}")]
    PairTooLarge(usize),
}

/// Appends a `BEGIN_REQUEST` record for the responder role; `keep_conn` sets
/// `FCGI_KEEP_CONN` (nginx's `fastcgi_keep_conn`). 16 bytes.
pub fn begin_request(out: &mut Vec<u8>, request_id: u16, keep_conn: bool) {
    let [role_hi, role_lo] = ROLE_RESPONDER.to_be_bytes();
    let flags = if keep_conn { FLAG_KEEP_CONN } else { 0 };
    let body = [role_hi, role_lo, flags, 0, 0, 0, 0, 0];
    push_record(out, RecordType::BeginRequest, request_id, &body);
}

/// Bytes one pair takes in a `PARAMS` record: each length in 1 byte up to
/// 127, else 4 (as nginx counts them in `ngx_http_fastcgi_create_request`).
pub fn pair_len(name_len: usize, value_len: usize) -> usize {
    let len_of = |n: usize| if n > SHORT_LEN_MAX { 4 } else { 1 };
    len_of(name_len) + name_len + len_of(value_len) + value_len
}

fn push_len(out: &mut Vec<u8>, n: usize) {
    if n > SHORT_LEN_MAX {
        out.extend_from_slice(&((n as u32) | 0x8000_0000).to_be_bytes());
    } else {
        out.push(n as u8);
    }
}

/// Writes the `PARAMS` stream into a caller's buffer, pair by pair. Call
/// [`ParamsEncoder::finish`] to pad the last record and end the stream.
#[must_use = "finish() ends the PARAMS stream"]
pub struct ParamsEncoder<'a> {
    out: &'a mut Vec<u8>,
    request_id: u16,
    /// Offset in `out` of the open record's header, if one is open.
    open: Option<usize>,
}

impl<'a> ParamsEncoder<'a> {
    pub fn new(out: &'a mut Vec<u8>, request_id: u16) -> Self {
        ParamsEncoder {
            out,
            request_id,
            open: None,
        }
    }

    /// Appends one pair. On error nothing is written.
    pub fn push(&mut self, name: &[u8], value: &[u8]) -> Result<(), EncodeError> {
        self.push_parts(name.len(), value.len(), |out| {
            out.extend_from_slice(name);
            out.extend_from_slice(value);
        })
    }

    /// Appends a request header as nginx passes it (`fastcgi_pass_request_headers`):
    /// the name prefixed with `HTTP_`, upper-cased, `-` turned into `_`.
    /// Joining repeated headers (`, `, or `; ` for Cookie) is the caller's.
    pub fn push_header(&mut self, name: &[u8], value: &[u8]) -> Result<(), EncodeError> {
        self.push_parts(b"HTTP_".len() + name.len(), value.len(), |out| {
            out.extend_from_slice(b"HTTP_");
            out.extend(name.iter().map(|&c| match c {
                b'-' => b'_',
                c => c.to_ascii_uppercase(),
            }));
            out.extend_from_slice(value);
        })
    }

    fn push_parts(
        &mut self,
        name_len: usize,
        value_len: usize,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Result<(), EncodeError> {
        let len = pair_len(name_len, value_len);
        if len > MAX_CONTENT {
            return Err(EncodeError::PairTooLarge(len));
        }
        let start = match self.open {
            Some(start) if self.content_len(start) + len <= MAX_CONTENT => start,
            _ => {
                self.close();
                let start = self.out.len();
                let h = Header::new(RecordType::Params, self.request_id, 0);
                self.out.extend_from_slice(&h.to_bytes());
                self.open = Some(start);
                start
            }
        };
        push_len(self.out, name_len);
        push_len(self.out, value_len);
        write(self.out);
        let content = self.content_len(start) as u16;
        self.out[start + 4..start + 6].copy_from_slice(&content.to_be_bytes());
        Ok(())
    }

    fn content_len(&self, start: usize) -> usize {
        self.out.len() - start - HEADER_LEN
    }

    /// Pads the open record (its padding byte was left 0 until now).
    fn close(&mut self) {
        if let Some(start) = self.open.take() {
            let pad = padding_for(self.content_len(start));
            self.out[start + 6] = pad as u8;
            self.out.extend_from_slice(&ZEROS[..pad]);
        }
    }

    /// Pads the last record and appends the empty `PARAMS` record that ends
    /// the stream.
    pub fn finish(mut self) {
        self.close();
        push_record(self.out, RecordType::Params, self.request_id, &[]);
    }
}

/// Appends `body` as `STDIN` records of at most [`STDIN_CHUNK`] bytes, each
/// padded to 8. Call once per piece of body as it arrives; an empty `body`
/// writes nothing (an empty record would end the stream: see [`end_stdin`]).
pub fn stdin(out: &mut Vec<u8>, request_id: u16, body: &[u8]) {
    for chunk in body.chunks(STDIN_CHUNK) {
        push_record(out, RecordType::Stdin, request_id, chunk);
    }
}

/// Appends the empty `STDIN` record that ends the request body (sent for a
/// request without a body too).
pub fn end_stdin(out: &mut Vec<u8>, request_id: u16) {
    push_record(out, RecordType::Stdin, request_id, &[]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::pairs;

    /// Splits a byte stream into (header, content) records, checking padding.
    pub(crate) fn records(mut b: &[u8]) -> Vec<(Header, Vec<u8>)> {
        let mut v = Vec::new();
        while !b.is_empty() {
            let h = Header::from_bytes(b[..HEADER_LEN].try_into().unwrap());
            let len = usize::from(h.content_length);
            assert_eq!(h.body_len() % 8, 0, "{h:?}");
            assert!(
                b[HEADER_LEN + len..HEADER_LEN + h.body_len()]
                    .iter()
                    .all(|&z| z == 0)
            );
            v.push((h, b[HEADER_LEN..HEADER_LEN + len].to_vec()));
            b = &b[HEADER_LEN + h.body_len()..];
        }
        v
    }

    #[test]
    fn begin_request_bytes() {
        let mut out = Vec::new();
        begin_request(&mut out, 1, true);
        assert_eq!(out, [1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
        out.clear();
        begin_request(&mut out, 0x1234, false);
        assert_eq!(&out[..4], [1, 1, 0x12, 0x34]);
        assert_eq!(out[10], 0);
    }

    #[test]
    fn params_short_and_long_lengths() {
        let mut out = vec![0xAA];
        let long = vec![b'v'; 300];
        let mut p = ParamsEncoder::new(&mut out, 1);
        p.push(b"SCRIPT_FILENAME", b"/srv/index.php").unwrap();
        p.push(b"EMPTY", b"").unwrap();
        p.push(b"LONG", &long).unwrap();
        p.push_header(b"x-Forwarded-for", b"1.2.3.4").unwrap();
        p.finish();
        assert_eq!(out[0], 0xAA, "appends after what the buffer held");
        let recs = records(&out[1..]);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].0.kind, RecordType::Params);
        assert_eq!(recs[1].0, Header::new(RecordType::Params, 1, 0));
        let c = &recs[0].1;
        // 1-byte lengths, then the 4-byte form with its top bit set.
        assert_eq!(&c[..2], [15, 14]);
        let got: Vec<_> = pairs(c).map(Result::unwrap).collect();
        assert_eq!(
            got,
            [
                (&b"SCRIPT_FILENAME"[..], &b"/srv/index.php"[..]),
                (b"EMPTY", b""),
                (b"LONG", &long[..]),
                (b"HTTP_X_FORWARDED_FOR", b"1.2.3.4"),
            ]
        );
        let i = 2 + 15 + 14 + 2 + 5;
        assert_eq!(&c[i..i + 5], [4, 0x80, 0, 1, 44]);
        assert_eq!(c.len(), i + 5 + 4 + 300 + 2 + 20 + 7);
        assert_eq!(pair_len(4, 300), 309);
        assert_eq!(pair_len(127, 128), 1 + 127 + 4 + 128);
    }

    #[test]
    fn params_over_one_record_open_another_at_a_pair_boundary() {
        let mut out = Vec::new();
        let value = vec![b'x'; 30_000];
        let mut p = ParamsEncoder::new(&mut out, 7);
        for name in [&b"A"[..], b"B", b"C"] {
            p.push(name, &value).unwrap();
        }
        let huge = vec![0; MAX_CONTENT];
        assert_eq!(
            p.push(b"H", &huge),
            Err(EncodeError::PairTooLarge(MAX_CONTENT + 6))
        );
        // The largest pair that fits: 1 + 1 + 4 + value.
        p.push(b"M", &huge[..MAX_CONTENT - 6]).unwrap();
        p.finish();
        let recs = records(&out);
        let lens: Vec<_> = recs.iter().map(|(h, _)| h.content_length).collect();
        assert_eq!(lens, [2 * 30_006, 30_006, MAX_CONTENT as u16, 0]);
        assert!(recs.iter().all(|(h, _)| h.request_id == 7));
        let names: Vec<_> = recs
            .iter()
            .flat_map(|(_, c)| pairs(c).map(|p| p.unwrap().0.to_vec()))
            .collect();
        assert_eq!(names, [b"A", b"B", b"C", b"M"]);
        assert_eq!(
            EncodeError::PairTooLarge(70_000).to_string(),
            "fastcgi request record is too big: 70000"
        );
    }

    #[test]
    fn no_params_is_only_the_end_record() {
        let mut out = Vec::new();
        ParamsEncoder::new(&mut out, 1).finish();
        assert_eq!(out, [1, 4, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn stdin_chunks_as_nginx() {
        let body: Vec<u8> = (0..STDIN_CHUNK * 2 + 5).map(|i| i as u8).collect();
        let mut out = Vec::new();
        stdin(&mut out, 1, &body);
        stdin(&mut out, 1, b"");
        end_stdin(&mut out, 1);
        let recs = records(&out);
        let lens: Vec<_> = recs
            .iter()
            .map(|(h, _)| usize::from(h.content_length))
            .collect();
        assert_eq!(lens, [STDIN_CHUNK, STDIN_CHUNK, 5, 0]);
        assert_eq!(recs[2].0.padding_length, 3);
        let joined: Vec<u8> = recs.iter().flat_map(|(_, c)| c.clone()).collect();
        assert_eq!(joined, body);
        assert!(recs.iter().all(|(h, _)| h.kind == RecordType::Stdin));
    }
}
