//! The static module (`ngx_http_static_handler`) with the not-modified and
//! range filters applied to its 200 responses, and the memory cache.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use crate::conditional::{Conditions, Verdict};
use crate::fcache::FileInfo;
use crate::head::{HeadSpec, content_type, etag_value};
use crate::http::{Ctx, HttpCore, Step};
use crate::mcache::MemEntry;
use crate::phases::{map_uri, open_error_status};
use crate::range::{self, Ranges};
use crate::request::Method;
use crate::response::{Body, HeadLines, Response};
use crate::special::Special;

/// nginx's `NGX_ATOMIC_T_LEN` on 64-bit: the boundary is zero-padded to it.
const BOUNDARY_WIDTH: usize = 20;

impl HttpCore {
    pub(crate) fn static_file(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if !matches!(ctx.method, Method::Get | Method::Head | Method::Post) {
            return Step::Special(Special::status(405));
        }
        map_uri(&mut self.path_buf, ctx, &ctx.uri);

        let conds = conditions(ctx);
        let plain = ctx.method != Method::Post
            && ctx.err_status.is_none()
            && conds.is_empty()
            && ctx.req.header("Range").is_none();
        if plain
            && ctx.conf.memory_cache.is_some()
            && let Some(r) = self.memory_hit(ctx)
        {
            return Step::Done(r);
        }
        let info = match self.open_path(ctx, false) {
            Ok(i) => i,
            Err(e) => return Step::Special(Special::status(open_error_status(e))),
        };
        if info.is_dir {
            let mut location = String::with_capacity(ctx.uri.len() + 16);
            escape_uri(&mut location, &ctx.uri);
            location.push('/');
            if let Some(a) = ctx.args.as_deref() {
                location.push('?');
                location.push_str(a);
            }
            return Step::Special(Special {
                status: 301,
                location: Some(location),
                content_range: None,
            });
        }
        if !info.is_file {
            return Step::Special(Special::status(404));
        }
        if ctx.method == Method::Post {
            return Step::Special(Special::status(405));
        }
        // The open file cache keeps no descriptor below `min_uses`; a body
        // needs one.
        let info = match info.file {
            Some(_) => info,
            None => match crate::fcache::open_uncached(&self.path_buf, false) {
                Ok(i) if i.is_file && i.file.is_some() => i,
                Ok(_) => return Step::Special(Special::status(404)),
                Err(e) => return Step::Special(Special::status(open_error_status(e))),
            },
        };
        if plain && let Some(r) = self.memory_insert(ctx, &info) {
            return Step::Done(r);
        }
        self.respond_file(ctx, &info, &conds)
    }

    fn memory_hit(&mut self, ctx: &Ctx<'_>) -> Option<Response> {
        let conf_id = Arc::as_ptr(&ctx.conf) as usize;
        let valid = ctx.conf.open_file_cache_valid;
        let e = self.mcache.get(&self.path_buf, conf_id, valid, ctx.now)?;
        Some(Response {
            status: 200,
            head: HeadLines::Shared(e.head.clone()),
            head_split: e.split,
            body: if ctx.header_only() {
                Body::Empty
            } else {
                Body::Shared(e.body.clone())
            },
            content_length: Some(e.size),
            keepalive: true,
            header_only: ctx.header_only(),
            conf: Some(ctx.conf.clone()),
            server: None,
            compressible: true,
        })
    }

    /// Reads a small file into the memory cache and answers from it.
    fn memory_insert(&mut self, ctx: &Ctx<'_>, info: &FileInfo) -> Option<Response> {
        let mc = ctx.conf.memory_cache?;
        let file = info.file.as_ref()?;
        let size = usize::try_from(info.size).ok()?;
        if size > mc.max_file {
            return None;
        }
        let mut body = vec![0u8; size];
        file.read_exact_at(&mut body, 0).ok()?;
        let head = self.full_head(ctx, info, 200);
        let entry = MemEntry::new(
            Arc::from(body),
            Arc::from(head.bytes),
            head.split,
            Arc::as_ptr(&ctx.conf) as usize,
            info.mtime,
            info.ino,
            info.dev,
            ctx.now,
        );
        self.mcache.insert(&self.path_buf, entry, mc.size);
        self.memory_hit(ctx)
    }

