//! Ranges of a cached answer: nginx's range filter answers a cached 200
//! as it answers a static file (`r->allow_ranges` is set for a response
//! sent from the cache): `Accept-Ranges: bytes` without a `Range`, one
//! range as 206 with `Content-Range`, several as multipart/byteranges,
//! an `If-Range` that does not match the stored validators as the whole
//! answer. The parsing is [`crate::range`]'s.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::headers::{find_line, remove_or_replace, value_of};
use crate::range::{Ranges, parse_max};
use crate::response::{Body, HeadLines, Response};

/// multipart boundaries: ten digits, as nginx's (a counter here).
static BOUNDARY: AtomicU64 = AtomicU64::new(0);

fn header(lines: &[u8], name: &[u8]) -> Option<String> {
    find_line(lines, name).map(|r| {
        String::from_utf8_lossy(value_of(lines, r))
            .trim()
            .to_string()
    })
}

/// Applies `range` (and `if_range`) to a cached 200 whose body is the
/// whole stored body; `max_ranges` as `max_ranges`.
pub fn apply(
    resp: &mut Response,
    range: Option<&str>,
    if_range: Option<&str>,
    max_ranges: Option<u32>,
) {
    let Body::File { file, offset, len } = &resp.body else {
        return;
    };
    let (file, base, size) = (file.clone(), *offset, *len);
    if resp.status != 200 || max_ranges == Some(0) {
        return;
    }
    let mut lines = resp.head.as_bytes().to_vec();
    let mut split = resp.head_split;
    let Some(range) = range else {
        if find_line(&lines, b"accept-ranges").is_none() {
            let at = lines.len();
            remove_or_replace(&mut lines, &mut split, at..at, b"Accept-Ranges: bytes\r\n");
            resp.head = HeadLines::Owned(lines);
            resp.head_split = split;
        }
        return;
    };
    if let Some(ir) = if_range {
        let want = if ir.starts_with('"') || ir.starts_with("W/") {
            header(&lines, b"etag")
        } else {
            header(&lines, b"last-modified")
        };
        if want.as_deref() != Some(ir.trim()) {
            return;
        }
    }
    let ranges = match parse_max(range, size, max_ranges) {
        Ranges::Satisfiable(r) => r,
        _ => return,
    };
    let ctype = header(&lines, b"content-type");
    let drop = |lines: &mut Vec<u8>, split: &mut usize, name: &[u8]| {
        if let Some(r) = find_line(lines, name) {
            remove_or_replace(lines, split, r, b"");
        }
    };
    drop(&mut lines, &mut split, b"content-length");
    let body = if let [(s, e)] = ranges[..] {
        let cr = format!("Content-Range: bytes {}-{}/{size}\r\n", s, e - 1);
        let at = lines.len();
        remove_or_replace(&mut lines, &mut split, at..at, cr.as_bytes());
        Body::File {
            file,
            offset: base + s,
            len: e - s,
        }
    } else {
        drop(&mut lines, &mut split, b"content-type");
        let b = BOUNDARY.fetch_add(1, Ordering::Relaxed) + 1;
        let boundary = format!("{b:010}");
        let part = match &ctype {
            Some(t) => format!("\r\n--{boundary}\r\nContent-Type: {t}\r\nContent-Range: bytes "),
            None => format!("\r\n--{boundary}\r\nContent-Range: bytes "),
        };
        let mut parts = Vec::with_capacity(ranges.len() * 2 + 1);
        for &(s, e) in &ranges {
            let h = format!("{part}{}-{}/{size}\r\n\r\n", s, e - 1);
            parts.push(Body::Shared(Arc::from(h.into_bytes())));
            parts.push(Body::File {
                file: file.clone(),
                offset: base + s,
                len: e - s,
            });
        }
        parts.push(Body::Shared(Arc::from(
            format!("\r\n--{boundary}--\r\n").into_bytes(),
        )));
        let ct = format!("Content-Type: multipart/byteranges; boundary={boundary}\r\n");
        remove_or_replace(&mut lines, &mut split, 0..0, ct.as_bytes());
        Body::Parts(parts)
    };
    let n = body.len();
    let cl = format!("Content-Length: {n}\r\n");
    let at = find_line(&lines, b"content-type").map_or(0, |r| r.end);
    remove_or_replace(&mut lines, &mut split, at..at, cl.as_bytes());
    resp.status = 206;
    resp.content_length = Some(n);
    resp.head = HeadLines::Owned(lines);
    resp.head_split = split;
    resp.body = if resp.header_only { Body::Empty } else { body };
}
