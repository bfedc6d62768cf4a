//! Handlers of nginx's request-processing directives (http core and charset
//! modules): `merge_slashes`, `log_not_found`, `log_subrequest`, `internal`,
//! `absolute_redirect`, `port_in_redirect`, `server_name_in_redirect`,
//! `max_ranges`, `msie_padding`, `msie_refresh`, `disable_symlinks`,
//! `source_charset`, `override_charset`, `autoindex_format` and the
//! `charset_map` block, with their settings as written at one level
//! ([`RawRequest`]) and the merge.

use super::handlers::{arg, flag, fresh, msg, number, set, set_with};
use super::raw::{RawLoc, RawSrv};
use super::{Env, vars};
use crate::error::{ConfError, Result};
use crate::model::*;
use crate::syntax::{Block, Directive};

/// The settings as written at one level (`None`: not set there).
#[derive(Debug, Clone, Default)]
pub struct RawRequest {
    pub log_not_found: Option<bool>,
    pub log_subrequest: Option<bool>,
    pub internal: bool,
    pub absolute_redirect: Option<bool>,
    pub port_in_redirect: Option<bool>,
    pub server_name_in_redirect: Option<bool>,
    pub max_ranges: Option<Option<u32>>,
    pub msie_padding: Option<bool>,
    pub msie_refresh: Option<bool>,
    pub disable_symlinks: Option<DisableSymlinks>,
    pub source_charset: Option<String>,
    pub override_charset: Option<bool>,
    pub autoindex_format: Option<AutoindexFormat>,
    pub post_action: Option<String>,
}

impl RawRequest {
    /// nginx's merge: own value, else the enclosing level's. `internal`
    /// belongs to its location (`ngx_http_core_internal` sets a flag of
    /// that location's configuration only).
    pub fn merge(&self, p: &RequestConf) -> RequestConf {
        RequestConf {
            log_not_found: self.log_not_found.unwrap_or(p.log_not_found),
            log_subrequest: self.log_subrequest.unwrap_or(p.log_subrequest),
            internal: self.internal,
            absolute_redirect: self.absolute_redirect.unwrap_or(p.absolute_redirect),
            port_in_redirect: self.port_in_redirect.unwrap_or(p.port_in_redirect),
            server_name_in_redirect: self
                .server_name_in_redirect
                .unwrap_or(p.server_name_in_redirect),
            max_ranges: self.max_ranges.unwrap_or(p.max_ranges),
            msie_padding: self.msie_padding.unwrap_or(p.msie_padding),
            msie_refresh: self.msie_refresh.unwrap_or(p.msie_refresh),
            disable_symlinks: self
                .disable_symlinks
                .clone()
                .unwrap_or_else(|| p.disable_symlinks.clone()),
            source_charset: self
                .source_charset
                .clone()
                .or_else(|| p.source_charset.clone()),
            override_charset: self.override_charset.unwrap_or(p.override_charset),
            autoindex_format: self.autoindex_format.unwrap_or(p.autoindex_format),
            post_action: self.post_action.clone().or_else(|| p.post_action.clone()),
        }
    }
}

/// A flag directive of [`RawRequest`].
macro_rules! flag_handler {
    ($($name:ident),*) => {$(
        pub fn $name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.request.$name, d, || flag(d))
        }
    )*};
}

flag_handler!(
    log_not_found,
    log_subrequest,
    absolute_redirect,
    port_in_redirect,
    server_name_in_redirect,
    msie_padding,
    msie_refresh,
    override_charset
);

/// `merge_slashes on|off` (server level).
pub fn merge_slashes(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.merge_slashes, d, || flag(d))
}

/// `internal` (`ngx_http_core_internal`: no duplicate check).
pub fn internal(l: &mut RawLoc, _: &Directive, _: &Env<'_>) -> Result<()> {
    l.request.internal = true;
    Ok(())
}

/// `max_ranges N` (`ngx_conf_set_num_slot`).
pub fn max_ranges(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.request.max_ranges, d)?;
    let n = number(d)?;
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    set(&mut l.request.max_ranges, Some(n), d)
}

/// `source_charset NAME`.
pub fn source_charset(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.request.source_charset, arg(d, 0).to_string(), d)
}

/// `post_action URI|@name` (`ngx_conf_set_str_slot`).
pub fn post_action(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.request.post_action, arg(d, 0).to_string(), d)
}

/// `autoindex_format html|xml|json|jsonp` (`ngx_conf_set_enum_slot`).
pub fn autoindex_format(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.request.autoindex_format, d, || match arg(d, 0) {
        "html" => Ok(AutoindexFormat::Html),
        "xml" => Ok(AutoindexFormat::Xml),
        "json" => Ok(AutoindexFormat::Json),
        "jsonp" => Ok(AutoindexFormat::Jsonp),
        v => Err(msg(d, format!("invalid value \"{v}\""))),
    })
}

