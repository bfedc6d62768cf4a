//! `log_format`, `access_log` and `error_log` (ngx_http_log_module,
//! ngx_log.c): checked here, written by the log crate.

use std::path::PathBuf;
use std::sync::Arc;

use super::Env;
use super::raw::full_name;
use crate::error::{ConfError, Result};
use crate::model::*;
use crate::syntax::Directive;
use crate::values::{parse_mem_size, parse_number, parse_time};

/// nginx's predefined format.
pub const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

/// The buffer nginx gives an `access_log ... gzip` without `buffer=`.
pub const DEFAULT_GZIP_LOG_BUFFER: usize = 64 * 1024;

/// nginx's default gzip level for `access_log ... gzip`.
pub const DEFAULT_LOG_GZIP_LEVEL: u32 = 1;

pub fn combined() -> LogFormatConf {
    LogFormatConf {
        name: "combined".into(),
        escape: LogEscape::Default,
        format: COMBINED.into(),
        parts: vec![COMBINED.into()],
        span: Span {
            file: Arc::new(PathBuf::from("(built-in)")),
            line: 0,
        },
    }
}

/// `log_format name [escape=default|json|none] string ...`.
pub fn log_format(d: &Directive, existing: &[LogFormatConf]) -> Result<LogFormatConf> {
    let name = d.args.first().cloned().unwrap_or_default();
    if existing.iter().any(|f| f.name == name) {
        return Err(ConfError::at(
            &d.span,
            format!("duplicate \"log_format\" name \"{name}\""),
        ));
    }
    let mut rest = d.args.get(1..).unwrap_or_default();
    let mut escape = LogEscape::Default;
    if let Some(e) = rest.first().and_then(|a| a.strip_prefix("escape=")) {
        escape = match e {
            "default" => LogEscape::Default,
            "json" => LogEscape::Json,
            "none" => LogEscape::None,
            _ => {
                return Err(ConfError::at(
                    &d.span,
                    format!("unknown log format escaping \"{e}\""),
                ));
            }
        };
        rest = &rest[1..];
    }
    super::vars::check_log_format(d, rest)?;
    Ok(LogFormatConf {
        name,
        escape,
        format: rest.concat(),
        parts: rest.to_vec(),
        span: d.span.clone(),
    })
}

fn level(name: &str) -> Option<LogLevel> {
    Some(match name {
        "debug" => LogLevel::Debug,
        "info" => LogLevel::Info,
        "notice" => LogLevel::Notice,
        "warn" => LogLevel::Warn,
        "error" => LogLevel::Error,
        "crit" => LogLevel::Crit,
        "alert" => LogLevel::Alert,
        "emerg" => LogLevel::Emerg,
        // nginx's debug masks (`debug_http`...) mean debug level.
        _ if name.starts_with("debug_") => LogLevel::Debug,
        _ => return None,
    })
}

/// `memory:` is an error-log target; nginx would take it as a file name
/// for an access log, which is surely not what was meant.
fn unsupported_target(d: &Directive, path: &str) -> Option<ConfError> {
    ["memory:"].iter().find(|p| path.starts_with(**p)).map(|p| {
        ConfError::at(
            &d.span,
            format!(
                "\"{}\" logging in \"{}\" is not supported by Peregrine yet",
                p.trim_end_matches(':'),
                d.name
            ),
        )
    })
}

/// `error_log file|stderr|syslog:...|memory:SIZE [level...]` (nginx's
/// `ngx_log_set_log`, `ngx_log_set_levels`).
pub fn error_log(d: &Directive, env: &Env<'_>) -> Result<ErrorLogConf> {
    let path = d.args.first().map(String::as_str).unwrap_or_default();
    let target = if path == "stderr" {
        LogTarget::Stderr
    } else if let Some(params) = path.strip_prefix("syslog:") {
        LogTarget::Syslog(super::syslog::parse(d, params)?)
    } else if let Some(size) = path.strip_prefix("memory:") {
        LogTarget::Memory(super::syslog::memory(d, size)?)
    } else {
        LogTarget::File(PathBuf::from(full_name(env.prefix, path)))
    };
    let mut lvl: Option<LogLevel> = None;
    let mut seen: Vec<&str> = Vec::new();
    for a in d.args.iter().skip(1) {
        let l =
            level(a).ok_or_else(|| ConfError::at(&d.span, format!("invalid log level \"{a}\"")))?;
        if seen.contains(&a.as_str()) {
            return Err(ConfError::at(
                &d.span,
                format!("duplicate log level \"{a}\""),
            ));
        }
        seen.push(a);
        // Several debug masks may follow; the level kept is the most verbose.
        lvl = Some(lvl.map_or(l, |old| old.min(l)));
    }
    Ok(ErrorLogConf {
        target,
        level: lvl.unwrap_or(LogLevel::Error),
    })
}

