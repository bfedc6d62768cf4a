//! Head tests: every input is fed whole and split at every byte (as the
//! records of an application may cut it); both must agree.

use super::*;

/// A parse's outcome in plain values.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Parsed {
    /// Bytes of the input the head took.
    used: usize,
    status: u16,
    status_line: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Vec<u8>)>,
    warnings: Vec<String>,
}

fn run(pieces: &[&[u8]], limit: usize) -> Result<Option<Parsed>, HeadError> {
    let mut hp = HeadParser::new(limit);
    let mut used = 0;
    for piece in pieces {
        match hp.feed(piece)? {
            HeadStatus::Partial => used += piece.len(),
            HeadStatus::Complete(n) => {
                assert!(hp.is_complete());
                assert_eq!(hp.feed(b"more")?, HeadStatus::Complete(0));
                let h = hp.head();
                return Ok(Some(Parsed {
                    used: used + n,
                    status: h.status(),
                    status_line: h.status_line().map(<[u8]>::to_vec),
                    headers: h.headers().map(|(n, v)| (n.to_vec(), v.to_vec())).collect(),
                    warnings: h.warnings().collect(),
                }));
            }
        }
    }
    Ok(None)
}

fn all_splits(input: &[u8]) -> Result<Option<Parsed>, HeadError> {
    let whole = run(&[input], 4096);
    for s in 0..input.len() {
        let (a, b) = input.split_at(s);
        assert_eq!(run(&[a, b], 4096), whole, "split at {s}");
    }
    whole
}

fn ok(input: &[u8]) -> Parsed {
    all_splits(input).unwrap().expect("complete")
}

fn err(input: &[u8]) -> String {
    all_splits(input).unwrap_err().to_string()
}

fn pairs(p: &Parsed) -> Vec<(&str, &str)> {
    let s = |b: &[u8]| std::str::from_utf8(b).unwrap().to_owned().leak() as &str;
    p.headers.iter().map(|(n, v)| (s(n), s(v))).collect()
}

#[test]
fn a_php_head() {
    let input = b"X-Powered-By: PHP/8.2.7\r\nContent-type: text/html; charset=UTF-8\r\n\r\n<p>hi";
    let p = ok(input);
    assert_eq!(p.used, input.len() - 5);
    assert_eq!(
        (p.status, p.status_line.as_deref()),
        (200, Some(&b"200 OK"[..]))
    );
    assert_eq!(
        pairs(&p),
        [
            ("X-Powered-By", "PHP/8.2.7"),
            ("Content-type", "text/html; charset=UTF-8")
        ]
    );
    assert!(p.warnings.is_empty());
    let mut hp = HeadParser::new(4096);
    hp.feed(input).unwrap();
    assert_eq!(
        hp.head().get("content-TYPE"),
        Some(&b"text/html; charset=UTF-8"[..])
    );
    assert_eq!(hp.head().location(), None);
}

#[test]
fn status_header() {
    let p = ok(b"Status: 404 Not Found\r\n\r\n");
    assert_eq!(
        (p.status, p.status_line.as_deref()),
        (404, Some(&b"404 Not Found"[..]))
    );
    assert_eq!(pairs(&p), [("Status", "404 Not Found")]);
    // Three digits alone: no status line (the standard reason is sent).
    let p = ok(b"status:503\n\n");
    assert_eq!((p.status, p.status_line), (503, None));
    // ngx_atoi on the first three bytes only, no range check.
    let p = ok(b"Status: 2000\r\n\r\n");
    assert_eq!(
        (p.status, p.status_line.as_deref()),
        (200, Some(&b"2000"[..]))
    );
    assert_eq!(ok(b"Status: 099 x\n\n").status, 99);
    for bad in [&b"99"[..], b"", b"abc", b"4 4", b"-12"] {
        let input = [&b"Status: "[..], bad, b"\r\n\r\n"].concat();
        let want = format!(
            "upstream sent invalid status \"{}\"",
            std::str::from_utf8(bad).unwrap()
        );
        assert_eq!(err(&input), want);
    }
}

