//! What `limit_req` and `limit_conn` share (`ngx_http_limit_req_module`,
//! `ngx_http_limit_conn_module`): the `zone=NAME:SIZE` of their `*_zone`
//! directives, the per-level `*_status`, `*_log_level` and `*_dry_run`
//! settings and their merge, and the check, at the end of `http { }`, that
//! every zone a rule names is defined. The zones' state is core's
//! (`peregrine_core::zone`).

use std::sync::Arc;

use super::Env;
use super::handlers::{arg, flag, fresh, msg, set};
use super::raw::RawLoc;
use crate::error::{ConfError, Result};
use crate::model::{LimitConf, LimitZoneConf, LocConf, LogLevel};
use crate::syntax::Directive;
use crate::values::parse_mem_size;

/// nginx's smallest shared zone: `8 * ngx_pagesize` ("zone is too small").
pub const MIN_ZONE_SIZE: usize = 8 * 4096;

/// The `limit_*_zone` definitions of `http { }`.
#[derive(Debug, Clone, Default)]
pub struct RawZones {
    pub req: Vec<LimitZoneConf>,
    pub conn: Vec<LimitZoneConf>,
}

/// One level's `limit_req`/`limit_conn` settings as written.
#[derive(Debug, Clone)]
pub struct RawLimit<R> {
    pub rules: Option<Vec<R>>,
    pub status: Option<u16>,
    pub log_level: Option<LogLevel>,
    pub dry_run: Option<bool>,
}

impl<R> Default for RawLimit<R> {
    fn default() -> Self {
        RawLimit {
            rules: None,
            status: None,
            log_level: None,
            dry_run: None,
        }
    }
}

impl<R: Clone> RawLimit<R> {
    /// nginx's merge: the rules of the nearest level with any
    /// (`conf->limits.elts == NULL`), the rest inherited one by one.
    pub fn merge(&self, p: &LimitConf<R>) -> LimitConf<R> {
        LimitConf {
            rules: match &self.rules {
                Some(v) => Arc::from(v.as_slice()),
                None => p.rules.clone(),
            },
            status: self.status.unwrap_or(p.status),
            log_level: self.log_level.unwrap_or(p.log_level),
            dry_run: self.dry_run.unwrap_or(p.dry_run),
        }
    }
}

/// The settings `d` (a `limit_req_*` or `limit_conn_*` directive) writes.
fn raw_of<'l>(l: &'l mut RawLoc, d: &Directive) -> RawSettings<'l> {
    if d.name.starts_with("limit_req") {
        RawSettings::from(&mut l.limit_req)
    } else {
        RawSettings::from(&mut l.limit_conn)
    }
}

/// The rule-independent fields of a [`RawLimit`].
struct RawSettings<'l> {
    status: &'l mut Option<u16>,
    log_level: &'l mut Option<LogLevel>,
    dry_run: &'l mut Option<bool>,
}

impl<'l, R> From<&'l mut RawLimit<R>> for RawSettings<'l> {
    fn from(r: &'l mut RawLimit<R>) -> Self {
        RawSettings {
            status: &mut r.status,
            log_level: &mut r.log_level,
            dry_run: &mut r.dry_run,
        }
    }
}

/// `limit_req_status` / `limit_conn_status CODE` (400 to 599).
pub fn status(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let slot = raw_of(l, d).status;
    fresh(slot, d)?;
    let n: u16 = arg(d, 0)
        .parse()
        .map_err(|_| msg(d, format!("\"{}\" directive invalid number", d.name)))?;
    if !(400..=599).contains(&n) {
        return Err(msg(d, "value must be between 400 and 599"));
    }
    *slot = Some(n);
    Ok(())
}

/// `limit_req_log_level` / `limit_conn_log_level info|notice|warn|error`.
pub fn log_level(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let slot = raw_of(l, d).log_level;
    fresh(slot, d)?;
    let level = match arg(d, 0) {
        "info" => LogLevel::Info,
        "notice" => LogLevel::Notice,
        "warn" => LogLevel::Warn,
        "error" => LogLevel::Error,
        v => return Err(msg(d, format!("invalid value \"{v}\""))),
    };
    *slot = Some(level);
    Ok(())
}