/// `disable_symlinks off|on|if_not_owner [from=PART]`, with the checks of
/// `ngx_http_disable_symlinks` in its order.
pub fn disable_symlinks(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.request.disable_symlinks.is_some() {
        return Err(msg(d, format!("\"{}\" directive is duplicate", d.name)));
    }
    let mut mode = None;
    let mut from = None;
    for a in &d.args {
        match a.as_str() {
            "off" => mode = Some(SymlinkMode::Off),
            "on" => mode = Some(SymlinkMode::On),
            "if_not_owner" => mode = Some(SymlinkMode::IfNotOwner),
            _ => match a.strip_prefix("from=") {
                Some(part) => {
                    vars::check_value(d, part)?;
                    from = Some(part.to_string());
                }
                None => return Err(msg(d, format!("invalid parameter \"{a}\""))),
            },
        }
    }
    let Some(mode) = mode else {
        return Err(msg(
            d,
            format!(
                "\"{}\" must have \"off\", \"on\" or \"if_not_owner\" parameter",
                d.name
            ),
        ));
    };
    if d.args.len() == 2 {
        if from.is_none() {
            return Err(msg(
                d,
                format!("duplicate parameters \"{} {}\"", arg(d, 0), arg(d, 1)),
            ));
        }
        if mode == SymlinkMode::Off {
            return Err(msg(d, "\"from=\" cannot be used with \"off\" parameter"));
        }
    }
    l.request.disable_symlinks = Some(DisableSymlinks { mode, from });
    Ok(())
}

/// nginx's `ngx_hextoi` for a byte value (at most 0xff).
fn hex_byte(s: &str) -> Option<u8> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16)
        .ok()
        .and_then(|n| u8::try_from(n).ok())
}

/// nginx's `NGX_UTF_LEN`: a map's UTF-8 value is at most 3 bytes (the
/// table keeps a length byte and the value in 4).
const MAX_UTF8_VALUE: usize = 3;

/// `charset_map FROM TO { SRC DST; ... }` (`ngx_http_charset_map_block`
/// and `ngx_http_charset_map`), checked against the maps already read.
pub fn charset_map(d: &Directive, block: &Block, maps: &[CharsetMap]) -> Result<CharsetMap> {
    let (from, to) = (arg(d, 0), arg(d, 1));
    if from.eq_ignore_ascii_case(to) {
        return Err(msg(
            d,
            format!("\"charset_map\" between the same charsets \"{from}\" and \"{to}\""),
        ));
    }
    if from.eq_ignore_ascii_case("utf-8") {
        return Err(msg(
            d,
            "\"charset_map\" with \"utf-8\" charset should be given in the second column",
        ));
    }
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if maps
        .iter()
        .any(|m| same(&m.from, from) && same(&m.to, to) || same(&m.from, to) && same(&m.to, from))
    {
        return Err(msg(
            d,
            format!("duplicate \"charset_map\" between \"{from}\" and \"{to}\""),
        ));
    }
    let mut map = CharsetMap::new(from, to);
    for line in &block.items {
        if line.block.is_some() || line.args.len() != 1 {
            return Err(ConfError::at(&line.span, "invalid parameters number"));
        }
        let invalid = |v: &str| ConfError::at(&line.span, format!("invalid value \"{v}\""));
        let src = hex_byte(&line.name).ok_or_else(|| invalid(&line.name))?;
        let value = &line.args[0];
        let dst = if map.to_utf8 {
            if value.len() / 2 > MAX_UTF8_VALUE {
                return Err(invalid(value));
            }
            let bytes = (0..value.len() / 2)
                .map(|i| value.get(2 * i..2 * i + 2).and_then(hex_byte))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| invalid(value))?;
            // nginx decodes the value and refuses what is not a character
            // below U+10000.
            if std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| s.chars().next())
                .is_none_or(|c| u32::from(c) > 0xffff)
            {
                return Err(invalid(value));
            }
            bytes
        } else {
            vec![hex_byte(value).ok_or_else(|| invalid(value))?]
        };
        map.forward[usize::from(src)] = dst;
        map.mapped.push(src);
    }
    if let Some(e) = &block.error {
        return Err(e.clone());
    }
    Ok(map)
}

/// nginx's postconfiguration check: a location that recodes (`charset` and
/// a different `source_charset`) needs a map between the two.
pub fn check_recoding(conf: &LocConf, maps: &[CharsetMap]) -> Result<()> {
    let (Some(to), Some(from)) = (&conf.charset, &conf.request.source_charset) else {
        return Ok(());
    };
    if to.eq_ignore_ascii_case(from) {
        return Ok(());
    }
    let between = |m: &CharsetMap| {
        m.from.eq_ignore_ascii_case(from) && m.to.eq_ignore_ascii_case(to)
            || m.from.eq_ignore_ascii_case(to) && m.to.eq_ignore_ascii_case(from)
    };
    if maps.iter().any(between) {
        return Ok(());
    }
    // Logged without a place, as nginx's postconfiguration handler does.
    Err(ConfError::bare(format!(
        "no \"charset_map\" between the charsets \"{from}\" and \"{to}\""
    )))
}