    /// Content-Type, Content-Length, Last-Modified, ETag, Accept-Ranges of a
    /// whole file (Last-Modified and Accept-Ranges only for 200, as nginx's
    /// header and range filters).
    fn full_head(&self, ctx: &Ctx<'_>, info: &FileInfo, status: u16) -> crate::head::Head {
        let (ty, cs) = content_type(&ctx.conf, &ctx.uri);
        HeadSpec {
            content_type: Some(ty),
            charset: cs,
            content_length: Some(info.size),
            last_modified: (status == 200).then_some(info.mtime),
            etag: Some((info.mtime, info.size)),
            accept_ranges: status == 200,
            ..HeadSpec::default()
        }
        .write()
    }

    fn respond_file(&mut self, ctx: &Ctx<'_>, info: &FileInfo, conds: &Conditions<'_>) -> Step {
        let status = ctx.status(200);
        if status == 200 {
            let etag = etag_value(info.mtime, info.size);
            match conds.evaluate(&etag, info.mtime) {
                Verdict::Send => {}
                Verdict::PreconditionFailed => return Step::Special(Special::status(412)),
                Verdict::NotModified => return Step::Done(self.not_modified(ctx, info)),
            }
            if let Some(value) = ctx.req.header("Range") {
                let applies = ctx
                    .req
                    .header("If-Range")
                    .is_none_or(|ir| range::if_range_matches(ir, &etag, info.mtime));
                if applies {
                    match range::parse(value, info.size) {
                        Ranges::Ignore => {}
                        Ranges::Unsatisfiable => {
                            return Step::Special(Special {
                                status: 416,
                                location: None,
                                content_range: Some(format!("bytes */{}", info.size)),
                            });
                        }
                        Ranges::Satisfiable(r) if r.len() == 1 => {
                            return Step::Done(self.single_range(ctx, info, r[0]));
                        }
                        Ranges::Satisfiable(r) => return Step::Done(self.multipart(ctx, info, &r)),
                    }
                }
            }
        }
        // CONTENT FILTER HOOK: a whole-file 200 is marked `compressible`;
        // the engine runs the compression filters (gzip/brotli/zstd, from
        // peregrine-compress) on it after core, where nginx's gzip filter
        // sits in the header and body filter chains. `gzip_static` (serving
        // a precompressed `.gz` sibling) would be decided here, before
        // opening the file: not implemented yet.
        let head = self.full_head(ctx, info, status);
        let body = match (&info.file, ctx.header_only()) {
            (Some(f), false) if info.size > 0 => Body::File {
                file: f.clone(),
                offset: 0,
                len: info.size,
            },
            _ => Body::Empty,
        };
        Step::Done(self.file_response(ctx, status, head, body, info.size, true))
    }

    fn file_response(
        &self,
        ctx: &Ctx<'_>,
        status: u16,
        head: crate::head::Head,
        body: Body,
        len: u64,
        compressible: bool,
    ) -> Response {
        Response {
            status,
            head: HeadLines::Owned(head.bytes),
            head_split: head.split,
            body,
            content_length: Some(len),
            keepalive: true,
            header_only: ctx.header_only(),
            conf: Some(ctx.conf.clone()),
            server: None,
            compressible,
        }
    }

    /// 304: Last-Modified and ETag only (nginx clears the type and length).
    fn not_modified(&self, ctx: &Ctx<'_>, info: &FileInfo) -> Response {
        let head = HeadSpec {
            last_modified: Some(info.mtime),
            etag: Some((info.mtime, info.size)),
            ..HeadSpec::default()
        }
        .write();
        Response {
            status: 304,
            head: HeadLines::Owned(head.bytes),
            head_split: head.split,
            body: Body::Empty,
            content_length: None,
            keepalive: true,
            header_only: true,
            conf: Some(ctx.conf.clone()),
            server: None,
            compressible: false,
        }
    }

