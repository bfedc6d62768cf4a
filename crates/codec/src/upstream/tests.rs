use super::*;

const MAX: usize = 4096;

fn head(raw: &[u8]) -> UpstreamHead {
    match parse_head(raw, MAX) {
        Ok(Parsed::Head(h)) => h,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(raw)),
    }
}

fn err(raw: &[u8]) -> String {
    parse_head(raw, MAX).unwrap_err().to_string()
}

fn text<'a>(raw: &'a [u8], r: &Range<usize>) -> &'a str {
    std::str::from_utf8(&raw[r.clone()]).unwrap()
}

#[test]
fn a_plain_head_and_its_framing() {
    let raw = b"HTTP/1.1 200 OK\r\nServer: b\r\nContent-Length: 5\r\nX_Under: 1\r\n\r\nhello";
    let h = head(raw);
    assert_eq!((h.version, h.status), (1001, 200));
    assert_eq!(text(raw, &h.status_line), "200 OK");
    assert_eq!(h.len, raw.len() - 5);
    assert_eq!(h.framing(false), Framing::Length(5));
    assert!(h.reusable(false) && h.has_server && !h.has_date);
    let names: Vec<&str> = h.headers.iter().map(|(n, _)| text(raw, n)).collect();
    assert_eq!(
        names,
        ["Server", "Content-Length", "X_Under"],
        "underscores kept"
    );
    assert_eq!(text(raw, &h.headers[2].1), "1");
}

