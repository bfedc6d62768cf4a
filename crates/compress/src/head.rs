//! Applying compression's header changes to serialized header lines.
//!
//! Core serializes a response's header lines (`Name: value\r\n` each) in
//! nginx's order with an offset where the engine inserts `Connection` and
//! `Keep-Alive` (see peregrine-core's `head` module). nginx's header filter
//! writes `Transfer-Encoding` last before that point and `Vary` first after
//! it; a compression filter appends `Content-Encoding` after every other
//! header (it runs after add_header and expires). Verified order from
//! nginx 1.22.1: `Content-Type, Last-Modified, Transfer-Encoding,
//! Connection, Vary, ETag, Expires, Cache-Control, Content-Encoding`.

use crate::coding::Coding;
use crate::effects::{VARY_ACCEPT_ENCODING, weaken_etag};

/// How the body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoded {
    /// Sent as is.
    No,
    /// Compressed on the fly: `Content-Length` and `Accept-Ranges` go, the
    /// ETag is weakened.
    OnTheFly(Coding),
    /// A precompressed sibling file (`gzip_static` and friends): its own
    /// `Content-Length` and strong ETag stay, `Accept-Ranges` goes.
    Precompressed(Coding),
}

/// Rewrites `head` (lines before `split` go before `Connection`) for
/// `encoded`, adding `Vary: Accept-Encoding` when `vary` (once: not when
/// the lines after `split` already have it, as when core made a
/// precompressed sibling's head vary; nginx writes it once, for
/// `r->gzip_vary`), and
/// `Transfer-Encoding: chunked` for on-the-fly compression when `chunked`
/// (an HTTP/1.1 client; an HTTP/1.0 body ends with the connection).
/// Returns the new lines and the new split.
pub fn rewrite_head(
    head: &[u8],
    split: usize,
    encoded: Encoded,
    vary: bool,
    chunked: bool,
) -> (Vec<u8>, usize) {
    let split = split.min(head.len());
    let mut out = Vec::with_capacity(head.len() + 64);
    let on_the_fly = matches!(encoded, Encoded::OnTheFly(_));
    for line in lines(&head[..split]) {
        if on_the_fly && is(line, "Content-Length") {
            continue;
        }
        out.extend_from_slice(line);
    }
    if on_the_fly && chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    }
    let new_split = out.len();
    let has_vary = lines(&head[split..]).any(|l| {
        is(l, "Vary") && value(l).is_some_and(|v| v.eq_ignore_ascii_case(VARY_ACCEPT_ENCODING))
    });
    if vary && !has_vary {
        out.extend_from_slice(b"Vary: ");
        out.extend_from_slice(VARY_ACCEPT_ENCODING.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for line in lines(&head[split..]) {
        if encoded != Encoded::No && is(line, "Accept-Ranges") {
            continue;
        }
        if on_the_fly && is(line, "ETag") {
            if let Some(weak) = value(line).and_then(weaken_etag) {
                out.extend_from_slice(b"ETag: ");
                out.extend_from_slice(weak.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            continue;
        }
        out.extend_from_slice(line);
    }
    if let Encoded::OnTheFly(c) | Encoded::Precompressed(c) = encoded {
        out.extend_from_slice(b"Content-Encoding: ");
        out.extend_from_slice(c.token().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    (out, new_split)
}

/// The lines of `b`, each with its `\r\n` (a last line without one is kept
/// as is).
fn lines(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    b.split_inclusive(|&c| c == b'\n')
}

fn is(line: &[u8], name: &str) -> bool {
    line.len() > name.len()
        && line[..name.len()].eq_ignore_ascii_case(name.as_bytes())
        && line[name.len()] == b':'
}

fn value(line: &[u8]) -> Option<&str> {
    let colon = line.iter().position(|&c| c == b':')?;
    std::str::from_utf8(&line[colon + 1..]).ok().map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRE: &str = "Content-Type: text/html\r\nContent-Length: 20120\r\nLast-Modified: Mon, 30 Nov 2026 11:10:47 GMT\r\n";
    const POST: &str = "ETag: \"6b0d59b7-4e98\"\r\nAccept-Ranges: bytes\r\n";

    fn head() -> (Vec<u8>, usize) {
        (format!("{PRE}{POST}").into_bytes(), PRE.len())
    }

    fn run(encoded: Encoded, vary: bool, chunked: bool) -> (String, String) {
        let (h, split) = head();
        let (out, s) = rewrite_head(&h, split, encoded, vary, chunked);
        let out = String::from_utf8(out).unwrap();
        (out[..s].to_string(), out[s..].to_string())
    }

    #[test]
    fn on_the_fly_matches_nginx() {
        let (pre, post) = run(Encoded::OnTheFly(Coding::Gzip), true, true);
        assert_eq!(
            pre,
            "Content-Type: text/html\r\nLast-Modified: Mon, 30 Nov 2026 11:10:47 GMT\r\nTransfer-Encoding: chunked\r\n"
        );
        assert_eq!(
            post,
            "Vary: Accept-Encoding\r\nETag: W/\"6b0d59b7-4e98\"\r\nContent-Encoding: gzip\r\n"
        );
        // HTTP/1.0: no chunked framing.
        let (pre, _) = run(Encoded::OnTheFly(Coding::Brotli), false, false);
        assert!(!pre.contains("Transfer-Encoding"));
    }

    #[test]
    fn precompressed_keeps_length_and_strong_etag() {
        let (pre, post) = run(Encoded::Precompressed(Coding::Gzip), true, true);
        assert_eq!(pre, PRE);
        assert_eq!(
            post,
            "Vary: Accept-Encoding\r\nETag: \"6b0d59b7-4e98\"\r\nContent-Encoding: gzip\r\n"
        );
    }

    #[test]
    fn uncompressed_only_gains_vary() {
        let (pre, post) = run(Encoded::No, true, true);
        assert_eq!(pre, PRE);
        assert_eq!(post, format!("Vary: Accept-Encoding\r\n{POST}"));
        let (h, split) = head();
        assert_eq!(
            rewrite_head(&h, split, Encoded::No, false, true),
            (h.clone(), split)
        );
    }

    #[test]
    fn invalid_etag_is_dropped_and_names_match_exactly() {
        let h = b"Content-Lengthx: 1\r\nX-ETag: \"a\"\r\nETag: abc\r\netag: \"b\"\r\n";
        let (out, s) = rewrite_head(h, 20, Encoded::OnTheFly(Coding::Zstd), false, false);
        let out = String::from_utf8(out).unwrap();
        assert_eq!(&out[..s], "Content-Lengthx: 1\r\n");
        assert_eq!(
            &out[s..],
            "X-ETag: \"a\"\r\nETag: W/\"b\"\r\nContent-Encoding: zstd\r\n"
        );
    }

    #[test]
    fn vary_is_written_once() {
        let h = b"Content-Type: text/html\r\nVary: accept-encoding\r\nETag: \"a\"\r\n";
        let (out, s) = rewrite_head(h, 25, Encoded::OnTheFly(Coding::Gzip), true, true);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("Vary").count(), 1, "{text}");
        assert_eq!(&text[s..s + 6], "Vary: ");
        // A Vary of another header is not this one.
        let h = b"Content-Type: text/html\r\nVary: Cookie\r\n";
        let (out, _) = rewrite_head(h, 25, Encoded::No, true, false);
        assert_eq!(String::from_utf8(out).unwrap().matches("Vary").count(), 2);
    }

    #[test]
    fn any_split_is_safe() {
        let (h, _) = head();
        for split in 0..=h.len() + 3 {
            let _ = rewrite_head(&h, split, Encoded::OnTheFly(Coding::Gzip), true, true);
        }
    }
}