    fn single_range(&self, ctx: &Ctx<'_>, info: &FileInfo, (start, end): (u64, u64)) -> Response {
        let (ty, cs) = content_type(&ctx.conf, &ctx.uri);
        let cr = format!("bytes {}-{}/{}", start, end - 1, info.size);
        let head = HeadSpec {
            content_type: Some(ty),
            charset: cs,
            content_length: Some(end - start),
            last_modified: Some(info.mtime),
            etag: Some((info.mtime, info.size)),
            content_range: Some(&cr),
            ..HeadSpec::default()
        }
        .write();
        let body = match (&info.file, ctx.header_only()) {
            (Some(f), false) => Body::File {
                file: f.clone(),
                offset: start,
                len: end - start,
            },
            _ => Body::Empty,
        };
        self.file_response(ctx, 206, head, body, end - start, false)
    }

    /// multipart/byteranges as `ngx_http_range_multipart_header`.
    fn multipart(&mut self, ctx: &Ctx<'_>, info: &FileInfo, ranges: &[(u64, u64)]) -> Response {
        self.boundary += 1;
        let boundary = format!("{:0width$}", self.boundary, width = BOUNDARY_WIDTH);
        let (ty, cs) = content_type(&ctx.conf, &ctx.uri);
        let part_head = match cs {
            Some(cs) => format!(
                "\r\n--{boundary}\r\nContent-Type: {ty}; charset={cs}\r\nContent-Range: bytes "
            ),
            None => format!("\r\n--{boundary}\r\nContent-Type: {ty}\r\nContent-Range: bytes "),
        };
        let mut parts = Vec::with_capacity(ranges.len() * 2 + 1);
        for &(start, end) in ranges {
            let h = format!("{part_head}{}-{}/{}\r\n\r\n", start, end - 1, info.size);
            parts.push(Body::Shared(Arc::from(h.into_bytes())));
            if let Some(f) = &info.file {
                parts.push(Body::File {
                    file: f.clone(),
                    offset: start,
                    len: end - start,
                });
            }
        }
        parts.push(Body::Shared(Arc::from(
            format!("\r\n--{boundary}--\r\n").into_bytes(),
        )));
        let body = Body::Parts(parts);
        let len = body.len();
        let ct = format!("multipart/byteranges; boundary={boundary}");
        let head = HeadSpec {
            content_type: Some(&ct),
            content_length: Some(len),
            last_modified: Some(info.mtime),
            etag: Some((info.mtime, info.size)),
            ..HeadSpec::default()
        }
        .write();
        let body = if ctx.header_only() { Body::Empty } else { body };
        self.file_response(ctx, 206, head, body, len, false)
    }
}

/// `ngx_escape_uri(NGX_ESCAPE_URI)`, as nginx escapes the decoded URI in
/// a directory redirect's Location: controls, space, `"#%<>?\\^`{|}`, DEL
/// and non-ASCII bytes are percent-encoded.
fn escape_uri(out: &mut String, uri: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in uri.as_bytes() {
        let escape = c <= 0x20
            || c >= 0x7f
            || matches!(
                c,
                b'"' | b'#' | b'%' | b'<' | b'>' | b'?' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            );
        if escape {
            out.push('%');
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 15)]));
        } else {
            out.push(char::from(c));
        }
    }
}

fn conditions<'a>(ctx: &Ctx<'a>) -> Conditions<'a> {
    let h = |n| ctx.req.header(n);
    Conditions {
        if_unmodified_since: h("If-Unmodified-Since"),
        if_match: h("If-Match"),
        if_modified_since: h("If-Modified-Since"),
        if_none_match: h("If-None-Match"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_escaping_matches_nginx() {
        // nginx 1.22.1's Locations for directories with these names.
        for (uri, want) in [
            ("/a#b", "/a%23b"),
            ("/\u{e9}", "/%C3%A9"),
            ("/a?b", "/a%3Fb"),
            ("/q\"<>", "/q%22%3C%3E"),
            ("/c+d&e=f", "/c+d&e=f"),
            ("/x;y", "/x;y"),
            ("/sp ace", "/sp%20ace"),
        ] {
            let mut out = String::new();
            escape_uri(&mut out, uri);
            assert_eq!(out, want);
        }
    }
}
