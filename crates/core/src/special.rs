//! nginx's special responses (`ngx_http_special_response_handler`): the
//! built-in pages for 3xx/4xx/5xx, the `error_page` interception (internal
//! redirect, named location, or a redirect to a URL), which statuses close
//! the connection, and the MSIE/Chrome padding.

use std::sync::Arc;

use peregrine_codec::response::{ERROR_PAGE_TAIL, ERROR_PAGE_TAIL_VERSION};
use peregrine_conf::model::{ErrorPageConf, LocConf, ServerTokens};

use crate::fastpath::FastReq;
use crate::head::{HeadSpec, charset_for};
use crate::http::HttpCore;
use crate::response::{Body, ConnInfo, ErrorNote, Response};

/// nginx's `ngx_http_msie_padding`: appended to 4xx/5xx pages for MSIE and
/// Chrome so that they show the page instead of their own.
const MSIE_PADDING: &[u8] =
    b"<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n\
<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n\
<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n\
<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n\
<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n\
<!-- a padding to disable MSIE and Chrome friendly error page -->\r\n";

/// A special response to send (or to intercept with `error_page`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Special {
    pub status: u16,
    /// Location (3xx), as set by the handler: made absolute when it starts
    /// with `/`.
    pub location: Option<String>,
    /// `Content-Range: bytes */SIZE` of a 416.
    pub content_range: Option<String>,
    /// `Vary: Accept-Encoding` on the built-in page: a 416 for a file the
    /// compression filter found eligible (nginx 1.22 writes it, as on the
    /// 206 of the same file; checked with `gzip_vary on`).
    pub vary: bool,
    /// `WWW-Authenticate` fields of a 401 (`auth_basic`'s challenge, an
    /// `auth_request` subrequest's).
    pub www_authenticate: Vec<String>,
}

impl Special {
    pub(crate) fn status(status: u16) -> Special {
        Special {
            status,
            ..Special::default()
        }
    }
}

/// nginx drops keep-alive after these (`ngx_http_special_response_handler`).
pub(crate) fn closes_connection(status: u16) -> bool {
    matches!(status, 400 | 413 | 414 | 494 | 495 | 496 | 497 | 500 | 501)
}

/// nginx's `r->headers_in.msie || r->headers_in.chrome` from User-Agent:
/// "MSIE " (not Opera), or "Chrome/" when not "Gecko/".
pub(crate) fn wants_padding(user_agent: Option<&str>) -> bool {
    let Some(ua) = user_agent else { return false };
    let msie = ua.find("MSIE ").is_some_and(|i| i + 8 <= ua.len()) && !ua.contains("Opera");
    let chrome = !ua.contains("Gecko/") && ua.contains("Chrome/");
    msie || chrome
}

/// The `error_page` entry for `status`, if any.
pub(crate) fn find_error_page(conf: &LocConf, status: u16) -> Option<&ErrorPageConf> {
    conf.error_pages.iter().find(|e| e.codes.contains(&status))
}

/// What a request needs for the built-in page.
pub(crate) struct PageCtx<'a> {
    pub conf: &'a Arc<LocConf>,
    pub header_only: bool,
    pub padding: bool,
    /// `http://host[:port]` for a Location starting with `/`; empty: such
    /// a Location is sent as it is (`absolute_redirect off`).
    pub origin: &'a str,
}

/// Builds nginx's built-in response for `sp`.
pub(crate) fn builtin(sp: &Special, ctx: &PageCtx<'_>) -> Response {
    let status = sp.status;
    let page = peregrine_codec::response::error_page_body(status);
    let has_page = !page.is_empty();
    let pad = ctx.padding && status >= 400 && has_page;
    // The pages end with the footer of `server_tokens off`.
    let (page, tail) = match ctx.conf.server_tokens {
        ServerTokens::Off => (page, &b""[..]),
        _ => (
            &page[..page.len().saturating_sub(ERROR_PAGE_TAIL.len())],
            if !has_page {
                &b""[..]
            } else if ctx.conf.server_tokens == ServerTokens::Build {
                peregrine_codec::response::ERROR_PAGE_TAIL_BUILD
            } else if has_page {
                ERROR_PAGE_TAIL_VERSION
            } else {
                &b""[..]
            },
        ),
    };
    let len = page.len() + tail.len() + if pad { MSIE_PADDING.len() } else { 0 };
    let location_abs = sp
        .location
        .as_deref()
        .filter(|l| l.starts_with('/') && !ctx.origin.is_empty())
        .map(|l| format!("{}{l}", ctx.origin));
    let no_length = status == 204 || status == 304;
    let head = HeadSpec {
        content_type: has_page.then_some("text/html"),
        charset: if has_page {
            charset_for(ctx.conf, "text/html")
        } else {
            None
        },
        content_length: (!no_length).then_some(len as u64),
        location_abs: location_abs.as_deref(),
        location_rel: sp
            .location
            .as_deref()
            .filter(|l| !l.starts_with('/') || ctx.origin.is_empty()),
        content_range: sp.content_range.as_deref(),
        www_authenticate: &sp.www_authenticate,
        ..HeadSpec::default()
    }
    .write();
    let body = if ctx.header_only || !has_page {
        Body::Empty
    } else {
        let pieces = [page, tail, if pad { MSIE_PADDING } else { b"" }];
        let mut parts: Vec<Body> = pieces
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(Body::Static)
            .collect();
        match parts.len() {
            1 => parts.swap_remove(0),
            _ => Body::Parts(parts),
        }
    };
    Response {
        status,
        head: head.into(),
        body,
        content_length: (!no_length).then_some(len as u64),
        chunked: false,
        trailers: None,
        keepalive: !closes_connection(status),
        header_only: ctx.header_only || no_length,
        conf: Some(ctx.conf.clone()),
        server: None,
        compressible: has_page,
    }
}

