//! Ranges of a cached answer: nginx's range filter answers a cached 200
//! as it answers a static file (`r->allow_ranges` is set for a response
//! sent from the cache): `Accept-Ranges: bytes` without a `Range`, one
//! range as 206 with `Content-Range`, several as multipart/byteranges,
//! an `If-Range` that does not match the stored validators as the whole
//! answer. The parsing is [`crate::range`]'s.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use peregrine_codec::fields::FieldList;

use crate::range::{Ranges, parse_max};
use crate::response::{Body, Response};

/// multipart boundaries: ten digits, as nginx's (a counter here).
static BOUNDARY: AtomicU64 = AtomicU64::new(0);

fn header(list: &FieldList, name: &str) -> Option<String> {
    list.get(name)
        .map(|v| String::from_utf8_lossy(v).trim().to_string())
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
    let Some(range) = range else {
        if !resp.head.has("accept-ranges") {
            resp.head.to_mut().push("Accept-Ranges", "bytes");
        }
        return;
    };
    if let Some(ir) = if_range {
        let want = if ir.starts_with('"') || ir.starts_with("W/") {
            header(&resp.head, "etag")
        } else {
            header(&resp.head, "last-modified")
        };
        if want.as_deref() != Some(ir.trim()) {
            return;
        }
    }
    let ranges = match parse_max(range, size, max_ranges) {
        Ranges::Satisfiable(r) => r,
        _ => return,
    };
    let ctype = header(&resp.head, "content-type");
    let lines = resp.head.to_mut();
    lines.remove("content-length");
    let body = if let [(s, e)] = ranges[..] {
        lines.push("Content-Range", format!("bytes {}-{}/{size}", s, e - 1));
        Body::File {
            file,
            offset: base + s,
            len: e - s,
        }
    } else {
        lines.remove("content-type");
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
        let ct = format!("multipart/byteranges; boundary={boundary}");
        lines.push_front("Content-Type", ct);
        Body::Parts(parts)
    };
    let n = body.len();
    lines.set_content_length(Some(n));
    resp.status = 206;
    resp.content_length = Some(n);
    resp.body = if resp.header_only { Body::Empty } else { body };
}
