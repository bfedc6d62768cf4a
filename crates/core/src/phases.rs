//! The rewrite (`return`), precontent (`try_files`) and content phases
//! other than the static file itself: stub_status, index, autoindex.

use std::sync::Arc;

use peregrine_conf::model::DocRoot;

use crate::fcache::{self, Call, Errno, FileInfo, OpenError, Policy};
use crate::head::{HeadSpec, charset_for, content_type};
use crate::http::{Ctx, HttpCore, Step, split_args};
use crate::request::Method;
use crate::response::{Body, ErrorNote, Head, Response, StubStatus};
use crate::special::Special;

/// [`escapes_root`] for a path mapped under `conf`'s `root`/`alias`: the
/// configured text is the administrator's, trusted as nginx trusts it
/// (nginx's test suite writes `alias /t/./cached/../;`), so only what the
/// URI added is checked, from the root's last byte on (a `..` joining
/// `alias /d/;` to the URI `/i../x` is still seen). A root with variables
/// is not trusted: a request may choose them.
pub(crate) fn escapes(conf: &peregrine_conf::model::LocConf, path: &str) -> bool {
    let root = root_text(&conf.root);
    let from = if conf.root_has_vars || !path.starts_with(root) {
        0
    } else {
        root.len().saturating_sub(1)
    };
    escapes_root(&path[from..])
}

/// Whether `path` (built from configuration and URI) could leave its root:
/// a `..` or `.` segment or a NUL. The codec normalizes the request path;
/// this also covers `alias` joins (`location /i { alias /d/; }` with
/// `/i../x`) and values expanded from variables.
pub(crate) fn escapes_root(path: &str) -> bool {
    let b = path.as_bytes();
    // This runs on every request: memchr visits only the dots and NULs (a
    // path has few), where a byte loop costs a dozen instructions a byte.
    // A dot that starts a segment and is followed by the segment's end, or
    // by one more dot and the end, is a `.` or `..` segment.
    memchr::memchr2_iter(b'.', 0, b).any(|i| {
        b[i] == 0
            || ((i == 0 || b[i - 1] == b'/')
                && matches!(&b[i + 1..], [] | [b'/', ..] | [b'.'] | [b'.', b'/', ..]))
    })
}

/// `ngx_http_map_uri_to_path`: root + URI, or alias + the URI after the
/// location name (a regex location's alias is the whole path).
pub(crate) fn map_path(out: &mut String, root: &DocRoot, name_len: Option<usize>, uri: &str) {
    out.clear();
    match root {
        DocRoot::Root(r) => {
            out.push_str(r);
            out.push_str(uri);
        }
        DocRoot::Alias(a) => {
            out.push_str(a);
            if let Some(n) = name_len {
                let rest = uri.get(n..).unwrap_or("");
                // `location /i { alias /d; }` with `/ifoo`: nginx maps it to
                // `/dfoo`, a sibling of the alias. Deliberate difference: the
                // NUL makes `escapes_root` refuse it (404), so nothing outside
                // the alias is ever served.
                if !rest.is_empty() && !rest.starts_with('/') && !a.ends_with('/') {
                    out.push('\0');
                }
                out.push_str(rest);
            }
        }
    }
}

/// [`map_path`] with variables in `root`/`alias` expanded (`root
/// /srv/$host;`, `alias /data/$1;` in a regex location): allocates only
/// when the setting has a `$`.
/// The `root` or `alias` text as configured (variables unexpanded).
pub(crate) fn root_text(root: &DocRoot) -> &str {
    match root {
        DocRoot::Root(r) | DocRoot::Alias(r) => r,
    }
}

pub(crate) fn map_uri(out: &mut String, ctx: &Ctx<'_>, uri: &str) {
    let root = &ctx.conf.root;
    let raw = root_text(root);
    if !ctx.conf.root_has_vars {
        map_path(out, root, ctx.name_len, uri);
        return;
    }
    let expanded = ctx.vars().expand(raw);
    let root = match root {
        DocRoot::Root(_) => DocRoot::Root(expanded),
        DocRoot::Alias(_) => DocRoot::Alias(expanded),
    };
    map_path(out, &root, ctx.name_len, uri);
}

/// An `errno` from opening a file → nginx's status.
pub(crate) fn open_error_status(err: Errno) -> u16 {
    match err {
        libc::ENOENT | libc::ENOTDIR | libc::ENAMETOOLONG => 404,
        // nginx opens with openat on Linux: a symlink refused by
        // `disable_symlinks` (or a loop) is 403 too.
        libc::EACCES | libc::ELOOP | libc::EMLINK => 403,
        _ => 500,
    }
}

