//! `$remote_user`: the user name of an `Authorization: Basic` header,
//! decoded as nginx 1.22's `ngx_http_auth_basic_user` does, streaming, so
//! logging it allocates nothing.
//!
//! Hand-written rather than with the `base64` crate: nginx's decoder has
//! its own leniencies (it stops at the first `=`, ignores what follows, and
//! rejects a length ≡ 1 mod 4) that the log must reproduce byte for byte.

use peregrine_conf::model::LogEscape;

use crate::escape::push_escaped;
use crate::record::{Headers, with_first};

/// A base64 character's six bits (the standard alphabet nginx decodes);
/// also the userid cookie's decoder (`uid.rs`).
pub(crate) fn sextet(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// The base64 text of the credentials, or `None` when nginx would decline.
fn credentials(value: &[u8]) -> Option<&[u8]> {
    let scheme = value.get(..6)?;
    if !scheme.eq_ignore_ascii_case(b"Basic ") {
        return None;
    }
    let enc = value[6..].trim_ascii_start();
    // `ngx_decode_base64`: stop at the first `=`; any other non-alphabet
    // byte before it fails the whole decode.
    let end = enc.iter().position(|&b| b == b'=').unwrap_or(enc.len());
    let enc = &enc[..end];
    if enc.is_empty() || enc.len() % 4 == 1 || !enc.iter().all(|&b| sextet(b).is_some()) {
        return None;
    }
    Some(enc)
}

/// Decoded bytes of validated base64 text, in order.
fn decoded(enc: &[u8]) -> impl Iterator<Item = u8> + '_ {
    enc.chunks(4).flat_map(|chunk| {
        let mut acc = 0u32;
        for &c in chunk {
            acc = (acc << 6) | sextet(c).unwrap_or(0);
        }
        // A chunk of n sextets carries n*6 bits → n-1 whole bytes.
        let n = chunk.len();
        acc <<= 6 * (4 - n as u32);
        let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        bytes.into_iter().take(n.saturating_sub(1))
    })
}

/// Appends the user name and returns true, or returns false (nothing
/// written) when there is none: no header, another scheme, bad base64, no
/// `:` or an empty name.
pub(crate) fn basic_user(headers: &dyn Headers, out: &mut Vec<u8>, mode: LogEscape) -> bool {
    with_first(headers, b"authorization", |v| user_from(v, out, mode)).unwrap_or(false)
}

fn user_from(value: &[u8], out: &mut Vec<u8>, mode: LogEscape) -> bool {
    let Some(enc) = credentials(value) else {
        return false;
    };
    let Some(len) = decoded(enc).position(|b| b == b':') else {
        return false;
    };
    if len == 0 {
        return false;
    }
    // The user name is at most a few hundred bytes; decode it through a
    // small stack buffer so escaping sees contiguous slices.
    let mut buf = [0u8; 64];
    let mut filled = 0;
    for b in decoded(enc).take(len) {
        buf[filled] = b;
        filled += 1;
        if filled == buf.len() {
            push_escaped(out, mode, &buf);
            filled = 0;
        }
    }
    push_escaped(out, mode, &buf[..filled]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(auth: &str) -> Option<Vec<u8>> {
        let h = vec![("Authorization", auth)];
        let mut out = Vec::new();
        basic_user(&h, &mut out, LogEscape::Default).then_some(out)
    }

    // Each expectation was checked against nginx 1.22.1's `$remote_user`.
    #[test]
    fn like_nginx() {
        assert_eq!(
            user("Basic dXNlcjpwYXNz").as_deref(),
            Some(b"user".as_slice())
        );
        assert_eq!(
            user("basic    dXNlcjpw").as_deref(),
            Some(b"user".as_slice())
        );
        // Stops at the first `=`: "dXNlcjpw" is "user:p".
        assert_eq!(
            user("Basic dXNlcjpw=YXNz").as_deref(),
            Some(b"user".as_slice())
        );
        assert_eq!(user("Basic bm9jb2xvbg=="), None); // "nocolon"
        assert_eq!(user("Basic OnBhc3M="), None); // ":pass"
        assert_eq!(user("Basic dXNlcjpwY"), None); // length ≡ 1 mod 4
        assert_eq!(user("Basic dXNlc"), None);
        assert_eq!(user("Bearer dXNlcjpwYXNz"), None);
        assert_eq!(user("Basic "), None);
        assert_eq!(user("Basic d!Nlcjp"), None);
        assert!(!basic_user(
            &Vec::<(&str, &str)>::new(),
            &mut Vec::new(),
            LogEscape::Default
        ));
    }

    #[test]
    fn long_and_escaped_names() {
        // 100 × "é" then ":x": longer than the stack buffer, all escaped.
        let raw = format!("{}:x", "é".repeat(100));
        let enc = encode(raw.as_bytes());
        let got = user(&format!("Basic {enc}")).unwrap_or_default();
        assert_eq!(got, "\\xC3\\xA9".repeat(100).into_bytes());
    }

    fn encode(data: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for c in data.chunks(3) {
            let n = c.len();
            let v = (u32::from(c[0]) << 16)
                | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                | u32::from(*c.get(2).unwrap_or(&0));
            for i in 0..=n {
                s.push(A[(v >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        s
    }

    #[test]
    fn round_trip_all_lengths() {
        for len in 1..40u8 {
            let name: Vec<u8> = (0..len).map(|i| b'a' + i % 26).collect();
            let mut raw = name.clone();
            raw.extend_from_slice(b":pw");
            let got = user(&format!("Basic {}", encode(&raw)));
            assert_eq!(got, Some(name));
        }
    }
}
