//! Connection-level directives (nginx's `ngx_http_core_module`):
//! `keepalive_time`, `keepalive_disable`, `lingering_*`,
//! `sendfile_max_chunk`, `send_lowat`, `limit_rate`, `limit_rate_after`,
//! `chunked_transfer_encoding`, and the server-level header rules
//! `max_headers`, `ignore_invalid_headers`, `underscores_in_headers`.
//! Messages are nginx's slot functions'.

use std::sync::Arc;
use std::time::Duration;

use super::Env;
use super::handlers::{arg, duplicate, flag, fresh, invalid, msg, set_with, size, time};
use super::raw::{RawLoc, RawSrv};
use crate::error::Result;
use crate::model::{ConnConf, HeaderRules, KeepaliveDisable, LingeringClose};
use crate::syntax::Directive;
use crate::values::{parse_number, parse_size};

/// The connection settings written at one level.
#[derive(Debug, Clone, Default)]
pub struct RawConn {
    pub keepalive_time: Option<Duration>,
    pub keepalive_disable: Option<KeepaliveDisable>,
    pub lingering_close: Option<LingeringClose>,
    pub lingering_time: Option<Duration>,
    pub lingering_timeout: Option<Duration>,
    pub sendfile_max_chunk: Option<usize>,
    pub send_lowat: Option<usize>,
    /// `limit_rate` / `limit_rate_after`: a size, or a value with
    /// variables (evaluated per request; the size is 0 then).
    pub limit_rate: Option<(u64, Option<Arc<str>>)>,
    pub limit_rate_after: Option<(u64, Option<Arc<str>>)>,
    pub chunked_transfer_encoding: Option<bool>,
    pub http2_chunk_size: Option<usize>,
}

impl RawConn {
    pub fn merge(&self, p: &ConnConf) -> ConnConf {
        ConnConf {
            keepalive_time_ns: self.keepalive_time.map_or(p.keepalive_time_ns, |t| {
                u64::try_from(t.as_nanos()).unwrap_or(u64::MAX)
            }),
            keepalive_disable: self.keepalive_disable.unwrap_or(p.keepalive_disable),
            lingering_close: self.lingering_close.unwrap_or(p.lingering_close),
            lingering_time: self.lingering_time.unwrap_or(p.lingering_time),
            lingering_timeout: self.lingering_timeout.unwrap_or(p.lingering_timeout),
            sendfile_max_chunk: self.sendfile_max_chunk.unwrap_or(p.sendfile_max_chunk),
            limit_rate: self.limit_rate.as_ref().map_or(p.limit_rate, |r| r.0),
            limit_rate_var: match &self.limit_rate {
                Some(r) => r.1.clone(),
                None => p.limit_rate_var.clone(),
            },
            limit_rate_after: self
                .limit_rate_after
                .as_ref()
                .map_or(p.limit_rate_after, |r| r.0),
            limit_rate_after_var: match &self.limit_rate_after {
                Some(r) => r.1.clone(),
                None => p.limit_rate_after_var.clone(),
            },
            chunked_transfer_encoding: self
                .chunked_transfer_encoding
                .unwrap_or(p.chunked_transfer_encoding),
            http2_chunk_size: self.http2_chunk_size.unwrap_or(p.http2_chunk_size),
        }
    }
}

/// The header rules written at http or server level.
#[derive(Debug, Clone, Default)]
pub struct RawHeaderRules {
    pub max_headers: Option<usize>,
    pub ignore_invalid_headers: Option<bool>,
    pub underscores_in_headers: Option<bool>,
}

impl RawHeaderRules {
    /// The server level over the http level.
    pub fn merge(&self, http: &RawHeaderRules) -> RawHeaderRules {
        RawHeaderRules {
            max_headers: self.max_headers.or(http.max_headers),
            ignore_invalid_headers: self.ignore_invalid_headers.or(http.ignore_invalid_headers),
            underscores_in_headers: self.underscores_in_headers.or(http.underscores_in_headers),
        }
    }

