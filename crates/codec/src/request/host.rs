//! Host validation as current nginx's `ngx_http_validate_host` (1.29.4+,
//! RFC 3986 §3.2.2): a reg-name of unreserved, sub-delims and `%` bytes
//! without `..`, or an IP literal in brackets; then nothing or `:` and a
//! port of digits up to 65535. The port and one trailing dot are left out,
//! the host part lowercased. nginx 1.22 passed any byte but `/`, `\0` and
//! controls, and did not check the port: Peregrine follows current nginx.

/// A valid Host: its host part is `raw[..len]` (port and one trailing dot
/// left out), ASCII only.
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

/// Bytes of a reg-name (RFC 3986 §3.2.2) besides `.` and `:`, which
/// nginx's loop decides itself: letters, digits, unreserved `-_~`,
/// sub-delims `!$&'()*+,;=` and `%` of pct-encoded (not checked further,
/// as nginx). An IP literal allows the same but `%`, plus `.` and `:`.
const fn reg_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'~' | b'%') || sub_delim(c)
}

const fn sub_delim(c: u8) -> bool {
    matches!(
        c,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

/// Byte classes of the fast path ([`host_part_fast`]): what it passes
/// over (0: lowercase letters, digits and the other reg-name bytes), the
/// two bytes it decides itself, and the rest (uppercase, `[`, anything
/// nginx refuses), which it leaves to [`host_part_general`].
const F_DOT: u8 = 1;
const F_COLON: u8 = 2;
const F_OTHER: u8 = 4;

/// The largest port as text: the fast path decides ports of at most as
/// many bytes (a digit string of this length compares as its number);
/// longer ones (leading zeros are allowed) are counted by the general loop.
const MAX_PORT_TEXT: [u8; 5] = *b"65535";

/// Five bytes as one big-endian number: compares as the bytes do, in one
/// integer compare rather than a `memcmp` call.
const fn be5(b: [u8; 5]) -> u64 {
    u64::from_be_bytes([0, 0, 0, b[0], b[1], b[2], b[3], b[4]])
}

static FAST: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c {
            b'.' => F_DOT,
            b':' => F_COLON,
            _ if reg_name_byte(c) && !c.is_ascii_uppercase() => 0,
            _ => F_OTHER,
        };
        b += 1;
    }
    t
};

/// The usual Host — lowercase name or IPv4 address, then nothing or a port
/// of digits — decided in one pass over the host part and one over the
/// port of at most five bytes ([`MAX_PORT_TEXT`]); `None` for anything else, which
/// [`host_part_general`] decides. Both give the same answer on what this
/// accepts: on reg-name bytes without uppercase, and with a short port of
/// digits (which holds no dot), nginx's loop only checks the dots: no
/// `..`, and one trailing dot dropped.
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
            let port = raw.get(i + 1..).unwrap_or(&[]);
            if class != F_COLON || port.len() > MAX_PORT_TEXT.len() {
                return None;
            }
            // Five bytes above "65535" are a port too large or not digits:
            // 400 either way.
            if let Ok(five) = <[u8; 5]>::try_from(port)
                && be5(five) > be5(MAX_PORT_TEXT)
            {
                return Some(None);
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

/// The longest Host value [`HostMemo`] keeps (longer ones are checked
/// every time).
pub(crate) const HOST_MEMO_MAX: usize = 64;

/// The last valid Host value a [`crate::Request`] checked, kept across
/// requests: the requests of a connection, and those a worker's pooled
/// request parses one after another, nearly always carry the same Host,
/// and the check is a function of its bytes alone. A hit costs one
/// comparison of the value instead of the check.
#[derive(Debug, Clone)]
pub(crate) struct HostMemo {
    raw: [u8; HOST_MEMO_MAX],
    len: usize,
    /// `None` until a valid value is kept (an invalid one never is).
    part: Option<HostPart>,
}

impl HostMemo {
    pub(crate) const fn new() -> HostMemo {
        HostMemo {
            raw: [0; HOST_MEMO_MAX],
            len: 0,
            part: None,
        }
    }

    /// [`host_part`] of `raw`, from the memo when `raw` is its value.
    #[inline]
    pub(crate) fn host_part(&mut self, raw: &[u8]) -> Option<HostPart> {
        if let Some(part) = self.part
            && raw.len() == self.len
            && raw == &self.raw[..self.len]
        {
            return Some(part);
        }
        let part = host_part(raw)?;
        if let Some(keep) = self.raw.get_mut(..raw.len()) {
            keep.copy_from_slice(raw);
            self.len = raw.len();
            self.part = Some(part);
        }
        Some(part)
    }
}

/// The host part of a valid `raw`, or `None` for 400.
pub(crate) fn host_part(raw: &[u8]) -> Option<HostPart> {
    host_part_fast(raw).unwrap_or_else(|| host_part_general(raw))
}

/// Where [`host_part_general`] is in the value (`ngx_http_validate_host`'s
/// states).
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    Host,
    Literal,
    /// Just past a literal's `]`: only a port may follow.
    End,
    Port,
}

