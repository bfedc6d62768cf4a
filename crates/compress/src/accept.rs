//! nginx's own `Accept-Encoding` scanners, byte for byte.
//!
//! The workspace's one `Accept-Encoding` reader. Hand-written rather than a
//! general RFC 9110 §12.5.3 parser because the point is to accept exactly
//! what nginx and its modules accept, quirks included: ngx_http_gzip_ok
//! looks only at the first `gzip` token that follows a `,` or a space, never
//! treats `*` as gzip and reads q-values with ngx_http_gzip_quantity;
//! ngx_brotli and zstd-nginx-module each have their own, different scanner.
//! No crate reproduces these.
//!
//! nginx reads past the header's end into the NUL that terminates it; here
//! a byte past the end reads as 0, which gives the same answers.

/// Byte `i` of `v`, or NUL past the end (as nginx's NUL-terminated copy).
fn at(v: &[u8], i: usize) -> u8 {
    v.get(i).copied().unwrap_or(0)
}

/// `ngx_strcasestrn`: first case-insensitive occurrence of `needle` in
/// `hay` at or after `from`.
fn find_ci(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let rest = hay.get(from..)?;
    rest.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| p + from)
}

/// ngx_http_gzip_ok's test of the `Accept-Encoding` value (the fast path
/// for a leading `gzip,` and then ngx_http_gzip_accept_encoding).
pub fn gzip_accepted(v: &[u8]) -> bool {
    if v.len() < 4 {
        return false;
    }
    if v.starts_with(b"gzip,") {
        return true;
    }
    let mut start = 0;
    let mut p = loop {
        let Some(p) = find_ci(v, b"gzip", start) else {
            return false;
        };
        // `p == start` (not `p == 0`): a `gzip` right after a rejected one
        // counts, as in nginx.
        if p == start || matches!(v[p - 1], b',' | b' ') {
            break p + 4;
        }
        start = p + 4;
    };
    // After the token: `,` accepts, `;` starts parameters, spaces are
    // skipped, anything else declines.
    loop {
        match v.get(p) {
            None => return true,
            Some(b',') => return true,
            Some(b';') => break,
            Some(b' ') => p += 1,
            Some(_) => return false,
        }
    }
    p += 1;
    loop {
        match v.get(p) {
            None => return true,
            Some(b'q' | b'Q') => break,
            Some(b' ') => p += 1,
            Some(_) => return false,
        }
    }
    p += 1;
    if p + 2 > v.len() || v[p] != b'=' {
        return false;
    }
    gzip_quantity(&v[p + 1..]) != 0
}

/// ngx_http_gzip_quantity: the q-value times 100, 0 when invalid. nginx
/// adds the fraction's digits without place value (`0.5` gives 5, `0.25`
/// gives 7); only "is it zero" matters to it.
fn gzip_quantity(v: &[u8]) -> u32 {
    let Some(&c) = v.first() else {
        return 0;
    };
    if c != b'0' && c != b'1' {
        return 0;
    }
    let mut q = u32::from(c - b'0') * 100;
    let Some(&c) = v.get(1) else {
        return q;
    };
    if c == b',' || c == b' ' {
        return q;
    }
    if c != b'.' {
        return 0;
    }
    let mut n = 0;
    for &c in &v[2..] {
        if c == b',' || c == b' ' {
            break;
        }
        if !c.is_ascii_digit() {
            return 0;
        }
        q += u32::from(c - b'0');
        n += 1;
    }
    if q > 100 || n > 3 { 0 } else { q }
}

/// ngx_brotli's check_accept_encoding: a `br` token between `,`/space and
/// `,`/space/`;`, declined only by an explicit `;q=0[.000]` (lowercase `q`).
pub fn brotli_accepted(v: &[u8]) -> bool {
    if v.len() < 2 {
        return false;
    }
    let mut cursor = 0;
    loop {
        let Some(p) = find_ci(v, b"br", cursor) else {
            return false;
        };
        let before = if p == 0 { b' ' } else { v[p - 1] };
        cursor = p + 2;
        let after = if cursor >= v.len() { b' ' } else { v[cursor] };
        if !matches!(before, b',' | b' ') || !matches!(after, b',' | b' ' | b';') {
            continue;
        }
        return !brotli_q_is_zero(v, cursor);
    }
}

