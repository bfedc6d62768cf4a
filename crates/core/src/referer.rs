//! `$invalid_referer` (ngx_http_referer_module's `ngx_http_referer_variable`):
//! empty when the `Referer` is valid for the location's `valid_referers`,
//! `1` otherwise.

use peregrine_conf::model::{RefererConf, RefererHost, ServerName};

use crate::vars::VarCtx;

/// nginx reads at most this many bytes of the referer's host into its
/// lowercase buffer (`u_char buf[256]`); a longer host is invalid.
pub(crate) const MAX_REFERER_HOST: usize = 256;

/// The shortest referer nginx looks into for a scheme (`http://i.ru`).
const MIN_SCHEMED_LEN: usize = "http://i.ru".len();

/// `""` (valid) or `"1"`.
pub(crate) fn invalid_referer(v: &VarCtx<'_>) -> &'static str {
    let Some(conf) = v.conf.referer.as_deref() else {
        return "";
    };
    if valid(conf, v.server_names, v.req.header("Referer")) {
        ""
    } else {
        "1"
    }
}

/// The decision of `ngx_http_referer_variable`, in its order.
pub(crate) fn valid(
    conf: &RefererConf,
    server_names: &[ServerName],
    referer: Option<&str>,
) -> bool {
    let Some(referer) = referer else {
        return conf.none;
    };
    let rest = scheme_stripped(referer);
    let Some(rest) = rest else {
        return conf.blocked;
    };
    let host_end = rest.find(['/', ':']).unwrap_or(rest.len());
    if host_end > MAX_REFERER_HOST {
        return false;
    }
    let host = rest[..host_end].to_ascii_lowercase();
    if let Some(uri) = find_host(conf, server_names, &host) {
        // The URI part: from the first `/` after the host (a port is skipped).
        let path = rest[host_end..]
            .find('/')
            .map_or("", |i| &rest[host_end + i..]);
        return uri.is_none_or(|u| path.starts_with(u));
    }
    if conf.server_names
        && server_names
            .iter()
            .any(|n| matches!(n, ServerName::Regex(re) if re.is_match(&host)))
    {
        return true;
    }
    conf.regex.iter().any(|re| re.is_match(rest))
}

/// The referer after `http://` or `https://` (any case), when it is long
/// enough for nginx to look.
fn scheme_stripped(referer: &str) -> Option<&str> {
    if referer.len() < MIN_SCHEMED_LEN {
        return None;
    }
    let b = referer.as_bytes();
    for scheme in ["http://", "https://"] {
        if b.len() >= scheme.len() && b[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes()) {
            return Some(&referer[scheme.len()..]);
        }
    }
    None
}

/// `ngx_hash_find_combined`: the exact name, else the longest matching
/// `*.suffix`, else the longest `prefix.*`; the URI prefix it requires
/// (`Some(None)`: none). Server names (`server_names`) join the exact and
/// wildcard names.
fn find_host<'c>(
    conf: &'c RefererConf,
    server_names: &'c [ServerName],
    host: &str,
) -> Option<Option<&'c str>> {
    let names = || server_names.iter().filter(|_| conf.server_names);
    let exact = conf.hosts.iter().find_map(|h| match h {
        RefererHost::Exact(n, uri) if n == host => Some(uri.as_deref()),
        _ => None,
    });
    if exact.is_some() {
        return exact;
    }
    if names().any(|n| matches!(n, ServerName::Exact(e) if e == host)) {
        return Some(None);
    }
    let head_matches =
        |suffix: &str, bare: bool| host.ends_with(suffix) || (bare && host == &suffix[1..]);
    let head = conf
        .hosts
        .iter()
        .filter_map(|h| match h {
            RefererHost::Head {
                suffix,
                also_bare,
                uri,
            } if head_matches(suffix, *also_bare) => Some((suffix.len(), uri.as_deref())),
            _ => None,
        })
        .chain(names().filter_map(|n| match n {
            ServerName::WildcardStart { suffix, also_bare } if head_matches(suffix, *also_bare) => {
                Some((suffix.len(), None))
            }
            _ => None,
        }))
        .max_by_key(|&(len, _)| len);
    if let Some((_, uri)) = head {
        return Some(uri);
    }
    conf.hosts
        .iter()
        .filter_map(|h| match h {
            RefererHost::Tail(prefix, uri) if host.starts_with(prefix.as_str()) => {
                Some((prefix.len(), uri.as_deref()))
            }
            _ => None,
        })
        .chain(names().filter_map(|n| match n {
            ServerName::WildcardEnd(prefix) if host.starts_with(prefix.as_str()) => {
                Some((prefix.len(), None))
            }
            _ => None,
        }))
        .max_by_key(|&(len, _)| len)
        .map(|(_, uri)| uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(args: &[&str]) -> RefererConf {
        let text = format!(
            "events {{}} http {{ server {{ location / {{ valid_referers {}; }} }} }}",
            args.join(" ")
        );
        let c = peregrine_conf::parse_str(&text, "t.conf").expect("conf");
        let http = c.http.expect("http");
        let loc = &http.servers[0].locations[0];
        (*loc.conf.referer.clone().expect("referer")).clone()
    }

    #[test]
    fn none_blocked_and_exact_names() {
        let c = conf(&["none", "www.example.org"]);
        assert!(valid(&c, &[], None));
        assert!(!valid(&c, &[], Some("")));
        assert!(valid(&c, &[], Some("http://www.example.org")));
        assert!(valid(&c, &[], Some("HTTPS://WWW.example.org:8080/x")));
        assert!(!valid(&c, &[], Some("www.example.org")));
        let b = conf(&["blocked", "www.example.org"]);
        assert!(valid(&b, &[], Some("foobar")));
        assert!(valid(&b, &[], Some("http://su")));
        assert!(!valid(&b, &[], None));
    }

    #[test]
    fn uri_parts_and_wildcards() {
        let c = conf(&["www.example.org/uri", "*.example.com", "www.example.*/w"]);
        assert!(valid(&c, &[], Some("http://www.example.org/urii")));
        assert!(!valid(&c, &[], Some("http://www.example.org/uRi")));
        assert!(!valid(&c, &[], Some("http://www.example.org/ur")));
        assert!(valid(&c, &[], Some("http://a.b.example.com")));
        assert!(!valid(&c, &[], Some("http://example.com")));
        assert!(valid(&c, &[], Some("http://www.example.net/w")));
        assert!(!valid(&c, &[], Some("http://www.example.net/")));
    }

    #[test]
    fn long_hosts_and_regexes() {
        let c = conf(&["~.*"]);
        let host = |n: usize| format!("http://{}", "a".repeat(n));
        assert!(valid(&c, &[], Some(&host(256))));
        assert!(!valid(&c, &[], Some(&host(257))));
        let r = conf(&["~example.org$", "~(?-i)example.net"]);
        assert!(valid(&r, &[], Some("https://www.eXample.org")));
        assert!(!valid(&r, &[], Some("http://www.eXample.net")));
    }
}
