//! `gzip_static`, `brotli_static`, `zstd_static`: serving a precompressed
//! sibling (`FILE.gz`, `.br`, `.zst`) before the file itself, as
//! ngx_http_gzip_static_module (and its copies in ngx_brotli and
//! zstd-nginx-module) does in the content phase. The rules — which
//! siblings, in which order, when `Vary` is due — are peregrine-compress's
//! [`static_plan`]; this module looks for the files and builds the
//! response.
//!
//! As nginx 1.22.1 (verified): the sibling's own size, Last-Modified and
//! strong ETag, the original name's Content-Type, `Content-Encoding`, no
//! `Accept-Ranges`, `Range` ignored; conditional requests are answered with
//! the sibling's validators; `Vary` only in mode `on` with `gzip_vary on`.

use peregrine_compress::{Coding, Encoded, Policy, rewrite_head, static_plan};
use peregrine_conf::model::{LocConf, StaticMode};

use crate::compress_variant::{Precheck, request_facts};
use crate::conditional::Verdict;
use crate::fcache::{FileInfo, open_uncached};
use crate::head::etag_value;
use crate::http::{Ctx, HttpCore, Step};
use crate::request::Method;
use crate::special::Special;

/// The outcome of looking for precompressed siblings.
pub(crate) enum Precompressed {
    /// A sibling was served (or the request failed on it).
    Served(Step),
    /// Serve the file itself, with what was learned.
    NotServed(Precheck),
}

/// `gzip_static`, `brotli_static` and `zstd_static` are all off: no file
/// beside the requested one is probed.
pub(crate) fn statics_off(c: &LocConf) -> bool {
    c.gzip.static_ == StaticMode::Off
        && c.brotli.static_ == StaticMode::Off
        && c.zstd.static_ == StaticMode::Off
}

impl HttpCore {
    /// Runs `gzip_static`/`brotli_static`/`zstd_static` for the file at
    /// `self.path_buf` (already mapped).
    pub(crate) fn precompressed(&mut self, ctx: &Ctx<'_>) -> Precompressed {
        let c = &ctx.conf;
        if statics_off(c) || crate::phases::escapes(c, &self.path_buf) {
            return Precompressed::NotServed(Precheck::default());
        }
        let plan = static_plan(
            &request_facts(ctx, None),
            &Policy::of(c),
            matches!(ctx.method, Method::Get | Method::Head),
            ctx.uri.ends_with('/'),
        );
        let mut vary = false;
        let mut candidate = String::with_capacity(self.path_buf.len() + 4);
        for probe in &plan.probes {
            candidate.clear();
            candidate.push_str(&self.path_buf);
            candidate.push_str(probe.coding.static_suffix());
            // nginx declines on every open error (logging the unusual
            // ones): the next probe, then the file itself, is tried.
            let Ok(info) = open_uncached(&candidate, !probe.serve) else {
                continue;
            };
            vary |= probe.vary_if_found;
            if !probe.serve || info.is_dir {
                continue;
            }
            if !info.is_file {
                return Precompressed::Served(Step::Special(Special::status(404)));
            }
            let vary = vary && c.gzip.vary;
            return Precompressed::Served(self.send_precompressed(ctx, &info, probe.coding, vary));
        }
        Precompressed::NotServed(Precheck {
            vary: vary && c.gzip.vary,
            gzip_tested: plan.gzip_tested,
        })
    }

    fn send_precompressed(
        &mut self,
        ctx: &Ctx<'_>,
        info: &FileInfo,
        coding: Coding,
        vary: bool,
    ) -> Step {
        let status = ctx.status(200);
        let encoded = Encoded::Precompressed(coding);
        if status == 200 {
            let conds = crate::static_file::conditions(ctx);
            let etag = ctx.conf.etag.then(|| etag_value(info.mtime, info.size));
            match conds.evaluate(etag.as_deref(), info.mtime) {
                Verdict::Send => {}
                Verdict::PreconditionFailed => return Step::Special(Special::status(412)),
                Verdict::NotModified => {
                    let mut r = self.not_modified(ctx, info);
                    rewrite_head(r.head.to_mut(), encoded, vary, false);
                    return Step::Done(r);
                }
            }
        }
        let mut head = self.full_head(ctx, info, status);
        rewrite_head(&mut head, encoded, vary, false);
        let body = crate::static_file::whole_file_body(ctx, info);
        Step::Done(self.file_response(ctx, status, head.into(), body, info.size, false))
    }
}

