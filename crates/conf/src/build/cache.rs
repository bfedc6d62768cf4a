//! The upstream cache's directives (`ngx_http_file_cache.c`, and the
//! `*_cache*` commands of `ngx_http_proxy_module`, `_fastcgi_`, `_uwsgi_`
//! and `_scgi_`): `proxy_cache_path` and its twins at the `http` level
//! (`ngx_http_file_cache_set_slot`), and per location the cache used and
//! its rules. The four modules share one shape: the handlers here take the
//! directive's name without its module's prefix. The model is
//! `crate::cache`; the run-time side `peregrine_core::cache`.

use std::sync::Arc;
use std::time::Duration;

use super::Env;
use super::handlers::{arg, flag, fresh, msg, set, set_with, size, time};
use super::raw::{RawLoc, full_name};
use crate::cache::{CacheConf, CachePathConf, CacheZoneRef, stale};
use crate::error::{ConfError, Result};
use crate::model::LocConf;
use crate::syntax::Directive;
use crate::values::{parse_mem_size, parse_size, parse_time, parse_time_sec};

/// nginx's smallest keys zone: `8 * ngx_pagesize` ("is too small").
const MIN_KEYS_ZONE: usize = 8 * 4096;
/// `inactive`'s default (`ngx_http_file_cache_set_slot`).
const DEFAULT_INACTIVE: Duration = Duration::from_secs(600);
/// At most three directory levels (`NGX_MAX_PATH_LEVEL`), each named by
/// one or two hex digits.
const MAX_LEVELS: usize = 3;

/// One level's cache settings as written.
#[derive(Debug, Clone, Default)]
pub struct RawCache {
    pub zone: Option<CacheZoneRef>,
    pub key: Option<String>,
    pub valid: Option<Vec<(u16, Duration)>>,
    pub methods: Option<Vec<String>>,
    pub min_uses: Option<u32>,
    pub bypass: Option<Vec<String>>,
    pub no_cache: Option<Vec<String>>,
    pub use_stale: Option<u32>,
    pub lock: Option<bool>,
    pub lock_timeout: Option<Duration>,
    pub lock_age: Option<Duration>,
    pub revalidate: Option<bool>,
    pub background_update: Option<bool>,
    pub convert_head: Option<bool>,
    pub max_range_offset: Option<u64>,
}

impl RawCache {
    /// nginx's merge: every setting inherits; the lists are a level's own
    /// or its parent's, whole.
    pub fn merge(&self, p: &CacheConf) -> CacheConf {
        CacheConf {
            zone: self.zone.clone().unwrap_or_else(|| p.zone.clone()),
            key: self.key.clone().or_else(|| p.key.clone()),
            valid: self.valid.clone().map_or(p.valid.clone(), Arc::from),
            methods: self.methods.clone().map_or(p.methods.clone(), Arc::from),
            min_uses: self.min_uses.unwrap_or(p.min_uses),
            bypass: self.bypass.clone().map_or(p.bypass.clone(), Arc::from),
            no_cache: self.no_cache.clone().map_or(p.no_cache.clone(), Arc::from),
            use_stale: self.use_stale.unwrap_or(p.use_stale),
            lock: self.lock.unwrap_or(p.lock),
            lock_timeout: self.lock_timeout.unwrap_or(p.lock_timeout),
            lock_age: self.lock_age.unwrap_or(p.lock_age),
            revalidate: self.revalidate.unwrap_or(p.revalidate),
            background_update: self.background_update.unwrap_or(p.background_update),
            convert_head: self.convert_head.unwrap_or(p.convert_head),
            max_range_offset: self.max_range_offset.or(p.max_range_offset),
        }
    }
}

/// The settings of the module `d` belongs to.
fn raw_of<'l>(l: &'l mut RawLoc, d: &Directive) -> (&'l mut RawCache, &'static str) {
    if d.name.starts_with("fastcgi_") {
        (&mut l.fastcgi.up.cache, "fastcgi")
    } else if d.name.starts_with("uwsgi_") {
        (&mut l.uwsgi.up.cache, "uwsgi")
    } else if d.name.starts_with("scgi_") {
        (&mut l.scgi.up.cache, "scgi")
    } else {
        (&mut l.proxy.cache, "proxy")
    }
}