/// The largest port nginx accepts.
const MAX_PORT: u32 = 65535;

/// [`host_part`] for any value, byte for byte as `ngx_http_validate_host`.
/// Out of line, so that the fast path's caller does not pay for its
/// registers.
#[inline(never)]
fn host_part_general(raw: &[u8]) -> Option<HostPart> {
    let mut state = State::Start;
    // Index of the last dot: a dot right after it is `..`.
    let mut dot: Option<usize> = None;
    let mut host_len = raw.len();
    let mut port = 0u32;
    let mut has_upper = false;
    for (i, &ch) in raw.iter().enumerate() {
        if state == State::Start {
            if ch == b'[' {
                state = State::Literal;
                continue;
            }
            state = State::Host;
        }
        match (state, ch) {
            (State::Host | State::Literal, b'.') => {
                if dot.is_some_and(|d| d + 1 == i) {
                    return None;
                }
                dot = Some(i);
            }
            (State::Host, b':') => {
                host_len = i;
                state = State::Port;
            }
            (State::Literal, b':') => {}
            (State::Literal, b']') => {
                host_len = i + 1;
                state = State::End;
            }
            (State::Host, c) if reg_name_byte(c) => has_upper |= c.is_ascii_uppercase(),
            (State::Literal, c) if c != b'%' && reg_name_byte(c) => {
                has_upper |= c.is_ascii_uppercase();
            }
            (State::End, b':') => state = State::Port,
            (State::Port, c) if c.is_ascii_digit() => {
                port = port * 10 + u32::from(c - b'0');
                if port > MAX_PORT {
                    return None;
                }
            }
            _ => return None,
        }
    }
    if state == State::Literal {
        return None;
    }
    if host_len > 0 && dot == Some(host_len - 1) {
        host_len -= 1;
    }
    (host_len > 0).then_some(HostPart {
        len: host_len,
        has_upper,
    })
}

#[cfg(test)]
mod tests {
    use super::{HOST_MEMO_MAX, HostMemo, host_part, validate_host};

    /// The memo answers as the check itself, value after value: repeated,
    /// changed in one byte, of the same length, invalid after valid,
    /// longer than it keeps.
    #[test]
    fn memo_answers_as_the_check() {
        let long = "a".repeat(HOST_MEMO_MAX + 1);
        let values: [&[u8]; 12] = [
            b"127.0.0.1:8080",
            b"127.0.0.1:8080",
            b"127.0.0.1:8081",
            b"127.0.0.1:99999",
            b"127.0.0.1:8081",
            b"Example.COM",
            b"example.com",
            b"a..b",
            b"",
            b"example.com",
            long.as_bytes(),
            long.as_bytes(),
        ];
        let mut memo = HostMemo::new();
        for v in values {
            assert_eq!(memo.host_part(v), host_part(v), "{v:?}");
        }
    }

    fn v(s: &[u8]) -> Option<String> {
        let mut out = String::new();
        validate_host(s, &mut out).then_some(out)
    }