impl HttpCore {
    /// Opens through the location's open_file_cache, or directly. The
    /// error keeps the call that failed and its `errno`, for the error log.
    pub(crate) fn open_path(
        &mut self,
        ctx: &Ctx<'_>,
        test_only: bool,
    ) -> Result<FileInfo, OpenError> {
        if escapes(&ctx.conf, &self.path_buf) {
            return Err(OpenError {
                call: Call::Open,
                errno: libc::ENOENT,
            });
        }
        let ds = &ctx.conf.request.disable_symlinks;
        if ds.mode == peregrine_conf::model::SymlinkMode::Off {
            return self.open_checked(ctx, test_only);
        }
        let skip = ds.from.as_deref().map_or(0, |f| {
            crate::symlinks::from_len(&self.path_buf, &ctx.vars().expand(f))
        });
        // nginx walks the path with `openat()` (`ngx_open_file_wrapper`)
        // and stats what it opened (`fstat()`): its errors name them.
        let at = |errno| OpenError {
            call: Call::OpenAt,
            errno,
        };
        crate::symlinks::check(&self.path_buf, ds.mode, skip).map_err(at)?;
        self.open_checked(ctx, test_only).map_err(|e| match e.call {
            Call::Fstat => e,
            _ => at(e.errno),
        })
    }

    /// [`Self::open_path`] once `disable_symlinks` allowed the path.
    fn open_checked(&mut self, ctx: &Ctx<'_>, test_only: bool) -> Result<FileInfo, OpenError> {
        match ctx.conf.open_file_cache {
            Some(conf) => {
                let policy = Policy {
                    conf,
                    valid: ctx.conf.open_file_cache_valid,
                    min_uses: ctx.conf.open_file_cache_min_uses,
                    errors: ctx.conf.open_file_cache_errors,
                };
                self.fcache
                    .open(&self.path_buf, test_only, &policy, ctx.now)
            }
            None => fcache::open_uncached(&self.path_buf, test_only),
        }
    }

    /// `return code [text|URL]` (`ngx_http_rewrite_return`,
    /// `ngx_http_send_response`).
    pub(crate) fn do_return(&mut self, ctx: &mut Ctx<'_>, code: u16, text: Option<String>) -> Step {
        if code == 444 {
            return Step::Done(close_silently(&ctx.conf));
        }
        if code >= 400 && text.is_none() {
            return Step::Special(Special::status(code));
        }
        let text = text.unwrap_or_default();
        if (301..=308).contains(&code) {
            return Step::Special(Special {
                status: code,
                location: Some(text),
                ..Special::default()
            });
        }
        let status = ctx.status(code);
        if status == 204 {
            return Step::Done(simple(ctx, 204, HeadSpec::default(), Body::Empty, None));
        }
        let (ty, cs) = content_type(&ctx.conf, &ctx.uri);
        let len = text.len() as u64;
        let head = HeadSpec {
            content_type: Some(ty),
            charset: cs,
            content_length: Some(len),
            ..HeadSpec::default()
        };
        let body = if ctx.header_only() || text.is_empty() {
            Body::Empty
        } else {
            Body::Shared(Arc::from(text.into_bytes()))
        };
        Step::Done(simple(ctx, status, head, body, Some(len)))
    }

    /// `try_files` (`ngx_http_try_files_handler`): `None` to go on to the
    /// content phase with the URI of the file found.
    pub(crate) fn try_files(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        let conf = ctx.conf.clone();
        let (last, tests) = conf.try_files.split_last()?;
        for t in tests {
            let (template, test_dir) = match t.strip_suffix('/') {
                Some(s) => (s, true),
                None => (t.as_str(), false),
            };
            let name = ctx.vars().expand(template);
            let mut buf = std::mem::take(&mut self.path_buf);
            // nginx's `ngx_http_try_files_handler`: a regex location's alias
            // is a root for the names tried (the alias + the name).
            let regex_alias = ctx.name_len.is_none() && matches!(ctx.conf.root, DocRoot::Alias(_));
            if regex_alias {
                map_uri(&mut buf, ctx, "");
                buf.push_str(&name);
            } else {
                map_uri(&mut buf, ctx, &name);
            }
            self.path_buf = buf;
            match self.open_path(ctx, true) {
                Ok(info) if info.is_dir == test_dir => {
                    // nginx sets the URI to the name tried; with alias, the
                    // location name stands for the alias part again.
                    ctx.uri = std::borrow::Cow::Owned(name);
                    // nginx's `r->add_uri_to_alias`: the file is the alias
                    // + the URI from now on (an alias that replaces none of it).
                    if regex_alias {
                        ctx.name_len = Some(0);
                    }
                    return None;
                }
                _ => continue,
            }
        }
        if let Some(code) = last.strip_prefix('=') {
            let code = code.parse().unwrap_or(500);
            return Some(Step::Special(Special::status(code)));
        }
        let target = ctx.vars().expand(last);
        if target.starts_with('@') {
            return Some(Step::Named(target));
        }
        let (uri, args) = split_args(&target);
        Some(Step::Redirect(uri, args))
    }

