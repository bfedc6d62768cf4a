//! How long an upstream's answer may be served from the cache, as nginx
//! decides it: `X-Accel-Expires` first (`ngx_http_upstream_process_accel_expires`),
//! then `Cache-Control` (`no-cache`, `no-store`, `private` refuse;
//! `s-maxage`/`max-age` set it), then `Expires`, then `proxy_cache_valid`
//! for the status; `Set-Cookie` and `Vary: *` refuse (each of these
//! headers unless `proxy_ignore_headers` names it).

use std::time::Duration;

use peregrine_conf::model::ignore;

/// The answer's headers that decide, by name (any case) and value.
pub trait Headers {
    fn get(&self, name: &str) -> Option<&str>;
}

/// Unix seconds until which the answer of `status` is fresh, or `None`
/// when it must not be cached. `now` in unix seconds.
pub fn valid_until(
    status: u16,
    h: &dyn Headers,
    ign: u32,
    valid: &[(u16, Duration)],
    now: i64,
) -> Option<i64> {
    if ign & ignore::SET_COOKIE == 0 && h.get("set-cookie").is_some() {
        return None;
    }
    if ign & ignore::VARY == 0 && h.get("vary").is_some_and(|v| v.trim() == "*") {
        return None;
    }
    if ign & ignore::X_ACCEL_EXPIRES == 0
        && let Some(v) = h.get("x-accel-expires")
    {
        let v = v.trim();
        let at = match v.strip_prefix('@') {
            Some(abs) => abs.parse::<i64>().ok(),
            None => v
                .parse::<i64>()
                .ok()
                .map(|n| if n == 0 { 0 } else { now + n }),
        };
        match at {
            Some(0) => return None,
            Some(t) => return Some(t),
            None => {}
        }
    }
    if ign & ignore::CACHE_CONTROL == 0
        && let Some(cc) = h.get("cache-control")
    {
        let mut max_age = None;
        for d in cc.split(',').map(str::trim) {
            let (name, val) = d.split_once('=').unwrap_or((d, ""));
            match name.to_ascii_lowercase().as_str() {
                "no-cache" | "no-store" | "private" => return None,
                "s-maxage" => max_age = val.trim_matches('"').parse::<i64>().ok(),
                "max-age" if max_age.is_none() => {
                    max_age = Some(val.trim_matches('"').parse::<i64>().unwrap_or(0))
                }
                _ => {}
            }
        }
        match max_age {
            Some(n) if n <= 0 => return None,
            Some(n) => return Some(now + n),
            None => {}
        }
    }
    if ign & ignore::EXPIRES == 0
        && let Some(e) = h.get("expires")
    {
        let at = peregrine_codec::date::parse_http_date(e.trim());
        return match at {
            Some(t) if t > now => Some(t),
            _ => None,
        };
    }
    by_status(valid, status).map(|d| now + d.as_secs() as i64)
}

/// `proxy_cache_valid`'s time for `status` (`ngx_http_file_cache_valid`:
/// the first rule naming it or `any`); `None` or zero: not cached.
pub fn by_status(valid: &[(u16, Duration)], status: u16) -> Option<Duration> {
    valid
        .iter()
        .find(|(s, _)| *s == status || *s == 0)
        .map(|(_, d)| *d)
        .filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct H(Vec<(&'static str, &'static str)>);
    impl Headers for H {
        fn get(&self, name: &str) -> Option<&str> {
            self.0
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        }
    }

    const VALID: &[(u16, Duration)] = &[(200, Duration::from_secs(60))];

    #[test]
    fn headers_decide_before_the_status_rules() {
        let now = 1000;
        assert_eq!(valid_until(200, &H(vec![]), 0, VALID, now), Some(1060));
        assert_eq!(valid_until(404, &H(vec![]), 0, VALID, now), None);
        let h = H(vec![("Cache-Control", "public, max-age=5")]);
        assert_eq!(valid_until(404, &h, 0, VALID, now), Some(1005));
        let h = H(vec![
            ("X-Accel-Expires", "7"),
            ("Cache-Control", "no-cache"),
        ]);
        assert_eq!(valid_until(200, &h, 0, VALID, now), Some(1007));
        let h = H(vec![("Cache-Control", "private")]);
        assert_eq!(valid_until(200, &h, 0, VALID, now), None);
        assert_eq!(
            valid_until(200, &h, ignore::CACHE_CONTROL, VALID, now),
            Some(1060)
        );
        let h = H(vec![("Set-Cookie", "a=b")]);
        assert_eq!(valid_until(200, &h, 0, VALID, now), None);
        let h = H(vec![("X-Accel-Expires", "0")]);
        assert_eq!(valid_until(200, &h, 0, VALID, now), None);
    }
}
