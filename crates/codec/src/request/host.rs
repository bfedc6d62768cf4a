//! Host validation as nginx's `ngx_http_validate_host`: rejects `..`, `/`,
//! NUL and controls, strips the port (after the first `:` outside an IP
//! literal, not checked further, as nginx) and one trailing dot, lowercases.

/// Validates `raw` and writes the normalised host into `out` (cleared first).
/// Returns false when nginx would answer 400.
pub(crate) fn validate_host(raw: &[u8], out: &mut String) -> bool {
    out.clear();
    let Some(host) = host_part(raw) else {
        return false;
    };
    out.push_str(host);
    out.make_ascii_lowercase();
    true
}

/// Bytes [`host_part`] must look at; every other byte only passes.
const SPECIAL: u8 = 1;

/// Byte classes of the host loop, so that the common byte (a letter, digit
/// or `-`) costs one load and one test.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if matches!(c, b'.' | b':' | b'[' | b']' | b'/' | 0x00..=0x20 | 0x7f) {
            t[b] = SPECIAL;
        }
        b += 1;
    }
    t
};

/// The host part of a valid `raw` (not yet lowercased), or `None` for 400.
pub(crate) fn host_part(raw: &[u8]) -> Option<&str> {
    let mut dot_pos: Option<usize> = None;
    let mut host_len = raw.len();
    let mut in_literal = false;
    let mut rest = false;
    for (i, &ch) in raw.iter().enumerate() {
        if CLASS[usize::from(ch)] != SPECIAL {
            continue;
        }
        match ch {
            b'.' => {
                if i > 0 && dot_pos == Some(i - 1) {
                    return None;
                }
                dot_pos = Some(i);
            }
            b':' if !rest && !in_literal => {
                host_len = i;
                rest = true;
            }
            b'[' if i == 0 => in_literal = true,
            b']' if in_literal && !rest => {
                host_len = i + 1;
                in_literal = false;
                rest = true;
            }
            b'/' | 0x00..=0x20 | 0x7f => return None,
            _ => {}
        }
    }
    if host_len > 0 && dot_pos == Some(host_len - 1) {
        host_len -= 1;
    }
    if host_len == 0 {
        return None;
    }
    // nginx passes non-ASCII bytes through; Peregrine's `host()` is a `str`,
    // so a host that is not UTF-8 is refused (documented deviation).
    std::str::from_utf8(raw.get(..host_len)?).ok()
}

#[cfg(test)]
mod tests {
    use super::validate_host;

    fn v(s: &[u8]) -> Option<String> {
        let mut out = String::new();
        validate_host(s, &mut out).then_some(out)
    }

    #[test]
    fn nginx_cases() {
        assert_eq!(v(b"a").as_deref(), Some("a"));
        assert_eq!(v(b"A.").as_deref(), Some("a"));
        assert_eq!(v(b"a:80").as_deref(), Some("a"));
        assert_eq!(v(b"a:b:c").as_deref(), Some("a"));
        assert_eq!(v(b"[::1]:80").as_deref(), Some("[::1]"));
        assert_eq!(v(b"Example.COM").as_deref(), Some("example.com"));
        assert_eq!(v(b"a\\b").as_deref(), Some("a\\b"));
        assert_eq!(v(b".a").as_deref(), Some(".a"));
        assert_eq!(v(b""), None);
        assert_eq!(v(b"."), None);
        assert_eq!(v(b"..a"), None);
        assert_eq!(v(b"a..b"), None);
        assert_eq!(v(b"a/b"), None);
        assert_eq!(v(b"a b"), None);
        assert_eq!(v(b"\ta"), None);
        assert_eq!(v(b"a\x01"), None);
        assert_eq!(v(b"a\0"), None);
        assert_eq!(v(b":80"), None);
    }
}
