//! Common header names recognised a word at a time, so that the line
//! scanner does not walk their bytes one by one.
//!
//! A line starting with one of these names in any case, then `:`, is what
//! the byte-wise name scan would find: all its bytes are name bytes
//! (`[A-Za-z-]`) and the colon ends it. Anything else (another name, an
//! `_`, a line too short to hold the name and its colon) goes to the
//! byte-wise scan, which decides it as before; so this only ever answers
//! what that scan would, sooner.
//!
//! Each entry also carries what the head's driver needs of the name (its
//! [`Kind`] and its bit in [`super::Request::names`]), worked out at
//! compile time, so a common header costs no name comparison after the
//! scan.

/// What nginx's header table does with a header, for the names whose
/// handlers matter before a location is chosen; `Other` for the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Host,
    Connection,
    ContentLength,
    TransferEncoding,
    Expect,
    /// Index in [`UNIQUE`]: a header nginx refuses to see twice.
    Unique(u8),
    Other,
}

/// Headers nginx refuses to see twice (`ngx_http_process_unique_header_line`).
const UNIQUE: [&str; 7] = [
    "if-modified-since",
    "if-unmodified-since",
    "if-match",
    "if-none-match",
    "content-range",
    "if-range",
    "authorization",
];

/// Whether a header name that passed the line scanner is `lower` (lowercase
/// letters and `-`), ignoring case. `| 0x20` maps exactly `A-Z` and `a-z`
/// onto `a-z`, and onto `-` only `-` and CR, which a name cannot hold: one
/// OR and one compare a byte instead of two case conversions.
const fn name_is(n: &[u8], lower: &str) -> bool {
    let lower = lower.as_bytes();
    if n.len() != lower.len() {
        return false;
    }
    let mut i = 0;
    while i < n.len() {
        if n[i] | 0x20 != lower[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The [`Kind`] of a header name that passed the line scanner. The length
/// decides first: most names have none of the lengths looked for.
pub(crate) const fn kind_of(n: &[u8]) -> Kind {
    match n.len() {
        4 if name_is(n, "host") => Kind::Host,
        10 if name_is(n, "connection") => Kind::Connection,
        14 if name_is(n, "content-length") => Kind::ContentLength,
        17 if name_is(n, "transfer-encoding") => Kind::TransferEncoding,
        6 if name_is(n, "expect") => Kind::Expect,
        // The lengths of UNIQUE's names.
        8 | 13 | 17 | 19 => {
            let mut i = 0;
            while i < UNIQUE.len() {
                if name_is(n, UNIQUE[i]) {
                    return Kind::Unique(i as u8);
                }
                i += 1;
            }
            Kind::Other
        }
        _ => Kind::Other,
    }
}

// `kind_of`'s `8 | 13 | 17 | 19` arm lists the lengths of UNIQUE's names: a
// name of another length added there must be added to that arm too.
const _: () = {
    let mut i = 0;
    while i < UNIQUE.len() {
        let n = UNIQUE[i].len();
        assert!(n == 8 || n == 13 || n == 17 || n == 19);
        i += 1;
    }
};

/// `name:` as little-endian words: the bytes to compare after ORing `fold`
/// (0x20 at letters, so either case matches and nothing else does), and,
/// for a name of eight bytes or more, the eight bytes that end with the
/// colon.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Known {
    pub len: usize,
    pub kind: Kind,
    /// [`super::name_bit`] of the name.
    pub bit: u64,
    head: u64,
    head_fold: u64,
    /// Keeps the `len + 1` bytes of a shorter `name:` (all eight otherwise).
    head_keep: u64,
    tail: u64,
    tail_fold: u64,
}

/// Byte `i` of `name:`, 0 past it.
const fn at(name: &[u8], i: usize) -> u8 {
    if i < name.len() {
        name[i]
    } else if i == name.len() {
        b':'
    } else {
        0
    }
}

/// Eight bytes from `from` of `name:` (`what` 0), of its fold bits (1) or
/// of its keep mask (2).
const fn word(name: &[u8], from: usize, what: u8) -> u64 {
    let mut w = 0u64;
    let mut k = 0;
    while k < 8 {
        let i = from + k;
        let b = match what {
            0 => at(name, i),
            1 if i < name.len() && name[i].is_ascii_lowercase() => 0x20,
            2 if i <= name.len() => 0xff,
            _ => 0,
        };
        w |= (b as u64) << (8 * k);
        k += 1;
    }
    w
}

/// `name` is lowercase letters and `-`, at most 15 of them: the head and
/// tail words then cover all of `name:`.
const fn known(name: &str) -> Known {
    let n = name.as_bytes();
    assert!(!n.is_empty() && n.len() < 16);
    let tail_from = if n.len() + 1 > 8 { n.len() + 1 - 8 } else { 0 };
    Known {
        len: n.len(),
        kind: kind_of(n),
        bit: super::name_bit(n),
        head: word(n, 0, 0),
        head_fold: word(n, 0, 1),
        head_keep: word(n, 0, 2),
        tail: word(n, tail_from, 0),
        tail_fold: word(n, tail_from, 1),
    }
}

/// The eight bytes of `s` from `i`, if there are that many.
fn read(s: &[u8], i: usize) -> Option<u64> {
    let w = s.get(i..i.checked_add(8)?)?;
    Some(u64::from_le_bytes(w.try_into().ok()?))
}

impl Known {
    /// Whether `line` starts with this name (any case) and a colon.
    fn starts(&self, line: &[u8]) -> bool {
        let Some(w) = read(line, 0) else {
            return false;
        };
        if (w | self.head_fold) & self.head_keep != self.head {
            return false;
        }
        self.len < 8
            || read(line, self.len + 1 - 8).is_some_and(|w| w | self.tail_fold == self.tail)
    }
}

// By first letter, most frequent first (browsers, curl, load generators).
static A: [Known; 4] = [
    known("accept"),
    known("accept-encoding"),
    known("accept-language"),
    known("authorization"),
];
static C: [Known; 5] = [
    known("connection"),
    known("cookie"),
    known("cache-control"),
    known("content-length"),
    known("content-type"),
];
static H: [Known; 1] = [known("host")];
static I: [Known; 1] = [known("if-none-match")];
static O: [Known; 1] = [known("origin")];
static P: [Known; 1] = [known("pragma")];
static R: [Known; 2] = [known("referer"), known("range")];
static S: [Known; 4] = [
    known("sec-fetch-dest"),
    known("sec-fetch-mode"),
    known("sec-fetch-site"),
    known("sec-fetch-user"),
];
static U: [Known; 1] = [known("user-agent")];

/// The name a header line starts with, when it is a common name followed
/// by `:` (the byte-wise scan would stop at that colon with a valid name);
/// `None` otherwise.
#[inline]
pub(crate) fn known_name(line: &[u8]) -> Option<&'static Known> {
    let names = BY_INITIAL[usize::from(line.first()? & 0x1f)];
    names.iter().find(|k| k.starts(line))
}

/// The names by their first letter's low five bits (one load, no compare
/// chain). Bytes that are not that letter share its slot; `starts` then
/// compares their first byte too and finds nothing.
static BY_INITIAL: [&[Known]; 32] = {
    let mut t: [&[Known]; 32] = [&[]; 32];
    t[(b'a' & 0x1f) as usize] = &A;
    t[(b'c' & 0x1f) as usize] = &C;
    t[(b'h' & 0x1f) as usize] = &H;
    t[(b'i' & 0x1f) as usize] = &I;
    t[(b'o' & 0x1f) as usize] = &O;
    t[(b'p' & 0x1f) as usize] = &P;
    t[(b'r' & 0x1f) as usize] = &R;
    t[(b's' & 0x1f) as usize] = &S;
    t[(b'u' & 0x1f) as usize] = &U;
    t
};

#[cfg(test)]
mod tests {
    use super::super::name_bit;
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind_of(b"Host"), Kind::Host);
        assert_eq!(kind_of(b"CONNECTION"), Kind::Connection);
        assert_eq!(kind_of(b"Content-Length"), Kind::ContentLength);
        assert_eq!(kind_of(b"transfer-encoding"), Kind::TransferEncoding);
        assert_eq!(kind_of(b"Expect"), Kind::Expect);
        let unique = |n: &str| Kind::Unique(UNIQUE.iter().position(|u| *u == n).unwrap() as u8);
        assert_eq!(kind_of(b"If-Range"), unique("if-range"));
        assert_eq!(kind_of(b"Authorization"), unique("authorization"));
        for other in [&b"Hosts"[..], b"Hos", b"If-Rangf", b"X-Forwarded-Host", b""] {
            assert_eq!(kind_of(other), Kind::Other, "{other:?}");
        }
    }

    fn all() -> impl Iterator<Item = &'static Known> {
        [&A[..], &C, &H, &I, &O, &P, &R, &S, &U]
            .into_iter()
            .flatten()
    }

    /// Every name is found in any case when a colon follows, and not
    /// when anything else does or a byte differs.
    #[test]
    fn finds_names_in_any_case_only_before_a_colon() {
        let names = [
            "accept",
            "accept-encoding",
            "accept-language",
            "authorization",
            "connection",
            "cookie",
            "cache-control",
            "content-length",
            "content-type",
            "host",
            "if-none-match",
            "origin",
            "pragma",
            "referer",
            "range",
            "sec-fetch-dest",
            "sec-fetch-mode",
            "sec-fetch-site",
            "sec-fetch-user",
            "user-agent",
        ];
        // Longer names are not in the table (two words cannot cover them).
        for long in [
            "If-Modified-Since: x\r\n",
            "Upgrade-Insecure-Requests: 1\r\n",
        ] {
            assert_eq!(known_name(long.as_bytes()), None);
        }
        assert_eq!(all().count(), names.len());
        for name in names {
            let upper = name.to_ascii_uppercase();
            let mixed: String = name
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if i % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            for n in [name, &upper, &mixed] {
                let k = known_name(format!("{n}: v\r\n").as_bytes());
                assert_eq!(k.map(|k| k.len), Some(name.len()));
                assert_eq!(k.map(|k| k.kind), Some(kind_of(name.as_bytes())));
                assert_eq!(k.map(|k| k.bit), Some(name_bit(n.as_bytes())));
                assert_eq!(
                    known_name(format!("{n}:").as_bytes()).is_some(),
                    name.len() >= 7
                );
                for next in [" ", "-", "_", "x", "\r", "\n", "\t"] {
                    let line = format!("{n}{next}: v\r\n");
                    assert_eq!(known_name(line.as_bytes()), None, "{line:?}");
                }
            }
            // Any one byte changed to a near miss: not found, or found as
            // a name that really is there (the byte-wise scan's answer is
            // checked against this in `header_line`'s tests).
            for i in 0..=name.len() {
                for b in [b'\r', b'_', b'@', b'[', b'`', b'{', b'-', b':', 0xc1, b'M'] {
                    let mut line = format!("{name}: v\r\n").into_bytes();
                    line[i] = b;
                    if let Some(l) = known_name(&line).map(|k| k.len) {
                        assert_eq!(line[l], b':', "{line:?}");
                        assert!(
                            names
                                .iter()
                                .any(|n| line[..l].eq_ignore_ascii_case(n.as_bytes())),
                            "{line:?} {l}"
                        );
                    }
                }
            }
        }
    }
}
