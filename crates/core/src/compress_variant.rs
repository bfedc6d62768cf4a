//! Compression decided in core for static files, and the compressed
//! variants kept in the memory cache.
//!
//! The engine compresses every `compressible` response on the fly
//! (peregrine-engine's `compress` module). Core takes the same decision
//! ([`peregrine_compress::decide`], same inputs) for static files early,
//! for two reasons:
//!
//! - nginx's gzip header filter runs before the range filter and clears
//!   `r->allow_ranges`: when compression applies, `Range` is ignored and the
//!   whole compressed body goes out with 200 (verified against nginx
//!   1.22.1). Core answers ranges, so it must know first.
//! - A small file's compressed body is produced once and kept beside the
//!   uncompressed one in the memory cache ([`crate::mcache::Variant`]), so a
//!   compressed hit costs what an uncompressed hit does. nginx compresses
//!   every response again.
//!
//! A cached variant goes out exactly as the streamed one does (and as
//! nginx sends it): chunked without `Content-Length` to HTTP/1.1 clients,
//! delimited by the close for HTTP/1.0, no length for HEAD. The body
//! decodes to the same bytes with the same codec parameters
//! ([`peregrine_compress::compress_all`] is the streaming encoder fed the
//! whole body at once; a deflate stream's block boundaries depend on how
//! the input arrives, as nginx's depend on its buffer sizes), and goes out
//! as one chunk instead of several (chunk sizes carry no meaning, RFC 9112
//! §7.1).
//!
//! Files above `memory_cache`'s `max_file` but no larger than
//! [`COMPRESSED_MAX_FILE`] keep only their compressed variants, in an entry
//! without the uncompressed body: compressing such a file costs
//! milliseconds of CPU per request, holding its variant costs a fraction of
//! its size once (text compresses 3-10x), so the trade is worth making even
//! where the uncompressed body is not. The bytes count against
//! `memory_cache size=` like any entry, and the entry is revalidated and
//! dropped with the file like any entry. Larger files, and every file when
//! `memory_cache` is off, are compressed streaming by the engine, with one
//! encoder's bounded memory per connection.

use std::sync::Arc;

use peregrine_compress::{
    Accepted, Coding, Decision, Encoded, Policy, RequestFacts, ResponseFacts, compress_all, decide,
    rewrite_head,
};

use std::os::unix::fs::FileExt;

use crate::fcache::FileInfo;
use crate::head::content_type;
use peregrine_codec::fields::{FieldList, SharedFields};

use crate::http::{Ctx, HttpCore};
use crate::mcache::{MemEntry, Variant};
use crate::response::{Body, Head, Response};

/// The largest file whose compressed variants are cached when the file
/// itself is above `memory_cache`'s `max_file` (see the module doc).
pub(crate) const COMPRESSED_MAX_FILE: u64 = 1 << 20;

/// What `gzip_static` and friends leave for the rest of the static module
/// when they serve no precompressed file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Precheck {
    /// A sibling exists and the mode is `on` (with `gzip_vary on`): the
    /// response varies on `Accept-Encoding` whatever is sent.
    pub vary: bool,
    /// ngx_http_gzip_ok's answer when `gzip_static on` already ran it.
    pub gzip_tested: Option<bool>,
}

/// Whether any compression filter is on in this location.
pub(crate) fn any_on(ctx: &Ctx<'_>) -> bool {
    Policy::of(&ctx.conf).any_on()
}

/// The compression facts of this request.
pub(crate) fn request_facts<'a>(ctx: &Ctx<'a>, gzip_tested: Option<bool>) -> RequestFacts<'a> {
    let req = ctx.req;
    let Some(ae) = req.header("Accept-Encoding") else {
        // Nothing is accepted: every rule that reads the other headers
        // (ngx_http_gzip_ok) stops at `Accept-Encoding` first. Spares three
        // header scans on every uncompressed request.
        return RequestFacts {
            http_version: req.version,
            gzip_tested,
            ..RequestFacts::default()
        };
    };
    RequestFacts {
        accepted: Accepted::from_header(Some(ae)),
        http_version: req.version,
        user_agent: req.header("User-Agent"),
        via: req.header("Via").is_some(),
        authorization: req.header("Authorization").is_some(),
        gzip_tested,
    }
}

