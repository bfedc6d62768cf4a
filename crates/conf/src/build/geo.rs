//! `geo [SOURCE] $VARIABLE { }` (`ngx_http_geo_module`): a value by the
//! client's address (or SOURCE's): networks (IPv4 and IPv6, the longest
//! prefix matching) or, with `ranges`, IPv4 ranges; `default`, `delete`,
//! `include`, `proxy`, `proxy_recursive`, `volatile`. A later range over
//! an earlier one replaces the part it covers, as nginx's inserts do. The
//! run-time side is `peregrine_core::geo`.

use std::collections::BTreeMap;

use super::Builder;
use super::access::cidr;
use super::handlers::{arg, msg};
use crate::error::{ConfError, Result};
use crate::model::{AccessNet, GeoConf};
use crate::syntax::{Block, Directive};

impl Builder {
    pub(super) fn geo(&mut self, d: &Directive, block: &Block) -> Result<GeoConf> {
        let (source, var) = match d.args.len() {
            1 => (None, arg(d, 0)),
            _ => (Some(arg(d, 0).to_string()), arg(d, 1)),
        };
        let Some(name) = var.strip_prefix('$').filter(|n| !n.is_empty()) else {
            return Err(msg(d, format!("invalid variable name \"{var}\"")));
        };
        if let Some(s) = &source {
            for v in super::vars::names(s) {
                if !self.used_vars.iter().any(|u| u.eq_ignore_ascii_case(v)) {
                    self.used_vars.push(v.to_string());
                }
            }
        }
        let mut geo = GeoConf {
            source,
            var: name.to_ascii_lowercase(),
            ..GeoConf::default()
        };
        let mut state = State::default();
        self.geo_items(&block.items, block.error.as_ref(), &mut geo, &mut state)?;
        self.declare_variable(&geo.var);
        Ok(geo)
    }

    fn geo_items(
        &mut self,
        items: &[Directive],
        error: Option<&ConfError>,
        geo: &mut GeoConf,
        state: &mut State,
    ) -> Result<()> {
        for e in items {
            if e.block.is_some() {
                return Err(msg(e, "unexpected \"{\""));
            }
            match (e.name.as_str(), e.args.len()) {
                ("ranges", 0) => {
                    if state.entries {
                        return Err(msg(
                            e,
                            "the \"ranges\" directive must be the first directive inside \"geo\" block",
                        ));
                    }
                    geo.ranges = true;
                }
                ("proxy_recursive", 0) => geo.proxy_recursive = true,
                ("volatile", 0) => geo.volatile = true,
                ("include", 1) => {
                    for path in self.include_paths(e)? {
                        let parsed = self.load_file(&path, e)?;
                        self.include_depth += 1;
                        let r = self.geo_items(&parsed.items, parsed.error.as_ref(), geo, state);
                        self.include_depth -= 1;
                        r?;
                    }
                }
                ("proxy", 1) => {
                    let (net, _) = cidr(&e.args[0])
                        .ok_or_else(|| msg(e, format!("invalid network \"{}\"", e.args[0])))?;
                    geo.proxies.push(net);
                }
                (_, 1) => {
                    state.entries = true;
                    if geo.ranges {
                        self.geo_range(e, geo)?;
                    } else {
                        self.geo_cidr(e, geo)?;
                    }
                }
                _ => return Err(msg(e, "invalid number of the geo parameters")),
            }
        }
        match error {
            Some(err) => Err(err.clone()),
            None => Ok(()),
        }
    }

    /// `NET VALUE`, `default VALUE`, `delete NET` (`ngx_http_geo_cidr`).
    fn geo_cidr(&self, e: &Directive, geo: &mut GeoConf) -> Result<()> {
        let (net_text, value) = match e.name.as_str() {
            "delete" => (e.args[0].as_str(), None),
            "default" => ("0.0.0.0/0", Some(&e.args[0])),
            n => (n, Some(&e.args[0])),
        };
        let (net, exact) =
            cidr(net_text).ok_or_else(|| msg(e, format!("invalid network \"{net_text}\"")))?;
        if !exact {
            self.warn_at(e, format!("low address bits of {net_text} are meaningless"));
        }
        let mut nets = vec![net];
        if e.name == "default" {
            nets.push(AccessNet::V6 { addr: 0, mask: 0 });
        }
        for net in nets {
            let old = match (&net, value) {
                (AccessNet::V4 { addr, mask }, Some(v)) => put(&mut geo.v4, *mask, *addr, v),
                (AccessNet::V6 { addr, mask }, Some(v)) => put(&mut geo.v6, *mask, *addr, v),
                (AccessNet::V4 { addr, mask }, None) => take(&mut geo.v4, *mask, *addr),
                (AccessNet::V6 { addr, mask }, None) => take(&mut geo.v6, *mask, *addr),
                _ => None,
            };
            match (old, value) {
                (Some(old), Some(v)) if e.name != "default" => self.warn_at(
                    e,
                    format!(
                        "duplicate network \"{net_text}\", value: \"{v}\", old value: \"{old}\""
                    ),
                ),
                (None, None) => self.warn_at(e, format!("no network \"{net_text}\" to delete")),
                _ => {}
            }
        }
        if e.name == "default" {
            geo.default = e.args[0].clone();
        }
        Ok(())
    }

