//! The upstream request head (`ngx_http_proxy_create_request`), sans-I/O:
//! the request line with nginx's URI rules, `Host` first, the
//! `proxy_set_header` lines (a value that expands to "" is not sent),
//! then the client's headers that no `proxy_set_header` names. The body's
//! `Content-Length` is the caller's: the head ends without the blank line.

use std::borrow::Cow;
use std::fmt::Write;

/// What the request line's URI is made of.
#[derive(Debug, Clone, Copy)]
pub struct UriParts<'a> {
    /// `proxy_pass`'s URI part (after variables), `None` without one.
    pub pass_uri: Option<&'a str>,
    /// The URL had variables: a URI part replaces the whole URI.
    pub vars: bool,
    /// The request's URI is still the client's (no rewrite, no internal
    /// redirect): nginx then sends the target as received.
    pub unparsed: Option<&'a str>,
    /// `$uri` (decoded) and `$args` now.
    pub uri: &'a str,
    pub args: Option<&'a str>,
    /// The prefix location's name length (what the URI part replaces);
    /// `None` for a regex or named location.
    pub loc_len: Option<usize>,
}

/// The URI sent upstream; `None` is nginx's `zero length URI to proxy`.
pub fn upstream_uri(p: &UriParts<'_>) -> Option<String> {
    if let (true, Some(u)) = (p.vars, p.pass_uri) {
        return (!u.is_empty()).then(|| u.to_string());
    }
    let pass = p.pass_uri.unwrap_or("");
    if pass.is_empty()
        && let Some(raw) = p.unparsed
    {
        return (!raw.is_empty()).then(|| raw.to_string());
    }
    let loc = if pass.is_empty() {
        0
    } else {
        p.loc_len.unwrap_or(0).min(p.uri.len())
    };
    let mut out = String::with_capacity(pass.len() + p.uri.len() + 16);
    out.push_str(pass);
    escape_uri(&mut out, p.uri.get(loc..).unwrap_or(""));
    if let Some(a) = p.args.filter(|a| !a.is_empty()) {
        out.push('?');
        out.push_str(a);
    }
    (!out.is_empty()).then_some(out)
}

/// `ngx_escape_uri(NGX_ESCAPE_URI)`: a decoded URI made safe for a request
/// line again (space, controls, `#`, `%`, `?`, non-ASCII).
pub(crate) fn escape_uri(out: &mut String, s: &str) {
    for b in s.bytes() {
        let esc = b <= b' ' || b >= 0x7f || matches!(b, b'#' | b'%' | b'?' | b'"');
        if esc {
            let _ = write!(out, "%{b:02X}");
        } else {
            out.push(b as char);
        }
    }
}

/// One header to send: name, expanded value (borrowed from the
/// configuration when it has no variables: no copy per request).
pub type Line<'a> = (&'a str, Cow<'a, str>);

/// The client's header lines, visited in order without a copy of them
/// (`ngx_http_proxy_create_request` walks `r->headers_in` in place).
pub type ClientHeaders<'c> = &'c dyn Fn(&mut dyn FnMut(&str, &[u8]));

/// The upstream head's first allocation: a typical request head fits.
const HEAD_CAPACITY: usize = 512;

/// Serializes `METHOD URI HTTP/1.x`, `Host`, `set` (expanded; empty ones
/// dropped), then the client's `client` headers whose names no `set`
/// entry nor the body framing takes, without the final blank line.
pub fn build_head(
    method: &str,
    uri: &str,
    http11: bool,
    host: Option<&str>,
    set: &[Line<'_>],
    client: ClientHeaders<'_>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEAD_CAPACITY);
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(uri.as_bytes());
    out.extend_from_slice(if http11 {
        b" HTTP/1.1\r\n"
    } else {
        b" HTTP/1.0\r\n"
    });
    if let Some(h) = host.filter(|h| !h.is_empty()) {
        line(&mut out, "Host", h.as_bytes());
    }
    for (n, v) in set {
        if n.eq_ignore_ascii_case("Host") || v.is_empty() {
            continue;
        }
        line(&mut out, n, v.as_bytes());
    }
    client(&mut |n, v| {
        let taken = n.eq_ignore_ascii_case("Host")
            || n.eq_ignore_ascii_case("Content-Length")
            || n.eq_ignore_ascii_case("Transfer-Encoding")
            || set.iter().any(|(s, _)| s.eq_ignore_ascii_case(n));
        if !taken {
            line(&mut out, n, v);
        }
    });
    out
}

fn line(out: &mut Vec<u8>, n: &str, v: &[u8]) {
    out.extend_from_slice(n.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(v);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts<'a>(pass: Option<&'a str>, uri: &'a str, loc: Option<usize>) -> UriParts<'a> {
        UriParts {
            pass_uri: pass,
            vars: false,
            unparsed: None,
            uri,
            args: None,
            loc_len: loc,
        }
    }

    #[test]
    fn uri_part_replaces_the_location_prefix() {
        // location /time/ { proxy_pass http://b/; }: /time/header → /header
        let p = parts(Some("/"), "/time/header", Some(6));
        assert_eq!(upstream_uri(&p).as_deref(), Some("/header"));
        let p = parts(Some("/new/"), "/old/a b", Some(5));
        assert_eq!(upstream_uri(&p).as_deref(), Some("/new/a%20b"));
    }

    #[test]
    fn no_uri_part_sends_the_target_as_received() {
        let p = UriParts {
            unparsed: Some("/a%20b?x=1"),
            ..parts(None, "/a b", Some(1))
        };
        assert_eq!(upstream_uri(&p).as_deref(), Some("/a%20b?x=1"));
        // A rewritten URI is escaped again, with its arguments.
        let p = UriParts {
            args: Some("y=2"),
            ..parts(None, "/c d", Some(1))
        };
        assert_eq!(upstream_uri(&p).as_deref(), Some("/c%20d?y=2"));
    }

    #[test]
    fn variables_uri_replaces_everything() {
        let p = UriParts {
            vars: true,
            args: Some("z"),
            ..parts(Some("/fixed"), "/any", Some(4))
        };
        assert_eq!(upstream_uri(&p).as_deref(), Some("/fixed"));
        let p = UriParts {
            vars: true,
            ..parts(None, "", None)
        };
        assert_eq!(upstream_uri(&p), None, "zero length URI to proxy");
    }

    #[test]
    fn head_host_first_set_then_client() {
        let set: Vec<Line<'_>> = vec![
            ("X-Real", Cow::Owned("1.2.3.4".to_string())),
            ("Connection", Cow::Borrowed("close")),
            ("Accept", Cow::Borrowed("")),
        ];
        let client: Vec<(&str, &[u8])> = vec![
            ("Host", b"client.example"),
            ("Accept", b"*/*"),
            ("User-Agent", b"t"),
            ("Content-Length", b"3"),
            ("Connection", b"keep-alive"),
        ];
        let h = build_head(
            "GET",
            "/x",
            false,
            Some("b:81"),
            &set,
            &|f: &mut dyn FnMut(&str, &[u8])| client.iter().for_each(|(n, v)| f(n, v)),
        );
        assert_eq!(
            String::from_utf8(h).unwrap(),
            "GET /x HTTP/1.0\r\nHost: b:81\r\nX-Real: 1.2.3.4\r\nConnection: close\r\n\
             User-Agent: t\r\n"
        );
    }
}
