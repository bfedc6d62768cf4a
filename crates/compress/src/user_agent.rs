//! `gzip_disable msie6`: nginx's User-Agent test for old Internet Explorer.
//!
//! Hand-written: it is a transcription of the few substring tests nginx
//! makes in ngx_http_process_user_agent, with their exact offsets; no
//! User-Agent parsing crate reproduces them.

/// Whether nginx flags this User-Agent as `msie6` (ngx_http_process_user_agent):
/// `MSIE ` followed by at least three more bytes, then `4.` or `5.`, or `6.`
/// without `SV1` (Windows XP SP2, whose IE6 handles gzip) anywhere after it.
/// Any `Opera` in the value clears the flag (Opera masquerades as MSIE).
/// Case-sensitive, as nginx's ngx_strstrn.
pub fn is_msie6(user_agent: &str) -> bool {
    let ua = user_agent.as_bytes();
    if contains(ua, b"Opera") {
        return false;
    }
    let Some(m) = find(ua, b"MSIE ") else {
        return false;
    };
    // nginx requires `msie + 7 < end`: the version digit, the dot and one
    // more byte.
    if m + 7 >= ua.len() || ua[m + 6] != b'.' {
        return false;
    }
    match ua[m + 5] {
        b'4' | b'5' => true,
        b'6' => !contains(&ua[m + 8..], b"SV1"),
        _ => false,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_msie_is_flagged() {
        assert!(is_msie6(
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0)"
        ));
        assert!(is_msie6("Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)"));
        assert!(is_msie6("Mozilla/4.0 (compatible; MSIE 4.01; Windows 95)"));
        // Eight bytes from "MSIE " are enough (nginx: `msie + 7 < end`).
        assert!(is_msie6("MSIE 6.0"));
    }

    #[test]
    fn modern_or_patched_msie_is_not() {
        assert!(!is_msie6(
            "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)"
        ));
        assert!(!is_msie6(
            "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)"
        ));
        assert!(!is_msie6(
            "Mozilla/5.0 (compatible; MSIE 10.0; Windows NT 6.1)"
        ));
        assert!(!is_msie6(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/120.0"
        ));
        assert!(!is_msie6(
            "Opera/9.80 (compatible; MSIE 6.0; Windows NT 5.1)"
        ));
        assert!(!is_msie6(
            "Mozilla/4.0 (compatible; msie 6.0; Windows NT 5.0)"
        ));
        // Too short after "MSIE ".
        assert!(!is_msie6("MSIE 6."));
        assert!(!is_msie6(""));
    }

    #[test]
    fn never_panics_on_truncations() {
        let ua = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1) Opera";
        for i in 0..=ua.len() {
            let _ = is_msie6(&ua[..i]);
        }
    }
}
