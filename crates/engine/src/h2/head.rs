//! The adapters between HTTP/2 heads and core: a request's fields become
//! an HTTP/1.1 head parsed by the same codec (so every check and limit of
//! an HTTP/1 head applies), and a response's field list becomes the fields
//! HPACK encodes (`server` and `date` first as nginx's HTTP/2 header filter
//! writes them, names lowercased, the connection-specific fields of RFC
//! 9113 §8.2.2 dropped).

use peregrine_conf::model::ServerTokens;
use peregrine_core::Response;
use peregrine_h2::RequestHead;

use crate::write::server_value;

// The response fields an HTTP/2 head must not carry (RFC 9113 §8.2.2).
use peregrine_h2::request::CONNECTION_SPECIFIC;

/// Writes `head` as the HTTP/1.1 head the codec parses: the request line
/// from `:method` and `:path`, `Host` from `:authority` (unless a `host`
/// field came, RFC 9113 §8.3.1), the fields in order with the `cookie`
/// fields joined by "; " (§8.2.3), and the blank line. True when `Host`
/// was made from `:authority` (it is no field the client sent).
pub fn request_text(head: &RequestHead, out: &mut Vec<u8>) -> bool {
    out.clear();
    out.extend_from_slice(&head.method);
    out.push(b' ');
    out.extend_from_slice(head.path.as_deref().unwrap_or(b"/"));
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let has_host = head.fields.iter().any(|(n, _)| n == b"host");
    let made_host = !has_host && head.authority.is_some();
    if let (Some(a), false) = (&head.authority, has_host) {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    let mut cookies = false;
    for (n, v) in head.fields.iter() {
        if n == b"cookie" {
            if !cookies {
                cookies = true;
                out.extend_from_slice(b"cookie: ");
                let mut first = true;
                for (_, c) in head.fields.iter().filter(|(n, _)| *n == b"cookie") {
                    if !first {
                        out.extend_from_slice(b"; ");
                    }
                    first = false;
                    out.extend_from_slice(c);
                }
                out.extend_from_slice(b"\r\n");
            }
            continue;
        }
        out.extend_from_slice(n);
        out.extend_from_slice(b": ");
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    made_host
}

/// A field as HPACK encodes it: (lowercase name, value).
pub type H2Field<'a> = (&'a [u8], &'a [u8]);

/// The fields HPACK encodes for `resp`: `server` (by `server_tokens`),
/// `date`, then the response's own with lowercased names (kept in
/// `names`), connection-specific ones left out; and whether the body is
/// chunk-framed (core frames some HTTP/1.1 bodies itself; the session
/// takes the framing off).
pub fn response_fields<'a>(
    resp: &'a Response,
    date: &'a [u8],
    names: &'a mut Vec<u8>,
) -> (Vec<H2Field<'a>>, bool) {
    let tokens = resp
        .conf
        .as_ref()
        .map_or(ServerTokens::On, |c| c.server_tokens);
    let list = resp.head.fields();
    names.clear();
    let mut ends = Vec::with_capacity(list.len());
    let mut chunked = false;
    for f in list {
        let start = names.len();
        names.extend(f.name.iter().map(u8::to_ascii_lowercase));
        let lower = &names[start..];
        if lower == b"transfer-encoding" {
            chunked |= f.value.trim_ascii().eq_ignore_ascii_case(b"chunked");
        }
        if CONNECTION_SPECIFIC.contains(&lower) {
            names.truncate(start);
            ends.push(None);
        } else {
            ends.push(Some(start..names.len()));
        }
    }
    let names: &'a [u8] = names;
    let mut out = Vec::with_capacity(list.len() + 2);
    let (own_server, own_date) = resp.head.own_server_and_date();
    if own_server {
        out.push((&b"server"[..], server_value(tokens)));
    }
    if own_date {
        out.push((&b"date"[..], date));
    }
    for (f, r) in list.iter().zip(ends) {
        if let Some(r) = r {
            out.push((&names[r], f.value.trim_ascii()));
        }
    }
    (out, chunked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_h2::FieldList;

    #[test]
    fn a_request_becomes_an_http1_head() {
        let mut fields = FieldList::default();
        fields.push(b"cookie", b"a=1");
        fields.push(b"accept", b"*/*");
        fields.push(b"cookie", b"b=2");
        let head = RequestHead {
            method: b"GET".to_vec(),
            scheme: Some(b"https".to_vec()),
            path: Some(b"/x?y".to_vec()),
            authority: Some(b"example.com".to_vec()),
            fields,
            content_length: None,
            bad: None,
            block_len: 0,
        };
        let mut out = Vec::new();
        assert!(request_text(&head, &mut out));
        assert_eq!(
            out,
            b"GET /x?y HTTP/1.1\r\nhost: example.com\r\ncookie: a=1; b=2\r\naccept: */*\r\n\r\n"
        );
    }

    #[test]
    fn response_heads_lose_connection_fields() {
        let mut l = peregrine_core::FieldList::new();
        l.push_first("Content-Type", "text/html");
        l.push_first("Transfer-Encoding", "chunked");
        l.push("X-Up", "1");
        l.push("Keep-Alive", "timeout=5");
        let resp = peregrine_core::Response {
            status: 200,
            head: l.into(),
            body: peregrine_core::Body::Empty,
            content_length: None,
            chunked: true,
            trailers: None,
            keepalive: true,
            header_only: false,
            conf: None,
            server: None,
            compressible: false,
        };
        let mut names = Vec::new();
        let (got, chunked) = response_fields(&resp, b"DATE", &mut names);
        assert!(chunked);
        assert_eq!(
            got,
            [
                (&b"server"[..], server_value(ServerTokens::On)),
                (&b"date"[..], &b"DATE"[..]),
                (&b"content-type"[..], &b"text/html"[..]),
                (&b"x-up"[..], &b"1"[..]),
            ]
        );
        assert!(server_value(ServerTokens::On).starts_with(b"nginx/"));
        assert_eq!(server_value(ServerTokens::Off), b"nginx");
    }
}