    /// `START-END VALUE`, `default VALUE`, `delete START-END`
    /// (`ngx_http_geo_range`).
    fn geo_range(&self, e: &Directive, geo: &mut GeoConf) -> Result<()> {
        if e.name == "default" {
            geo.default = e.args[0].clone();
            return Ok(());
        }
        let (del, net) = match e.name.as_str() {
            "delete" => (true, e.args[0].as_str()),
            n => (false, n),
        };
        let invalid = || msg(e, format!("invalid range \"{net}\""));
        let (a, b) = net.split_once('-').ok_or_else(invalid)?;
        let start: std::net::Ipv4Addr = a.parse().map_err(|_| invalid())?;
        let end: std::net::Ipv4Addr = b.parse().map_err(|_| invalid())?;
        let (start, end) = (u32::from(start), u32::from(end));
        if start > end {
            return Err(invalid());
        }
        let removed = paint(
            &mut geo.range_map,
            start,
            end,
            (!del).then(|| e.args[0].clone()),
        );
        if del && !removed {
            self.warn_at(e, format!("no address range \"{net}\" to delete"));
        }
        Ok(())
    }

    fn warn_at(&self, d: &Directive, m: String) {
        self.warnings
            .borrow_mut()
            .push(format!("{m} in {}", d.span));
    }
}

/// What the block has seen so far.
#[derive(Default)]
struct State {
    /// A network or range was given (`ranges` must come first).
    entries: bool,
}

/// Sets `net/mask` to `v`: the value it had.
fn put<A: Ord + Copy, M: PartialEq + Copy + Into<u128>>(
    by_mask: &mut Vec<(M, BTreeMap<A, String>)>,
    mask: M,
    net: A,
    v: &str,
) -> Option<String> {
    let i = match by_mask.iter().position(|(m, _)| *m == mask) {
        Some(i) => i,
        None => {
            by_mask.push((mask, BTreeMap::new()));
            // Longest prefix first: the masks' values sort so.
            by_mask.sort_by_key(|x| std::cmp::Reverse(x.0.into().count_ones()));
            by_mask.iter().position(|(m, _)| *m == mask).unwrap_or(0)
        }
    };
    by_mask[i].1.insert(net, v.to_string())
}

/// Removes `net/mask`: the value it had.
fn take<A: Ord, M: PartialEq>(
    by_mask: &mut [(M, BTreeMap<A, String>)],
    mask: M,
    net: A,
) -> Option<String> {
    by_mask
        .iter_mut()
        .find(|(m, _)| *m == mask)
        .and_then(|(_, nets)| nets.remove(&net))
}

/// Gives `start..=end` the value `v` (or none): the parts of earlier ranges
/// inside it go, those outside stay. Whether anything was covered.
pub fn paint(
    map: &mut BTreeMap<u32, (u32, String)>,
    start: u32,
    end: u32,
    v: Option<String>,
) -> bool {
    let over: Vec<u32> = map
        .range(..=end)
        .rev()
        .take_while(|(_, (e, _))| *e >= start)
        .map(|(s, _)| *s)
        .collect();
    let covered = !over.is_empty();
    for s in over {
        let Some((e, old)) = map.remove(&s) else {
            continue;
        };
        if s < start {
            map.insert(s, (start - 1, old.clone()));
        }
        if e > end {
            map.insert(end + 1, (e, old));
        }
    }
    if let Some(v) = v {
        map.insert(start, (end, v));
    }
    covered
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(map: &BTreeMap<u32, (u32, String)>, a: u32) -> Option<&str> {
        map.range(..=a)
            .next_back()
            .filter(|(_, (e, _))| *e >= a)
            .map(|(_, (_, v))| v.as_str())
    }

    #[test]
    fn later_ranges_cover_earlier_ones() {
        let mut m = BTreeMap::new();
        paint(&mut m, 0, 255, Some("test".into()));
        paint(&mut m, 1, 2, Some("test2".into()));
        paint(&mut m, 1, 1, Some("loopback".into()));
        assert_eq!(at(&m, 0), Some("test"));
        assert_eq!(at(&m, 1), Some("loopback"));
        assert_eq!(at(&m, 2), Some("test2"));
        assert_eq!(at(&m, 3), Some("test"));
        assert!(paint(&mut m, 0, 255, None));
        assert!(m.is_empty());
        assert!(!paint(&mut m, 0, 0, None));
    }
}
