//! Serializing the response header lines in nginx's order.
//!
//! `ngx_http_header_filter` writes, after the status line, `Server` and
//! `Date`: Content-Type, Content-Length, Last-Modified, Location (when it is
//! made absolute), Transfer-Encoding, then `Connection`/`Keep-Alive`, then
//! the remaining headers in the order the modules added them (ETag,
//! Content-Range, Accept-Ranges, a Location that was not made absolute).
//! The engine writes Server, Date, Connection and Keep-Alive, so the lines
//! here are split where Connection goes ([`Head::split`]).

use peregrine_codec::response::{push_header, push_header_u64, push_hex_u64};
use peregrine_conf::model::LocConf;

use crate::date::push_http_date;

/// The header fields core sets; `None`/`false` fields are not written.
#[derive(Debug, Default)]
pub(crate) struct HeadSpec<'a> {
    pub content_type: Option<&'a str>,
    /// Appended as `; charset=X` (already filtered by `charset_types`).
    pub charset: Option<&'a str>,
    pub content_length: Option<u64>,
    pub last_modified: Option<i64>,
    /// A Location already made absolute: written before Connection.
    pub location_abs: Option<&'a str>,
    pub chunked: bool,
    /// A Location left as given (not starting with `/`): after Connection.
    pub location_rel: Option<&'a str>,
    /// (mtime, size) → `ETag: "<mtime hex>-<size hex>"`.
    pub etag: Option<(i64, u64)>,
    pub content_range: Option<&'a str>,
    pub accept_ranges: bool,
    /// A 401's challenge: after Connection, as nginx's headers list.
    pub www_authenticate: Option<&'a str>,
}

/// Serialized lines and the offset where Connection/Keep-Alive go.
#[derive(Debug, Default)]
pub(crate) struct Head {
    pub bytes: Vec<u8>,
    pub split: usize,
}

impl Head {
    /// The lines and split as a response carries them.
    pub(crate) fn lines(self) -> (crate::response::HeadLines, usize) {
        (crate::response::HeadLines::Owned(self.bytes), self.split)
    }
}

impl HeadSpec<'_> {
    pub(crate) fn write(&self) -> Head {
        let mut b = Vec::with_capacity(256);
        if let Some(ct) = self.content_type {
            b.extend_from_slice(b"Content-Type: ");
            b.extend_from_slice(ct.as_bytes());
            if let Some(cs) = self.charset {
                b.extend_from_slice(b"; charset=");
                b.extend_from_slice(cs.as_bytes());
            }
            b.extend_from_slice(b"\r\n");
        }
        if let Some(len) = self.content_length {
            push_header_u64(&mut b, b"Content-Length", len);
        }
        if let Some(t) = self.last_modified {
            b.extend_from_slice(b"Last-Modified: ");
            push_http_date(&mut b, t);
            b.extend_from_slice(b"\r\n");
        }
        if let Some(l) = self.location_abs {
            push_header(&mut b, b"Location", l.as_bytes());
        }
        if self.chunked {
            b.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        }
        let split = b.len();
        if let Some(w) = self.www_authenticate {
            push_header(&mut b, b"WWW-Authenticate", w.as_bytes());
        }
        if let Some(l) = self.location_rel {
            push_header(&mut b, b"Location", l.as_bytes());
        }
        if let Some((mtime, size)) = self.etag {
            b.extend_from_slice(b"ETag: ");
            push_etag(&mut b, mtime, size);
            b.extend_from_slice(b"\r\n");
        }
        if let Some(cr) = self.content_range {
            push_header(&mut b, b"Content-Range", cr.as_bytes());
        }
        if self.accept_ranges {
            b.extend_from_slice(b"Accept-Ranges: bytes\r\n");
        }
        Head { bytes: b, split }
    }
}

/// The ETag value of a static file, as `ngx_http_set_etag`.
pub(crate) fn etag_value(mtime: i64, size: u64) -> String {
    let mut v = Vec::with_capacity(36);
    push_etag(&mut v, mtime, size);
    // Quotes, hex digits and a dash: ASCII by construction.
    String::from_utf8(v).unwrap_or_default()
}

/// `"<mtime hex>-<size hex>"` (`ngx_http_set_etag`'s `"%xT-%xO"`).
fn push_etag(out: &mut Vec<u8>, mtime: i64, size: u64) {
    out.push(b'"');
    push_hex_u64(out, mtime as u64);
    out.push(b'-');
    push_hex_u64(out, size);
    out.push(b'"');
}