    #[test]
    fn nginx_cases() {
        assert_eq!(v(b"a").as_deref(), Some("a"));
        assert_eq!(v(b"A.").as_deref(), Some("a"));
        assert_eq!(v(b"a:80").as_deref(), Some("a"));
        assert_eq!(v(b"a:").as_deref(), Some("a"));
        assert_eq!(v(b"a.:65535").as_deref(), Some("a"));
        assert_eq!(v(b"a:0000080").as_deref(), Some("a"));
        assert_eq!(v(b"[::1]:80").as_deref(), Some("[::1]"));
        assert_eq!(v(b"[V1.A:B]").as_deref(), Some("[v1.a:b]"));
        assert_eq!(v(b"Example.COM").as_deref(), Some("example.com"));
        assert_eq!(
            v(b"a%2e_~!$&'()*+,;=b").as_deref(),
            Some("a%2e_~!$&'()*+,;=b")
        );
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
        // What nginx 1.29.4+ refuses and 1.22 let through (RFC 3986).
        assert_eq!(v(b"a\\b"), None);
        assert_eq!(v(b"a:b:c"), None);
        assert_eq!(v(b"a:65536"), None);
        assert_eq!(v(b"a:000065536"), None);
        assert_eq!(v(b"a:1:2"), None);
        assert_eq!(v(b"a.:1.2"), None);
        assert_eq!(v(b"[::1]."), None);
        assert_eq!(v(b"[::1].:80"), None);
        assert_eq!(v(b"[::1]x"), None);
        assert_eq!(v(b"x[::1]:80"), None);
        assert_eq!(v(b"[::1"), None);
        assert_eq!(v(b"[::%31]"), None);
        assert_eq!(v(b"a@b"), None);
        assert_eq!(v(b"a\"b"), None);
    }

    /// The fast path answers as the general loop on every value over the
    /// bytes that matter to either, up to six bytes long.
    #[test]
    fn fast_path_agrees_with_general() {
        const ALPHABET: &[u8] = b"a.:1[]/A \xff-\\%";
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
        const RARE: &[u8] = b".:1[]/A \xff\\0%!";
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

    /// Around the fast path's five-byte port compare: both paths agree
    /// on every port of four to six bytes near 65535 and with a non-digit.
    #[test]
    fn fast_path_agrees_on_port_bounds() {
        let mut ports: Vec<String> = (0..=70_000).step_by(7).map(|n| n.to_string()).collect();
        ports.extend(
            [
                "65535", "65536", "065535", "00080", "6553a", "a6553", "9999:", "655 5",
            ]
            .map(String::from),
        );
        for port in ports {
            for host in ["a.b:", "1.2.3.4:"] {
                let v = format!("{host}{port}");
                let fast = super::host_part_fast(v.as_bytes());
                let general = super::host_part_general(v.as_bytes());
                if let Some(fast) = fast {
                    assert_eq!(fast, general, "{v}");
                }
                let valid = port.bytes().all(|b| b.is_ascii_digit())
                    && port.parse::<u32>().is_ok_and(|n| n <= 65535);
                assert_eq!(general.is_some(), valid, "{v}");
            }
        }
    }

    /// Non-ASCII bytes are refused anywhere (nginx 1.22 passed them in
    /// the host and did not look at the port); case only matters inside
    /// the host part.
    #[test]
    fn non_ascii_and_case() {
        assert_eq!(v("Café.Example".as_bytes()), None);
        assert_eq!(v("[::1]:ÿ".as_bytes()), None);
        assert_eq!(v(b"a:\xff\xfe"), None);
        assert_eq!(v(b"a:B"), None);
        assert_eq!(v(b"a\xffb:80"), None);
        assert_eq!(v(b"\xc3"), None);
        assert_eq!(v(b"A.B.").as_deref(), Some("a.b"));
        let part = |s: &[u8]| host_part(s).map(|h| (h.len, h.has_upper));
        assert_eq!(part(b"127.0.0.1:18082"), Some((9, false)));
        assert_eq!(part(b"127.0.0.1:123456"), None);
        assert_eq!(part(b"x.Y:1"), Some((3, true)));
        assert_eq!(part(b"x.y:1"), Some((3, false)));
        assert_eq!(part(b"x.y.:1"), Some((3, false)));
        assert_eq!(part(b"[A::1]:1"), Some((6, true)));
    }
}
