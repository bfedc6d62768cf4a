//! Host validation as nginx's `ngx_http_validate_host`: rejects `..`, `/`,
//! NUL and controls, strips the port (after the first `:` outside an IP
//! literal, not checked further, as nginx) and one trailing dot, lowercases.

use super::plain_run;

/// A valid Host: its host part is `raw[..len]` (port and one trailing dot
/// left out), already checked as UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostPart {
    pub len: usize,
    /// The host part has an uppercase letter: `host()` needs a lowercased
    /// copy rather than a slice of the head.
    pub has_upper: bool,
}

/// Validates `raw` and writes the normalised host into `out` (cleared first).
/// Returns false when nginx would answer 400.
#[cfg(test)]
pub(crate) fn validate_host(raw: &[u8], out: &mut String) -> bool {
    out.clear();
    let Some(h) = host_part(raw) else {
        return false;
    };
    let text = raw.get(..h.len).and_then(|b| std::str::from_utf8(b).ok());
    push_lowercase(text.unwrap_or(""), out);
    true
}

/// Appends `host` lowercased to `out`.
pub(crate) fn push_lowercase(host: &str, out: &mut String) {
    let from = out.len();
    out.push_str(host);
    if let Some(tail) = out.get_mut(from..) {
        tail.make_ascii_lowercase();
    }
}

/// Byte classes of the host loop, ORed together over the value. Bytes of
/// class 0 (lowercase letters, digits, `-`, most punctuation) are passed
/// over by [`plain_run`]; the others stop it.
const SPECIAL: u8 = 1;
/// `A-Z`: a host without them is used as it is.
const UPPER: u8 = 2;
/// ≥ 0x80: only such a host is checked as UTF-8.
const HIGH: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if matches!(c, b'.' | b':' | b'[' | b']' | b'/' | 0x00..=0x20 | 0x7f) {
            t[b] = SPECIAL;
        } else if c.is_ascii_uppercase() {
            t[b] = UPPER;
        } else if c >= 0x80 {
            t[b] = HIGH;
        }
        b += 1;
    }
    t
};

/// [`CLASS`] with `.` passed over too: the fast path's table.
static PLAIN_OR_DOT: [u8; 256] = {
    let mut t = CLASS;
    t[b'.' as usize] = 0;
    t
};

/// The usual Host — lowercase name or IPv4 address, then nothing or a port
/// of digits — decided in one run over the table and one look for `..`;
/// `None` for anything else, which [`host_part_general`] decides. Both
/// give the same answer on what this accepts: without `[`, `]`, `/`,
/// uppercase, controls or non-ASCII bytes, and with a port of digits
/// (which holds no dot), nginx's loop only checks the dots.
fn host_part_fast(raw: &[u8]) -> Option<Option<HostPart>> {
    let n = plain_run(raw, &PLAIN_OR_DOT);
    if let Some(port) = raw.get(n..) {
        match port.split_first() {
            None => {}
            Some((b':', digits)) if digits.iter().all(u8::is_ascii_digit) => {}
            Some(_) => return None,
        }
    }
    let host = raw.get(..n)?;
    if has_dot_pair(host) {
        return Some(None);
    }
    let len = n - usize::from(host.last() == Some(&b'.'));
    Some((len > 0).then_some(HostPart {
        len,
        has_upper: false,
    }))
}

/// Whether `s` holds `..`: eight bytes at a time, `.` bytes flagged
/// exactly (no borrow or carry crosses a byte: each byte is at most 0x7f
/// before the add), a flagged byte followed by a flagged one, within a
/// word or across two.
fn has_dot_pair(s: &[u8]) -> bool {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const DOTS: u64 = 0x2e2e_2e2e_2e2e_2e2e;
    let mut chunks = s.chunks_exact(8);
    let mut last_dot = false;
    for chunk in chunks.by_ref() {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            return false;
        };
        let t = u64::from_le_bytes(word) ^ DOTS;
        let dot = !(((t & LOW7) + LOW7) | t) & !LOW7;
        if dot & (dot >> 8) != 0 || (last_dot && dot & 0x80 != 0) {
            return true;
        }
        last_dot = dot >> 63 != 0;
    }
    for &b in chunks.remainder() {
        let dot = b == b'.';
        if dot && last_dot {
            return true;
        }
        last_dot = dot;
    }
    false
}

/// The host part of a valid `raw`, or `None` for 400.
pub(crate) fn host_part(raw: &[u8]) -> Option<HostPart> {
    host_part_fast(raw).unwrap_or_else(|| host_part_general(raw))
}

