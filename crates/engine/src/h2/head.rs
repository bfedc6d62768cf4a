//! The adapters between HTTP/2 heads and what core speaks today: a
//! request's fields become an HTTP/1.1 head parsed by the same codec (so
//! every check and limit of an HTTP/1 head applies), and a response's
//! serialized HTTP/1 head becomes the field list HPACK encodes (names
//! lowercased, the connection-specific fields of RFC 9113 §8.2.2 dropped).
//! Until core's heads are structured, this is the one place the two meet.

use peregrine_h2::RequestHead;

// The response fields an HTTP/2 head must not carry (RFC 9113 §8.2.2).
use peregrine_h2::request::CONNECTION_SPECIFIC;

/// Writes `head` as the HTTP/1.1 head the codec parses: the request line
/// from `:method` and `:path`, `Host` from `:authority` (unless a `host`
/// field came, RFC 9113 §8.3.1), the fields in order with the `cookie`
/// fields joined by "; " (§8.2.3), and the blank line.
pub fn request_text(head: &RequestHead, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&head.method);
    out.push(b' ');
    out.extend_from_slice(head.path.as_deref().unwrap_or(b"/"));
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let has_host = head.fields.iter().any(|(n, _)| n == b"host");
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
}

/// The fields of a serialized HTTP/1 response head (status line first,
/// the blank line last): `(name, value)` byte ranges of `head`, names to
/// be lowercased by [`lowercase_names`], connection-specific ones left
/// out. Also says whether the body is chunk-framed (core frames some
/// HTTP/1.1 bodies itself; the session takes the framing off).
pub fn response_fields(head: &[u8], fields: &mut Vec<(usize, usize, usize, usize)>) -> bool {
    fields.clear();
    let mut chunked = false;
    let mut pos = match find_crlf(head, 0) {
        Some(e) => e + 2,
        None => return false,
    };
    while let Some(end) = find_crlf(head, pos) {
        if end == pos {
            break;
        }
        let line = &head[pos..end];
        if let Some(colon) = line.iter().position(|&b| b == b':') {
            let name = &line[..colon];
            let mut v = colon + 1;
            while line.get(v) == Some(&b' ') {
                v += 1;
            }
            let lower = name.to_ascii_lowercase();
            if lower == b"transfer-encoding" {
                chunked |= line[v..].eq_ignore_ascii_case(b"chunked");
            }
            if !CONNECTION_SPECIFIC.contains(&lower.as_slice()) {
                fields.push((pos, pos + colon, pos + v, end));
            }
        }
        pos = end + 2;
    }
    chunked
}

/// Lowercases the names [`response_fields`] found, in place (HTTP/2
/// field names are lowercase, §8.2.1).
pub fn lowercase_names(head: &mut [u8], fields: &[(usize, usize, usize, usize)]) {
    for &(n0, n1, _, _) in fields {
        head[n0..n1].make_ascii_lowercase();
    }
}

fn find_crlf(b: &[u8], from: usize) -> Option<usize> {
    b.get(from..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|i| from + i)
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
        };
        let mut out = Vec::new();
        request_text(&head, &mut out);
        assert_eq!(
            out,
            b"GET /x?y HTTP/1.1\r\nhost: example.com\r\ncookie: a=1; b=2\r\naccept: */*\r\n\r\n"
        );
    }

    #[test]
    fn response_heads_lose_connection_fields() {
        let mut head = b"HTTP/1.1 200 OK\r\nServer: nginx\r\nConnection: keep-alive\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let mut f = Vec::new();
        assert!(response_fields(&head, &mut f));
        lowercase_names(&mut head, &f);
        let got: Vec<(&[u8], &[u8])> = f
            .iter()
            .map(|&(a, b, c, d)| (&head[a..b], &head[c..d]))
            .collect();
        assert_eq!(
            got,
            [
                (&b"server"[..], &b"nginx"[..]),
                (&b"content-type"[..], &b"text/html"[..])
            ]
        );
    }
}
