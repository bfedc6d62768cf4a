//! Whether a response may keep its connection alive beyond the counts and
//! timeouts: `keepalive_time` and `keepalive_disable`, as nginx's
//! `ngx_http_update_location_config` decides.

use peregrine_codec::{Method, Request};
use peregrine_conf::model::ConnConf;

/// False when the connection (`age_ns` since accept) is older than `keepalive_time`, or the
/// browser is one `keepalive_disable` names. The User-Agent is looked at
/// only when a named browser could match (msie6: POST requests only).
/// Always inlined up to that point (every response asks; out of line the
/// call cost about 10 instructions more than the tests), the User-Agent
/// out of line.
#[inline(always)]
pub fn allowed(c: &ConnConf, req: &Request, age_ns: u64) -> bool {
    if age_ns > c.keepalive_time_ns {
        return false;
    }
    let d = c.keepalive_disable;
    let msie6 = d.msie6 && req.method() == Method::Post;
    if !msie6 && !d.safari {
        return true;
    }
    browser_allowed(req, msie6, d.safari)
}

/// The User-Agent part of [`allowed`]: whether the browser is one of those
/// `keepalive_disable` names (`msie6` for this request, `safari`).
#[inline(never)]
fn browser_allowed(req: &Request, msie6: bool, safari: bool) -> bool {
    let Some(ua) = req.header("user-agent") else {
        return true;
    };
    let b = Browser::of(ua.as_bytes());
    !(msie6 && b.msie6 || safari && b.safari)
}

/// What nginx's `ngx_http_process_user_agent` notes of a User-Agent.
#[derive(Debug, Default, PartialEq, Eq)]
struct Browser {
    msie6: bool,
    safari: bool,
}

fn find(h: &[u8], needle: &[u8]) -> Option<usize> {
    h.windows(needle.len()).position(|w| w == needle)
}

impl Browser {
    fn of(ua: &[u8]) -> Browser {
        let mut msie = false;
        let mut msie6 = false;
        // "MSIE " with at least 3 bytes after it ("MSIE 5.0").
        if let Some(i) = find(ua, b"MSIE ").filter(|&i| i + 7 < ua.len()) {
            msie = true;
            if ua[i + 6] == b'.' {
                msie6 = match ua[i + 5] {
                    b'4' | b'5' => true,
                    b'6' => find(&ua[i + 8..], b"SV1").is_none(),
                    _ => false,
                };
            }
        }
        if find(ua, b"Opera").is_some() {
            return Browser::default();
        }
        let safari = !msie
            && find(ua, b"Gecko/").is_none()
            && find(ua, b"Chrome/").is_none()
            && find(ua, b"Safari/").is_some()
            && find(ua, b"Mac OS X").is_some();
        Browser { msie6, safari }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agents_as_nginx_reads_them() {
        let b = |ua: &str| Browser::of(ua.as_bytes());
        assert!(b("MSIE 5.0").msie6);
        assert!(b("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)").msie6);
        assert!(!b("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)").msie6);
        assert!(!b("MSIE 7.0").msie6);
        assert!(!b("MSIE 5.").msie6, "too short after MSIE");
        assert!(!b("Opera MSIE 5.0").msie6);
        assert!(b("Mac OS X Safari/7534.48.3").safari);
        assert!(!b("Mac OS X Chrome/1 Safari/7534.48.3").safari);
        assert!(!b("Safari/7534.48.3").safari);
        assert_eq!(b(""), Browser::default());
    }
}