    /// `stub_status` (`ngx_http_stub_status_handler`).
    pub(crate) fn stub_status(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if !matches!(ctx.method, Method::Get | Method::Head) {
            return Step::Special(Special::status(405));
        }
        let s: StubStatus = self.stub_numbers();
        let text = format!(
            "Active connections: {} \nserver accepts handled requests\n {} {} {} \nReading: {} Writing: {} Waiting: {} \n",
            s.active, s.accepts, s.handled, s.requests, s.reading, s.writing, s.waiting
        );
        let len = text.len() as u64;
        let head = HeadSpec {
            content_type: Some("text/plain"),
            charset: charset_for(&ctx.conf, "text/plain"),
            content_length: Some(len),
            ..HeadSpec::default()
        };
        let body = if ctx.header_only() {
            Body::Empty
        } else {
            Body::Shared(Arc::from(text.into_bytes()))
        };
        let status = ctx.status(200);
        Step::Done(simple(ctx, status, head, body, Some(len)))
    }

    /// The content phase: index, autoindex, static (in nginx's order).
    pub(crate) fn content(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if !ctx.uri.ends_with('/') {
            return self.static_file(ctx);
        }
        if ctx.conf.random_index
            && let Some(step) = self.random_index(ctx)
        {
            return step;
        }
        if matches!(ctx.method, Method::Get | Method::Head | Method::Post)
            && let Some(step) = self.index(ctx)
        {
            return step;
        }
        if ctx.conf.autoindex && matches!(ctx.method, Method::Get | Method::Head) {
            return self.autoindex(ctx);
        }
        if !matches!(ctx.method, Method::Get | Method::Head | Method::Post) {
            return Step::Special(Special::status(405));
        }
        // ngx_http_core_content_phase: "directory index of ... is forbidden".
        let mut dir = String::new();
        map_uri(&mut dir, ctx, &ctx.uri);
        self.note_failure(ErrorNote::IndexForbidden { dir });
        Step::Special(Special::status(403))
    }