#[test]
fn location_makes_302_unless_status() {
    let p = ok(b"Location: /elsewhere\r\n\r\n");
    assert_eq!(
        (p.status, p.status_line.as_deref()),
        (302, Some(&b"302 Moved Temporarily"[..]))
    );
    let p = ok(b"Location: http://a/\r\nStatus: 301\r\n\r\n");
    assert_eq!((p.status, p.status_line), (301, None));
}

#[test]
fn duplicates_ignored_with_nginx_warning() {
    let p = ok(
        b"Status: 201 Made\r\nLocation: /a\r\nstatus: 500\r\nLOCATION: /b\r\nX: 1\r\nX: 2\r\n\r\n",
    );
    assert_eq!(
        (p.status, p.status_line.as_deref()),
        (201, Some(&b"201 Made"[..]))
    );
    assert_eq!(
        pairs(&p),
        [
            ("Status", "201 Made"),
            ("Location", "/a"),
            ("X", "1"),
            ("X", "2")
        ]
    );
    assert_eq!(
        p.warnings,
        [
            "upstream sent duplicate header line: \"status: 500\", previous value: \"Status: 201 Made\", ignored",
            "upstream sent duplicate header line: \"LOCATION: /b\", previous value: \"Location: /a\", ignored",
        ]
    );
}

#[test]
fn lines_nginx_accepts() {
    let p = ok(b"A:   spaced  value  \r\nB:\r\nNoColon\r\nu_score: 1\r\nX@Y: odd\r\nT: a\tb\r\nCRs: x\r\r\n\n");
    assert_eq!(
        pairs(&p),
        [
            ("A", "spaced  value"),
            ("B", ""),
            ("NoColon", ""),
            ("u_score", "1"),
            ("X@Y", "odd"),
            ("T", "a\tb"),
            ("CRs", "x"),
        ]
    );
    // IIS's repeated status line is skipped.
    let p = ok(b"HTTP/1.1 200 OK\r\nA: 1\r\n\r\n");
    assert_eq!(pairs(&p), [("A", "1")]);
    // An empty head.
    assert_eq!(ok(b"\r\nbody").used, 2);
    assert_eq!(ok(b"\n").headers, []);
}

#[test]
fn invalid_headers_in_nginx_words() {
    let cases: [(&[u8], &str); 8] = [
        (b" Foo: x\r\n", "\\x20"),
        (b":x\r\n", "\\x3a"),
        (b"Foo Bar: x\r\n", "Foo\\x20"),
        (b"Foo: a\0b\r\n", "Foo: a\\x00"),
        (b"Foo: a\rb\r\n", "Foo: a\\x0d"),
        (b"Foo: a \rb\r\n", "Foo: a\\x20"),
        (b"A: 1\r\n\rX", "\\x0d"),
        (b"Nul\0: x\r\n", "Nul\\x00"),
    ];
    for (input, shown) in cases {
        assert_eq!(
            err(input),
            format!("upstream sent invalid header: \"{shown}...\""),
            "{input:?}"
        );
    }
}

#[test]
fn too_big_at_the_limit() {
    let input = b"A: 1234\r\n\r\n";
    assert!(run(&[input], input.len()).unwrap().is_some());
    assert_eq!(run(&[input], input.len() - 1), Err(HeadError::TooBig));
    assert_eq!(
        HeadError::TooBig.to_string(),
        "upstream sent too big header"
    );
    assert_eq!(run(&[&input[..5], &input[5..]], 5), Err(HeadError::TooBig));
}

#[test]
fn partial_until_the_blank_line() {
    assert_eq!(all_splits(b"A: 1\r\nB: 2\r\n"), Ok(None));
    assert_eq!(
        HeadError::PrematureStdout.to_string(),
        "upstream prematurely closed FastCGI stdout"
    );
    assert_eq!(
        HeadError::UnexpectedRecord(3).to_string(),
        "upstream sent unexpected FastCGI record: 3"
    );
}

proptest::proptest! {
    #[test]
    fn splits_never_disagree(
        bytes in proptest::collection::vec(proptest::sample::select(&b"ab:_ \r\n\0\x01/HTTPStatus0123"[..]), 0..80),
        cut in 0usize..80,
    ) {
        let whole = run(&[&bytes], 64);
        let (a, b) = bytes.split_at(cut.min(bytes.len()));
        proptest::prop_assert_eq!(run(&[a, b], 64), whole);
    }
}
