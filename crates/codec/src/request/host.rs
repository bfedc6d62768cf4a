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

/// Byte classes of the fast path ([`host_part_fast`]): what it passes
/// over (0: lowercase letters, digits, `-` and the punctuation nginx lets
/// through unchecked), the two bytes it decides itself, and the rest,
/// which it leaves to [`host_part_general`].
const F_DOT: u8 = 1;
const F_COLON: u8 = 2;
const F_OTHER: u8 = 4;

static FAST: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b'.' => F_DOT,
            b':' => F_COLON,
            _ if CLASS[b] != 0 => F_OTHER,
            _ => 0,
        };
        b += 1;
    }
    t
};

/// The usual Host — lowercase name or IPv4 address, then nothing or a port
/// of digits — decided in one pass over the host part and one over the
/// port; `None` for anything else, which [`host_part_general`] decides.
/// Both give the same answer on what this accepts: without `[`, `]`, `/`,
/// uppercase, controls or non-ASCII bytes, and with a port of digits
/// (which holds no dot), nginx's loop only checks the dots: no `..`, and
/// one trailing dot dropped.
#[inline(always)]
fn host_part_fast(raw: &[u8]) -> Option<Option<HostPart>> {
    // `pairs` gets the dot bit where a dot follows a dot, without a branch:
    // the loop branches only on a byte it does not pass over.
    let (mut pairs, mut prev) = (0u8, 0u8);
    let mut i = 0;
    // Four bytes a step while none stops the host part (most hosts are
    // longer than four bytes).
    while let Some(&[a, b, c, d]) = raw.get(i..i + 4).and_then(|w| <&[u8; 4]>::try_from(w).ok()) {
        let class = |b: u8| FAST[usize::from(b)];
        let (a, b, c, d) = (class(a), class(b), class(c), class(d));
        if a | b | c | d > F_DOT {
            break;
        }
        pairs |= (prev & a) | (a & b) | (b & c) | (c & d);
        prev = d;
        i += 4;
    }
    let mut n = raw.len();
    while let Some(&b) = raw.get(i) {
        let class = FAST[usize::from(b)];
        if class > F_DOT {
            if class != F_COLON {
                return None;
            }
            n = i;
            break;
        }
        pairs |= class & prev;
        prev = class;
        i += 1;
    }
    if !all_digits(raw.get(n + 1..).unwrap_or(&[])) {
        return None;
    }
    if pairs != 0 {
        return Some(None);
    }
    let len = n - usize::from(prev == F_DOT);
    Some((len > 0).then_some(HostPart {
        len,
        has_upper: false,
    }))
}

/// Whether `s` is ASCII digits only, four bytes a test: in a word of bytes
/// below 0x80 (`| x` flags the others), `x + 0x46` sets a byte's top bit
/// exactly when it is above `9` and `x - 0x30` at the lowest byte below
/// `0` (a borrow only runs upwards from there), so no bit is set only when
/// every byte is a digit.
fn all_digits(s: &[u8]) -> bool {
    const HIGH: u32 = 0x8080_8080;
    let mut i = 0;
    let mut flags = 0;
    while let Some(w) = s.get(i..i + 4).and_then(|w| <[u8; 4]>::try_from(w).ok()) {
        let x = u32::from_le_bytes(w);
        flags |= (x.wrapping_add(0x4646_4646) | x.wrapping_sub(0x3030_3030) | x) & HIGH;
        i += 4;
    }
    flags == 0 && s.get(i..).unwrap_or(&[]).iter().all(u8::is_ascii_digit)
}

/// The host part of a valid `raw`, or `None` for 400.
pub(crate) fn host_part(raw: &[u8]) -> Option<HostPart> {
    host_part_fast(raw).unwrap_or_else(|| host_part_general(raw))
}

/// [`host_part`] for any value. Out of line, so that the fast path's
/// caller does not pay for its registers. One pass decides
/// validity; only a value with an uppercase or non-ASCII byte somewhere has
/// its host part looked at again (a byte ≥ 0x80 for the UTF-8 check: ASCII
/// is UTF-8 by construction).
#[inline(never)]
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
    /// bytes that matter to either, up to six bytes long.
    #[test]
    fn fast_path_agrees_with_general() {
        const ALPHABET: &[u8] = b"a.:1[]/A \xff-\\";
        let mut v = Vec::new();
        for len in 0..=6u32 {
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

    /// The same on longer values, where the fast path's four-byte steps
    /// meet (a `..` across two steps, a colon or a stop byte in any
    /// place of a step, ports of four digits and more): random values
    /// mostly of the bytes of ordinary hosts, up to 24 bytes.
    #[test]
    fn fast_path_agrees_with_general_on_long_values() {
        const COMMON: &[u8] = b"ab.9-";
        const RARE: &[u8] = b".:1[]/A \xff\\0";
        let mut next = crate::request::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut answered = 0;
        for _ in 0..200_000 {
            let len = next() % 25;
            let v: Vec<u8> = (0..len)
                .map(|_| match next() % 8 {
                    0 => RARE[next() % RARE.len()],
                    _ => COMMON[next() % COMMON.len()],
                })
                .collect();
            if let Some(fast) = super::host_part_fast(&v) {
                answered += 1;
                assert_eq!(fast, super::host_part_general(&v), "{v:?}");
            }
        }
        assert!(answered > 20_000, "{answered}");
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