/// Every location-level cache directive of the four modules.
pub fn directive(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let (r, prefix) = raw_of(l, d);
    let suffix = &d.name[prefix.len() + 1..];
    match suffix {
        "cache" => {
            fresh(&r.zone, d)?;
            let v = arg(d, 0);
            r.zone = Some(if v == "off" {
                CacheZoneRef::Off
            } else if v.contains('$') {
                CacheZoneRef::Vars(v.to_string())
            } else {
                CacheZoneRef::Zone(v.to_string(), d.span.clone())
            });
            Ok(())
        }
        "cache_key" => set(&mut r.key, arg(d, 0).to_string(), d),
        "cache_valid" => {
            let v = valid(d)?;
            r.valid.get_or_insert_with(Vec::new).extend(v);
            Ok(())
        }
        "cache_methods" => set_with(&mut r.methods, d, || methods(d)),
        "cache_min_uses" => set_with(&mut r.min_uses, d, || {
            arg(d, 0).parse().map_err(|_| msg(d, "invalid number"))
        }),
        "cache_bypass" => {
            r.bypass
                .get_or_insert_with(Vec::new)
                .extend(d.args.iter().cloned());
            Ok(())
        }
        "no_cache" => {
            r.no_cache
                .get_or_insert_with(Vec::new)
                .extend(d.args.iter().cloned());
            Ok(())
        }
        "cache_use_stale" => set_with(&mut r.use_stale, d, || use_stale(d)),
        "cache_lock" => set_with(&mut r.lock, d, || flag(d)),
        "cache_lock_timeout" => set_with(&mut r.lock_timeout, d, || time(d, arg(d, 0))),
        "cache_lock_age" => set_with(&mut r.lock_age, d, || time(d, arg(d, 0))),
        "cache_revalidate" => set_with(&mut r.revalidate, d, || flag(d)),
        "cache_background_update" => set_with(&mut r.background_update, d, || flag(d)),
        "cache_convert_head" => set_with(&mut r.convert_head, d, || flag(d)),
        "cache_max_range_offset" => set_with(&mut r.max_range_offset, d, || {
            size(d, arg(d, 0)).map(|n| n as u64)
        }),
        _ => Err(msg(d, format!("unknown directive \"{}\"", d.name))),
    }
}

/// `proxy_cache_valid [CODE...|any] TIME` (`ngx_http_file_cache_valid_set_slot`):
/// without codes, 200, 301 and 302.
fn valid(d: &Directive) -> Result<Vec<(u16, Duration)>> {
    let n = d.args.len();
    let t = arg(d, n - 1);
    let secs = parse_time_sec(t).ok_or_else(|| msg(d, format!("invalid time value \"{t}\"")))?;
    if n == 1 {
        return Ok(vec![(200, secs), (301, secs), (302, secs)]);
    }
    d.args[..n - 1]
        .iter()
        .map(|c| {
            if c == "any" {
                return Ok((0, secs));
            }
            match c.parse::<u16>() {
                Ok(s) if (100..=599).contains(&s) => Ok((s, secs)),
                _ => Err(msg(d, format!("invalid status \"{c}\""))),
            }
        })
        .collect()
}

/// `proxy_cache_methods`: GET, HEAD, POST (nginx's
/// `ngx_http_upstream_cache_method_mask`).
fn methods(d: &Directive) -> Result<Vec<String>> {
    d.args
        .iter()
        .map(|m| match m.as_str() {
            "GET" | "HEAD" | "POST" => Ok(m.clone()),
            _ => Err(msg(d, format!("invalid value \"{m}\""))),
        })
        .collect()
}

/// `proxy_cache_use_stale` (`ngx_http_proxy_next_upstream_masks` plus
/// `updating`).
fn use_stale(d: &Directive) -> Result<u32> {
    let mut bits = 0;
    for v in &d.args {
        bits |= match v.as_str() {
            "error" => stale::ERROR,
            "timeout" => stale::TIMEOUT,
            "invalid_header" => stale::INVALID_HEADER,
            "updating" => stale::UPDATING,
            "http_500" => stale::HTTP_500,
            "http_502" => stale::HTTP_502,
            "http_503" => stale::HTTP_503,
            "http_504" => stale::HTTP_504,
            "http_403" => stale::HTTP_403,
            "http_404" => stale::HTTP_404,
            "http_429" => stale::HTTP_429,
            "off" => stale::OFF,
            _ => return Err(msg(d, format!("invalid value \"{v}\""))),
        };
    }
    Ok(if bits & stale::OFF != 0 { 0 } else { bits })
}