/// [`host_part`] for any value. One pass decides
/// validity; only a value with an uppercase or non-ASCII byte somewhere has
/// its host part looked at again (a byte ≥ 0x80 for the UTF-8 check: ASCII
/// is UTF-8 by construction).
fn host_part_general(raw: &[u8]) -> Option<HostPart> {
    let mut scan = HostScan {
        after_dot: 0,
        host_len: raw.len(),
        in_literal: false,
        rest: false,
    };
    let mut seen = 0u8;
    let mut i = 0;
    loop {
        i += plain_run(raw.get(i..).unwrap_or(&[]), &CLASS);
        let Some(&ch) = raw.get(i) else {
            break;
        };
        let class = CLASS[usize::from(ch)];
        seen |= class;
        if class == SPECIAL {
            match scan.special(raw, i, ch) {
                Next::Go => {}
                Next::Done => break,
                Next::Invalid => return None,
            }
        }
        i += 1;
    }
    let mut host_len = scan.host_len;
    if host_len > 0 && scan.after_dot == host_len {
        host_len -= 1;
    }
    if host_len == 0 {
        return None;
    }
    let host = raw.get(..host_len)?;
    // nginx passes non-ASCII bytes through; Peregrine's `host()` is a `str`,
    // so a host that is not UTF-8 is refused (documented deviation).
    if seen & HIGH != 0 {
        std::str::from_utf8(host).ok()?;
    }
    Some(HostPart {
        len: host_len,
        has_upper: seen & UPPER != 0 && host.iter().any(u8::is_ascii_uppercase),
    })
}

/// What [`host_part_general`]'s pass has seen of the value so far.
struct HostScan {
    /// Index just past the last `.` (0: none yet; a dot at 0 gives 1).
    after_dot: usize,
    /// Where the host part ends (at a port's `:` or after a literal's `]`).
    host_len: usize,
    in_literal: bool,
    /// Past the host part (the port, or what follows a literal).
    rest: bool,
}

/// How the pass goes on after a special byte.
enum Next {
    Go,
    /// The rest is a port of digits only: nothing more to check.
    Done,
    Invalid,
}

impl HostScan {
    /// A byte the class table marks special, at `i` (nginx's
    /// `ngx_http_validate_host` states, folded into flags).
    fn special(&mut self, raw: &[u8], i: usize, ch: u8) -> Next {
        match ch {
            b'.' => {
                if i != 0 && self.after_dot == i {
                    return Next::Invalid;
                }
                self.after_dot = i + 1;
            }
            b':' if !self.rest && !self.in_literal => {
                self.host_len = i;
                self.rest = true;
                // The usual port, all digits, has nothing nginx checks.
                let port = raw.get(i + 1..).unwrap_or(&[]);
                if port.iter().all(u8::is_ascii_digit) {
                    return Next::Done;
                }
            }
            b'[' if i == 0 => self.in_literal = true,
            b']' if self.in_literal && !self.rest => {
                self.host_len = i + 1;
                self.in_literal = false;
                self.rest = true;
            }
            b'/' | 0x00..=0x20 | 0x7f => return Next::Invalid,
            _ => {}
        }
        Next::Go
    }
}

#[cfg(test)]
mod tests {
    use super::{host_part, validate_host};

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

    /// The fast path answers as the general loop on every value over the
    /// bytes that matter to either, up to five bytes long.
    #[test]
    fn fast_path_agrees_with_general() {
        const ALPHABET: &[u8] = b"a.:1[]/A \xff-";
        let mut v = Vec::new();
        for len in 0..=5u32 {
            for mut code in 0..ALPHABET.len().pow(len) {
                v.clear();
                for _ in 0..len {
                    v.push(ALPHABET[code % ALPHABET.len()]);
                    code /= ALPHABET.len();
                }
                if let Some(fast) = super::host_part_fast(&v) {
                    assert_eq!(fast, super::host_part_general(&v), "{v:?}");
                }
            }
        }
    }

    #[test]
    fn dot_pairs_found_anywhere() {
        for len in 0..20 {
            for at in 0..len {
                for fill in [b'a', 0xae, b'\xff', 0x2f, 0x0e] {
                    let mut v = vec![fill; len];
                    v[at] = b'.';
                    assert!(!super::has_dot_pair(&v), "{v:?}");
                    if at + 1 < len {
                        v[at + 1] = b'.';
                        assert!(super::has_dot_pair(&v), "{v:?}");
                    }
                }
            }
        }
    }

    /// Non-ASCII and uppercase bytes only matter inside the host part:
    /// the port part is passed over unchecked, as nginx does.
    #[test]
    fn non_ascii_and_case() {
        assert_eq!(
            v("Café.Example".as_bytes()).as_deref(),
            Some("café.example")
        );
        assert_eq!(v("[::1]:ÿ".as_bytes()).as_deref(), Some("[::1]"));
        assert_eq!(v(b"a:\xff\xfe").as_deref(), Some("a"));
        assert_eq!(v(b"a:B").as_deref(), Some("a"));
        assert_eq!(v(b"a\xffb:80"), None);
        assert_eq!(v(b"\xc3"), None);
        assert_eq!(v(b"A.B.").as_deref(), Some("a.b"));
        let part = |s: &[u8]| host_part(s).map(|h| (h.len, h.has_upper));
        assert_eq!(part(b"127.0.0.1:18082"), Some((9, false)));
        assert_eq!(part(b"x.Y:Z"), Some((3, true)));
        assert_eq!(part(b"x.y:Z"), Some((3, false)));
        assert_eq!(part(b"x.y.:Z"), Some((3, false)));
    }
}
