//! Location selection, as `ngx_http_core_find_location`: `=` exact names,
//! then the longest prefix (searching its nested locations), then — unless
//! that prefix was `^~` — the regex locations in configuration order (first
//! match wins, then its nested locations), else the longest prefix.
//! Named (`@`) locations are only reachable by name.
//!
//! Built once per configuration: lookups allocate nothing (a hash probe for
//! exact names, a scan of prefixes sorted longest first, `Regex::is_match`).

use std::sync::Arc;

use peregrine_conf::model::{LocationConf, LocationMatch};

use crate::fxhash::FxHashMap;

/// One location with its nested locations indexed.
#[derive(Debug)]
pub(crate) struct LocNode {
    pub(crate) loc: Arc<LocationConf>,
    /// The length of the prefix/exact name (what `alias` replaces); for a
    /// regex location `alias` replaces the whole URI (`None`).
    pub(crate) name_len: Option<usize>,
    /// A regex location whose settings use `$1`..`$9`: its captures are
    /// taken when it matches (otherwise matching stays allocation-free).
    pub(crate) captures: bool,
    noregex: bool,
    children: LocTree,
}

/// The locations of one level (server or enclosing location).
#[derive(Debug, Default)]
pub(crate) struct LocTree {
    exact: FxHashMap<String, usize>,
    /// (prefix, node), longest first; equal lengths keep configuration order.
    prefixes: Vec<(String, usize)>,
    regexes: Vec<usize>,
}

/// All locations of a server, in an arena.
#[derive(Debug, Default)]
pub(crate) struct Locations {
    nodes: Vec<LocNode>,
    top: LocTree,
    named: FxHashMap<String, usize>,
    // proxy
    /// Top-level prefix locations ending in `/` whose handler is the
    /// proxy: nginx's `auto_redirect` (`/a` answers 301 to `/a/`).
    auto_redirect: Vec<usize>,
}

enum Found {
    /// An exact or regex match: stop looking.
    Done(usize),
    /// A prefix match: regexes may still override it.
    Prefix(usize),
    None,
}

impl Locations {
    pub(crate) fn new(locations: &[Arc<LocationConf>]) -> Locations {
        let mut l = Locations::default();
        l.top = l.build_level(locations, true, None);
        l.auto_redirect = l
            .top
            .prefixes
            .iter()
            .filter(|(p, id)| {
                let c = &l.nodes[*id].loc.conf;
                p.ends_with('/') && (c.proxy.pass.is_some() || crate::gateway::which(c).is_some())
            })
            .map(|(_, id)| *id)
            .collect();
        l
    }

    /// nginx's `auto_redirect` (`ngx_http_core_find_static_location`'s
    /// `NGX_DONE`): `uri` plus `/` names a proxied prefix location and no
    /// prefix as long as `uri` matches it. Inlined up to the emptiness test (a server without proxied prefix
    /// locations, the static case, asks on every request).
    #[inline]
    pub(crate) fn auto_redirect(&self, uri: &str, found: Option<usize>) -> Option<usize> {
        if self.auto_redirect.is_empty() {
            return None;
        }
        self.auto_redirect_of(uri, found)
    }

    /// The search of [`Locations::auto_redirect`].
    #[inline(never)]
    fn auto_redirect_of(&self, uri: &str, found: Option<usize>) -> Option<usize> {
        if found.is_some_and(|id| self.nodes[id].name_len.is_none_or(|n| n >= uri.len())) {
            return None;
        }
        self.auto_redirect.iter().copied().find(|&id| {
            matches!(&self.nodes[id].loc.matcher, LocationMatch::Prefix { path, .. }
                if path.len() == uri.len() + 1 && path.starts_with(uri))
        })
    }

