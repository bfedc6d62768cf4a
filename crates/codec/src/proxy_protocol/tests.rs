//! PROXY protocol tests: every input is also parsed as each of its
//! prefixes, which must be `Partial` or the same outcome (a broken line
//! quoted from a prefix is that prefix's own).

use super::*;

fn same_kind(a: &Result<Parsed, ProxyError>, b: &Result<Parsed, ProxyError>) -> bool {
    match (a, b) {
        (Err(ProxyError::Broken(_)), Err(ProxyError::Broken(_))) => true,
        _ => a == b,
    }
}

fn parse_all(input: &[u8], limit: usize) -> Result<Parsed, ProxyError> {
    let whole = parse(input, limit);
    for cut in 0..input.len() {
        let part = parse(&input[..cut], limit);
        assert!(
            part == Ok(Parsed::Partial) || same_kind(&part, &whole),
            "prefix {cut} of {input:?}: {part:?} vs {whole:?}"
        );
    }
    whole
}

fn header(input: &[u8]) -> ProxyHeader {
    match parse_all(input, MAX_HEADER) {
        Ok(Parsed::Header(h)) => h,
        other => panic!("{input:?}: {other:?}"),
    }
}

fn error(input: &[u8]) -> String {
    match parse_all(input, MAX_HEADER) {
        Err(e) => e.to_string(),
        other => panic!("{input:?}: {other:?}"),
    }
}

fn ep(addr: &str, port: u16) -> Endpoint {
    Endpoint {
        addr: addr.into(),
        port,
    }
}

fn inet(src: Endpoint, dst: Endpoint) -> Addresses {
    Addresses::Inet {
        source: src,
        destination: dst,
    }
}

#[test]
fn v1_tcp4_and_tcp6() {
    let input = b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n";
    let h = header(input);
    assert_eq!(h.len, input.len() - 16);
    assert_eq!((h.version, h.command), (1, Command::Proxy));
    assert_eq!(
        h.addresses,
        inet(ep("192.0.2.1", 56324), ep("198.51.100.2", 443))
    );
    assert_eq!(h.inet().unwrap().0.ip(), Some("192.0.2.1".parse().unwrap()));
    let h = header(b"PROXY TCP6 2001:DB8::1 ::1 00080 65535\r\n");
    assert_eq!(h.addresses, inet(ep("2001:DB8::1", 80), ep("::1", 65535)));
    // The longest header fits the 107-byte limit exactly.
    let a = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
    let line = format!("PROXY TCP6 {a} {a} 65535 65535\r\n");
    assert_eq!(header(line.as_bytes()).len, 104);
}

#[test]
fn v1_what_nginx_lets_through() {
    // Addresses are only checked for their characters, not their family.
    let h = header(b"PROXY TCP4 ::1 1.2.3.4.5 1 2\r\n");
    assert_eq!(h.addresses, inet(ep("::1", 1), ep("1.2.3.4.5", 2)));
    assert_eq!(h.inet().unwrap().1.ip(), None);
    let h = header(b"PROXY TCP4  abc 0 0\r\n");
    assert_eq!(h.addresses, inet(ep("", 0), ep("abc", 0)));
}

