//! The map module's variables at run time (`ngx_http_map_variable`,
//! `ngx_http_map_find`): the source is expanded, looked up (exact keys
//! case-insensitively, then `hostnames` wildcards, most specific first,
//! then regexes in order, which also give the value their captures), and
//! the value found, or the default, is expanded in turn. The table is
//! read by `peregrine_conf::build::map`.

use std::cell::{Cell, RefCell};

use peregrine_conf::model::{MapConf, MapWildcard};

use crate::vars::VarCtx;

/// How deeply map variables may be defined through each other; deeper is
/// a cycle (`map $a $b` with `map $b $a`), whose value is empty, as
/// nginx's guard against a variable evaluated inside itself makes it.
pub(crate) const MAX_MAP_DEPTH: u8 = 16;

thread_local! {
    static DEPTH: Cell<u8> = const { Cell::new(0) };
}

/// A request's map values so far, by map index; `volatile` maps are not
/// kept. Empty (no allocation) until a map variable is read.
pub(crate) type MapCache = RefCell<Vec<Option<String>>>;

/// A key's value and, for a regex key, its captures (`$0`.. and names).
struct Found<'m> {
    value: &'m str,
    captures: Vec<String>,
    named: Vec<(String, String)>,
}

/// `ngx_http_map_find` over `key` (already trimmed of a trailing dot with
/// `hostnames`).
fn find<'m>(m: &'m MapConf, key: &str) -> Option<Found<'m>> {
    let low = key.to_ascii_lowercase();
    let plain = |value: &'m String| Found {
        value,
        captures: Vec::new(),
        named: Vec::new(),
    };
    if let Some(v) = m.exact.get(&low) {
        return Some(plain(v));
    }
    if m.hostnames
        && let Some(v) = wildcard(m, &low)
    {
        return Some(plain(v));
    }
    if key.is_empty() {
        return None;
    }
    m.regexes.iter().find_map(|(re, value)| {
        // A regex without groups has nothing to capture: the match alone
        // (PCRE2's match data reused, nothing allocated).
        if re.captures_len() <= 1 {
            return re.is_match(key).then(|| plain(value));
        }
        let caps = re.captures(key)?;
        let named = re
            .capture_names()
            .into_iter()
            .map(|(n, i)| (n, caps.get(i).cloned().unwrap_or_default()))
            .collect();
        Some(Found {
            value,
            captures: caps,
            named,
        })
    })
}

/// The most specific head wildcard (`*.a.example.com` before
/// `*.example.com`), then a tail one (`www.example.*`), as
/// `ngx_hash_find_combined`.
fn wildcard<'m>(m: &'m MapConf, low: &str) -> Option<&'m String> {
    let head = m
        .wildcards
        .iter()
        .filter_map(|(w, v)| match w {
            MapWildcard::Head { suffix, bare } => {
                let hit = (low.len() > suffix.len() && low.ends_with(suffix.as_str()))
                    || (*bare && low == &suffix[1..]);
                hit.then_some((suffix.len(), v))
            }
            MapWildcard::Tail(_) => None,
        })
        .max_by_key(|&(len, _)| len)
        .map(|(_, v)| v);
    head.or_else(|| {
        m.wildcards.iter().find_map(|(w, v)| match w {
            MapWildcard::Tail(prefix)
                if low.len() > prefix.len() && low.starts_with(prefix.as_str()) =>
            {
                Some(v)
            }
            _ => None,
        })
    })
}

/// Appends the value of `m`'s variable for this request: the value kept
/// from an earlier read in this request, else looked up (and kept unless
/// the map is `volatile`).
pub(crate) fn push(vc: &VarCtx<'_>, m: &MapConf, out: &mut String) {
    let index = vc.maps.iter().position(|x| std::ptr::eq(x, m));
    if let Some(i) = index
        && let Some(Some(v)) = vc.map_cache.borrow().get(i)
    {
        out.push_str(v);
        return;
    }
    let depth = DEPTH.with(Cell::get);
    if depth >= MAX_MAP_DEPTH {
        return;
    }
    DEPTH.with(|d| d.set(depth + 1));
    let value = evaluate(vc, m);
    DEPTH.with(|d| d.set(depth));
    out.push_str(&value);
    if let Some(i) = index.filter(|_| !m.volatile) {
        let mut cache = vc.map_cache.borrow_mut();
        if cache.len() <= i {
            cache.resize(i + 1, None);
        }
        cache[i] = Some(value);
    }
}

fn evaluate(vc: &VarCtx<'_>, m: &MapConf) -> String {
    let source = vc.expand(&m.source);
    let key = if m.hostnames {
        source.strip_suffix('.').unwrap_or(&source)
    } else {
        source.as_str()
    };
    match find(m, key) {
        Some(f) if f.captures.is_empty() => vc.expand(f.value),
        Some(f) => VarCtx {
            captures: &f.captures,
            named: &f.named,
            ..*vc
        }
        .expand(f.value),
        None => m
            .default
            .as_deref()
            .map(|d| vc.expand(d))
            .unwrap_or_default(),
    }
}
