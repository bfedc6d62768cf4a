//! `Accept-Encoding` (RFC 9110 §12.5.3).
//!
//! Two views: [`parse`] gives RFC q-values for content negotiation, and
//! [`nginx_accepts`] reproduces nginx's own test (`ngx_http_gzip_accept_encoding`
//! and `ngx_http_gzip_quantity`, also used by the brotli/zstd modules), which
//! ignores `*` and `identity`. Use `nginx_accepts` where nginx's `gzip on`
//! behaviour must be matched byte for byte. Hand-written because q-value
//! quirks (a q of `1.5` or `0.0001` refuses the coding in nginx) are not what
//! general-purpose header crates implement.

/// q-values of the codings Peregrine can produce; `None` = not mentioned.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AcceptEncoding {
    pub gzip: Option<f32>,
    pub br: Option<f32>,
    pub zstd: Option<f32>,
    pub identity: Option<f32>,
    pub star: Option<f32>,
}

/// nginx's qvalue check: `0` or `1`, optionally `.` and at most three
/// digits, not above 1; anything else counts as 0 (refused). Returns
/// thousandths.
fn qvalue(s: &[u8]) -> u32 {
    let Some((&first, rest)) = s.split_first() else {
        return 0;
    };
    if first != b'0' && first != b'1' {
        return 0;
    }
    let int = u32::from(first - b'0') * 1000;
    let Some(frac) = rest.strip_prefix(b".") else {
        return if rest.is_empty() { int } else { 0 };
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return 0;
    }
    let mut q = 0;
    for i in 0..3 {
        q = q * 10 + frac.get(i).map_or(0, |d| u32::from(d - b'0'));
    }
    let q = int + q;
    if q > 1000 { 0 } else { q }
}

/// Parses the header value; the first mention of each coding wins.
pub fn parse(value: &str) -> AcceptEncoding {
    let mut ae = AcceptEncoding::default();
    for item in value.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim_matches([' ', '\t']);
        if coding.is_empty() {
            continue;
        }
        let mut q = 1000;
        for param in parts {
            let param = param.trim_matches([' ', '\t']);
            if let Some(v) = param
                .strip_prefix("q=")
                .or_else(|| param.strip_prefix("Q="))
            {
                q = qvalue(v.trim_matches([' ', '\t']).as_bytes());
            }
        }
        let q = Some(q as f32 / 1000.0);
        let slot = if coding.eq_ignore_ascii_case("gzip") {
            &mut ae.gzip
        } else if coding.eq_ignore_ascii_case("br") {
            &mut ae.br
        } else if coding.eq_ignore_ascii_case("zstd") {
            &mut ae.zstd
        } else if coding.eq_ignore_ascii_case("identity") {
            &mut ae.identity
        } else if coding == "*" {
            &mut ae.star
        } else {
            continue;
        };
        if slot.is_none() {
            *slot = q;
        }
    }
    ae
}

impl AcceptEncoding {
    /// RFC 9110 §12.5.3 preference for `coding`: its own q, else `*`'s,
    /// else 0 — except `identity`, acceptable (1) unless refused explicitly
    /// or by `*;q=0`.
    pub fn q_for(&self, coding: &str) -> f32 {
        let explicit = if coding.eq_ignore_ascii_case("gzip") {
            self.gzip
        } else if coding.eq_ignore_ascii_case("br") {
            self.br
        } else if coding.eq_ignore_ascii_case("zstd") {
            self.zstd
        } else if coding.eq_ignore_ascii_case("identity") {
            return self.identity.or(self.star).unwrap_or(1.0);
        } else {
            None
        };
        explicit.or(self.star).unwrap_or(0.0)
    }
}

