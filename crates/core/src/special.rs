//! nginx's special responses (`ngx_http_special_response_handler`): the
//! built-in pages for 3xx/4xx/5xx, the `error_page` interception (internal
//! redirect, named location, or a redirect to a URL), which statuses close
//! the connection, and the MSIE/Chrome padding.

use std::sync::Arc;

use peregrine_conf::model::{ErrorPageConf, LocConf};

use crate::head::{HeadSpec, charset_for};
use crate::response::{Body, HeadLines, Response};

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
    /// `http://host[:port]` for a Location starting with `/`.
    pub origin: &'a str,
}

/// Builds nginx's built-in response for `sp`.
pub(crate) fn builtin(sp: &Special, ctx: &PageCtx<'_>) -> Response {
    let status = sp.status;
    let page = peregrine_codec::response::error_page_body(status);
    let has_page = !page.is_empty();
    let pad = ctx.padding && status >= 400 && has_page;
    let len = page.len() + if pad { MSIE_PADDING.len() } else { 0 };
    let location_abs = sp
        .location
        .as_deref()
        .filter(|l| l.starts_with('/'))
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
        location_rel: sp.location.as_deref().filter(|l| !l.starts_with('/')),
        content_range: sp.content_range.as_deref(),
        ..HeadSpec::default()
    }
    .write();
    let body = if ctx.header_only || !has_page {
        Body::Empty
    } else if pad {
        Body::Parts(vec![Body::Static(page), Body::Static(MSIE_PADDING)])
    } else {
        Body::Static(page)
    };
    Response {
        status,
        head: HeadLines::Owned(head.bytes),
        head_split: head.split,
        body,
        content_length: (!no_length).then_some(len as u64),
        keepalive: !closes_connection(status),
        header_only: ctx.header_only || no_length,
        conf: Some(ctx.conf.clone()),
        server: None,
        compressible: has_page,
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