/// `access_log path [format [buffer=size] [flush=time] [gzip[=level]] [if=condition]]`
/// or `access_log off`. Returns `None` for `off`.
pub fn access_log(d: &Directive, env: &Env<'_>) -> Result<Option<AccessLogConf>> {
    let err = |m: String| ConfError::at(&d.span, m);
    let path = d.args.first().map(String::as_str).unwrap_or_default();
    if path == "off" {
        return match d.args.get(1) {
            None => Ok(None),
            Some(p) => Err(err(format!("invalid parameter \"{p}\""))),
        };
    }
    let syslog = match path.strip_prefix("syslog:") {
        Some(params) => Some(super::syslog::parse(d, params)?),
        None => None,
    };
    if let Some(e) = unsupported_target(d, path) {
        return Err(e);
    }
    let format = d.args.get(1).cloned().unwrap_or_else(|| "combined".into());
    if !env.log_formats.iter().any(|f| f.name == format) {
        return Err(err(format!("unknown log format \"{format}\"")));
    }
    let target = if let Some(peer) = syslog {
        LogTarget::Syslog(peer)
    } else if path.contains('$') {
        // A path with variables is resolved per request by the log crate.
        LogTarget::File(PathBuf::from(path))
    } else {
        LogTarget::File(PathBuf::from(full_name(env.prefix, path)))
    };
    let mut conf = AccessLogConf {
        cache: None,
        userid: None,
        target,
        format,
        buffer: None,
        flush: None,
        gzip: None,
        condition: None,
        span: d.span.clone(),
    };
    for p in d.args.iter().skip(2) {
        if let Some(v) = p.strip_prefix("buffer=") {
            conf.buffer =
                Some(parse_mem_size(v).ok_or_else(|| err(format!("invalid buffer size \"{v}\"")))?);
        } else if let Some(v) = p.strip_prefix("flush=") {
            // ngx_parse_time(&s, 0): milliseconds (`100ms`); 0 is refused.
            conf.flush = Some(
                parse_time(v)
                    .filter(|t| !t.is_zero())
                    .ok_or_else(|| err(format!("invalid flush time \"{v}\"")))?,
            );
        } else if p == "gzip" {
            conf.gzip = Some(DEFAULT_LOG_GZIP_LEVEL);
        } else if let Some(v) = p.strip_prefix("gzip=") {
            let level = parse_number(v)
                .filter(|l| (1..=9).contains(l))
                .ok_or_else(|| err(format!("invalid compression level \"{v}\"")))?;
            conf.gzip = Some(level as u32);
        } else if let Some(v) = p.strip_prefix("if=") {
            conf.condition = Some(v.to_string());
        } else {
            return Err(err(format!("invalid parameter \"{p}\"")));
        }
    }
    // gzip implies nginx's default 64k buffer, so `gzip flush=1h` is valid.
    if conf.gzip.is_some() && conf.buffer.is_none() {
        conf.buffer = Some(DEFAULT_GZIP_LOG_BUFFER);
    }
    if conf.flush.is_some() && conf.buffer.is_none() {
        return Err(err(format!(
            "no buffer is defined for access_log \"{path}\""
        )));
    }
    if matches!(conf.target, LogTarget::Syslog(_)) && conf.buffer.is_some() {
        return Err(err("logs to syslog cannot be buffered".into()));
    }
    Ok(Some(conf))
}