/// nginx's test for whether a response may be sent with `coding` (e.g.
/// "gzip"): the token must start the value or follow `,` or ` `, be followed
/// by spaces and then the end, `,`, or `;q=` with a non-zero nginx qvalue.
/// `*` does not count, as in nginx.
pub fn nginx_accepts(value: &str, coding: &str) -> bool {
    let v = value.as_bytes();
    let c = coding.as_bytes();
    if c.is_empty() {
        return false;
    }
    let mut from = 0;
    let at = loop {
        let Some(i) = find_ci(v.get(from..).unwrap_or(&[]), c).map(|i| i + from) else {
            return false;
        };
        if i == 0 || matches!(v.get(i - 1), Some(b',' | b' ')) {
            break i;
        }
        from = i + c.len();
    };
    let mut p = at + c.len();
    loop {
        match v.get(p) {
            None | Some(b',') => return true,
            Some(b' ') => p += 1,
            Some(b';') => break,
            Some(_) => return false,
        }
    }
    p += 1;
    while v.get(p) == Some(&b' ') {
        p += 1;
    }
    match v.get(p) {
        None => return true,
        Some(b'q' | b'Q') => {}
        Some(_) => return false,
    }
    if v.get(p + 1) != Some(&b'=') {
        return false;
    }
    let q = v.get(p + 2..).unwrap_or(&[]);
    let end = q
        .iter()
        .position(|&b| b == b',' || b == b' ')
        .unwrap_or(q.len());
    qvalue(q.get(..end).unwrap_or(&[])) > 0
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_values() {
        let ae = parse("gzip;q=0.5, br, zstd;q=0, *;q=0.1");
        assert_eq!(ae.gzip, Some(0.5));
        assert_eq!(ae.br, Some(1.0));
        assert_eq!(ae.zstd, Some(0.0));
        assert_eq!(ae.star, Some(0.1));
        assert_eq!(ae.q_for("gzip"), 0.5);
        assert_eq!(ae.q_for("zstd"), 0.0);
        assert_eq!(ae.q_for("deflate"), 0.1);
        assert_eq!(ae.q_for("identity"), 0.1);
        assert_eq!(parse("").q_for("identity"), 1.0);
        assert_eq!(parse("").q_for("gzip"), 0.0);
        assert_eq!(parse("*;q=0").q_for("identity"), 0.0);
        assert_eq!(parse("identity;q=0, *").q_for("identity"), 0.0);
        assert_eq!(parse("GZIP ; Q=1").gzip, Some(1.0));
        assert_eq!(parse("gzip;q=1.5").gzip, Some(0.0));
        assert_eq!(parse("gzip;q=0.0001").gzip, Some(0.0));
        assert_eq!(parse("gzip;q=abc").gzip, Some(0.0));
        assert_eq!(parse("gzip;q=0.001").gzip, Some(0.001));
        assert_eq!(parse("gzip, gzip;q=0").gzip, Some(1.0));
        assert_eq!(parse("x-gzip").gzip, None);
    }

    /// Every case below was sent to nginx 1.22 (`gzip on`) and the presence
    /// of `Content-Encoding: gzip` in its answer recorded.
    #[test]
    fn nginx_gzip_test() {
        let yes = [
            "gzip",
            "gzip, deflate, br",
            "deflate, gzip",
            "deflate,gzip",
            "GZIP",
            "gzip ;q=0.5",
            "gzip; q=1",
            "gzip;q=1.0",
            "gzip;q=0.001, br",
            "gzip;",
            "gzip;q=0.5 ",
            "gzip;q=1.",
        ];
        let no = [
            "",
            "*",
            "x-gzip",
            "deflate;gzip",
            "gzipx",
            "gzip;q=0",
            "gzip;q=0.000",
            "gzip;q=1.5",
            "gzip;q=0.0001",
            "gzip;level=1",
            "gzip;q",
            "br",
            "gzip;q=.5",
            "gzip;q=0.,",
            "gzip;q= 0.5",
            "gzip\t",
            "a, gzip;q=0, gzip",
        ];
        for v in yes {
            assert!(nginx_accepts(v, "gzip"), "{v}");
        }
        for v in no {
            assert!(!nginx_accepts(v, "gzip"), "{v}");
        }
        assert!(nginx_accepts("gzip, br", "br"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let ae = parse(&s);
            for c in ["gzip", "br", "zstd", "identity", "x"] {
                let q = ae.q_for(c);
                proptest::prop_assert!((0.0..=1.0).contains(&q));
                let _ = nginx_accepts(&s, c);
            }
        }
    }
}