    /// `ngx_http_index_handler`: the first existing index file → internal
    /// redirect; a missing directory → 404.
    fn index(&mut self, ctx: &mut Ctx<'_>) -> Option<Step> {
        let conf = ctx.conf.clone();
        let mut dir_tested = false;
        for name in &conf.index {
            // `index $server_name.html`: variables expanded per request.
            let name: std::borrow::Cow<'_, str> = if name.contains('$') {
                std::borrow::Cow::Owned(ctx.vars().expand(name))
            } else {
                std::borrow::Cow::Borrowed(name)
            };
            let name = name.as_ref();
            if name.starts_with('/') {
                let args = ctx.args.as_deref().map(str::to_string);
                return Some(Step::Redirect(name.to_string(), args));
            }
            let mut buf = std::mem::take(&mut self.path_buf);
            map_uri(&mut buf, ctx, &ctx.uri);
            buf.push_str(name);
            self.path_buf = buf;
            // nginx's `ngx_open_cached_file` with `test_only`: a stat()
            // without an open file cache (an unreadable index file is then
            // the static handler's `open()` failure), an open with one.
            let test_only = ctx.conf.open_file_cache.is_none();
            let errno = match self.open_path(ctx, test_only) {
                Ok(_) => {
                    let uri = format!("{}{name}", ctx.uri);
                    let args = ctx.args.as_deref().map(str::to_string);
                    return Some(Step::Redirect(uri, args));
                }
                Err(e) => e.errno,
            };
            match errno {
                // nginx's openat() refusing a symlink: 403, not logged.
                libc::ELOOP | libc::EMLINK => return Some(Step::Special(Special::status(403))),
                libc::ENOTDIR | libc::ENAMETOOLONG | libc::EACCES => {
                    return Some(self.index_error(ctx, errno));
                }
                _ if !dir_tested => {
                    dir_tested = true;
                    if let Some(step) = self.index_test_dir(ctx, name) {
                        return Some(step);
                    }
                }
                _ => {}
            }
            if errno != libc::ENOENT {
                return Some(Step::Special(Special::status(500)));
            }
        }
        None
    }

    /// `ngx_http_index_test_dir`: after a first index file failed, whether
    /// the directory itself is there; `None` to go on. A missing one is
    /// logged with the index file's path (`name` after the directory).
    fn index_test_dir(&mut self, ctx: &Ctx<'_>, name: &str) -> Option<Step> {
        let mut buf = std::mem::take(&mut self.path_buf);
        map_uri(&mut buf, ctx, &ctx.uri);
        self.path_buf = buf;
        let errno = match self.open_path(ctx, true) {
            Ok(info) if info.is_dir => return None,
            Ok(_) => return Some(Step::Special(Special::status(500))),
            Err(e) => e.errno,
        };
        Some(match errno {
            libc::ELOOP | libc::EMLINK => Step::Special(Special::status(403)),
            libc::ENOENT => {
                self.path_buf.push_str(name);
                self.index_error(ctx, libc::ENOENT)
            }
            // Searching the directory is allowed: go on.
            libc::EACCES => return None,
            _ => Step::Special(Special::status(500)),
        })
    }

    /// `ngx_http_index_error` for the index file at `path_buf`: 403 and
    /// `"FILE" is forbidden` for `EACCES`, else 404 and `"FILE" is not
    /// found` (unless `log_not_found off`).
    fn index_error(&mut self, ctx: &Ctx<'_>, errno: Errno) -> Step {
        let path = self.path_buf.clone();
        if errno == libc::EACCES {
            self.note_failure(ErrorNote::Forbidden { path, errno });
            return Step::Special(Special::status(403));
        }
        if ctx.conf.request.log_not_found {
            self.note_failure(ErrorNote::IndexNotFound { path, errno });
        }
        Step::Special(Special::status(404))
    }

    /// `ngx_http_autoindex_handler`: the listing, chunked for HTTP/1.1 (nginx
    /// sends it without Content-Length), closing for HTTP/1.0.
    fn autoindex(&mut self, ctx: &mut Ctx<'_>) -> Step {
        let conf = ctx.conf.clone();
        let mut dir = String::new();
        map_uri(&mut dir, ctx, &ctx.uri);
        if dir.len() > 1 {
            dir.pop();
        }
        if escapes(&conf, &dir) {
            return Step::Special(Special::status(404));
        }
        let (html, ty, cs) = match self.listing(ctx, &conf, &dir) {
            Ok(l) => l,
            Err(step) => return step,
        };
        // `chunked_transfer_encoding off`: framed as for HTTP/1.0.
        let http11 = ctx.req.version >= (1, 1) && conf.conn.chunked_transfer_encoding;
        let chunked = http11 && !ctx.header_only();
        let head = HeadSpec {
            content_type: Some(ty),
            charset: cs,
            chunked,
            ..HeadSpec::default()
        };
        let body = if ctx.header_only() {
            Body::Empty
        } else {
            Body::Shared(Arc::from(html))
        };
        let status = ctx.status(200);
        let mut r = simple(ctx, status, head, body, None);
        r.keepalive = http11 || ctx.header_only();
        // The HTTP/1 writer frames it.
        r.chunked = chunked;
        r.compressible = false;
        Step::Done(r)
    }
}

impl HttpCore {
    /// `ngx_http_autoindex_handler`'s (and `ngx_http_random_index_handler`'s)
    /// failure: the status, and its error line when opening the directory
    /// failed with a 403 or 404.
    #[cold]
    pub(crate) fn list_failed(&mut self, dir: &str, e: crate::autoindex::ListError) -> Step {
        let status = open_error_status(e.errno);
        let logged = matches!(
            e.errno,
            libc::ENOENT | libc::ENOTDIR | libc::ENAMETOOLONG | libc::EACCES
        );
        if e.opendir && logged {
            self.note_failure(ErrorNote::Open {
                call: "opendir()",
                path: dir.to_string(),
                errno: e.errno,
            });
        }
        Step::Special(Special::status(status))
    }