    /// Merged values over nginx's defaults.
    pub fn resolve(&self) -> HeaderRules {
        let d = HeaderRules::default();
        HeaderRules {
            max_headers: self.max_headers.unwrap_or(d.max_headers),
            ignore_invalid_headers: self
                .ignore_invalid_headers
                .unwrap_or(d.ignore_invalid_headers),
            underscores_in_headers: self
                .underscores_in_headers
                .unwrap_or(d.underscores_in_headers),
        }
    }
}

pub fn keepalive_time(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.keepalive_time, d, || time(d, arg(d, 0)))
}

/// `keepalive_disable none | browser ...` (nginx's bitmask slot: a value
/// given twice is a warning, an unknown one an error).
pub fn keepalive_disable(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let mut v = l.conn.keepalive_disable.unwrap_or(KeepaliveDisable {
        msie6: false,
        safari: false,
    });
    for a in &d.args {
        let bit = match a.as_str() {
            "none" => None,
            "msie6" => Some(&mut v.msie6),
            "safari" => Some(&mut v.safari),
            _ => return Err(msg(d, format!("invalid value \"{a}\""))),
        };
        if let Some(bit) = bit {
            if *bit {
                env.warn(d, format!("duplicate value \"{a}\""));
            }
            *bit = true;
        }
    }
    l.conn.keepalive_disable = Some(v);
    Ok(())
}

/// `lingering_close off | on | always` (nginx's enum slot).
pub fn lingering_close(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.conn.lingering_close, d)?;
    let v = match arg(d, 0) {
        "off" => LingeringClose::Off,
        "on" => LingeringClose::On,
        "always" => LingeringClose::Always,
        v => return Err(msg(d, format!("invalid value \"{v}\""))),
    };
    l.conn.lingering_close = Some(v);
    Ok(())
}

pub fn lingering_time(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.lingering_time, d, || time(d, arg(d, 0)))
}

pub fn lingering_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.lingering_timeout, d, || time(d, arg(d, 0)))
}

pub fn sendfile_max_chunk(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.sendfile_max_chunk, d, || size(d, arg(d, 0)))
}

/// `send_lowat size`: Linux cannot change `SO_SNDLOWAT` (setsockopt
/// answers ENOPROTOOPT), so nginx built for Linux warns and ignores it
/// (`ngx_http_core_lowat_check`); so does Peregrine.
pub fn send_lowat(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.send_lowat, d, || size(d, arg(d, 0)))?;
    env.warn(d, "\"send_lowat\" is not supported, ignored");
    l.conn.send_lowat = Some(0);
    Ok(())
}

/// `limit_rate` / `limit_rate_after` (nginx's complex-value size slot,
/// `ngx_http_set_complex_value_size_slot`, variables allowed since 1.27.0):
/// a size, or a value with variables kept for core to evaluate per request.
fn rate(d: &Directive) -> Result<(u64, Option<Arc<str>>)> {
    let v = arg(d, 0);
    if v.contains('$') {
        return Ok((0, Some(Arc::from(v))));
    }
    parse_size(v).map(|n| (n, None)).ok_or_else(|| invalid(d))
}

pub fn limit_rate(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.limit_rate, d, || rate(d))
}

pub fn limit_rate_after(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.limit_rate_after, d, || rate(d))
}

pub fn chunked_transfer_encoding(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.chunked_transfer_encoding, d, || flag(d))
}

/// `max_headers number` (nginx's num slot).
pub fn max_headers(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    if s.headers.max_headers.is_some() {
        return Err(duplicate(d));
    }
    let n = parse_number(arg(d, 0))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| msg(d, format!("\"{}\" directive invalid number", d.name)))?;
    s.headers.max_headers = Some(n);
    Ok(())
}

pub fn ignore_invalid_headers(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.headers.ignore_invalid_headers, d, || flag(d))
}

pub fn underscores_in_headers(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.headers.underscores_in_headers, d, || flag(d))
}

#[cfg(test)]
mod tests {
    use crate::tests::{err, http, parse, server};

    fn loc(c: &crate::Config) -> crate::model::ConnConf {
        c.http.as_ref().unwrap().servers[0].conf.conn.clone()
    }

