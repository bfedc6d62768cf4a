//! Conditional requests (RFC 9110 §13) as nginx's not-modified filter
//! evaluates them, for 200 responses only: If-Unmodified-Since and If-Match
//! first (412), then If-Modified-Since / If-None-Match (304). nginx's
//! defaults: `if_modified_since exact` (the date must equal the mtime) and
//! strong ETags.

use peregrine_codec::date::parse_http_date;
use peregrine_conf::model::IfModifiedSince;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Send,
    NotModified,
    PreconditionFailed,
}

/// The conditional headers of a request.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Conditions<'a> {
    pub if_unmodified_since: Option<&'a str>,
    pub if_match: Option<&'a str>,
    pub if_modified_since: Option<&'a str>,
    pub if_none_match: Option<&'a str>,
    /// `if_modified_since` of the location.
    pub ims: IfModifiedSince,
}

impl Conditions<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.if_unmodified_since.is_none()
            && self.if_match.is_none()
            && self.if_modified_since.is_none()
            && self.if_none_match.is_none()
    }

    /// `etag`: the response's ETag (`None` with `etag off`).
    pub(crate) fn evaluate(&self, etag: Option<&str>, mtime: i64) -> Verdict {
        if let Some(v) = self.if_unmodified_since {
            // ngx_http_test_if_unmodified: an unparsable date fails.
            match parse_http_date(v) {
                Some(t) if t >= mtime => {}
                _ => return Verdict::PreconditionFailed,
            }
        }
        if let Some(v) = self.if_match
            && !etag_matches(v, etag, false)
        {
            return Verdict::PreconditionFailed;
        }
        if self.if_modified_since.is_none() && self.if_none_match.is_none() {
            return Verdict::Send;
        }
        if let Some(v) = self.if_modified_since
            && self.modified(v, mtime)
        {
            return Verdict::Send;
        }
        if let Some(v) = self.if_none_match
            && !etag_matches(v, etag, true)
        {
            return Verdict::Send;
        }
        Verdict::NotModified
    }
}

impl Conditions<'_> {
    /// `ngx_http_test_if_modified`: `off` always sends; `exact` sends
    /// unless the date is the mtime; `before` also holds back for a date
    /// after it (an unparsable date never equals it: sent).
    fn modified(&self, ims: &str, mtime: i64) -> bool {
        let t = parse_http_date(ims);
        match self.ims {
            IfModifiedSince::Off => true,
            _ if t == Some(mtime) => false,
            IfModifiedSince::Exact => true,
            IfModifiedSince::Before => t.is_none_or(|t| t < mtime),
        }
    }
}

/// [`etag_list_matches`] when the response has an ETag; without one only
/// `*` matches (`ngx_http_test_if_match`).
fn etag_matches(list: &str, etag: Option<&str>, weak: bool) -> bool {
    match etag {
        Some(e) => etag_list_matches(list, e, weak),
        None => list == "*",
    }
}