/// The decision for a static file of `size` bytes (its type from the URI),
/// as the engine's filter will take it (a static file has an ETag and, when
/// the filters run, no Last-Modified header yet: see
/// [`ResponseFacts::last_modified`]).
pub(crate) fn file_decision(ctx: &Ctx<'_>, status: u16, size: u64, pre: Precheck) -> Decision {
    // A body filter (SSI, sub, addition) changes the body first: the
    // engine compresses what it made (nginx's gzip filter runs after them).
    if ctx.conf.filters.active {
        return Decision {
            coding: None,
            vary: false,
        };
    }
    // Without `Accept-Encoding` and `gzip_vary` the answer is "as is"
    // ([`Policy::may_change`]): no type lookup, no header tests.
    if !Policy::of(&ctx.conf).may_change(ctx.req.header("Accept-Encoding").is_some()) {
        return Decision {
            coding: None,
            vary: false,
        };
    }
    let content_type = content_type(&ctx.conf, &ctx.uri).0;
    let resp = ResponseFacts {
        status,
        content_type: (!content_type.is_empty()).then_some(content_type),
        content_length: Some(size),
        etag: true,
        now: peregrine_codec::date::unix_secs(ctx.now),
        ..ResponseFacts::default()
    };
    decide(
        &request_facts(ctx, pre.gzip_tested),
        &resp,
        &Policy::of(&ctx.conf),
    )
}

/// The configured level of `coding` in this location.
pub(crate) fn level(ctx: &Ctx<'_>, coding: Coding) -> i32 {
    Policy::of(&ctx.conf).level(coding)
}

/// Compresses `body` and rewrites the 200 head `head` for it as the engine's filter does: `Content-Encoding`, weak ETag, no
/// `Content-Length` or `Accept-Ranges`, `Vary` when `vary`; one head with
/// `Transfer-Encoding: chunked`, one without.
pub(crate) fn make_variant(
    head: &FieldList,
    body: &[u8],
    coding: Coding,
    level: i32,
    vary: bool,
) -> Option<Variant> {
    let compressed = compress_all(coding, level, body).ok()?;
    let encoded = Encoded::OnTheFly(coding);
    let mut chunked = head.clone();
    rewrite_head(&mut chunked, encoded, vary, true);
    let mut plain = head.clone();
    rewrite_head(&mut plain, encoded, vary, false);
    Some(Variant {
        coding,
        level,
        vary,
        head_chunked: Arc::new(SharedFields::new(chunked)),
        head_plain: Arc::new(SharedFields::new(plain)),
        body: Arc::from(compressed),
    })
}

/// The response for a cached variant (see the module doc for the framing).
pub(crate) fn variant_response(ctx: &Ctx<'_>, v: &Variant) -> Response {
    // `chunked_transfer_encoding off`: framed as for HTTP/1.0.
    let http11 = ctx.req.version >= (1, 1) && ctx.conf.conn.chunked_transfer_encoding;
    let header_only = ctx.header_only();
    let chunked = http11 && !header_only;
    let head = if chunked {
        v.head_chunked.clone()
    } else {
        v.head_plain.clone()
    };
    let body = if header_only {
        Body::Empty
    } else {
        Body::Shared(v.body.clone())
    };
    Response {
        status: 200,
        head: Head::Shared(head),
        body,
        content_length: None,
        // The HTTP/1 writer frames it.
        chunked,
        trailers: None,
        // HTTP/1.0: neither a length nor chunks, the close ends the body.
        keepalive: http11,
        header_only,
        conf: Some(ctx.conf.clone()),
        server: None,
        compressible: false,
    }
}