/// Static files through [`HttpCore`] with compression: precompressed
/// siblings, ranges, and the memory cache's compressed variants.
#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use peregrine_conf::model::{LocConf, MemoryCacheConf, StaticMode};

    use crate::HttpCore;
    use crate::fixtures::{body_bytes, config, conn, loc_conf, request, server_with};
    use crate::response::{Body, Response};
    use crate::testdir::TestDir;

    fn page() -> Vec<u8> {
        "<p>variants are made once</p>\n".repeat(300).into_bytes()
    }

    fn core(conf: LocConf) -> HttpCore {
        let s = server_with(&[("0.0.0.0:8080", false)], &[""], Vec::new(), conf);
        HttpCore::new(Arc::new(config(vec![s])))
    }

    fn conf(d: &TestDir) -> LocConf {
        let mut c = loc_conf(d.root());
        c.gzip.on = true;
        c.gzip.vary = true;
        c.memory_cache = Some(MemoryCacheConf {
            size: 1 << 20,
            max_file: 64 << 10,
        });
        c
    }

    fn run(core: &mut HttpCore, method: &str, path: &str, h: &[(&str, &str)], t: u64) -> Response {
        let headers: Vec<(&str, &str)> = h.to_vec();
        let view = request(method, path, "a.test", &headers);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000 + t);
        core.handle_view(&conn("127.0.0.1:8080"), &view, now)
    }

    fn head(r: &Response) -> String {
        crate::fixtures::head_text(&r.head)
    }

    /// The compressed bytes of a response the HTTP/1 writer frames as
    /// chunks (core gives the payload alone), compared with a fresh
    /// `compress_all` of the expected text.
    fn chunk_data(r: &Response) -> Vec<u8> {
        assert!(r.chunked, "marked for the writer's chunked framing");
        body_bytes(&r.body)
    }

    const GZ: &[(&str, &str)] = &[("Accept-Encoding", "gzip")];

    #[test]
    fn second_request_reuses_the_variant_and_a_change_makes_a_new_one() {
        let d = TestDir::new("variants");
        let p = d.file("a.html", &page());
        let mut c = core(conf(&d));
        let expect =
            peregrine_compress::compress_all(peregrine_compress::Coding::Gzip, 1, &page()).unwrap();
        let r1 = run(&mut c, "GET", "/a.html", GZ, 0);
        assert_eq!(r1.status, 200);
        let h = head(&r1);
        assert!(h.contains("Content-Encoding: gzip\r\n"), "{h}");
        assert!(h.contains("Transfer-Encoding: chunked\r\n"), "{h}");
        assert!(h.contains("Vary: Accept-Encoding\r\n"), "{h}");
        assert!(
            !h.contains("Content-Length") && !h.contains("Accept-Ranges"),
            "{h}"
        );
        assert!(!r1.compressible && r1.content_length.is_none());
        assert_eq!(chunk_data(&r1), expect);
        assert_eq!(c.mcache.compressions, 1);
        // Again, and with a Range (ignored when compressing): no new work.
        let r2 = run(&mut c, "GET", "/a.html", GZ, 1);
        assert_eq!(chunk_data(&r2), expect);
        let r3 = run(
            &mut c,
            "GET",
            "/a.html",
            &[("Accept-Encoding", "gzip"), ("Range", "bytes=0-3")],
            2,
        );
        assert_eq!(r3.status, 200);
        assert_eq!(chunk_data(&r3), expect);
        // HEAD: the same head without the chunked coding, no body.
        let r4 = run(&mut c, "HEAD", "/a.html", GZ, 3);
        assert!(!head(&r4).contains("Transfer-Encoding"));
        assert!(r4.body.is_empty() && r4.header_only);
        assert_eq!(c.mcache.compressions, 1);
        // Uncompressed requests still get the file (the engine adds Vary).
        let r5 = run(&mut c, "GET", "/a.html", &[], 4);
        assert!(r5.compressible);
        assert_eq!(r5.content_length, Some(page().len() as u64));
        // The file changes: after open_file_cache_valid, a fresh variant.
        let mut changed = page();
        changed.extend_from_slice(b"<p>changed</p>\n");
        std::fs::write(&p, &changed).unwrap();
        let r6 = run(&mut c, "GET", "/a.html", GZ, 120);
        let want = peregrine_compress::compress_all(peregrine_compress::Coding::Gzip, 1, &changed)
            .unwrap();
        assert_eq!(chunk_data(&r6), want);
        assert_eq!(c.mcache.compressions, 2);
    }

    #[test]
    fn files_above_max_file_keep_only_the_variant() {
        let d = TestDir::new("variants-big");
        let big = "<p>bigger than max_file</p>\n".repeat(3000).into_bytes();
        assert!(big.len() > 64 << 10);
        let p = d.file("big.html", &big);
        let mut c = core(conf(&d));
        let gz =
            |b: &[u8]| peregrine_compress::compress_all(peregrine_compress::Coding::Gzip, 1, b);
        for t in 0..3 {
            let r = run(&mut c, "GET", "/big.html", GZ, t);
            assert_eq!(chunk_data(&r), gz(&big).unwrap());
        }
        assert_eq!(c.mcache.compressions, 1);
        // Uncompressed: the file, not the (empty) cached body.
        let r = run(&mut c, "GET", "/big.html", &[], 3);
        assert!(matches!(r.body, Body::File { .. }));
        assert_eq!(r.body.len(), big.len() as u64);
        let r = run(&mut c, "GET", "/big.html", GZ, 4);
        assert_eq!(chunk_data(&r), gz(&big).unwrap());
        assert_eq!(c.mcache.compressions, 1);
        // Another level (another location's settings): made once as well.
        let mut other = conf(&d);
        other.gzip.comp_level = 9;
        let mut c9 = core(other);
        run(&mut c9, "GET", "/big.html", GZ, 0);
        run(&mut c9, "GET", "/big.html", GZ, 1);
        assert_eq!(c9.mcache.compressions, 1);
        // Changed: a fresh variant after revalidation.
        let mut changed = big.clone();
        changed.extend_from_slice(b"<p>more</p>\n");
        std::fs::write(&p, &changed).unwrap();
        let r = run(&mut c, "GET", "/big.html", GZ, 200);
        assert_eq!(chunk_data(&r), gz(&changed).unwrap());
        assert_eq!(c.mcache.compressions, 2);
        // Above COMPRESSED_MAX_FILE: streamed by the engine.
        let huge =
            vec![b'a'; usize::try_from(crate::compress_variant::COMPRESSED_MAX_FILE).unwrap() + 1];
        d.file("huge.html", &huge);
        let r = run(&mut c, "GET", "/huge.html", GZ, 201);
        assert!(r.compressible && matches!(r.body, Body::File { .. }));
        assert_eq!(c.mcache.compressions, 2);
    }

    #[test]
    fn uncompressed_range_still_answered() {
        let d = TestDir::new("variants-range");
        d.file("a.html", &page());
        let mut c = core(conf(&d));
        let r = run(&mut c, "GET", "/a.html", &[("Range", "bytes=0-3")], 0);
        assert_eq!(r.status, 206);
        assert_eq!(body_bytes(&r.body), b"<p>v");
        // Without the memory cache the range is ignored as well.
        let mut conf = conf(&d);
        conf.memory_cache = None;
        let mut c = core(conf);
        let r = run(
            &mut c,
            "GET",
            "/a.html",
            &[("Accept-Encoding", "gzip"), ("Range", "bytes=0-3")],
            0,
        );
        assert_eq!(r.status, 200);
        assert!(r.compressible, "the engine compresses it");
        assert_eq!(r.body.len(), page().len() as u64);
    }

    #[test]
    fn gzip_static_serves_the_sibling() {
        let d = TestDir::new("gzip-static");
        d.file("a.html", &page());
        d.file("a.html.gz", b"precompressed");
        d.file("b.html", &page());
        let mut conf = conf(&d);
        conf.gzip.static_ = StaticMode::On;
        let mut c = core(conf);
        let r = run(&mut c, "GET", "/a.html", GZ, 0);
        let h = head(&r);
        assert_eq!(body_bytes(&r.body), b"precompressed");
        assert!(!r.compressible);
        assert!(
            h.starts_with("Content-Type: text/html\r\nContent-Length: 13\r\n"),
            "{h}"
        );
        assert!(h.ends_with("Content-Encoding: gzip\r\n"), "{h}");
        assert!(h.contains("Vary: Accept-Encoding\r\nETag: \""), "{h}");
        assert!(!h.contains("Accept-Ranges"), "{h}");
        // Not accepted: the file itself, with Vary because the sibling exists.
        let r = run(&mut c, "GET", "/a.html", &[], 1);
        assert_eq!(r.body.len(), page().len() as u64);
        assert_eq!(head(&r).matches("Vary: Accept-Encoding").count(), 1);
        // A ranged uncompressed request also varies.
        let r = run(&mut c, "GET", "/a.html", &[("Range", "bytes=0-1")], 2);
        assert_eq!(r.status, 206);
        assert!(head(&r).contains("Vary: Accept-Encoding"));
        // Conditional on the sibling's ETag: 304 with its encoding.
        let etag = crate::fixtures::etag_of(&h);
        let r = run(
            &mut c,
            "GET",
            "/a.html",
            &[("Accept-Encoding", "gzip"), ("If-None-Match", &etag)],
            3,
        );
        assert_eq!(r.status, 304);
        // No sibling: compressed on the fly (here from the memory cache).
        let r = run(&mut c, "GET", "/b.html", GZ, 4);
        assert!(head(&r).contains("Content-Encoding: gzip"));
    }

    #[test]
    fn gzip_static_always_and_directories() {
        let d = TestDir::new("gzip-static-always");
        d.file("a.html", &page());
        d.file("a.html.gz", b"pre");
        d.dir("d.html.gz");
        d.file("d.html", &page());
        let mut conf = conf(&d);
        conf.gzip.static_ = StaticMode::Always;
        let mut c = core(conf);
        let r = run(&mut c, "GET", "/a.html", &[], 0);
        assert_eq!(r.body.len(), 3);
        assert!(!head(&r).contains("Vary"));
        // A directory named like the sibling is skipped.
        let r = run(&mut c, "GET", "/d.html", &[], 1);
        assert_eq!(r.body.len(), page().len() as u64);
        // POST is not the static handler's: no sibling.
        let r = run(&mut c, "POST", "/a.html", &[], 2);
        assert_eq!(r.status, 405);
    }
}
