//! Regular expressions as nginx configurations write them: PCRE's dialect
//! (look-ahead such as `^/(?!api)`, back-references, `(?<name>...)` and
//! `(?P<name>...)`, possessive quantifiers), compiled by PCRE2 with its JIT
//! as nginx compiles them (`ngx_regex_compile`: no UTF mode, so patterns and
//! subjects are bytes, and `~*` is `PCRE2_CASELESS` over ASCII).
//!
//! The regex crate was used before: it lacks look-around and
//! back-references, which real configurations use. This wrapper keeps the
//! pattern's text (for messages and `-T`) and its case flag beside the
//! compiled program.

use std::fmt;

/// A compiled configuration regex.
#[derive(Clone)]
pub struct Regex {
    inner: pcre2::bytes::Regex,
    source: String,
    caseless: bool,
}

/// Why a pattern did not compile, in PCRE2's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexError {
    pub reason: String,
    /// The byte offset PCRE2 reports the error at, if any.
    pub offset: Option<usize>,
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for RegexError {}

impl RegexError {
    /// PCRE2's own message: the crate's `Display` puts it after its
    /// `PCRE2: error ...: ` preamble.
    fn from_pcre2(e: &pcre2::Error) -> RegexError {
        let text = e.to_string();
        let reason = match text.find(": ").map(|i| &text[i + 2..]) {
            Some(rest) => rest.split_once(": ").map_or(rest, |(_, m)| m),
            None => &text,
        };
        RegexError {
            reason: reason.to_string(),
            offset: e.offset(),
        }
    }
}

impl Regex {
    /// Compiles `pattern`, case-sensitive.
    pub fn new(pattern: &str) -> Result<Regex, RegexError> {
        Regex::with_case(pattern, false)
    }

    /// Compiles `pattern`; `caseless` for `~*` and nginx's caseless uses.
    pub fn with_case(pattern: &str, caseless: bool) -> Result<Regex, RegexError> {
        let inner = pcre2::bytes::RegexBuilder::new()
            .caseless(caseless)
            .jit_if_available(true)
            .build(pattern)
            .map_err(|e| RegexError::from_pcre2(&e))?;
        Ok(Regex {
            inner,
            source: pattern.to_string(),
            caseless,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    pub fn is_caseless(&self) -> bool {
        self.caseless
    }

    /// Whether `subject` matches anywhere. A matching error (PCRE2's match
    /// or depth limit) counts as no match; nginx logs such an error and
    /// answers 500 (`ngx_regex_exec_array`), which the callers that need it
    /// get from [`Regex::try_match`].
    pub fn is_match(&self, subject: &str) -> bool {
        self.try_match(subject.as_bytes()).unwrap_or(false)
    }

    /// Whether `subject` matches, or PCRE2's matching error.
    pub fn try_match(&self, subject: &[u8]) -> Result<bool, RegexError> {
        self.inner
            .is_match(subject)
            .map_err(|e| RegexError::from_pcre2(&e))
    }

    /// The number of groups, the whole match included (`$0`).
    pub fn captures_len(&self) -> usize {
        self.inner.captures_len()
    }

    /// The named groups: (name, group number), for `$name` variables.
    pub fn capture_names(&self) -> Vec<(String, usize)> {
        self.inner
            .capture_names()
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.as_ref().map(|n| (n.clone(), i)))
            .collect()
    }

    /// The text of every group of the first match (`$0`, `$1`, ...), an
    /// unset group as `""`; `None` without a match.
    pub fn captures(&self, subject: &str) -> Option<Vec<String>> {
        let caps = self.inner.captures(subject.as_bytes()).ok()??;
        Some(
            (0..caps.len())
                .map(|i| {
                    // PCRE2 runs without UTF mode (as nginx's): a group may
                    // cut a character, and only then is the text repaired.
                    caps.get(i).map_or_else(String::new, |m| {
                        subject.get(m.start()..m.end()).map_or_else(
                            || String::from_utf8_lossy(m.as_bytes()).into_owned(),
                            str::to_owned,
                        )
                    })
                })
                .collect(),
        )
    }
}

impl fmt::Debug for Regex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Regex({:?}", self.source)?;
        if self.caseless {
            f.write_str(", caseless")?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Constructs real configurations use, which the regex crate refused.
    #[test]
    fn pcre_constructs() {
        let look = Regex::new("^/(?!api)").unwrap();
        assert!(look.is_match("/web") && !look.is_match("/api/x"));
        let back = Regex::new(r"^/(\w+)/\1$").unwrap();
        assert!(back.is_match("/ab/ab") && !back.is_match("/ab/cd"));
        let named = Regex::new(r"^/(?<user>[a-z]+)/(?P<id>\d+)").unwrap();
        assert_eq!(
            named.capture_names(),
            vec![("user".to_string(), 1), ("id".to_string(), 2)]
        );
        assert_eq!(
            named.captures("/bob/42/x").unwrap(),
            vec!["/bob/42", "bob", "42"]
        );
        let possessive = Regex::new(r"^/a++b").unwrap();
        assert!(possessive.is_match("/aab") && !possessive.is_match("/aa"));
        let behind = Regex::new(r"(?<!\.min)\.js$").unwrap();
        assert!(behind.is_match("/a.js") && !behind.is_match("/a.min.js"));
    }

    #[test]
    fn caseless_and_unset_groups() {
        let re = Regex::with_case(r"\.(gif|jpe?g)(x)?$", true).unwrap();
        assert!(re.is_match("/A.GIF") && re.is_caseless());
        assert_eq!(re.captures("/b.JPG").unwrap(), vec![".JPG", "JPG", ""]);
        assert!(re.captures("/b.png").is_none());
        assert!(!Regex::new(r"\.gif$").unwrap().is_match("/A.GIF"));
    }

    #[test]
    fn errors_are_pcre2s() {
        let e = Regex::new("^(abc").unwrap_err();
        assert!(e.reason.contains("missing closing parenthesis"), "{e}");
        assert_eq!(e.offset, Some(5), "the end of the pattern");
    }

    #[test]
    fn bytes_not_utf8() {
        // nginx matches bytes: a lone high byte is not an error.
        let re = Regex::new("^/caf.$").unwrap();
        assert!(re.try_match(b"/caf\xe9").unwrap());
    }

    /// A group that cuts a character gets the replacement character for
    /// the cut bytes; whole characters are copied as they are.
    #[test]
    fn groups_that_cut_a_character() {
        let re = Regex::new("^/(.)(.*)$").unwrap();
        assert_eq!(
            re.captures("/\u{e9}t\u{e9}").unwrap(),
            vec!["/\u{e9}t\u{e9}", "\u{fffd}", "\u{fffd}t\u{e9}"]
        );
        assert_eq!(re.captures("/ab").unwrap(), vec!["/ab", "a", "b"]);
    }
}