impl HttpCore {
    /// [`HttpCore::handle`], plus what nginx's static and index handlers
    /// (403, 404) or its body-size check (413) would have written to the
    /// error log, when `explain` (the engine passes whether the `error`
    /// level is enabled).
    ///
    /// The handlers note a failure where it happens, from the call that
    /// failed ([`HttpCore::note_failure`]): nothing is looked at again. A
    /// `return 404` or `try_files ... =404` notes nothing, as nginx logs
    /// nothing for them.
    pub fn handle_explained(
        &mut self,
        conn: &ConnInfo,
        req: &peregrine_codec::Request,
        now: std::time::SystemTime,
        explain: bool,
    ) -> (Response, Option<ErrorNote>) {
        let Some(server) = self.find_server(conn, || req.host()) else {
            return (self.error_response(500), None);
        };
        let fast = FastReq::parsed(req);
        if let Some(r) = self.route_answer(server, &fast, now) {
            // A 200: nothing to explain.
            return (r, None);
        }
        self.failure = None;
        let resp = self.handle_parsed(conn, req, server, &fast, now);
        let failure = self.failure.take();
        let note = match resp.status {
            _ if !explain => None,
            413 => too_large(req, &resp),
            // Logged by nginx when it happened, whatever `error_page` then
            // made of the status.
            _ => failure,
        };
        (resp, note)
    }

    /// Keeps the error line of this request's failure: the first one, the
    /// cause of its status (nginx logs each; an `error_page` whose target
    /// fails too adds a second line there, not here).
    #[cold]
    pub(crate) fn note_failure(&mut self, note: ErrorNote) {
        self.failure.get_or_insert(note);
    }
}

