//! `msie_refresh on`: MSIE gets a 301/302 as a page that refreshes to the
//! Location (`ngx_http_send_refresh`), a 200 with no Location.

use std::sync::Arc;

use crate::head::{HeadSpec, charset_for};
use crate::http::Ctx;
use crate::phases::simple;
use crate::response::{Body, Response};

const HEAD: &[u8] = b"<html><head><meta http-equiv=\"Refresh\" content=\"0; URL=";
const TAIL: &[u8] = b"\"></head><body></body></html>\r\n";

/// nginx's `r->headers_in.msie`: "MSIE " with a version after it, not Opera.
pub(crate) fn is_msie(user_agent: Option<&str>) -> bool {
    let Some(ua) = user_agent else { return false };
    ua.find("MSIE ").is_some_and(|i| i + 8 <= ua.len()) && !ua.contains("Opera")
}

/// `ngx_escape_uri(NGX_ESCAPE_REFRESH)`: controls, space, `"'<>\^`{|}~`,
/// DEL and non-ASCII bytes percent-encoded.
fn escape_refresh(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in s {
        let escape = c <= 0x20
            || c >= 0x7f
            || matches!(
                c,
                b'"' | b'\'' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'~'
            );
        if escape {
            out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        } else {
            out.push(c);
        }
    }
}

/// The refresh page for a redirect to `location`, if the location has
/// `msie_refresh on`, the client is MSIE and the status is 301 or 302.
pub(crate) fn refresh(ctx: &Ctx<'_>, status: u16, location: Option<&str>) -> Option<Response> {
    if !ctx.conf.request.msie_refresh || !matches!(status, 301 | 302) {
        return None;
    }
    let location = location?;
    if !is_msie(ctx.req.header("User-Agent")) {
        return None;
    }
    let mut page = HEAD.to_vec();
    escape_refresh(&mut page, location.as_bytes());
    page.extend_from_slice(TAIL);
    let len = page.len() as u64;
    let head = HeadSpec {
        content_type: Some("text/html"),
        charset: charset_for(&ctx.conf, "text/html"),
        content_length: Some(len),
        ..HeadSpec::default()
    };
    let body = if ctx.header_only() {
        Body::Empty
    } else {
        Body::Shared(Arc::from(page))
    };
    Some(simple(ctx, 200, head, body, Some(len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msie_and_escaping() {
        assert!(is_msie(Some(
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
        )));
        assert!(!is_msie(Some("Opera/9.0 (MSIE 6.0; x)")));
        assert!(!is_msie(Some("curl/8")));
        let mut out = Vec::new();
        escape_refresh(&mut out, "/a b\"c'<é>?x=1&y".as_bytes());
        assert_eq!(out, b"/a%20b%22c%27%3C%C3%A9%3E?x=1&y");
    }
}
