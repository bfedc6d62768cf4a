//! `map SOURCE $VARIABLE { ... }` (`ngx_http_map_module`): the table is
//! read here (its entries are data, not directives, as in nginx), its
//! variable declared, its values' variables checked like any other. The
//! run-time side is `peregrine_core::map`.

use std::collections::HashMap;

use super::Builder;
use super::handlers::{arg, msg};
use crate::error::{ConfError, Result};
use crate::model::{MapConf, MapWildcard};
use crate::syntax::{Block, Directive};

impl Builder {
    /// Reads `map SOURCE $VARIABLE { ... }`.
    pub(super) fn map(&mut self, d: &Directive, block: &Block) -> Result<MapConf> {
        let var = arg(d, 1);
        let Some(name) = var.strip_prefix('$').filter(|n| !n.is_empty()) else {
            return Err(msg(d, format!("invalid variable name \"{var}\"")));
        };
        self.note_names(arg(d, 0));
        let mut map = MapConf {
            source: arg(d, 0).to_string(),
            var: name.to_ascii_lowercase(),
            default: None,
            hostnames: false,
            volatile: false,
            exact: HashMap::new(),
            wildcards: Vec::new(),
            regexes: Vec::new(),
            span: d.span.clone(),
        };
        self.map_items(&block.items, block.error.as_ref(), &mut map)?;
        self.declare_variable(&map.var);
        Ok(map)
    }

    fn map_items(
        &mut self,
        items: &[Directive],
        error: Option<&ConfError>,
        map: &mut MapConf,
    ) -> Result<()> {
        for d in items {
            if d.block.is_some() {
                return Err(msg(d, "unexpected \"{\""));
            }
            match (d.name.as_str(), d.args.len()) {
                ("include", 1) => {
                    for path in self.include_paths(d)? {
                        let parsed = self.load_file(&path, d)?;
                        self.include_depth += 1;
                        let r = self.map_items(&parsed.items, parsed.error.as_ref(), map);
                        self.include_depth -= 1;
                        r?;
                    }
                }
                ("hostnames", 0) => map.hostnames = true,
                ("volatile", 0) => map.volatile = true,
                (_, 1) => self.map_entry(d, map)?,
                _ => return Err(msg(d, "invalid number of the map parameters")),
            }
        }
        match error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// One `KEY VALUE;` line (`ngx_http_map`): `default`, a `~` regex, a
    /// hostname wildcard (with `hostnames`), or an exact key; a leading
    /// `\` escapes a key that would be special.
    fn map_entry(&mut self, d: &Directive, map: &mut MapConf) -> Result<()> {
        let value = d.args[0].clone();
        self.note_names(&value);
        let key = d.name.as_str();
        if key == "default" {
            if map.default.is_some() {
                return Err(msg(d, "duplicate default map parameter"));
            }
            map.default = Some(value);
            return Ok(());
        }
        if let Some(re) = key.strip_prefix('~') {
            let (re, caseless) = match re.strip_prefix('*') {
                Some(r) => (r, true),
                None => (re, false),
            };
            let regex = super::location::compile(re, caseless, &d.span)?;
            for (n, _) in regex.capture_names() {
                self.declare_variable(&n);
            }
            map.regexes.push((regex, value));
            return Ok(());
        }
        let key = key.strip_prefix('\\').unwrap_or(key).to_ascii_lowercase();
        if map.hostnames && (key.starts_with('.') || key.starts_with("*.") || key.ends_with(".*")) {
            let w = wildcard(&key)
                .ok_or_else(|| msg(d, format!("invalid hostname or wildcard \"{}\"", d.name)))?;
            if map.wildcards.iter().any(|(x, _)| same_wildcard(x, &w)) {
                return Err(conflict(d));
            }
            map.wildcards.push((w, value));
            return Ok(());
        }
        if map.exact.insert(key, value).is_some() {
            return Err(conflict(d));
        }
        Ok(())
    }

    /// Records the variables a value or source uses (checked at the end of
    /// `http { }`, as everywhere).
    fn note_names(&mut self, text: &str) {
        for name in super::vars::names(text) {
            if !self.used_vars.iter().any(|u| u.eq_ignore_ascii_case(name)) {
                self.used_vars.push(name.to_string());
            }
        }
    }
}

/// `.example.com` and `*.example.com` claim the same names.
fn same_wildcard(a: &MapWildcard, b: &MapWildcard) -> bool {
    match (a, b) {
        (MapWildcard::Head { suffix: x, .. }, MapWildcard::Head { suffix: y, .. }) => x == y,
        _ => a == b,
    }
}

fn conflict(d: &Directive) -> ConfError {
    msg(d, format!("conflicting parameter \"{}\"", d.name))
}

/// `*.example.com` and `.example.com` (a suffix), `www.example.*` (a
/// prefix); other stars are invalid (`ngx_hash_add_key`'s
/// `NGX_HASH_WILDCARD_KEY` rules).
fn wildcard(key: &str) -> Option<MapWildcard> {
    if let Some(rest) = key.strip_prefix("*.") {
        return (!rest.is_empty() && !rest.contains('*')).then(|| MapWildcard::Head {
            suffix: format!(".{rest}"),
            bare: false,
        });
    }
    if let Some(rest) = key.strip_prefix('.') {
        return (!rest.is_empty() && !rest.contains('*')).then(|| MapWildcard::Head {
            suffix: format!(".{rest}"),
            bare: true,
        });
    }
    let rest = key.strip_suffix(".*")?;
    (!rest.is_empty() && !rest.contains('*')).then(|| MapWildcard::Tail(format!("{rest}.")))
}