/// The note for a 413 of a body over `client_max_body_size` (not for a
/// `return 413`, which nginx does not log).
fn too_large(req: &peregrine_codec::Request, resp: &Response) -> Option<ErrorNote> {
    let limit = resp.conf.as_ref()?.client_max_body_size;
    match req.body_kind() {
        peregrine_codec::BodyKind::Length(length) if limit > 0 && length > limit => {
            Some(ErrorNote::TooLargeBody { length })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_user_agents() {
        assert!(wants_padding(Some(
            "Mozilla/5.0 (Windows) AppleWebKit Chrome/120.0 Safari/537"
        )));
        assert!(!wants_padding(Some(
            "Mozilla/5.0 Gecko/20100101 Firefox/120.0"
        )));
        assert!(wants_padding(Some(
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
        )));
        assert!(!wants_padding(Some("Opera/9.80 (MSIE 6.0)")));
        assert!(!wants_padding(Some("curl/8.0")));
        assert!(!wants_padding(None));
    }

    /// Runs `GET uri` through a real core over `root` and returns the
    /// status and the error-log note.
    fn explained(conf: LocConf, uri: &str) -> (u16, Option<String>) {
        let raw = format!("GET {uri} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        explained_raw(conf, &raw, true)
    }

    fn explained_raw(conf: LocConf, raw: &str, explain: bool) -> (u16, Option<String>) {
        let server = crate::fixtures::server_with(
            &[("127.0.0.1:8080", false)],
            &["localhost"],
            vec![],
            conf,
        );
        let mut core = HttpCore::new(Arc::new(crate::fixtures::config(vec![server])));
        let req = crate::fixtures::parsed_request(raw);
        let conn = ConnInfo {
            local: "127.0.0.1:8080".parse().expect("addr"),
            peer: "127.0.0.1:40000".parse().expect("addr"),
            id: 1,
            requests: 1,
            accepted: std::time::SystemTime::now(),
            ssl: None,
            proxy: None,
            http2: false,
        };
        let (resp, note) =
            core.handle_explained(&conn, &req, std::time::SystemTime::now(), explain);
        (resp.status, note.map(|n| n.to_string()))
    }

    #[test]
    fn error_notes_like_nginx() {
        let d = crate::testdir::TestDir::new("notes");
        d.file("html/a.txt", b"a");
        d.dir("html/dir");
        let root = d.path("html");
        let conf = || crate::fixtures::loc_conf(&root);
        assert_eq!(explained(conf(), "/a.txt"), (200, None));
        assert_eq!(
            explained(conf(), "/missing"),
            (
                404,
                Some(format!(
                    "open() \"{root}/missing\" failed (2: No such file or directory)"
                ))
            )
        );
        assert_eq!(
            explained(conf(), "/a.txt/x"),
            (
                404,
                Some(format!(
                    "open() \"{root}/a.txt/x\" failed (20: Not a directory)"
                ))
            )
        );
        assert_eq!(
            explained(conf(), "/dir/"),
            (
                403,
                Some(format!("directory index of \"{root}/dir/\" is forbidden"))
            )
        );
        assert_eq!(
            explained(conf(), "/nodir/"),
            (
                404,
                Some(format!(
                    "\"{root}/nodir/index.html\" is not found (2: No such file or directory)"
                ))
            )
        );
        // A FIFO is not a file (404, nothing to log): looking at it again
        // must not block (mkfifo(1): tests stay free of `unsafe`).
        let made = std::process::Command::new("mkfifo")
            .arg(d.path("html/fifo"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "mkfifo");
        assert_eq!(explained(conf(), "/fifo"), (404, None));
        // `return 404` and `try_files ... =404` log nothing (nginx neither).
        let mut ret = conf();
        crate::fixtures::set_return(&mut ret, 404, None);
        assert_eq!(explained(ret, "/missing"), (404, None));
        let mut tf = conf();
        tf.try_files = vec!["$uri".into(), "=404".into()];
        assert_eq!(explained(tf, "/missing"), (404, None));
        let mut small = conf();
        small.client_max_body_size = 10;
        let post = |len: u64| {
            format!("POST /a.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len}\r\n\r\n")
        };
        assert_eq!(
            explained_raw(small.clone(), &post(2000), true),
            (
                413,
                Some("client intended to send too large body: 2000 bytes".into())
            )
        );
        assert_eq!(explained_raw(small.clone(), &post(10), true).1, None);
        let mut ret413 = conf();
        crate::fixtures::set_return(&mut ret413, 413, None);
        assert_eq!(explained(ret413, "/a.txt"), (413, None));
        // Nothing is looked at when the error level is off.
        assert_eq!(explained_raw(small, &post(2000), false), (413, None));
        let quiet = explained_raw(conf(), "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n", false);
        assert_eq!(quiet, (404, None));
    }

    /// The line comes from the failed call itself: a cached error
    /// (`open_file_cache_errors on`) is logged as nginx logs it even after
    /// the file appeared (looking again would find it), a symlink refused
    /// by `disable_symlinks` as `openat()`'s (a plain open would follow it).
    #[test]
    fn notes_keep_the_cause_of_the_first_call() {
        let d = crate::testdir::TestDir::new("notes-cause");
        d.dir("html");
        let root = d.path("html");
        let mut cached = crate::fixtures::loc_conf(&root);
        cached.open_file_cache = Some(peregrine_conf::model::OpenFileCacheConf {
            max: 10,
            inactive: std::time::Duration::from_secs(60),
        });
        cached.open_file_cache_errors = true;
        let server = crate::fixtures::server_with(
            &[("127.0.0.1:8080", false)],
            &["localhost"],
            vec![],
            cached,
        );
        let mut core = HttpCore::new(Arc::new(crate::fixtures::config(vec![server])));
        let req = crate::fixtures::parsed_request("GET /late HTTP/1.1\r\nHost: localhost\r\n\r\n");
        let conn = crate::fixtures::conn("127.0.0.1:8080");
        let now = std::time::SystemTime::now();
        let want = format!("open() \"{root}/late\" failed (2: No such file or directory)");
        let (r, note) = core.handle_explained(&conn, &req, now, true);
        assert_eq!(
            (r.status, note.map(|n| n.to_string())),
            (404, Some(want.clone()))
        );
        d.file("html/late", b"here now");
        let (r, note) = core.handle_explained(&conn, &req, now, true);
        assert_eq!(
            (r.status, note.map(|n| n.to_string())),
            (404, Some(want)),
            "the cached error, not a second look"
        );

        d.file("html/target.txt", b"t");
        std::os::unix::fs::symlink(d.path("html/target.txt"), d.path("html/link.txt"))
            .expect("symlink");
        let mut strict = crate::fixtures::loc_conf(&root);
        strict.request.disable_symlinks.mode = peregrine_conf::model::SymlinkMode::On;
        assert_eq!(
            explained(strict, "/link.txt"),
            (
                403,
                Some(format!(
                    "openat() \"{root}/link.txt\" failed (40: Too many levels of symbolic links)"
                ))
            )
        );
    }

    #[test]
    fn closing_statuses() {
        for s in [400, 413, 414, 500, 501] {
            assert!(closes_connection(s));
        }
        for s in [301, 403, 404, 405, 412, 416, 503] {
            assert!(!closes_connection(s));
        }
    }
}