    /// `parent`: the enclosing location's root/alias and what its alias
    /// replaces. A nested location that inherits an `alias` inherits that
    /// length too (nginx's merge copies `clcf->alias` with the root), so
    /// `location /a/ { alias /x/; location ~ html {} }` maps `/a/f.html`
    /// to `/x/f.html`.
    fn build_level(
        &mut self,
        locations: &[Arc<LocationConf>],
        top: bool,
        parent: Option<(&peregrine_conf::model::DocRoot, Option<usize>)>,
    ) -> LocTree {
        let mut tree = LocTree::default();
        for loc in locations {
            let (mut name_len, noregex) = match &loc.matcher {
                LocationMatch::Exact(p) => (Some(p.len()), false),
                LocationMatch::Prefix { path, no_regex } => (Some(path.len()), *no_regex),
                LocationMatch::Regex { .. } => (None, false),
                LocationMatch::Named(_) => (Some(0), false),
            };
            if let Some((root, len)) = parent
                && matches!(root, peregrine_conf::model::DocRoot::Alias(_))
                && loc.conf.root == *root
            {
                name_len = len;
            }
            let children =
                self.build_level(&loc.locations, false, Some((&loc.conf.root, name_len)));
            let id = self.nodes.len();
            let captures = matches!(&loc.matcher, LocationMatch::Regex { regex, .. } if regex.captures_len() > 1)
                && uses_captures(&loc.conf);
            self.nodes.push(LocNode {
                loc: loc.clone(),
                name_len,
                captures,
                noregex,
                children,
            });
            match &loc.matcher {
                LocationMatch::Exact(p) => {
                    tree.exact.entry(p.clone()).or_insert(id);
                }
                LocationMatch::Prefix { path, .. } => tree.prefixes.push((path.clone(), id)),
                LocationMatch::Regex { .. } => tree.regexes.push(id),
                LocationMatch::Named(n) if top => {
                    self.named.entry(n.clone()).or_insert(id);
                }
                LocationMatch::Named(_) => {}
            }
        }
        // Stable: among equal prefixes (a configuration error in nginx) the
        // first stays first.
        tree.prefixes.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        tree
    }

    pub(crate) fn node(&self, id: usize) -> &LocNode {
        &self.nodes[id]
    }

    /// The location for `uri`, `None` when nothing matches (the server's
    /// own settings apply then).
    pub(crate) fn find(&self, uri: &str) -> Option<usize> {
        match self.find_in(&self.top, uri) {
            Found::Done(id) | Found::Prefix(id) => Some(id),
            Found::None => None,
        }
    }

    /// A named location (`@name`, given with or without the `@`).
    pub(crate) fn named(&self, name: &str) -> Option<usize> {
        self.named.get(name.trim_start_matches('@')).copied()
    }

    fn find_in(&self, tree: &LocTree, uri: &str) -> Found {
        if let Some(&id) = tree.exact.get(uri) {
            return Found::Done(id);
        }
        let mut found = Found::None;
        let mut noregex = false;
        if let Some(&(_, id)) = tree
            .prefixes
            .iter()
            .find(|(p, _)| uri.starts_with(p.as_str()))
        {
            found = Found::Prefix(id);
            noregex = self.nodes[id].noregex;
            match self.find_in(&self.nodes[id].children, uri) {
                Found::Done(n) => return Found::Done(n),
                Found::Prefix(n) => found = Found::Prefix(n),
                Found::None => {}
            }
        }
        if !noregex {
            for &id in &tree.regexes {
                let LocationMatch::Regex { regex, .. } = &self.nodes[id].loc.matcher else {
                    continue;
                };
                if regex.is_match(uri) {
                    return match self.find_in(&self.nodes[id].children, uri) {
                        Found::Done(n) | Found::Prefix(n) => Found::Done(n),
                        Found::None => Found::Done(id),
                    };
                }
            }
        }
        found
    }
}

