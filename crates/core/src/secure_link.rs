//! `$secure_link` and `$secure_link_expires`
//! (ngx_http_secure_link_module): a link is valid when its MD5 (base64url
//! in `secure_link`, or hex in the URI with `secure_link_secret`) matches
//! the expression the configuration names.

use md5::{Digest, Md5};

use crate::vars::VarCtx;

/// The longest base64url hash nginx decodes (`val.len > 24` is refused).
const MAX_HASH_TEXT: usize = 24;

/// Appends `$secure_link` or `$secure_link_expires` (nothing when not found).
pub(crate) fn push(v: &VarCtx<'_>, name: &str, out: &mut String) {
    let conf = &v.conf.secure_link;
    if let Some(secret) = &conf.secret {
        if name == "secure_link"
            && let Some(link) = old_link(v.req.target, secret)
        {
            out.push_str(link);
        }
        return;
    }
    let (Some(variable), Some(md5)) = (&conf.variable, &conf.md5) else {
        return;
    };
    let val = v.expand(variable);
    let (hash, expires) = match val.split_once(',') {
        Some((h, e)) => (h, Some(e)),
        None => (val.as_str(), None),
    };
    let expires_at = match expires {
        // ngx_atotm: digits only; nginx sets the context (and so
        // `$secure_link_expires`) once the time is positive.
        Some(e) => match atotm(e) {
            Some(t) if t > 0 => Some(t),
            _ => return,
        },
        None => None,
    };
    if name == "secure_link_expires" {
        out.push_str(expires.filter(|_| expires_at.is_some()).unwrap_or(""));
        return;
    }
    if hash.len() > MAX_HASH_TEXT {
        return;
    }
    let Some(given) = decode_base64(hash.as_bytes(), true).filter(|h| h.len() == 16) else {
        return;
    };
    let digest = Md5::digest(v.expand(md5).as_bytes());
    // Constant time, as nginx compares.
    let diff = given
        .iter()
        .zip(digest.iter())
        .fold(0u8, |d, (a, b)| d | (a ^ b));
    if diff != 0 {
        return;
    }
    let now = v
        .now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    out.push_str(if expires_at.is_some_and(|t| t < now) {
        "0"
    } else {
        "1"
    });
}

/// `secure_link_secret`: in `/prefix/HASH/link`, HASH (32 hex digits) must
/// be the MD5 of `link` followed by the secret; the variable is `link`
/// (`ngx_http_secure_link_old_variable`, on the URI as received).
fn old_link<'a>(target: &'a str, secret: &str) -> Option<&'a str> {
    let rest = target.get(1..)?;
    let (_, rest) = rest.split_once('/')?;
    let (hash, link) = rest.split_once('/')?;
    if hash.len() != 32 || link.is_empty() {
        return None;
    }
    let mut md5 = Md5::new();
    md5.update(link.as_bytes());
    md5.update(secret.as_bytes());
    let digest = md5.finalize();
    let mut diff = 0u8;
    for (i, d) in digest.iter().enumerate() {
        let byte = u8::from_str_radix(hash.get(2 * i..2 * i + 2)?, 16).ok()?;
        diff |= byte ^ d;
    }
    (diff == 0).then_some(link)
}

/// `ngx_atotm`: decimal digits only, within `i64`.
fn atotm(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The value of one base64 digit, standard (`+/`) or URL (`-_`) alphabet.
fn digit(c: u8, url: bool) -> Option<u8> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' if !url => 62,
        b'/' if !url => 63,
        b'-' if url => 62,
        b'_' if url => 63,
        _ => return None,
    })
}

/// `ngx_decode_base64` / `ngx_decode_base64url`: the data ends at the first
/// `=` (what follows is ignored); a stray byte or a length of 4n+1 fails.
pub(crate) fn decode_base64(src: &[u8], url: bool) -> Option<Vec<u8>> {
    let len = src.iter().position(|&c| c == b'=').unwrap_or(src.len());
    let src = &src[..len];
    if len % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(len * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in src {
        acc = (acc << 6) | u32::from(digit(c, url)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// `ngx_encode_base64`: the standard alphabet, padded.
pub(crate) fn encode_base64(src: &[u8], out: &mut String) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(src.len().div_ceil(3) * 4);
    for chunk in src.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_nginx() {
        let mut s = String::new();
        encode_base64(b"\x00\x01\x02\x03\xfb\xff", &mut s);
        assert_eq!(s, "AAECA/v/");
        s.clear();
        encode_base64(&[0xff; 16], &mut s);
        assert_eq!(s, "/////////////////////w==");
        assert_eq!(
            decode_base64(b"AAECA/v/", false),
            Some(b"\x00\x01\x02\x03\xfb\xff".to_vec())
        );
        assert_eq!(
            decode_base64(b"AAECA_v_", true),
            Some(b"\x00\x01\x02\x03\xfb\xff".to_vec())
        );
        assert_eq!(decode_base64(b"AAECA/v/", true), None);
        assert_eq!(decode_base64(b"QQ==junk!", false), Some(b"A".to_vec()));
        assert_eq!(decode_base64(b"QUJDR", false), None);
    }

    #[test]
    fn old_style_links() {
        // md5("s/file" + "secret") in hex.
        let hex: String = Md5::digest(b"s/filesecret")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let uri = format!("/p/{hex}/s/file");
        assert_eq!(old_link(&uri, "secret"), Some("s/file"));
        assert_eq!(old_link(&uri, "other"), None);
        assert_eq!(old_link("/p/short/s/file", "secret"), None);
        assert_eq!(old_link(&format!("/p/{hex}/"), "secret"), None);
    }
}