/// `ngx_http_test_if_match`: `*`, or a comma-separated list containing the
/// ETag (with `W/` accepted before an entry when `weak`).
pub(crate) fn etag_list_matches(list: &str, etag: &str, weak: bool) -> bool {
    let l = list.as_bytes();
    let e = etag.as_bytes();
    if l == b"*" {
        return true;
    }
    let mut p = 0;
    while p < l.len() {
        if weak && l.len() - p > 2 && l[p] == b'W' && l[p + 1] == b'/' {
            p += 2;
        }
        if e.len() > l.len() - p {
            return false;
        }
        if &l[p..p + e.len()] == e {
            let mut q = p + e.len();
            while q < l.len() && (l[q] == b' ' || l[q] == b'\t') {
                q += 1;
            }
            if q == l.len() || l[q] == b',' {
                return true;
            }
        }
        while p < l.len() && l[p] != b',' {
            p += 1;
        }
        while p < l.len() && matches!(l[p], b' ' | b'\t' | b',') {
            p += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const ET: &str = "\"6b0d5a02-14\"";
    const LM: &str = "Mon, 30 Nov 2026 11:12:02 GMT";

    fn mtime() -> i64 {
        parse_http_date(LM).unwrap()
    }

    #[test]
    fn if_none_match_lists_weak_and_star() {
        assert!(etag_list_matches(ET, ET, true));
        assert!(etag_list_matches("\"x\", W/\"6b0d5a02-14\"", ET, true));
        assert!(!etag_list_matches("\"x\", W/\"6b0d5a02-14\"", ET, false));
        assert!(etag_list_matches("*", ET, false));
        assert!(etag_list_matches("\"a\",\"6b0d5a02-14\" ", ET, false));
        assert!(!etag_list_matches("\"6b0d5a02-14x\"", ET, false));
        assert!(!etag_list_matches("", ET, true));
        assert!(!etag_list_matches("W/", ET, true));
    }

    #[test]
    fn verdicts() {
        let c = |ius, im, ims, inm| Conditions {
            if_unmodified_since: ius,
            if_match: im,
            if_modified_since: ims,
            if_none_match: inm,
            ims: IfModifiedSince::Exact,
        };
        let m = mtime();
        assert_eq!(
            c(None, None, Some(LM), None).evaluate(Some(ET), m),
            Verdict::NotModified
        );
        assert_eq!(
            c(None, None, Some("Mon, 30 Nov 2026 11:12:03 GMT"), None).evaluate(Some(ET), m),
            Verdict::Send,
            "exact: a later date is not a match"
        );
        assert_eq!(
            c(None, None, None, Some(ET)).evaluate(Some(ET), m),
            Verdict::NotModified
        );
        assert_eq!(
            c(None, None, Some(LM), Some("\"x\"")).evaluate(Some(ET), m),
            Verdict::Send
        );
        assert_eq!(
            c(None, Some("\"zz\""), None, None).evaluate(Some(ET), m),
            Verdict::PreconditionFailed
        );
        assert_eq!(
            c(None, Some(ET), None, None).evaluate(Some(ET), m),
            Verdict::Send
        );
        assert_eq!(
            c(Some("Mon, 30 Nov 2026 11:12:01 GMT"), None, None, None).evaluate(Some(ET), m),
            Verdict::PreconditionFailed
        );
        assert_eq!(
            c(Some(LM), None, None, None).evaluate(Some(ET), m),
            Verdict::Send
        );
        assert_eq!(
            c(Some("bad"), None, None, None).evaluate(Some(ET), m),
            Verdict::PreconditionFailed
        );
        assert!(c(None, None, None, None).is_empty());
    }

    #[test]
    fn if_modified_since_modes_and_no_etag() {
        let m = mtime();
        let later = "Tue, 01 Dec 2026 00:00:00 GMT";
        let c = |ims, mode| Conditions {
            if_modified_since: Some(ims),
            ims: mode,
            ..Conditions::default()
        };
        use IfModifiedSince::*;
        assert_eq!(c(later, Exact).evaluate(Some(ET), m), Verdict::Send);
        assert_eq!(c(later, Before).evaluate(Some(ET), m), Verdict::NotModified);
        assert_eq!(c("bad", Before).evaluate(Some(ET), m), Verdict::Send);
        assert_eq!(c(LM, Off).evaluate(Some(ET), m), Verdict::Send);
        assert_eq!(c(LM, Before).evaluate(Some(ET), m), Verdict::NotModified);
        // `etag off`: only `*` matches.
        let inm = |v| Conditions {
            if_none_match: Some(v),
            ..Conditions::default()
        };
        assert_eq!(inm(ET).evaluate(None, m), Verdict::Send);
        assert_eq!(inm("*").evaluate(None, m), Verdict::NotModified);
    }

    #[test]
    fn dates_read_with_nginx_leniency() {
        // nginx 1.22 answers 304 to each of these for a file modified at LM:
        // months by their first letters, day 0, no zone.
        let ims = |v| Conditions {
            if_modified_since: Some(v),
            ..Conditions::default()
        };
        let m = mtime();
        for v in [
            "Mon, 30 Nxx 2026 11:12:02 GMT",
            "Tue, 00 Dec 2026 11:12:02 GMT",
            "Mon, 30 Nov 2026 11:12:02",
            "Mon Nov 30 11:12:02 2026",
        ] {
            assert_eq!(ims(v).evaluate(Some(ET), m), Verdict::NotModified, "{v}");
        }
        assert_eq!(
            ims("Mon, 30 nov 2026 11:12:02 GMT").evaluate(Some(ET), m),
            Verdict::Send
        );
    }
}