/// Whether any setting expanded per request mentions `$1`..`$9`.
fn uses_captures(conf: &peregrine_conf::model::LocConf) -> bool {
    let has = |s: &str| {
        s.as_bytes()
            .windows(2)
            .any(|w| w[0] == b'$' && w[1].is_ascii_digit())
    };
    let root = match &conf.root {
        peregrine_conf::model::DocRoot::Root(r) | peregrine_conf::model::DocRoot::Alias(r) => r,
    };
    has(root)
        || conf.try_files.iter().any(|t| has(t))
        // A script may read the location's captures (`set $x $1;`).
        || conf.rewrite.script.is_some()
        || conf.error_pages.iter().any(|e| has(&e.target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{loc, loc_conf, nested};

    fn name(l: &Locations, uri: &str) -> String {
        match l.find(uri) {
            Some(id) => match &l.node(id).loc.matcher {
                LocationMatch::Exact(p) => format!("={p}"),
                LocationMatch::Prefix { path, no_regex } => {
                    format!("{}{path}", if *no_regex { "^~" } else { "" })
                }
                LocationMatch::Regex { regex, .. } => {
                    let star = if regex.is_caseless() { "*" } else { "" };
                    format!("~{star}{}", regex.as_str())
                }
                LocationMatch::Named(n) => format!("@{n}"),
            },
            None => "none".into(),
        }
    }

    #[test]
    fn nginx_documented_example() {
        // The example of the `location` directive documentation:
        // A = /, B /, C /documents/, D ^~ /images/, E ~* \.(gif|jpg|jpeg)$.
        let c = loc_conf("/tmp");
        let l = Locations::new(&[
            loc("= /", &c),
            loc("/", &c),
            loc("/documents/", &c),
            loc("^~ /images/", &c),
            loc("~* \\.(gif|jpg|jpeg)$", &c),
        ]);
        assert_eq!(name(&l, "/"), "=/");
        assert_eq!(name(&l, "/index.html"), "/");
        assert_eq!(name(&l, "/documents/document.html"), "/documents/");
        assert_eq!(name(&l, "/images/1.gif"), "^~/images/");
        assert_eq!(name(&l, "/documents/1.jpg"), "~*\\.(gif|jpg|jpeg)$");
        assert_eq!(name(&l, "/documents/1.JPG"), "~*\\.(gif|jpg|jpeg)$");
    }

    #[test]
    fn regex_order_and_longest_prefix_fallback() {
        let c = loc_conf("/tmp");
        let l = Locations::new(&[
            loc("/a", &c),
            loc("/a/b", &c),
            loc("~ \\.php$", &c),
            loc("~ b\\.php$", &c),
            loc("@named", &c),
        ]);
        assert_eq!(name(&l, "/a/b/c"), "/a/b");
        assert_eq!(name(&l, "/a/x"), "/a");
        assert_eq!(name(&l, "/a/b.php"), "~\\.php$");
        assert_eq!(name(&l, "/zzz"), "none");
        assert_eq!(name(&l, "@named"), "none");
        assert!(l.named("@named").is_some());
        assert!(l.named("named").is_some());
        assert!(l.named("@other").is_none());
    }

    /// The documented algorithm on a flat list, written the simple way.
    fn reference(specs: &[String], uri: &str) -> String {
        if let Some(s) = specs.iter().find(|s| s.strip_prefix("= ") == Some(uri)) {
            return format!("={}", &s[2..]);
        }
        let prefix = specs
            .iter()
            .filter_map(|s| {
                let (p, noregex) = match s.strip_prefix("^~ ") {
                    Some(p) => (p, true),
                    None if !s.starts_with(['=', '~']) => (s.as_str(), false),
                    None => return None,
                };
                uri.starts_with(p).then_some((p, noregex))
            })
            .fold(None, |best: Option<(&str, bool)>, c| match best {
                Some(b) if b.0.len() >= c.0.len() => Some(b),
                _ => Some(c),
            });
        if prefix.is_none_or(|p| !p.1) {
            for s in specs {
                if let Some(re) = s.strip_prefix("~ ")
                    && peregrine_conf::Regex::new(re).unwrap().is_match(uri)
                {
                    return format!("~{re}");
                }
            }
        }
        match prefix {
            Some((p, true)) => format!("^~{p}"),
            Some((p, false)) => p.to_string(),
            None => "none".into(),
        }
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_the_reference_algorithm(
            specs in proptest::collection::vec(
                prop_oneof![
                    "/[ab]{0,3}".prop_map(|p: String| p),
                    "/[ab]{0,3}".prop_map(|p| format!("^~ {p}")),
                    "/[ab]{0,3}".prop_map(|p| format!("= {p}")),
                    "[ab]{1,2}\\$?".prop_map(|r| format!("~ {r}")),
                ],
                0..8,
            ),
            uri in "/[ab]{0,4}".prop_map(|u: String| u),
        ) {
            // nginx refuses duplicate prefix/exact locations at load time.
            let mut seen = std::collections::HashSet::new();
            let specs: Vec<String> = specs
                .into_iter()
                .filter(|s| s.starts_with('~') || seen.insert(s.trim_start_matches("^~ ").to_string()))
                .collect();
            let c = loc_conf("/tmp");
            let locs: Vec<_> = specs.iter().map(|s| loc(s, &c)).collect();
            let l = Locations::new(&locs);
            prop_assert_eq!(name(&l, &uri), reference(&specs, &uri));
        }
    }

    #[test]
    fn nested_locations() {
        let c = loc_conf("/tmp");
        let l = Locations::new(&[
            nested("/a/", &c, vec![loc("~ \\.x$", &c), loc("/a/b/", &c)]),
            loc("~ \\.(x|y)$", &c),
            nested("^~ /n/", &c, vec![loc("~ \\.x$", &c)]),
        ]);
        // A nested regex is tried before the enclosing level's regexes.
        assert_eq!(name(&l, "/a/f.x"), "~\\.x$");
        // Nested prefix, then the top-level regex still applies.
        assert_eq!(name(&l, "/a/b/f.y"), "~\\.(x|y)$");
        assert_eq!(name(&l, "/a/b/f"), "/a/b/");
        // `^~` stops the top-level regexes, but not its own nested ones.
        assert_eq!(name(&l, "/n/f.y"), "^~/n/");
        assert_eq!(name(&l, "/n/f.x"), "~\\.x$");
    }
}
