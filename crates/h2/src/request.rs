//! Request heads and trailers from decoded field lists, with the rules of
//! RFC 9113 §8.2 and §8.3.1. A violation makes the request malformed: a
//! stream error PROTOCOL_ERROR (§8.1.1), with a reason for the log.

use crate::hpack::FieldList;

/// A request's head: the pseudo-header fields and the regular fields in
/// their order. Several `cookie` fields stay separate (§8.2.3 lets them be
/// joined with "; " before HTTP/1-style processing; that is the engine's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestHead {
    pub method: Vec<u8>,
    /// Absent only for CONNECT.
    pub scheme: Option<Vec<u8>>,
    /// Absent only for CONNECT.
    pub path: Option<Vec<u8>>,
    pub authority: Option<Vec<u8>>,
    /// The regular fields, pseudo-headers excluded.
    pub fields: FieldList,
    /// The value of `content-length`, checked against the DATA received.
    pub content_length: Option<u64>,
    /// The request is refused with this status and the reason to log:
    /// nginx answers a malformed request head with 400 (its
    /// `ngx_http_v2_state_process_header` and `ngx_http_v2_construct_request_line`
    /// finalize the request with NGX_HTTP_BAD_REQUEST), not the stream
    /// error RFC 9113 §8.1.1 gives it, and CONNECT with 405.
    pub bad: Option<(u16, &'static str)>,
    /// The header block's bytes (HEADERS and CONTINUATION payloads without
    /// padding and priority): nginx's `$request_length` of the stream
    /// before its DATA (`ngx_http_v2_state_headers`).
    pub block_len: usize,
}

/// Field names that are connection-specific in HTTP/1 and have no place in
/// HTTP/2 (§8.2.2): refused in requests here, left out of responses by the
/// engine's head adapter.
pub const CONNECTION_SPECIFIC: [&[u8]; 5] = [
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
];

/// §8.2.1: no uppercase, no controls, space, DEL or non-ASCII; not empty;
/// and no colon in a regular field's name (nginx's
/// `ngx_http_v2_validate_header`; it would split the HTTP/1 line).
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|&b| b > 0x20 && b < 0x7f && b != b':' && !b.is_ascii_uppercase())
}

/// §8.2.1: no NUL, CR or LF; no leading or trailing space or tab.
fn valid_value(v: &[u8]) -> bool {
    let ws = |b: &u8| *b == b' ' || *b == b'\t';
    !v.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n')
        && !v.first().is_some_and(ws)
        && !v.last().is_some_and(ws)
}

/// Checks one regular field (requests and trailers alike).
fn check_regular(name: &[u8], value: &[u8]) -> Result<(), &'static str> {
    if !valid_name(name) {
        return Err("client sent invalid header name");
    }
    if !valid_value(value) {
        return Err("client sent invalid header value");
    }
    if CONNECTION_SPECIFIC.contains(&name) {
        return Err("client sent connection-specific header");
    }
    if name == b"te" && value != b"trailers" {
        return Err("client sent invalid \"te\" header");
    }
    Ok(())
}

fn set_once(slot: &mut Option<Vec<u8>>, v: &[u8]) -> Result<(), &'static str> {
    if slot.is_some() {
        return Err("client sent duplicate pseudo-header");
    }
    *slot = Some(v.to_vec());
    Ok(())
}

fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Builds a request head from a decoded list, or says why it is malformed.
pub fn request_head(list: &FieldList) -> Result<RequestHead, &'static str> {
    let mut head = RequestHead::default();
    let mut method = None;
    let mut regular_seen = false;
    for (name, value) in list.iter() {
        if name.first() == Some(&b':') {
            if regular_seen {
                return Err("client sent pseudo-header after regular header");
            }
            if !valid_value(value) {
                return Err("client sent invalid header value");
            }
            match name {
                b":method" => set_once(&mut method, value)?,
                b":scheme" => set_once(&mut head.scheme, value)?,
                b":path" => set_once(&mut head.path, value)?,
                b":authority" => set_once(&mut head.authority, value)?,
                _ => return Err("client sent unknown pseudo-header"),
            }
            continue;
        }
        regular_seen = true;
        check_regular(name, value)?;
        if name == b"content-length" {
            let n = parse_length(value).ok_or("client sent invalid \"content-length\" header")?;
            if head.content_length.is_some_and(|m| m != n) {
                return Err("client sent duplicate \"content-length\" header");
            }
            head.content_length = Some(n);
        }
        head.fields.push(name, value);
    }
    head.method = method.ok_or("client sent no :method header")?;
    if head.method.is_empty() {
        return Err("client sent empty :method header");
    }
    if head.method == b"CONNECT" {
        // nginx does not proxy CONNECT (ngx_http_v2_parse_method's
        // caller: "client sent CONNECT method", 405).
        head.bad = Some((405, "client sent CONNECT method"));
        return Ok(head);
    }
    if head.scheme.as_deref().is_none_or(<[u8]>::is_empty) {
        return Err("client sent no :scheme header");
    }
    if head.path.as_deref().is_none_or(<[u8]>::is_empty) {
        return Err("client sent no :path header");
    }
    if let (Some(a), Some(h)) = (&head.authority, head.fields.get(b"host"))
        && !a.eq_ignore_ascii_case(h)
    {
        // Both given and different: nginx answers 400 (h2_headers.t
        // "non-equal authority and host").
        return Err("client sent \":authority\" and \"Host\" headers with different values");
    }
    Ok(head)
}

