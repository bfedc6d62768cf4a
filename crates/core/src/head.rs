//! The response header fields core sets, in nginx's order.
//!
//! `ngx_http_header_filter` writes, after the status line, `Server` and
//! `Date`: Content-Type, Content-Length, Last-Modified, Location (when it is
//! made absolute), Transfer-Encoding, then `Connection`/`Keep-Alive`, then
//! the remaining headers in the order the modules added them (ETag,
//! Content-Range, Accept-Ranges, a Location that was not made absolute).
//! The engine writes Server, Date, Connection and Keep-Alive; the list's
//! split is where Connection goes ([`FieldList::split`]).

use peregrine_codec::fields::{FieldList, IntoText, Text};
use peregrine_codec::response::push_hex_u64;
use peregrine_conf::model::LocConf;

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
    /// A 401's challenges: after Connection, as nginx's headers list.
    pub www_authenticate: &'a [String],
}

impl HeadSpec<'_> {
    /// The fields in nginx's order, the header filter's own first.
    pub(crate) fn write(&self) -> FieldList {
        let mut l = FieldList::with_capacity(6);
        if let Some(ct) = self.content_type {
            let v = match self.charset {
                None => Text::copy(ct.as_bytes()),
                Some(cs) => format!("{ct}; charset={cs}").into_text(),
            };
            l.push_first("Content-Type", v);
        }
        if let Some(len) = self.content_length {
            l.push_first("Content-Length", Text::decimal(len));
        }
        if let Some(t) = self.last_modified {
            let mut v = [0u8; 29];
            peregrine_codec::date::fmt_http_date(t, &mut v);
            l.push_first("Last-Modified", Text::copy(&v));
        }
        if let Some(loc) = self.location_abs {
            l.push_first("Location", Text::copy(loc.as_bytes()));
        }
        if self.chunked {
            l.push_first("Transfer-Encoding", "chunked");
        }
        for w in self.www_authenticate {
            l.push("WWW-Authenticate", Text::copy(w.as_bytes()));
        }
        if let Some(loc) = self.location_rel {
            l.push("Location", Text::copy(loc.as_bytes()));
        }
        if let Some((mtime, size)) = self.etag {
            let mut v = Vec::with_capacity(36);
            push_etag(&mut v, mtime, size);
            l.push("ETag", v);
        }
        if let Some(cr) = self.content_range {
            l.push("Content-Range", Text::copy(cr.as_bytes()));
        }
        if self.accept_ranges {
            l.push("Accept-Ranges", "bytes");
        }
        l
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
        let fields: Vec<(String, String)> = h
            .fields()
            .iter()
            .map(|f| {
                let t = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
                (t(&f.name), t(&f.value))
            })
            .collect();
        let want = [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", "20"),
            ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("ETag", "\"6b0d5a02-14\""),
            ("Accept-Ranges", "bytes"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        assert_eq!(fields, want);
        assert_eq!(h.split(), 3);
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