#[test]
fn framing_follows_nginx_input_filter_init() {
    let chunked = head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    assert_eq!(chunked.framing(false), Framing::Chunked);
    let close = head(b"HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(close.framing(false), Framing::UntilClose);
    assert!(!close.reusable(false));
    for status in ["204 No Content", "304 Not Modified"] {
        let h = head(format!("HTTP/1.1 {status}\r\nContent-Length: 9\r\n\r\n").as_bytes());
        assert_eq!(h.framing(false), Framing::None);
        assert!(h.reusable(false));
    }
    assert_eq!(
        head(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n").framing(true),
        Framing::None
    );
    // HTTP/1.0 and `Connection: close` end the connection.
    assert!(!head(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable(false));
    let h = head(b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n");
    assert!(h.connection_close);
    let up = head(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
    assert!(!up.reusable(false));
}

#[test]
fn status_lines_nginx_accepts() {
    for (line, status, text_) in [
        ("HTTP/1.1 403.1 Forbidden\r\n", 403, "403.1 Forbidden"),
        ("HTTP/1.1   200 OK\r\n", 200, "200 OK"),
        ("HTTP/1.1 200\n", 200, "200"),
        ("HTTP/1.0 404 Not Found\n", 404, "404 Not Found"),
        ("HTTP/2.0 200 OK\r\n", 200, "200 OK"),
        ("HTTP/123.456 200 x\r\n", 200, "200 x"),
    ] {
        let raw = format!("{line}\r\n");
        let h = head(raw.as_bytes());
        assert_eq!(h.status, status, "{line:?}");
        assert_eq!(text(raw.as_bytes(), &h.status_line), text_, "{line:?}");
    }
}

#[test]
fn anything_else_is_an_http09_body() {
    for raw in [
        &b"ICY 200 OK\r\n\r\n"[..],
        b"hello world",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/0.9 200 OK\r\n\r\n",
        b"HTTP/1234.1 200 OK\r\n\r\n",
        b"HTTP/1.1 200 O\rK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\r\n\r\n",
        b"http/1.1 200 OK\r\n\r\n",
    ] {
        let Ok(Parsed::Http09(h)) = parse_head(raw, MAX) else {
            panic!("{:?}", String::from_utf8_lossy(raw));
        };
        assert_eq!((h.version, h.status, h.len), (9, 200, 0));
        assert!(h.connection_close);
    }
    // Decided before the line ends when the prefix cannot be `HTTP/`.
    assert!(matches!(parse_head(b"<html", MAX), Ok(Parsed::Http09(_))));
    assert_eq!(parse_head(b"HTTP", MAX), Ok(Parsed::Partial));
}

#[test]
fn framing_conflicts_are_refused_in_nginx_words() {
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\ncontent-length: 2\r\n\r\n"),
        "upstream sent duplicate header line: \"content-length: 2\", previous value: \
         \"Content-Length: 1\""
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
        "upstream sent \"Content-Length\" and \"Transfer-Encoding\" headers at the same time"
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n"),
        "upstream sent \"Content-Length\" and \"Transfer-Encoding\" headers at the same time"
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
        "upstream sent unknown \"Transfer-Encoding\": \"gzip, chunked\""
    );
    for bad in ["-1", "1 2", "0x10", "", "99999999999999999999"] {
        let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n");
        assert_eq!(
            err(raw.as_bytes()),
            format!("upstream sent invalid \"Content-Length\" header: \"Content-Length: {bad}\"")
        );
    }
    assert_eq!(
        err(b"HTTP/1.0 103 Early Hints\r\n\r\n"),
        "upstream sent HTTP/1.0 response with early hints"
    );
}

#[test]
fn invalid_lines_name_the_byte() {
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nX-A: b\0c\r\n\r\n"),
        "upstream sent invalid header: \"X-A: b\\x00...\""
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nBad Name: v\r\n\r\n"),
        "upstream sent invalid header: \"Bad\\x20...\""
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\n folded\r\n\r\n"),
        "upstream sent invalid header: \"\\x20...\""
    );
}

#[test]
fn a_head_beyond_the_buffer_is_too_big() {
    let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
    raw.extend(std::iter::repeat_n(b"X-Filler: 0123456789\r\n", 20).flatten());
    assert_eq!(parse_head(&raw, 100), Err(UpstreamHeadError::TooBig));
    raw.extend_from_slice(b"\r\n");
    assert!(matches!(parse_head(&raw, raw.len()), Ok(Parsed::Head(_))));
    assert_eq!(
        parse_head(&raw, raw.len() - 1),
        Err(UpstreamHeadError::TooBig)
    );
}

/// Every prefix of a head is Partial and the whole one parses the same,
/// wherever the reads split it.
#[test]
fn every_split_of_a_head_agrees() {
    let raw: &[u8] = b"HTTP/1.1 200 OK\r\nServer: x\r\nDate: y\r\nTransfer-Encoding: chunked\r\n\
                       Set-Cookie: a=b\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    let whole = head(raw);
    assert!(whole.chunked && whole.connection_close && whole.has_date);
    for cut in 0..whole.len {
        assert_eq!(
            parse_head(&raw[..cut], MAX),
            Ok(Parsed::Partial),
            "cut {cut}"
        );
    }
    for cut in whole.len..raw.len() {
        assert_eq!(head(&raw[..cut]), whole, "cut {cut}");
    }
}

/// The fuzz target's properties over mutated heads (the fuzzer itself needs
/// a nightly toolchain): no panic, ranges inside the head, and a cut input
/// either waits for more or decides the same.
#[test]
fn mutated_heads_keep_the_parsers_promises() {
    let mut next = crate::request::xorshift(0x9e37_79b9_7f4a_7c15);
    let bases: [&[u8]; 3] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: s\r\n\r\nok",
        b"HTTP/1.0 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nConnection: close\r\nETag: \"x\"\r\n\r\n",
    ];
    const BYTES: &[u8] = b" \t\r\n:\0._-0123456789Hx\x7f\x80";
    for round in 0..20_000 {
        let mut raw = bases[round % bases.len()].to_vec();
        for _ in 0..1 + next() % 4 {
            let i = next() % (raw.len() + 1);
            let b = BYTES[next() % BYTES.len()];
            match next() % 3 {
                0 => raw.insert(i, b),
                1 if i < raw.len() => raw[i] = b,
                _ if i < raw.len() => drop(raw.remove(i)),
                _ => {}
            }
        }
        let whole = parse_head(&raw, 64);
        if let Ok(Parsed::Head(h)) = &whole {
            assert!(h.len <= raw.len().min(64) && h.status_line.end <= h.len);
            assert!(
                h.headers
                    .iter()
                    .all(|(n, v)| n.end <= h.len && v.end <= h.len)
            );
        }
        let cut = next() % (raw.len() + 1);
        let part = parse_head(&raw[..cut], 64);
        assert!(
            part == Ok(Parsed::Partial) || part == whole,
            "{:?} cut at {cut}: {part:?} vs {whole:?}",
            String::from_utf8_lossy(&raw)
        );
    }
}