/// A request head for a request refused with 400: what was malformed.
pub fn bad_request(why: &'static str) -> RequestHead {
    RequestHead {
        method: b"GET".to_vec(),
        bad: Some((400, why)),
        ..RequestHead::default()
    }
}

/// Checks a trailer section (§8.1: no pseudo-header fields) and returns it.
pub fn trailers(list: &FieldList) -> Result<FieldList, &'static str> {
    for (name, value) in list.iter() {
        if name.first() == Some(&b':') {
            return Err("client sent pseudo-header in trailers");
        }
        check_regular(name, value)?;
    }
    Ok(list.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(fields: &[(&str, &str)]) -> FieldList {
        let mut l = FieldList::default();
        for (n, v) in fields {
            l.push(n.as_bytes(), v.as_bytes());
        }
        l
    }

    const GET: [(&str, &str); 4] = [
        (":method", "GET"),
        (":scheme", "https"),
        (":path", "/a"),
        (":authority", "x"),
    ];

    #[test]
    fn a_plain_request_parses() {
        let mut f = GET.to_vec();
        f.extend([
            ("accept", "*/*"),
            ("content-length", "12"),
            ("te", "trailers"),
        ]);
        let h = request_head(&list(&f)).unwrap();
        assert_eq!(
            (h.method.as_slice(), h.path.as_deref()),
            (&b"GET"[..], Some(&b"/a"[..]))
        );
        assert_eq!(h.content_length, Some(12));
        assert_eq!(h.fields.len(), 3);
        assert_eq!(h.authority.as_deref(), Some(&b"x"[..]));
    }

    #[test]
    fn each_rfc9113_rule_makes_the_request_malformed() {
        let bad: [&[(&str, &str)]; 17] = [
            &[(":method", "GET"), (":scheme", "https")],
            &[(":scheme", "https"), (":path", "/")],
            &[(":method", "GET"), (":path", "/")],
            &[(":method", "GET"), (":scheme", "https"), (":path", "")],
            &[
                (":method", "GET"),
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                ("a", "b"),
                (":path", "/"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                (":status", "200"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                (":protocol", "ws"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("Accept", "x"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("connection", "close"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("transfer-encoding", "chunked"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("te", "gzip"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("a", "b\r\nc: d"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("a", " b"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("content-length", "1x"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "https"),
                (":path", "/"),
                ("content-length", "1"),
                ("content-length", "2"),
            ],
            &[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                (":authority", "a"),
                ("host", "b"),
            ],
        ];
        for f in bad {
            assert!(request_head(&list(f)).is_err(), "{f:?}");
        }
    }

    #[test]
    fn connect_is_refused_with_405_as_nginx_does() {
        let h = request_head(&list(&[(":method", "CONNECT"), (":authority", "x:443")])).unwrap();
        assert_eq!(h.bad.map(|b| b.0), Some(405));
        let h = request_head(&list(&[(":method", "CONNECT"), (":path", "/")])).unwrap();
        assert_eq!(h.bad.map(|b| b.0), Some(405));
    }

    #[test]
    fn trailers_take_no_pseudo_headers() {
        assert!(trailers(&list(&[("x-sum", "1")])).is_ok());
        assert!(trailers(&list(&[(":path", "/")])).is_err());
        assert!(trailers(&list(&[("Upper", "1")])).is_err());
    }
}