#[test]
fn v1_unknown() {
    let h = header(b"PROXY UNKNOWN\r\nGET");
    assert_eq!(
        (h.len, h.command, h.addresses),
        (15, Command::Local, Addresses::None)
    );
    // Whatever follows UNKNOWN up to the CRLF is skipped.
    let h = header(b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n");
    assert_eq!(h.len, 35);
    assert_eq!(header(b"PROXY UNKNOWNxyz\r\n").len, 18);
    assert!(h.tlv("alpn").unwrap().is_none());
}

#[test]
fn v1_broken_in_nginx_words() {
    let cases: [(&[u8], &str); 11] = [
        (b"GET / HTTP/1.1\r\n", "GET / HTTP/1.1"),
        (
            b"PROXY TCP5 1.2.3.4 1.2.3.4 1 2\r\n",
            "PROXY TCP5 1.2.3.4 1.2.3.4 1 2",
        ),
        (
            b"PROXY TCP4 1.2.3.4 1.2.3.x 1 2\r\n",
            "PROXY TCP4 1.2.3.4 1.2.3.x 1 2",
        ),
        (
            b"PROXY TCP4 1.2.3.4 1.2.3.4 65536 2\r\n",
            "PROXY TCP4 1.2.3.4 1.2.3.4 65536 2",
        ),
        (
            b"PROXY TCP4 1.2.3.4 1.2.3.4 1 +2\r\n",
            "PROXY TCP4 1.2.3.4 1.2.3.4 1 +2",
        ),
        (
            b"PROXY TCP4 1.2.3.4 1.2.3.4  2\r\n",
            "PROXY TCP4 1.2.3.4 1.2.3.4  2",
        ),
        (
            b"PROXY TCP4 1.2.3.4 1.2.3.4 1 2\n",
            "PROXY TCP4 1.2.3.4 1.2.3.4 1 2",
        ),
        (
            b"PROXY TCP4 1.2.3.4 1.2.3.4 1 2\rX",
            "PROXY TCP4 1.2.3.4 1.2.3.4 1 2",
        ),
        (
            b"PROXY tcp4 1.2.3.4 1.2.3.4 1 2\r\n",
            "PROXY tcp4 1.2.3.4 1.2.3.4 1 2",
        ),
        (b"PROXY TCP4\r\n", "PROXY TCP4"),
        (b"\r\n\r\n\0\r\nQUIX\n\x21\x11\0\0", ""),
    ];
    for (input, quoted) in cases {
        assert_eq!(
            error(input),
            format!("broken header: \"{quoted}\""),
            "{input:?}"
        );
    }
    // UNKNOWN needs a CRLF: bare LFs wait for one, until 107 bytes.
    assert_eq!(parse(b"PROXY UNKNOWN\n\n", MAX_HEADER), Ok(Parsed::Partial));
    // No CRLF within 107 bytes.
    let long = format!("PROXY UNKNOWN {}\r\n", "x".repeat(100));
    assert!(error(long.as_bytes()).starts_with("broken header: \"PROXY UNKNOWN xxx"));
    let long = format!("PROXY TCP4 {}1.2.3.4 1.2.3.4 1 2\r\n", "0".repeat(90));
    assert!(error(long.as_bytes()).starts_with("broken header: \"PROXY TCP4 000"));
    assert_eq!(
        ProxyError::broken(b"PROXY TCP4 1.2"),
        ProxyError::Broken(b"PROXY TCP4 1.2".to_vec())
    );
}

/// A v2 header: version/command, family/transport, then `body`.
fn v2(ver_cmd: u8, fam: u8, body: &[u8]) -> Vec<u8> {
    let mut v = V2_SIGNATURE.to_vec();
    v.extend_from_slice(&[ver_cmd, fam]);
    v.extend_from_slice(&(body.len() as u16).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn tlv(kind: u8, value: &[u8]) -> Vec<u8> {
    let mut v = vec![kind];
    v.extend_from_slice(&(value.len() as u16).to_be_bytes());
    v.extend_from_slice(value);
    v
}

const V4_BLOCK: [u8; 12] = [192, 0, 2, 1, 198, 51, 100, 2, 0xdc, 0x04, 0x01, 0xbb];

#[test]
fn v2_inet() {
    let mut input = v2(0x21, 0x11, &V4_BLOCK);
    input.extend_from_slice(b"GET /");
    let h = header(&input);
    assert_eq!((h.len, h.version, h.command), (28, 2, Command::Proxy));
    assert_eq!(
        h.addresses,
        inet(ep("192.0.2.1", 56324), ep("198.51.100.2", 443))
    );
    assert!(h.tlvs.is_empty());
    let mut block = [0u8; 36];
    block[0..2].copy_from_slice(&[0x20, 0x01]);
    block[15] = 1;
    block[16 + 15] = 2;
    block[32..36].copy_from_slice(&[0, 80, 1, 0]);
    let h = header(&v2(0x21, 0x21, &block));
    assert_eq!(h.addresses, inet(ep("2001::1", 80), ep("::2", 256)));
}

#[test]
fn v2_what_nginx_skips() {
    // LOCAL, other commands, other transports, UNSPEC and unknown families:
    // the header is consumed, no addresses are kept.
    for (vc, fam) in [
        (0x20, 0x11),
        (0x2f, 0x11),
        (0x21, 0x12),
        (0x21, 0x10),
        (0x21, 0x01),
        (0x21, 0x41),
    ] {
        let input = v2(vc, fam, &V4_BLOCK);
        let h = header(&input);
        assert_eq!(
            (h.len, &h.addresses),
            (28, &Addresses::None),
            "{vc:x} {fam:x}"
        );
    }
    assert_eq!(header(&v2(0x20, 0x00, b"")).command, Command::Local);
    assert_eq!(header(&v2(0x2f, 0x11, b"")).command, Command::Other(15));
    // UNIX paths are read, but nginx keeps nothing (TLVs unread).
    let mut block = vec![0u8; 216];
    block[..9].copy_from_slice(b"/run/a.sk");
    block[108..113].copy_from_slice(b"/b.sk");
    block.extend(tlv(0x01, b"h2"));
    let h = header(&v2(0x21, 0x31, &block));
    let unix = Addresses::Unix {
        source: b"/run/a.sk".to_vec(),
        destination: b"/b.sk".to_vec(),
    };
    assert_eq!(h.addresses, unix);
    assert_eq!((h.inet(), h.tlv("alpn")), (None, Ok(None)));
    assert_eq!(
        header(&v2(0x21, 0x31, &[0; 100])).addresses,
        Addresses::None
    );
}

#[test]
fn v2_errors_in_nginx_words() {
    assert_eq!(
        error(&v2(0x11, 0x11, &V4_BLOCK)),
        "unknown PROXY protocol version: 1"
    );
    assert_eq!(
        error(&v2(0x31, 0x11, &V4_BLOCK)),
        "unknown PROXY protocol version: 3"
    );
    let short = parse_all(&v2(0x21, 0x11, &V4_BLOCK[..11]), MAX_HEADER);
    assert_eq!(short, Err(ProxyError::ShortAddress));
    assert!(!ProxyError::ShortAddress.is_logged());
    assert_eq!(
        parse_all(&v2(0x21, 0x21, &[0; 35]), MAX_HEADER),
        Err(ProxyError::ShortAddress)
    );
    // Longer than the buffer: refused as soon as the length is read.
    let big = v2(0x21, 0x11, &[0; 1100]);
    assert_eq!(parse_all(&big, 1024), Err(ProxyError::TooLarge));
    assert_eq!(ProxyError::TooLarge.to_string(), "header is too large");
    assert!(matches!(parse(&big, MAX_HEADER), Ok(Parsed::Header(_))));
    assert_eq!(parse(&big[..1000], MAX_HEADER), Ok(Parsed::Partial));
    let biggest = v2(0x21, 0x11, &vec![0; MAX_HEADER - V2_HEADER_LEN]);
    assert!(matches!(parse(&biggest, MAX_HEADER), Ok(Parsed::Header(_))));
}

#[test]
fn v2_tlvs_by_nginx_names() {
    let mut ssl = vec![0x07, 0, 0, 0x01, 0x02];
    ssl.extend(tlv(0x21, b"TLSv1.3"));
    ssl.extend(tlv(0x22, b"client.example"));
    ssl.extend(tlv(0x23, b"TLS_AES_128_GCM_SHA256"));
    ssl.extend(tlv(0x24, b"RSA-SHA256"));
    ssl.extend(tlv(0x25, b"RSA2048"));
    ssl.extend(tlv(0x99, b"sub"));
    let block = [
        &V4_BLOCK[..],
        &tlv(0x01, b"h2"),
        &tlv(0x02, b"example.com"),
        &tlv(0x05, b"id-1"),
        &tlv(0x20, &ssl),
        &tlv(0x30, b"ns"),
        &tlv(0xE0, b"custom"),
        &tlv(0xE0, b"second"),
        &tlv(0x04, b""),
    ]
    .concat();
    let h = header(&v2(0x21, 0x11, &block));
    let get = |n: &str| {
        h.tlv(n)
            .map(|v| v.map(|v| String::from_utf8(v.into_owned()).unwrap()))
    };
    let want = [
        ("alpn", "h2"),
        ("authority", "example.com"),
        ("unique_id", "id-1"),
        ("netns", "ns"),
        ("0xe0", "custom"),
        ("0xE0", "custom"),
        ("0x000e0", "custom"),
        ("0x4", ""),
        ("ssl_verify", "258"),
        ("ssl_version", "TLSv1.3"),
        ("ssl_cn", "client.example"),
        ("ssl_cipher", "TLS_AES_128_GCM_SHA256"),
        ("ssl_sig_alg", "RSA-SHA256"),
        ("ssl_key_alg", "RSA2048"),
        ("ssl_0x99", "sub"),
    ];
    for (name, value) in want {
        assert_eq!(get(name), Ok(Some(value.to_owned())), "{name}");
    }
    assert_eq!(h.tlv("ssl").unwrap().unwrap().len(), ssl.len());
    assert_eq!(get("0x03"), Ok(None));
    assert_eq!(get("0x1e0"), Ok(None), "types past a byte never match");
    assert_eq!(get("ssl_0x01"), Ok(None), "sub-TLVs only");
    assert_eq!(get("0x"), Err(TlvError::Invalid("0x".into())));
    assert_eq!(get("0xg1"), Err(TlvError::Invalid("0xg1".into())));
    assert_eq!(
        get("0x8000000000000000"),
        Err(TlvError::Invalid("0x8000000000000000".into()))
    );
    assert_eq!(
        get("bogus").unwrap_err().to_string(),
        "unknown PROXY protocol TLV \"bogus\""
    );
    assert_eq!(get("ssl_bogus"), Err(TlvError::Unknown("ssl_bogus".into())));
    assert_eq!(
        TlvError::Invalid("0x".into()).to_string(),
        "invalid PROXY protocol TLV \"0x\""
    );
    let kinds: Vec<u8> = h.tlv_list().map(|t| t.unwrap().kind).collect();
    assert_eq!(kinds, [0x01, 0x02, 0x05, 0x20, 0x30, 0xE0, 0xE0, 0x04]);
}

#[test]
fn v2_broken_tlvs_fail_only_when_walked() {
    let block = [&V4_BLOCK[..], &tlv(0x01, b"h2"), &[0x02, 0x00, 0x09, b'x']].concat();
    let h = header(&v2(0x21, 0x11, &block));
    assert_eq!(h.tlv("alpn").unwrap().as_deref(), Some(&b"h2"[..]));
    assert_eq!(h.tlv("authority"), Err(TlvError::Broken));
    assert_eq!(TlvError::Broken.to_string(), "broken PROXY protocol TLV");
    let h = header(&v2(0x21, 0x11, &[&V4_BLOCK[..], &[0x01, 0x00]].concat()));
    assert_eq!(h.tlv("alpn"), Err(TlvError::Broken));
    assert_eq!(h.tlv_list().collect::<Vec<_>>(), [Err(TlvError::Broken)]);
    // ssl shorter than its client byte and verify field; without ssl, none.
    let h = header(&v2(
        0x21,
        0x11,
        &[&V4_BLOCK[..], &tlv(0x20, &[1, 0, 0, 0])].concat(),
    ));
    assert_eq!(h.tlv("ssl_cn"), Err(TlvError::SslTooShort));
    let h = header(&v2(0x21, 0x11, &V4_BLOCK));
    assert_eq!((h.tlv("ssl_cn"), h.tlv("ssl_bogus")), (Ok(None), Ok(None)));
}

#[test]
fn inet6_text_as_nginx() {
    let cases: [([u16; 8], &str); 10] = [
        ([0, 0, 0, 0, 0, 0, 0, 1], "::1"),
        ([0; 8], "::"),
        ([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], "2001:db8::1:0:0:1"),
        ([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1], "2001:db8:0:1:1:1:1:1"),
        ([1, 0, 0, 0, 0, 0, 0, 0], "1::"),
        ([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304], "::ffff:1.2.3.4"),
        ([0, 0, 0, 0, 0, 0, 0x0102, 0x0304], "::1.2.3.4"),
        ([0, 0, 0, 0, 0, 0, 0, 0x0102], "::0.0.1.2"),
        ([0, 0, 0, 0, 0, 0, 0, 0x0002], "::2"),
        ([0xfe80, 0, 0, 0, 0xabcd, 0, 0, 0], "fe80::abcd:0:0:0"),
    ];
    for (groups, want) in cases {
        let mut b = [0u8; 16];
        for (i, g) in groups.iter().enumerate() {
            b[2 * i..2 * i + 2].copy_from_slice(&g.to_be_bytes());
        }
        assert_eq!(inet6_ntop(&b), want, "{groups:x?}");
    }
}

proptest::proptest! {
    #[test]
    fn prefixes_never_disagree(
        tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..60),
        v in 0u8..3,
    ) {
        let head: Vec<u8> = match v {
            0 => b"PROXY ".to_vec(),
            1 => v2(0x21, 0x11, &[]).into_iter().take(14).collect(),
            _ => Vec::new(),
        };
        let mut input = head;
        input.extend_from_slice(&tail);
        let _ = parse_all(&input, 64);
    }
}
