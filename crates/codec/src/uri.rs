//! URI path normalisation as nginx's `ngx_http_parse_complex_uri` does it
//! (with `merge_slashes on`): percent-decoding, `.`/`..` resolution and
//! merging of repeated slashes, in one buffer with no allocation once the
//! output `String` has capacity.
//!
//! Hand-written because no crate reproduces nginx's order of operations: a
//! decoded `/` or `.` takes part in segment resolution (`/a/%2e%2e/b` is
//! `/b`), and climbing above the root is an error rather than clamped.

/// Why a path was refused (all answered with 400, as nginx does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    #[error("invalid percent-encoding")]
    BadEscape,
    #[error("encoded NUL byte")]
    Nul,
    #[error("path climbs above the root")]
    AboveRoot,
    /// nginx passes such bytes through; Peregrine keeps paths as `str`
    /// (documented difference from nginx).
    #[error("path is not valid UTF-8 after decoding")]
    NotUtf8,
    #[error("path does not start with '/'")]
    NotAbsolute,
}

/// Normalises the path part of a request target (no `?query`, no
/// `#fragment`) into `out`, which is cleared first and keeps its capacity.
/// The result always starts with `/`; a trailing `/`, `/.` or `/..` leaves a
/// trailing `/`, as in nginx.
pub fn normalize(raw_path: &[u8], out: &mut String) -> Result<(), UriError> {
    normalize_with(raw_path, out, true)
}