/// `proxy_cache_path PATH [levels=] [use_temp_path=] keys_zone=NAME:SIZE
/// [inactive=] [max_size=] [min_free=] [manager_*=] [loader_*=]`
/// (`ngx_http_file_cache_set_slot`, with its messages). The manager's and
/// loader's pacing is a hint here: Peregrine's manager is a step of a
/// worker's timer and its loader reads the directory at start.
pub fn path(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let path = std::path::PathBuf::from(full_name(env.prefix, arg(d, 0)));
    let mut z = CachePathConf {
        name: String::new(),
        size: 0,
        path,
        levels: Vec::new(),
        use_temp_path: true,
        inactive: DEFAULT_INACTIVE,
        max_size: None,
        min_free: None,
        directive: d.name.clone(),
        span: d.span.clone(),
    };
    for p in &d.args[1..] {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        match k {
            "levels" => {
                z.levels = levels(v).ok_or_else(|| msg(d, format!("invalid \"levels\" \"{p}\"")))?
            }
            "use_temp_path" => {
                z.use_temp_path = match v {
                    "on" => true,
                    "off" => false,
                    _ => {
                        return Err(msg(
                            d,
                            format!(
                                "invalid use_temp_path value \"{p}\", it must be \"on\" or \"off\""
                            ),
                        ));
                    }
                }
            }
            "keys_zone" => {
                let bad = || msg(d, format!("invalid keys zone size \"{p}\""));
                let (name, sz) = v.split_once(':').ok_or_else(bad)?;
                let sz = parse_mem_size(sz)
                    .filter(|_| !name.is_empty())
                    .ok_or_else(bad)?;
                if sz < MIN_KEYS_ZONE {
                    return Err(msg(d, format!("keys zone \"{p}\" is too small")));
                }
                z.name = name.to_string();
                z.size = sz;
            }
            "inactive" => {
                z.inactive = parse_time_sec(v)
                    .ok_or_else(|| msg(d, format!("invalid inactive value \"{p}\"")))?
            }
            "max_size" => {
                z.max_size = Some(
                    parse_size(v)
                        .ok_or_else(|| msg(d, format!("invalid max_size value \"{p}\"")))?,
                )
            }
            "min_free" => {
                z.min_free = Some(
                    parse_size(v)
                        .ok_or_else(|| msg(d, format!("invalid min_free value \"{p}\"")))?,
                )
            }
            "loader_files" | "manager_files" => {
                v.parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| msg(d, format!("invalid {k} value \"{p}\"")))?;
            }
            "loader_sleep" | "loader_threshold" | "manager_sleep" | "manager_threshold" => {
                parse_time(v).ok_or_else(|| msg(d, format!("invalid {k} value \"{p}\"")))?;
            }
            _ => return Err(msg(d, format!("invalid parameter \"{p}\""))),
        }
    }
    if z.name.is_empty() {
        return Err(msg(
            d,
            format!("\"{}\" must have \"keys_zone\" parameter", d.name),
        ));
    }
    if let Some(o) = l.cache_paths.iter().find(|o| o.path == z.path) {
        return Err(ConfError::bare(format!(
            "the same path name \"{}\" used in {} and in {}",
            z.path.display(),
            o.span,
            z.span
        )));
    }
    if l.cache_paths.iter().any(|o| o.name == z.name) {
        return Err(msg(d, format!("duplicate zone \"{}\"", z.name)));
    }
    l.cache_paths.push(z);
    Ok(())
}

/// `levels=1:2`: up to [`MAX_LEVELS`] of 1 or 2.
fn levels(v: &str) -> Option<Vec<u8>> {
    let l: Vec<u8> = v
        .split(':')
        .map(|n| match n {
            "1" => Some(1),
            "2" => Some(2),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (l.len() <= MAX_LEVELS).then_some(l)
}

/// The end of `http { }`: a location's zone must be defined, by its own
/// module's `*_cache_path` (nginx's merge: `"proxy_cache" zone "NAME" is
/// unknown`; another module's zone is `ngx_shared_memory_add`'s "already
/// declared for a different use").
pub fn check_zones(c: &LocConf, paths: &[CachePathConf]) -> Result<()> {
    let confs = [
        ("proxy", &c.proxy.cache),
        ("fastcgi", &c.fastcgi.up.cache),
        ("uwsgi", &c.uwsgi.up.cache),
        ("scgi", &c.scgi.up.cache),
    ];
    for (module, cc) in confs {
        let CacheZoneRef::Zone(name, span) = &cc.zone else {
            continue;
        };
        match paths.iter().find(|p| &p.name == name) {
            None => {
                return Err(ConfError::at(
                    span,
                    format!("\"{module}_cache\" zone \"{name}\" is unknown"),
                ));
            }
            Some(p) if !p.directive.starts_with(module) => {
                return Err(ConfError::at(
                    span,
                    format!(
                        "the shared memory zone \"{name}\" is already declared for a different use"
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