/// The Content-Type of `uri` (by its extension, as `ngx_http_set_exten`:
/// the text after the last `.` of the last path segment, lowercased) and
/// the charset to append.
pub(crate) fn content_type<'c>(conf: &'c LocConf, uri: &str) -> (&'c str, Option<&'c str>) {
    let ty = exten(uri)
        .and_then(|ext| lookup_type(conf, ext))
        .unwrap_or(conf.default_type.as_str());
    (ty, charset_for(conf, ty))
}

/// Extension lookup without allocating for the common lowercase case.
fn lookup_type<'c>(conf: &'c LocConf, ext: &str) -> Option<&'c str> {
    if ext.bytes().any(|c| c.is_ascii_uppercase()) {
        conf.types
            .by_ext
            .get(&ext.to_ascii_lowercase())
            .map(String::as_str)
    } else {
        conf.types.by_ext.get(ext).map(String::as_str)
    }
}

pub(crate) fn exten(uri: &str) -> Option<&str> {
    // One backward scan over the last segment (every request asks).
    let b = uri.as_bytes();
    let dot = b.iter().rposition(|&c| c == b'.' || c == b'/')?;
    (b[dot] == b'.').then(|| &uri[dot + 1..])
}

/// `charset X` applies to the types in `charset_types` (`*`: all).
pub(crate) fn charset_for<'c>(conf: &'c LocConf, ty: &str) -> Option<&'c str> {
    let cs = conf.charset.as_deref()?;
    if cs.eq_ignore_ascii_case("off") {
        return None;
    }
    conf.charset_types
        .iter()
        .any(|t| t == "*" || t.eq_ignore_ascii_case(ty))
        .then_some(cs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::loc_conf;

    #[test]
    fn order_matches_nginx() {
        let h = HeadSpec {
            content_type: Some("text/plain"),
            charset: Some("utf-8"),
            content_length: Some(20),
            last_modified: Some(784_111_777),
            etag: Some((0x6b0d5a02, 20)),
            accept_ranges: true,
            ..HeadSpec::default()
        }
        .write();
        let s = String::from_utf8(h.bytes.clone()).unwrap();
        assert_eq!(
            s,
            "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 20\r\n\
             Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
             ETag: \"6b0d5a02-14\"\r\nAccept-Ranges: bytes\r\n"
        );
        assert_eq!(
            &s[h.split..],
            "ETag: \"6b0d5a02-14\"\r\nAccept-Ranges: bytes\r\n"
        );
    }

    #[test]
    fn exten_is_after_the_last_dot_of_the_last_segment() {
        for (uri, want) in [
            ("/a/b.html", Some("html")),
            ("/a.b/c", None),
            ("/a.b/c.", Some("")),
            ("/x.tar.gz", Some("gz")),
            ("/", None),
            ("", None),
            ("noslash.png", Some("png")),
            ("/.hidden", Some("hidden")),
        ] {
            assert_eq!(exten(uri), want, "{uri}");
        }
    }

    #[test]
    fn etag_is_nginx_hex_for_any_mtime() {
        // `{:x}` of an i64 is its two's complement, as nginx's `%xT`.
        for (mtime, size) in [(0, 0), (0x6b0d5a02, 20), (-1, 1), (i64::MAX, u64::MAX)] {
            assert_eq!(etag_value(mtime, size), format!("\"{mtime:x}-{size:x}\""));
        }
    }

    #[test]
    fn types_by_extension_and_charset_types() {
        let mut c = loc_conf("/");
        assert_eq!(content_type(&c, "/a/b.HTML"), ("text/html", None));
        assert_eq!(content_type(&c, "/a.b/c"), ("text/plain", None));
        assert_eq!(content_type(&c, "/x.png"), ("image/png", None));
        c.default_type = "application/octet-stream".into();
        assert_eq!(
            content_type(&c, "/x.unknown"),
            ("application/octet-stream", None)
        );
        c.charset = Some("utf-8".into());
        assert_eq!(content_type(&c, "/x.txt"), ("text/plain", Some("utf-8")));
        assert_eq!(content_type(&c, "/x.png"), ("image/png", None));
        c.charset_types = vec!["*".into()];
        assert_eq!(content_type(&c, "/x.png"), ("image/png", Some("utf-8")));
        c.charset = Some("off".into());
        assert_eq!(content_type(&c, "/x.txt"), ("text/plain", None));
    }
}
