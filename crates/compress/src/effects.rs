//! What compressing does to the rest of the response, as nginx does it.
//!
//! When a filter compresses (gzip, br or zstd alike) nginx adds
//! `Content-Encoding`, removes `Content-Length` (the body goes out chunked
//! to HTTP/1.1 clients, or delimited by closing the connection for 1.0),
//! removes `Accept-Ranges` and turns off range handling
//! (ngx_http_clear_accept_ranges), and weakens the ETag
//! (ngx_http_weak_etag). `Vary: Accept-Encoding` is added by the header
//! filter whenever a compression module found the response eligible and
//! `gzip_vary` is on ([`crate::Decision::vary`]).
//!
//! Ranges, verified against nginx 1.22.1 (Debian) with `gzip on`:
//! `GET` of a 20 KB `text/html` file with `Range: bytes=0-10` and
//! `Accept-Encoding: gzip` is answered `200 OK`, `Content-Encoding: gzip`,
//! `Transfer-Encoding: chunked`, the whole compressed body, a weak ETag and
//! no `Accept-Ranges`: the range is ignored, because the gzip header filter
//! runs before the range header filter and clears `r->allow_ranges`.
//! Without `Accept-Encoding: gzip` the same request gets `206` with the
//! strong ETag (and `Vary`). A file served by `gzip_static` likewise
//! ignores `Range` and has no `Accept-Ranges` in nginx 1.22.1.
//! `HEAD` gets the compressed response's headers (no `Content-Length`,
//! `Content-Encoding: gzip`, weak ETag) without a body.

use crate::coding::Coding;

/// The `Vary` value nginx adds.
pub const VARY_ACCEPT_ENCODING: &str = "Accept-Encoding";

/// ngx_http_weak_etag: `W/"..."` stays; `"..."` becomes `W/"..."`; any
/// other value (not a quoted entity-tag) is removed, shown as `None`.
pub fn weaken_etag(etag: &str) -> Option<String> {
    let b = etag.as_bytes();
    if b.len() > 2 && b.starts_with(b"W/") {
        return Some(etag.to_owned());
    }
    if !b.starts_with(b"\"") {
        return None;
    }
    Some(format!("W/{etag}"))
}

/// How core answers a `Range` request, given the compression decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeHandling {
    /// Not compressing: ranges are handled as usual.
    Normal,
    /// Compressing (or serving a precompressed file): ignore `Range` and
    /// `If-Range`, answer `200` with the whole (compressed) body, and send
    /// no `Accept-Ranges`.
    Ignore,
}

/// What to do with `Range` when the body is sent with `coding`
/// (`None`: sent as is).
pub fn range_handling(coding: Option<Coding>) -> RangeHandling {
    match coding {
        Some(_) => RangeHandling::Ignore,
        None => RangeHandling::Normal,
    }
}

/// The header changes core applies when a filter compresses the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderEdits {
    /// Set `Content-Encoding` to this.
    pub content_encoding: &'static str,
    /// Remove `Content-Length` (the compressed length is not known ahead).
    pub remove_content_length: bool,
    /// Remove `Accept-Ranges`, and answer ranges as [`RangeHandling::Ignore`].
    pub remove_accept_ranges: bool,
    /// Rewrite the ETag with [`weaken_etag`].
    pub weaken_etag: bool,
}

/// The edits for on-the-fly compression with `coding`.
pub fn header_edits(coding: Coding) -> HeaderEdits {
    HeaderEdits {
        content_encoding: coding.token(),
        remove_content_length: true,
        remove_accept_ranges: true,
        weaken_etag: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_etags() {
        assert_eq!(
            weaken_etag("\"6b0d59b7-4e98\"").as_deref(),
            Some("W/\"6b0d59b7-4e98\"")
        );
        assert_eq!(weaken_etag("W/\"x\"").as_deref(), Some("W/\"x\""));
        assert_eq!(weaken_etag("\"\"").as_deref(), Some("W/\"\""));
        // Not a quoted tag: removed.
        assert_eq!(weaken_etag("abc"), None);
        assert_eq!(weaken_etag(""), None);
        // "W/" alone is not weak (nginx requires len > 2) and not quoted.
        assert_eq!(weaken_etag("W/"), None);
        assert_eq!(weaken_etag("w/\"x\""), None);
    }

    #[test]
    fn ranges_are_ignored_only_when_encoding() {
        assert_eq!(range_handling(None), RangeHandling::Normal);
        for c in Coding::PREFERENCE {
            assert_eq!(range_handling(Some(c)), RangeHandling::Ignore);
        }
    }

    #[test]
    fn edits_name_the_coding() {
        let e = header_edits(Coding::Brotli);
        assert_eq!(e.content_encoding, "br");
        assert!(e.remove_content_length && e.remove_accept_ranges && e.weaken_etag);
        assert_eq!(header_edits(Coding::Zstd).content_encoding, "zstd");
        assert_eq!(header_edits(Coding::Gzip).content_encoding, "gzip");
    }
}
