//! `sub_filter` (`ngx_http_sub_filter_module`): replaces strings in a
//! body, matched case-insensitively (nginx lowercases the patterns), each
//! pattern once with `sub_filter_once on` (the default), else every
//! occurrence. At one position the first pattern (in configuration order)
//! that matches wins; after a replacement the search goes on behind it.

use peregrine_conf::filters::SubPattern;

use crate::vars::VarCtx;

/// `body` with the patterns replaced; their variables are expanded for
/// the request.
pub(crate) fn run(patterns: &[SubPattern], once: bool, vars: &VarCtx<'_>, body: &[u8]) -> Vec<u8> {
    let pats: Vec<(Vec<u8>, String)> = patterns
        .iter()
        .map(|p| {
            (
                vars.expand(&p.find).to_ascii_lowercase().into_bytes(),
                vars.expand(&p.replace),
            )
        })
        .filter(|(f, _)| !f.is_empty())
        .collect();
    replace(&pats, once, body)
}

/// The replacement itself (patterns lowercased, non-empty).
pub fn replace(pats: &[(Vec<u8>, String)], once: bool, body: &[u8]) -> Vec<u8> {
    let mut used = vec![false; pats.len()];
    let mut out = Vec::with_capacity(body.len());
    let mut at = 0;
    let mut copied = 0;
    while at < body.len() && used.iter().any(|u| !u) {
        let hit = pats.iter().enumerate().find(|(i, (f, _))| {
            !used[*i]
                && body.len() - at >= f.len()
                && body[at..at + f.len()].eq_ignore_ascii_case(f)
        });
        match hit {
            Some((i, (f, r))) => {
                out.extend_from_slice(&body[copied..at]);
                out.extend_from_slice(r.as_bytes());
                at += f.len();
                copied = at;
                used[i] = once;
            }
            None => at += 1,
        }
    }
    out.extend_from_slice(&body[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(list: &[(&str, &str)]) -> Vec<(Vec<u8>, String)> {
        list.iter()
            .map(|(a, b)| (a.as_bytes().to_vec(), b.to_string()))
            .collect()
    }

    #[test]
    fn once_and_all() {
        let pats = p(&[("foo", "bar")]);
        assert_eq!(replace(&pats, true, b"xFOOxfoo"), b"xbarxfoo");
        assert_eq!(replace(&pats, false, b"xFOOxfoo"), b"xbarxbar");
        let pats = p(&[("a", "b"), ("b", "c")]);
        assert_eq!(replace(&pats, false, b"ab"), b"bc");
        assert_eq!(replace(&pats, true, b"aabb"), b"bacb");
    }
}