    /// The listing of `dir` in the location's `autoindex_format`, its
    /// Content-Type and charset (xml is always utf-8, as nginx sets it).
    fn listing<'c>(
        &mut self,
        ctx: &Ctx<'_>,
        conf: &'c peregrine_conf::model::LocConf,
        dir: &str,
    ) -> Result<(Vec<u8>, &'static str, Option<&'c str>), Step> {
        use peregrine_conf::model::AutoindexFormat as F;
        let mut format = conf.request.autoindex_format;
        let mut callback = None;
        if format == F::Jsonp {
            match crate::autoindex_format::jsonp_callback(ctx.args.as_deref()) {
                Ok(Some(cb)) => callback = Some(cb.to_string()),
                Ok(None) => format = F::Json,
                Err(()) => return Err(Step::Special(Special::status(400))),
            }
        }
        if format == F::Html {
            let cs = charset_for(conf, "text/html");
            let utf8 = cs.is_some_and(|c| c.eq_ignore_ascii_case("utf-8"));
            let html = crate::autoindex::render(dir, &ctx.uri, utf8);
            return Ok((html.map_err(|e| self.list_failed(dir, e))?, "text/html", cs));
        }
        let entries = crate::autoindex::entries(dir).map_err(|e| self.list_failed(dir, e))?;
        Ok(match format {
            F::Xml => (
                crate::autoindex_format::xml(&entries),
                "text/xml",
                Some("utf-8"),
            ),
            F::Jsonp => {
                let ty = "application/javascript";
                let body = crate::autoindex_format::json(&entries, callback.as_deref());
                (body, ty, charset_for(conf, ty))
            }
            _ => {
                let ty = "application/json";
                (
                    crate::autoindex_format::json(&entries, None),
                    ty,
                    charset_for(conf, ty),
                )
            }
        })
    }
}

/// A response with the given head fields.
pub(crate) fn simple(
    ctx: &Ctx<'_>,
    status: u16,
    head: HeadSpec<'_>,
    body: Body,
    len: Option<u64>,
) -> Response {
    let h = head.write();
    Response {
        status,
        head: h.into(),
        body,
        content_length: len,
        chunked: false,
        trailers: None,
        keepalive: true,
        header_only: ctx.header_only() || status == 204,
        conf: Some(ctx.conf.clone()),
        server: None,
        compressible: status != 204,
    }
}

/// `return 444`: close without a response.
fn close_silently(conf: &Arc<peregrine_conf::model::LocConf>) -> Response {
    Response {
        status: 444,
        head: Head::default(),
        body: Body::Empty,
        content_length: None,
        chunked: false,
        trailers: None,
        keepalive: false,
        header_only: true,
        conf: Some(conf.clone()),
        server: None,
        compressible: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_mapping_and_escape_check() {
        let mut s = String::new();
        map_path(&mut s, &DocRoot::Root("/www".into()), Some(3), "/a/b");
        assert_eq!(s, "/www/a/b");
        map_path(
            &mut s,
            &DocRoot::Alias("/data/".into()),
            Some(5),
            "/img/x.png",
        );
        assert_eq!(s, "/data/x.png");
        map_path(&mut s, &DocRoot::Alias("/data/f".into()), None, "/whatever");
        assert_eq!(s, "/data/f");
        map_path(
            &mut s,
            &DocRoot::Alias("/data/".into()),
            Some(4),
            "/img../etc/passwd",
        );
        assert_eq!(s, "/data/../etc/passwd");
        assert!(escapes_root(&s));
        assert!(escapes_root("/www/a\0b"));
        assert!(!escapes_root("/www/a..b/c"));
        // Without slashes at the join, the rest of the URI would name a
        // sibling of the alias (`/data../x`, `/datafoo`): refused.
        for uri in ["/img../x", "/imgfoo"] {
            map_path(&mut s, &DocRoot::Alias("/data".into()), Some(4), uri);
            assert!(escapes_root(&s), "{uri} -> {s:?}");
        }
        map_path(&mut s, &DocRoot::Alias("/data".into()), Some(4), "/img/x");
        assert_eq!(s, "/data/x");
        assert!(!escapes_root(&s));
        map_path(&mut s, &DocRoot::Alias("/data/".into()), Some(4), "/imgx");
        assert_eq!(s, "/data/x");
    }

    /// The byte scan agrees with the plain definition (a NUL, or a `.` or
    /// `..` segment) on every string of up to 6 bytes over `/.a` and NUL.
    #[test]
    fn escapes_root_agrees_with_segment_split() {
        let alphabet = ['/', '.', 'a', '\0'];
        let mut words = vec![String::new()];
        for _ in 0..6 {
            let longer: Vec<String> = words
                .iter()
                .filter(|w| w.len() == words.last().map_or(0, String::len))
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .collect();
            words.extend(longer);
        }
        for w in &words {
            let plain = w.contains('\0') || w.split('/').any(|seg| seg == ".." || seg == ".");
            assert_eq!(escapes_root(w), plain, "{w:?}");
        }
    }
}