    #[test]
    fn defaults_are_nginx_s() {
        let c = parse(&server(""));
        let conn = loc(&c);
        assert_eq!(conn, crate::model::ConnConf::default());
        assert_eq!(conn.lingering_time.as_secs(), 30);
        assert_eq!(conn.lingering_timeout.as_secs(), 5);
        assert_eq!(conn.sendfile_max_chunk, 2 << 20);
        assert!(conn.keepalive_disable.msie6 && !conn.keepalive_disable.safari);
        let h = c.http.as_ref().unwrap().servers[0].headers;
        assert_eq!(h, crate::model::HeaderRules::default());
        assert_eq!(h.max_headers, 1000);
    }

    #[test]
    fn values_are_read_and_inherited() {
        let c = parse(&http(
            "keepalive_time 2s; keepalive_disable safari none; lingering_close always;\n\
             lingering_time 7s; lingering_timeout 250ms; sendfile_max_chunk 0;\n\
             limit_rate 1k; limit_rate_after 2m; chunked_transfer_encoding off;\n\
             max_headers 5; ignore_invalid_headers off; underscores_in_headers on;\n\
             server { listen 8080; }",
        ));
        let conn = loc(&c);
        assert_eq!(conn.keepalive_time_ns, 2_000_000_000);
        assert!(conn.keepalive_disable.safari && !conn.keepalive_disable.msie6);
        assert_eq!(conn.lingering_close, crate::model::LingeringClose::Always);
        assert_eq!(conn.lingering_time.as_secs(), 7);
        assert_eq!(conn.lingering_timeout.as_millis(), 250);
        assert_eq!(conn.sendfile_max_chunk, 0);
        assert_eq!((conn.limit_rate, conn.limit_rate_after), (1024, 2 << 20));
        assert!(!conn.chunked_transfer_encoding);
        let h = c.http.as_ref().unwrap().servers[0].headers;
        assert_eq!(h.max_headers, 5);
        assert!(!h.ignore_invalid_headers && h.underscores_in_headers);
    }

    #[test]
    fn rates_with_variables_are_kept_for_the_request() {
        let c = parse(&http(
            "limit_rate $arg_l; limit_rate_after ${arg_a}k;\nserver { listen 8080; }",
        ));
        let conn = loc(&c);
        assert_eq!((conn.limit_rate, conn.limit_rate_after), (0, 0));
        assert_eq!(conn.limit_rate_var.as_deref(), Some("$arg_l"));
        assert_eq!(conn.limit_rate_after_var.as_deref(), Some("${arg_a}k"));
        // A size at a lower level replaces the inherited variables.
        let c = parse(&http(
            "limit_rate $arg_l;\nserver { listen 8080; limit_rate 5k; }",
        ));
        let conn = loc(&c);
        assert_eq!((conn.limit_rate, conn.limit_rate_var), (5120, None));
    }

    #[test]
    fn errors_in_nginx_wording() {
        let at = "/p/conf/nginx.conf:3";
        assert_eq!(
            err(&http("keepalive_time abc;")),
            format!("\"keepalive_time\" directive invalid value in {at}")
        );
        assert_eq!(
            err(&http("keepalive_disable opera;")),
            format!("invalid value \"opera\" in {at}")
        );
        assert_eq!(
            err(&http("lingering_close sometimes;")),
            format!("invalid value \"sometimes\" in {at}")
        );
        assert_eq!(
            err(&http("lingering_close on; lingering_close off;")),
            format!("\"lingering_close\" directive is duplicate in {at}")
        );
        assert_eq!(
            err(&http("limit_rate fast;")),
            format!("\"limit_rate\" directive invalid value in {at}")
        );
        assert_eq!(
            err(&http("max_headers 1k;")),
            format!("\"max_headers\" directive invalid number in {at}")
        );
        assert_eq!(
            err(&http("underscores_in_headers yes;")),
            format!(
                "invalid value \"yes\" in \"underscores_in_headers\" directive, it must be \"on\" or \"off\" in {at}"
            )
        );
    }
}