impl HttpCore {
    /// For a file above `max_file` and up to [`COMPRESSED_MAX_FILE`] that is
    /// to be compressed: reads and compresses it once, keeps the variant
    /// (in an entry without the uncompressed body) and answers with it.
    pub(crate) fn variant_insert(
        &mut self,
        ctx: &Ctx<'_>,
        info: &FileInfo,
        pre: Precheck,
    ) -> Option<Response> {
        let mc = ctx.conf.memory_cache?;
        let size = usize::try_from(info.size).ok()?;
        if size <= mc.max_file || info.size > COMPRESSED_MAX_FILE || !any_on(ctx) {
            return None;
        }
        let d = file_decision(ctx, 200, info.size, pre);
        let coding = d.coding?;
        let file = info.file.as_ref()?;
        let mut body = vec![0u8; size];
        file.read_exact_at(&mut body, 0).ok()?;
        let head = self.full_head(ctx, info, 200);
        let v = make_variant(&head, &body, coding, level(ctx, coding), d.vary || pre.vary)?;
        self.mcache.compressions += 1;
        // `memory_hit` just revalidated a held entry: add to it.
        if !self
            .mcache
            .holds(&self.path_buf, crate::static_file::owner(ctx))
        {
            let mut entry = MemEntry::new(
                Arc::from(Vec::new()),
                Arc::new(SharedFields::new(head)),
                crate::static_file::owner(ctx),
                info.mtime,
                info.ino,
                info.dev,
                ctx.now,
                ctx.conf.open_file_cache_valid,
            );
            entry.size = info.size;
            entry.whole = false;
            self.mcache.insert(&self.path_buf, entry, mc.size);
        }
        let r = variant_response(ctx, &v);
        self.mcache.add_variant(&self.path_buf, v, mc.size);
        Some(r)
    }
}

/// `head` with `Vary: Accept-Encoding` first after the split (where nginx's
/// header filter writes it), for an uncompressed response that varies
/// because a precompressed sibling exists.
pub(crate) fn with_vary(head: &mut FieldList) {
    rewrite_head(head, Encoded::No, true, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{fields_of, head_parts};

    const HEAD: &str = "Content-Type: text/html\r\nContent-Length: 9000\r\nLast-Modified: Mon, 30 Nov 2026 11:10:47 GMT\r\nETag: \"6b0d59b7-2328\"\r\nAccept-Ranges: bytes\r\n";

    #[test]
    fn variant_head_and_body() {
        let body = "<p>hello variants</p>\n".repeat(400);
        let v = make_variant(&fields_of(HEAD, 3), body.as_bytes(), Coding::Gzip, 6, true).unwrap();
        let (first, rest) = head_parts(v.head_chunked.list());
        let pre = "Content-Type: text/html\r\nLast-Modified: Mon, 30 Nov 2026 11:10:47 GMT\r\n";
        let post =
            "Vary: Accept-Encoding\r\nETag: W/\"6b0d59b7-2328\"\r\nContent-Encoding: gzip\r\n";
        assert_eq!(first, format!("{pre}Transfer-Encoding: chunked\r\n"));
        assert_eq!(rest, post);
        assert_eq!(
            head_parts(v.head_plain.list()),
            (pre.to_string(), post.to_string())
        );
        // The streaming encoder's bytes for the whole body written at once.
        let mut e =
            peregrine_compress::Encoder::with_length_hint(Coding::Gzip, 6, Some(body.len() as u64))
                .unwrap();
        let mut streamed = Vec::new();
        e.write(body.as_bytes(), &mut streamed).unwrap();
        e.finish(&mut streamed).unwrap();
        assert_eq!(&*v.body, streamed.as_slice());
    }

    #[test]
    fn vary_goes_first_after_the_split() {
        let mut l = fields_of("A: b\r\nC: d\r\n", 1);
        with_vary(&mut l);
        assert_eq!(
            head_parts(&l),
            (
                "A: b\r\n".to_string(),
                "Vary: Accept-Encoding\r\nC: d\r\n".to_string()
            )
        );
    }

    #[test]
    fn bad_level_makes_no_variant() {
        assert!(make_variant(&fields_of(HEAD, 3), b"x", Coding::Gzip, 99, false).is_none());
    }
}
