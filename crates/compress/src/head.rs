//! Applying compression's header changes to a response's fields.
//!
//! A response's fields are a [`FieldList`] in nginx's order, the header
//! filter's own before its split (where the protocol writer puts
//! `Connection`). nginx's header filter writes `Transfer-Encoding` last
//! before that point and `Vary` first after it; a compression filter
//! appends `Content-Encoding` after every other header (it runs after
//! add_header and expires). Verified order from nginx 1.22.1:
//! `Content-Type, Last-Modified, Transfer-Encoding, Connection, Vary, ETag,
//! Expires, Cache-Control, Content-Encoding`.

use peregrine_codec::fields::FieldList;

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

/// Rewrites `head` for `encoded`, adding `Vary: Accept-Encoding` when
/// `vary` (once: not when it already has it, as when core made a
/// precompressed sibling's head vary; nginx writes it once, for
/// `r->gzip_vary`), and `Transfer-Encoding: chunked` for on-the-fly
/// compression when `chunked` (an HTTP/1.1 client; an HTTP/1.0 body ends
/// with the connection).
pub fn rewrite_head(head: &mut FieldList, encoded: Encoded, vary: bool, chunked: bool) {
    let on_the_fly = matches!(encoded, Encoded::OnTheFly(_));
    if on_the_fly {
        let split = head.split();
        let mut i = 0;
        head.retain(|f| {
            i += 1;
            !(i <= split && f.is("Content-Length"))
        });
        if chunked {
            head.push_first("Transfer-Encoding", "chunked");
        }
    }
    if encoded != Encoded::No {
        head.remove("Accept-Ranges");
    }
    if on_the_fly {
        // Every ETag after the split weakened, an invalid one dropped.
        let mut at = head.split();
        while at < head.len() {
            let f = &head.fields()[at];
            if !f.is("ETag") {
                at += 1;
                continue;
            }
            let weak = std::str::from_utf8(&f.value)
                .ok()
                .and_then(|v| weaken_etag(v.trim()));
            match weak {
                Some(w) => {
                    head.set_value(at, w);
                    at += 1;
                }
                None => {
                    head.remove_at(at);
                }
            }
        }
    }
    let has_vary = head.rest().iter().any(|f| {
        f.is("Vary")
            && f.value
                .trim_ascii()
                .eq_ignore_ascii_case(VARY_ACCEPT_ENCODING.as_bytes())
    });
    if vary && !has_vary {
        let at = head.split();
        head.insert(at, "Vary", VARY_ACCEPT_ENCODING);
    }
    if let Encoded::OnTheFly(c) | Encoded::Precompressed(c) = encoded {
        head.push("Content-Encoding", c.token());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> FieldList {
        let mut h = FieldList::new();
        h.push_first("Content-Type", "text/html");
        h.push_first("Content-Length", "20120");
        h.push_first("Last-Modified", "Mon, 30 Nov 2026 11:10:47 GMT");
        h.push("ETag", "\"6b0d59b7-4e98\"");
        h.push("Accept-Ranges", "bytes");
        h
    }

    /// The fields before and after the split, as `Name: value` lines.
    fn text(h: &FieldList) -> (String, String) {
        let t = |fs: &[peregrine_codec::fields::Field]| {
            fs.iter()
                .map(|f| {
                    format!(
                        "{}: {}\r\n",
                        String::from_utf8_lossy(&f.name),
                        String::from_utf8_lossy(&f.value)
                    )
                })
                .collect::<String>()
        };
        (t(h.first()), t(h.rest()))
    }

    fn run(encoded: Encoded, vary: bool, chunked: bool) -> (String, String) {
        let mut h = head();
        rewrite_head(&mut h, encoded, vary, chunked);
        text(&h)
    }

    const PRE: &str = "Content-Type: text/html\r\nContent-Length: 20120\r\nLast-Modified: Mon, 30 Nov 2026 11:10:47 GMT\r\n";
    const POST: &str = "ETag: \"6b0d59b7-4e98\"\r\nAccept-Ranges: bytes\r\n";

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
        let mut h = head();
        rewrite_head(&mut h, Encoded::No, false, true);
        assert_eq!(h, head());
    }

    #[test]
    fn invalid_etag_is_dropped_and_names_match_exactly() {
        let mut h = FieldList::new();
        h.push_first("Content-Lengthx", "1");
        h.push("X-ETag", "\"a\"");
        h.push("ETag", "abc");
        h.push("etag", "\"b\"");
        rewrite_head(&mut h, Encoded::OnTheFly(Coding::Zstd), false, false);
        let (pre, post) = text(&h);
        assert_eq!(pre, "Content-Lengthx: 1\r\n");
        assert_eq!(
            post,
            "X-ETag: \"a\"\r\netag: W/\"b\"\r\nContent-Encoding: zstd\r\n"
        );
    }

    #[test]
    fn vary_is_written_once() {
        let mut h = FieldList::new();
        h.push_first("Content-Type", "text/html");
        h.push("Vary", "accept-encoding");
        h.push("ETag", "\"a\"");
        rewrite_head(&mut h, Encoded::OnTheFly(Coding::Gzip), true, true);
        let (_, post) = text(&h);
        assert_eq!(post.matches("Vary").count(), 1, "{post}");
        // A Vary of another header is not this one.
        let mut h = FieldList::new();
        h.push_first("Content-Type", "text/html");
        h.push("Vary", "Cookie");
        rewrite_head(&mut h, Encoded::No, true, false);
        let (_, post) = text(&h);
        assert_eq!(post, "Vary: Accept-Encoding\r\nVary: Cookie\r\n");
    }
}
