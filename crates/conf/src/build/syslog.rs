//! `syslog:` log targets (`ngx_syslog_parse_args`, nginx's messages) and
//! the `memory:` target of `error_log`.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::error::{ConfError, Result};
use crate::model::SyslogConf;
use crate::syntax::Directive;
use crate::values::parse_mem_size;

/// nginx's syslog facilities, in number order.
pub const FACILITIES: [&str; 24] = [
    "kern", "user", "mail", "daemon", "auth", "intern", "lpr", "news", "uucp", "clock", "authpriv",
    "ftp", "ntp", "audit", "alert", "cron", "local0", "local1", "local2", "local3", "local4",
    "local5", "local6", "local7",
];

/// nginx's severities (its level names, not syslog's `err`/`warning`).
pub const SEVERITIES: [&str; 8] = [
    "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug",
];

/// The syslog port when `server=` names none.
pub const DEFAULT_SYSLOG_PORT: u16 = 514;

/// RFC 3164 4.1.3: the TAG is at most 32 alphanumeric characters.
pub const MAX_SYSLOG_TAG: usize = 32;

/// `local7`, nginx's default facility.
const DEFAULT_FACILITY: u8 = 23;
/// `info`, nginx's default severity.
const DEFAULT_SEVERITY: u8 = 6;

/// Parses the text after `syslog:`.
pub fn parse(d: &Directive, params: &str) -> Result<SyslogConf> {
    let e = |m: String| ConfError::at(&d.span, m);
    let mut server: Option<(SocketAddr, String)> = None;
    let (mut facility, mut severity, mut tag) = (None, None, None);
    let mut nohostname = false;
    for p in params.split(',') {
        if let Some(v) = p.strip_prefix("server=") {
            if server.is_some() {
                return Err(e("duplicate syslog \"server\"".into()));
            }
            server = Some((resolve(d, v)?, v.to_string()));
        } else if let Some(v) = p.strip_prefix("facility=") {
            if facility.is_some() {
                return Err(e("duplicate syslog \"facility\"".into()));
            }
            let i = FACILITIES.iter().position(|f| *f == v);
            facility = Some(i.ok_or_else(|| e(format!("unknown syslog facility \"{v}\"")))? as u8);
        } else if let Some(v) = p.strip_prefix("severity=") {
            if severity.is_some() {
                return Err(e("duplicate syslog \"severity\"".into()));
            }
            let i = SEVERITIES.iter().position(|f| *f == v);
            severity = Some(i.ok_or_else(|| e(format!("unknown syslog severity \"{v}\"")))? as u8);
        } else if let Some(v) = p.strip_prefix("tag=") {
            if tag.is_some() {
                return Err(e("duplicate syslog \"tag\"".into()));
            }
            if v.len() > MAX_SYSLOG_TAG {
                return Err(e("syslog tag length exceeds 32".into()));
            }
            if !v.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                return Err(e(
                    "syslog \"tag\" only allows alphanumeric characters and underscore".into(),
                ));
            }
            tag = Some(v.to_string());
        } else if p == "nohostname" {
            nohostname = true;
        } else {
            return Err(e(format!("unknown syslog parameter \"{p}\"")));
        }
    }
    let Some((server, server_name)) = server else {
        return Err(e("no syslog server specified".into()));
    };
    Ok(SyslogConf {
        server,
        server_name,
        facility: facility.unwrap_or(DEFAULT_FACILITY),
        severity: severity.unwrap_or(DEFAULT_SEVERITY),
        tag: tag.unwrap_or_else(|| "nginx".into()),
        nohostname,
    })
}

/// `ngx_parse_url` with port 514 by default: `host`, `host:port`,
/// `[v6]:port`, resolved now as nginx resolves it while reading.
fn resolve(d: &Directive, v: &str) -> Result<SocketAddr> {
    let e = |what: &str| ConfError::at(&d.span, format!("{what} in syslog server \"{v}\""));
    if v.starts_with("unix:") {
        return Err(ConfError::at(
            &d.span,
            format!("unix socket syslog server \"{v}\" is not supported by Peregrine yet"),
        ));
    }
    if v.is_empty() {
        return Err(e("no host"));
    }
    let with_port = match (v.starts_with('['), v.matches(':').count()) {
        (true, _) if v.ends_with(']') => format!("{v}:{DEFAULT_SYSLOG_PORT}"),
        (true, _) | (false, 1) => v.to_string(),
        (false, 0) => format!("{v}:{DEFAULT_SYSLOG_PORT}"),
        // A bare IPv6 address.
        (false, _) => format!("[{v}]:{DEFAULT_SYSLOG_PORT}"),
    };
    match with_port.to_socket_addrs() {
        Ok(mut addrs) => addrs.next().ok_or_else(|| e("host not found")),
        Err(_)
            if with_port
                .rsplit(':')
                .next()
                .is_some_and(|p| p.parse::<u16>().is_err()) =>
        {
            Err(e("invalid port"))
        }
        Err(_) => Err(e("host not found")),
    }
}

/// `memory:SIZE` (nginx allows it only in debug builds; here always).
pub fn memory(d: &Directive, size: &str) -> Result<usize> {
    parse_mem_size(size)
        .filter(|&n| n > 0)
        .ok_or_else(|| ConfError::at(&d.span, format!("invalid buffer size \"{size}\"")))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::model::Span;

    fn d() -> Directive {
        Directive {
            name: "error_log".into(),
            args: Vec::new(),
            span: Span::new(&Arc::new(PathBuf::from("f")), 1),
            block: None,
        }
    }

    #[test]
    fn parameters_and_defaults() {
        let c = parse(
            &d(),
            "server=127.0.0.1:5140,facility=local0,tag=web_1,nohostname",
        )
        .unwrap();
        assert_eq!(c.server, "127.0.0.1:5140".parse().unwrap());
        assert_eq!((c.facility, c.severity, c.tag.as_str()), (16, 6, "web_1"));
        assert!(c.nohostname);
        let c = parse(&d(), "server=127.0.0.1").unwrap();
        assert_eq!(c.server.port(), 514);
        assert_eq!((c.facility, c.tag.as_str()), (23, "nginx"));
        assert_eq!(
            parse(&d(), "server=[::1]").unwrap().server,
            "[::1]:514".parse().unwrap()
        );
    }

    #[test]
    fn messages_as_nginx() {
        let e = |p: &str| parse(&d(), p).unwrap_err().to_string();
        assert_eq!(e("facility=local0"), "no syslog server specified in f:1");
        assert_eq!(
            e("server=127.0.0.1,server=127.0.0.1"),
            "duplicate syslog \"server\" in f:1"
        );
        assert_eq!(
            e("server=127.0.0.1,facility=x"),
            "unknown syslog facility \"x\" in f:1"
        );
        assert_eq!(
            e("server=127.0.0.1,severity=err"),
            "unknown syslog severity \"err\" in f:1"
        );
        assert_eq!(
            e("server=127.0.0.1,tag=a-b"),
            "syslog \"tag\" only allows alphanumeric characters and underscore in f:1"
        );
        assert_eq!(
            e(&format!("server=127.0.0.1,tag={}", "a".repeat(33))),
            "syslog tag length exceeds 32 in f:1"
        );
        assert_eq!(
            e("server=127.0.0.1,x=1"),
            "unknown syslog parameter \"x=1\" in f:1"
        );
    }
}