/// `limit_req_dry_run` / `limit_conn_dry_run on|off`.
pub fn dry_run(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let on = flag(d)?;
    set(raw_of(l, d).dry_run, on, d)
}

/// `auth_delay TIME` (`ngx_http_core_module`; with the limits as it holds
/// a request as `limit_req`'s delay does).
pub fn auth_delay(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let t = super::handlers::time(d, arg(d, 0))?;
    set(&mut l.auth_delay, t, d)
}

/// `satisfy all | any` (`ngx_http_core_module`'s access-phase rule).
pub fn satisfy(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.satisfy_any, d)?;
    let any = match arg(d, 0) {
        "all" => false,
        "any" => true,
        v => return Err(msg(d, format!("invalid value \"{v}\""))),
    };
    l.satisfy_any = Some(any);
    Ok(())
}

impl super::Builder {
    /// `limit_except METHOD... { }` (`ngx_http_core_limit_except`): the
    /// methods (nginx's names; `GET` brings `HEAD`), the block walked as
    /// `LMT` into settings of its own.
    pub(super) fn limit_except(
        &mut self,
        d: &Directive,
        block: &crate::syntax::Block,
        parent: &mut RawLoc,
    ) -> Result<()> {
        if parent.limit_except.is_some() {
            return Err(msg(d, "\"limit_except\" directive is duplicate"));
        }
        let mut methods = Vec::new();
        for m in &d.args {
            if !LIMIT_EXCEPT_METHODS.contains(&m.as_str()) {
                return Err(msg(d, format!("invalid method \"{m}\"")));
            }
            methods.push(m.clone());
            if m == "GET" {
                methods.push("HEAD".to_string());
            }
        }
        let mut body = RawLoc::default();
        self.walk(
            &block.items,
            block.error.as_ref(),
            &mut super::Frame::If(&mut body, crate::table::ctx::LMT),
        )?;
        parent.limit_except = Some(Box::new((methods, body)));
        Ok(())
    }
}

/// nginx's `ngx_methods_names` for `limit_except`.
const LIMIT_EXCEPT_METHODS: &[&str] = &[
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "MKCOL",
    "COPY",
    "MOVE",
    "OPTIONS",
    "PROPFIND",
    "PROPPATCH",
    "LOCK",
    "UNLOCK",
    "PATCH",
];

/// `zone=NAME:SIZE`: the name and size (`ngx_parse_size`, at least
/// [`MIN_ZONE_SIZE`]).
pub fn zone_param(d: &Directive, value: &str) -> Result<(String, usize)> {
    let spec = &value["zone=".len()..];
    let bad = || msg(d, format!("invalid zone size \"{value}\""));
    let (name, size) = spec.split_once(':').ok_or_else(bad)?;
    let size = parse_mem_size(size).ok_or_else(bad)?;
    if size < MIN_ZONE_SIZE {
        return Err(msg(d, format!("zone \"{value}\" is too small")));
    }
    Ok((name.to_string(), size))
}

/// Adds `zone` to `zones`: nginx's `%V "%V" is already bound to key "%V"`
/// for a second definition of one name.
pub fn define(zones: &mut Vec<LimitZoneConf>, zone: LimitZoneConf, d: &Directive) -> Result<()> {
    if let Some(z) = zones.iter().find(|z| z.name == zone.name) {
        return Err(msg(
            d,
            format!(
                "{} \"{}\" is already bound to key \"{}\"",
                d.name, zone.name, z.key
            ),
        ));
    }
    zones.push(zone);
    Ok(())
}

/// The end of `http { }`: a zone a rule names but nobody defined is
/// nginx's `zero size shared memory zone "NAME"` (`ngx_init_cycle`).
pub fn check_zones(c: &LocConf, zones: &RawZones) -> Result<()> {
    let missing = c
        .limit_req
        .rules
        .iter()
        .map(|r| &r.zone)
        .find(|z| !zones.req.iter().any(|d| &d.name == *z))
        .or_else(|| {
            c.limit_conn
                .rules
                .iter()
                .map(|r| &r.zone)
                .find(|z| !zones.conn.iter().any(|d| &d.name == *z))
        });
    match missing {
        Some(z) => Err(ConfError::bare(format!(
            "zero size shared memory zone \"{z}\""
        ))),
        None => Ok(()),
    }
}