/// [`normalize`] with nginx's `merge_slashes` setting: when false, empty
/// segments (`//`) are kept; `.` and `..` are still resolved.
pub fn normalize_with(
    raw_path: &[u8],
    out: &mut String,
    merge_slashes: bool,
) -> Result<(), UriError> {
    if raw_path.first() != Some(&b'/') {
        out.clear();
        return Err(UriError::NotAbsolute);
    }
    let mut v = std::mem::take(out).into_bytes();
    v.clear();
    v.extend_from_slice(raw_path);
    let res = decode_in_place(&mut v).and_then(|()| resolve_in_place(&mut v, merge_slashes));
    if let Err(e) = res {
        v.clear();
        *out = String::from_utf8(v).unwrap_or_default();
        return Err(e);
    }
    match String::from_utf8(v) {
        Ok(s) => {
            *out = s;
            Ok(())
        }
        Err(e) => {
            let mut v = e.into_bytes();
            v.clear();
            *out = String::from_utf8(v).unwrap_or_default();
            Err(UriError::NotUtf8)
        }
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes `%XX` in place (the output is never longer than the input).
fn decode_in_place(v: &mut Vec<u8>) -> Result<(), UriError> {
    if memchr::memchr(b'%', v).is_none() {
        return Ok(());
    }
    let (mut r, mut w) = (0, 0);
    while let Some(&b) = v.get(r) {
        let byte = if b == b'%' {
            let hi = v.get(r + 1).copied().and_then(hex);
            let lo = v.get(r + 2).copied().and_then(hex);
            let (Some(hi), Some(lo)) = (hi, lo) else {
                return Err(UriError::BadEscape);
            };
            r += 3;
            let d = (hi << 4) | lo;
            if d == 0 {
                return Err(UriError::Nul);
            }
            d
        } else {
            r += 1;
            b
        };
        if let Some(slot) = v.get_mut(w) {
            *slot = byte;
        }
        w += 1;
    }
    v.truncate(w);
    Ok(())
}

/// Resolves `.`/`..` and merges `//` in place. `v` starts with `/`.
fn resolve_in_place(v: &mut Vec<u8>, merge: bool) -> Result<(), UriError> {
    // Fast path: no `//` (when merging) and no `/.` means nothing to resolve.
    let needs_work = memchr::memchr_iter(b'/', v).any(|i| match v.get(i + 1) {
        Some(b'.') => true,
        Some(b'/') => merge,
        _ => false,
    });
    if !needs_work {
        return Ok(());
    }
    let len = v.len();
    let mut w = 1; // output is v[..w]; it always ends with '/' between segments
    let mut r = 1;
    loop {
        let seg_end = memchr::memchr(b'/', v.get(r..).unwrap_or(&[])).map_or(len, |i| r + i);
        let last = seg_end == len;
        match v.get(r..seg_end).unwrap_or(&[]) {
            b"" if !merge && !last => {
                if let Some(slot) = v.get_mut(w) {
                    *slot = b'/';
                }
                w += 1;
            }
            b"" | b"." => {}
            b".." => {
                if w <= 1 {
                    return Err(UriError::AboveRoot);
                }
                // Drop the last "seg/" of the output.
                let prev = v
                    .get(..w - 1)
                    .and_then(|o| memchr::memrchr(b'/', o))
                    .unwrap_or(0);
                w = prev + 1;
            }
            _ => {
                v.copy_within(r..seg_end, w);
                w += seg_end - r;
                if !last {
                    if let Some(slot) = v.get_mut(w) {
                        *slot = b'/';
                    }
                    w += 1;
                }
            }
        }
        if last {
            break;
        }
        r = seg_end + 1;
    }
    v.truncate(w);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &[u8]) -> Result<String, UriError> {
        let mut out = String::from("garbage");
        normalize(s, &mut out).map(|()| out)
    }

    #[test]
    fn nginx_cases() {
        // Each case checked against nginx 1.22 ($uri).
        assert_eq!(n(b"/echo").unwrap(), "/echo");
        assert_eq!(n(b"/").unwrap(), "/");
        assert_eq!(n(b"//").unwrap(), "/");
        assert_eq!(n(b"/a//b///c").unwrap(), "/a/b/c");
        assert_eq!(n(b"/a/%2e%2e/echo").unwrap(), "/echo");
        assert_eq!(n(b"/echo/%2F/x").unwrap(), "/echo/x");
        assert_eq!(n(b"/echo%3Fx=1").unwrap(), "/echo?x=1");
        assert_eq!(n(b"/echo/%23x").unwrap(), "/echo/#x");
        assert_eq!(n(b"/echo/%25").unwrap(), "/echo/%");
        assert_eq!(n(b"/echo/./a/../b/.").unwrap(), "/echo/b/");
        assert_eq!(n(b"/echo/..").unwrap(), "/");
        assert_eq!(n(b"/echo/..a").unwrap(), "/echo/..a");
        assert_eq!(n(b"/.a/a.").unwrap(), "/.a/a.");
        assert_eq!(n(b"/a+b").unwrap(), "/a+b");
        assert_eq!(n(b"/caf%C3%A9").unwrap(), "/café");
        assert_eq!(n("/café".as_bytes()).unwrap(), "/café");
        assert_eq!(n(b"/a/b/").unwrap(), "/a/b/");
        assert_eq!(n(b"/echo/x/b//..").unwrap(), "/echo/x/");
        assert_eq!(n(b"/echo//..//x").unwrap(), "/x");
        assert_eq!(n(b"/echo/.//./x/").unwrap(), "/echo/x/");
        assert_eq!(n(b"/echo/%2e./y").unwrap(), "/y");
        assert_eq!(n(b"/echo/.%2e/y").unwrap(), "/y");
        assert_eq!(n(b"/echo/x/...").unwrap(), "/echo/x/...");
        assert_eq!(n(b"/echo/x/.../..").unwrap(), "/echo/x/");
    }

    #[test]
    fn errors() {
        assert_eq!(n(b"/.."), Err(UriError::AboveRoot));
        assert_eq!(n(b"/../echo"), Err(UriError::AboveRoot));
        assert_eq!(n(b"/a/../.."), Err(UriError::AboveRoot));
        assert_eq!(n(b"/%2e%2e/"), Err(UriError::AboveRoot));
        assert_eq!(n(b"/ec%00ho"), Err(UriError::Nul));
        assert_eq!(n(b"/echo/%zz"), Err(UriError::BadEscape));
        assert_eq!(n(b"/echo/%2"), Err(UriError::BadEscape));
        assert_eq!(n(b"/echo/%"), Err(UriError::BadEscape));
        assert_eq!(n(b"/echo/%ff"), Err(UriError::NotUtf8));
        assert_eq!(n(b"echo"), Err(UriError::NotAbsolute));
        assert_eq!(n(b""), Err(UriError::NotAbsolute));
    }

    #[test]
    /// Checked against nginx 1.22 with `merge_slashes off`.
    fn merge_slashes_off() {
        let n = |s: &[u8]| {
            let mut out = String::new();
            normalize_with(s, &mut out, false).map(|()| out)
        };
        assert_eq!(n(b"/a//b").unwrap(), "/a//b");
        assert_eq!(n(b"//").unwrap(), "//");
        assert_eq!(n(b"/a//./b/").unwrap(), "/a//b/");
        assert_eq!(n(b"/a//../b").unwrap(), "/a/b");
        assert_eq!(n(b"/a/%2F/b").unwrap(), "/a///b");
        assert_eq!(n(b"/..//"), Err(UriError::AboveRoot));
        assert_eq!(n(b"/a/b//..").unwrap(), "/a/b/");
    }

    #[test]
    fn keeps_capacity() {
        let mut out = String::with_capacity(64);
        normalize(b"/a/./b//c", &mut out).unwrap();
        let cap = out.capacity();
        normalize(b"/x/%2e%2e/y", &mut out).unwrap();
        assert_eq!(out, "/y");
        assert_eq!(out.capacity(), cap);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_is_normal(raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let mut out = String::new();
            if normalize(&raw, &mut out).is_ok() {
                proptest::prop_assert!(out.starts_with('/'));
                proptest::prop_assert!(!out.contains("//"));
                proptest::prop_assert!(!out.contains("/./") && !out.contains("/../"));
            }
        }
    }
}