/// The `;q=0[.[0[0[0]]]]` test of ngx_brotli, starting right after `br`.
fn brotli_q_is_zero(v: &[u8], mut c: usize) -> bool {
    for expected in [b';', b'q', b'=', b'0'] {
        while at(v, c) == b' ' {
            c += 1;
        }
        if at(v, c) != expected {
            return false;
        }
        c += 1;
    }
    if at(v, c) != b'.' {
        return true;
    }
    c += 1;
    for _ in 0..3 {
        let digit = at(v, c);
        c += 1;
        if !digit.is_ascii_digit() {
            return true;
        }
        if digit > b'0' {
            return false;
        }
    }
    true
}

/// zstd-nginx-module's ngx_http_zstd_ok test: the value starts with `zstd`,
/// or its first `zstd` (any case) sits between `,`/space and
/// `,`/space/`;`/end. The module ignores q-values; [`token_q`] restores
/// `zstd;q=0` as a refusal.
pub fn zstd_accepted(v: &[u8]) -> bool {
    if v.len() < 4 {
        return false;
    }
    if v.starts_with(b"zstd") {
        return true;
    }
    let Some(p) = find_ci(v, b"zstd", 0) else {
        return false;
    };
    if p != 0 && !matches!(v[p - 1], b',' | b' ') {
        return false;
    }
    matches!(v.get(p + 4), None | Some(b',' | b' ' | b';'))
}

/// The q-value of the first list member named `token` (RFC 9110 §12.4.2),
/// used only to rank codings that nginx's scanners accepted. `None` when no
/// member is named so, `1.0` when it has no valid `q`.
pub fn token_q(v: &[u8], token: &[u8]) -> Option<f32> {
    for member in v.split(|&b| b == b',') {
        let mut parts = member.split(|&b| b == b';');
        let name = parts.next().map(trim).unwrap_or_default();
        if !name.eq_ignore_ascii_case(token) {
            continue;
        }
        for param in parts {
            let param = trim(param);
            let Some(eq) = param.iter().position(|&b| b == b'=') else {
                continue;
            };
            if !trim(&param[..eq]).eq_ignore_ascii_case(b"q") {
                continue;
            }
            let value = std::str::from_utf8(trim(&param[eq + 1..])).ok();
            let q = value.and_then(|s| s.parse::<f32>().ok()).unwrap_or(1.0);
            return Some(if q.is_finite() {
                q.clamp(0.0, 1.0)
            } else {
                1.0
            });
        }
        return Some(1.0);
    }
    None
}

fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gz(s: &str) -> bool {
        gzip_accepted(s.as_bytes())
    }

    #[test]
    fn gzip_common_values() {
        for yes in [
            "gzip",
            "gzip, deflate",
            "gzip,deflate,sdch",
            "deflate, gzip",
            "deflate,gzip",
            "GZIP",
            "gzip;q=1",
            "gzip; q=0.5",
            "gzip;Q=0.001",
            "gzip;q=1.0",
            "gzip ;q=1",
            "gzip;q=0.5, br",
            "br;q=1.0, gzip;q=0.8, *;q=0.1",
            "x-gzip, gzip",
            "gzip  ",
        ] {
            assert!(gz(yes), "{yes:?} should accept gzip");
        }
    }

    #[test]
    fn gzip_declined_values() {
        for no in [
            "",
            "gz",
            "*",
            "deflate",
            "x-gzip",
            "gzip;q=0",
            "gzip;q=0.0",
            "gzip;q=0.000",
            "gzip;q=1.5",
            "gzip;q=0.0001",
            "gzip;q=2",
            "gzip;q=",
            "gzip;q",
            "gzipfoo",
            "gzip;level=1",
            "gzip;q=0.5x",
            "identity",
        ] {
            assert!(!gz(no), "{no:?} should not accept gzip");
        }
    }

    #[test]
    fn gzip_quirks_match_nginx() {
        // Only the first `gzip` after `,`/space is examined.
        assert!(!gz("gzip;q=0, gzip"));
        // A `gzip` straight after a rejected one counts (`p == start`).
        assert!(gz("x-gzipgzip"));
        // Parameters other than q decline.
        assert!(!gz("gzip;foo=1"));
        // `;` with nothing after is accepted.
        assert!(gz("gzip;"));
        assert!(gz("gzip; "));
    }

    /// Values sent to nginx 1.22 (`gzip on`), with whether it answered
    /// `Content-Encoding: gzip`; kept from the codec's former scanner when it
    /// was merged into this one.
    #[test]
    fn gzip_values_checked_against_nginx() {
        for (v, want) in [
            ("gzip, deflate, br", true),
            ("gzip ;q=0.5", true),
            ("gzip; q=1", true),
            ("gzip;q=0.001, br", true),
            ("gzip;q=0.5 ", true),
            ("gzip;q=1.", true),
            ("x-gzipgzip", true),
            ("deflate;gzip", false),
            ("gzip;q=.5", false),
            ("gzip;q=0.,", false),
            ("gzip;q= 0.5", false),
            ("gzip\t", false),
            ("a, gzip;q=0, gzip", false),
            ("br", false),
        ] {
            assert_eq!(gz(v), want, "{v:?}");
        }
    }

    #[test]
    fn gzip_quantity_digits() {
        assert_eq!(gzip_quantity(b"1"), 100);
        assert_eq!(gzip_quantity(b"0"), 0);
        assert_eq!(gzip_quantity(b"0.5"), 5);
        assert_eq!(gzip_quantity(b"0.25"), 7);
        assert_eq!(gzip_quantity(b"1.000"), 100);
        assert_eq!(gzip_quantity(b"1.001"), 0);
        assert_eq!(gzip_quantity(b"0.1234"), 0);
        assert_eq!(gzip_quantity(b"0.5, br"), 5);
        assert_eq!(gzip_quantity(b"1 "), 100);
        assert_eq!(gzip_quantity(b"x"), 0);
        assert_eq!(gzip_quantity(b""), 0);
    }

    #[test]
    fn brotli_values() {
        for yes in [
            "br",
            "gzip, br",
            "br;q=0.5",
            "br;q=1",
            "br; q = 0.001",
            "br;q=0.1",
            "BR",
        ] {
            assert!(brotli_accepted(yes.as_bytes()), "{yes:?}");
        }
        for no in [
            "",
            "b",
            "gzip",
            "brotli",
            "xbr",
            "br;q=0",
            "br;q=0.",
            "br;q=0.000",
            "br;q=0,",
        ] {
            assert!(!brotli_accepted(no.as_bytes()), "{no:?}");
        }
        // A rejected `br` inside another token does not hide a later one.
        assert!(brotli_accepted(b"brotli, br"));
        // Uppercase Q is not recognised as a q parameter: accepted.
        assert!(brotli_accepted(b"br;Q=0"));
    }

    #[test]
    fn zstd_values() {
        for yes in [
            "zstd",
            "gzip, zstd",
            "zstd;q=0.5",
            "zstd, br",
            "gzip,ZSTD",
            "zstdx",
        ] {
            assert!(zstd_accepted(yes.as_bytes()), "{yes:?}");
        }
        for no in ["", "zst", "gzip", "xzstd", "gzip, zstdx", "xzstd, zstd"] {
            assert!(!zstd_accepted(no.as_bytes()), "{no:?}");
        }
    }

    #[test]
    fn q_values_for_ranking() {
        assert_eq!(token_q(b"gzip;q=0.5, br", b"gzip"), Some(0.5));
        assert_eq!(token_q(b"gzip;q=0.5, br", b"br"), Some(1.0));
        assert_eq!(token_q(b"gzip;q=0.5, br", b"zstd"), None);
        assert_eq!(token_q(b"zstd ; Q = 0", b"zstd"), Some(0.0));
        assert_eq!(token_q(b"zstd;q=abc", b"zstd"), Some(1.0));
        assert_eq!(token_q(b"zstd;q=7", b"zstd"), Some(1.0));
        assert_eq!(token_q(b"zstd;q=NaN", b"zstd"), Some(1.0));
    }

    #[test]
    fn scanners_never_panic_on_any_prefix() {
        let samples = [
            "gzip;q=0.5, br;q=0.000, zstd;q=1, x-gzip;q= , br ; q = 0 . 0",
            "\u{0}gzip;\u{ff}br;q",
        ];
        for s in samples {
            let b = s.as_bytes();
            for i in 0..=b.len() {
                for j in i..=b.len() {
                    let part = &b[i..j];
                    let _ = gzip_accepted(part);
                    let _ = brotli_accepted(part);
                    let _ = zstd_accepted(part);
                    let _ = token_q(part, b"br");
                }
            }
        }
    }
}
