//! The variables a `log_format` may use, resolved once at configuration
//! time, and their rendering (nginx 1.22's formats).

use std::io::Write as _;
use std::net::IpAddr;
use std::sync::OnceLock;

use peregrine_conf::model::LogEscape;
use peregrine_conf::variables::{Family, Known as K, VarId};

use crate::auth::basic_user;
use crate::escape::{missing, push_escaped};
use crate::record::{RequestLog, each_value, find_cookie};
use crate::time::{TimeCache, unix_millis};

/// One variable, with any name suffix lowercased at compile time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Var {
    RemoteAddr,
    RemotePort,
    /// `$realip_remote_addr`, `$realip_remote_port`: the connection's.
    RealipRemoteAddr,
    RealipRemotePort,
    RemoteUser,
    TimeLocal,
    TimeIso8601,
    Msec,
    Request,
    RequestMethod,
    RequestUri,
    Uri,
    Args,
    IsArgs,
    ServerProtocol,
    Status,
    BodyBytesSent,
    BytesSent,
    RequestLength,
    RequestTime,
    Connection,
    ConnectionRequests,
    ServerName,
    ServerAddr,
    ServerPort,
    Host,
    Scheme,
    Https,
    Pipe,
    Pid,
    RequestId,
    Hostname,
    BinaryRemoteAddr,
    /// Variables nginx knows but Peregrine never has a value for (no
    /// upstreams, no `gzip_ratio` yet): accepted so configurations load,
    /// logged as not found (`-`), as nginx logs them for a static request.
    NotFound,
    /// A variable the log does not compute itself: the configuration's
    /// (`map`, `geo`, `split_clients`...) or a module's, asked of the
    /// request's [`crate::record::ModuleVars`] (lowercase name).
    Module(Box<str>),
    /// `$http_NAME`: the suffix, lowercase, `-` as `_`.
    Http(Box<[u8]>),
    /// `$sent_http_NAME`.
    SentHttp(Box<[u8]>),
    /// `$arg_NAME` (matched case-insensitively, as `ngx_http_arg`).
    Arg(Box<[u8]>),
    /// `$cookie_NAME`.
    Cookie(Box<[u8]>),
    /// `$uid_got`, `$uid_set` (the userid filter, see `uid`).
    UidGot,
    /// `$upstream_*` (the proxy's numbers; `-` without an upstream).
    Upstream(Box<[u8]>),
    UidSet,
    // ssl
    /// `$ssl_NAME` (the name after the prefix).
    Ssl(Box<str>),
    // proxy_protocol
    /// `$proxy_protocol_NAME` (the name after the prefix).
    ProxyProtocol(Box<str>),
}

impl Var {
    /// Resolves a variable name as written after `$`. nginx variable names
    /// are case-insensitive (it lowercases them before the hash lookup).
    /// Long only because it is the table of names, one line each.
    pub(crate) fn parse(name: &str) -> Option<Var> {
        let fixed = match VarId::resolve(name)? {
            VarId::Known(k) => match k {
                K::RemoteAddr => Var::RemoteAddr,
                K::RemotePort => Var::RemotePort,
                K::RealipRemoteAddr => Var::RealipRemoteAddr,
                K::RealipRemotePort => Var::RealipRemotePort,
                K::RemoteUser => Var::RemoteUser,
                K::TimeLocal => Var::TimeLocal,
                K::TimeIso8601 => Var::TimeIso8601,
                K::Msec => Var::Msec,
                K::Request => Var::Request,
                K::RequestMethod => Var::RequestMethod,
                K::RequestUri => Var::RequestUri,
                K::IsArgs => Var::IsArgs,
                K::ServerProtocol => Var::ServerProtocol,
                K::Status => Var::Status,
                K::BodyBytesSent => Var::BodyBytesSent,
                K::BytesSent => Var::BytesSent,
                K::RequestLength => Var::RequestLength,
                K::RequestTime => Var::RequestTime,
                K::Connection => Var::Connection,
                K::ConnectionRequests => Var::ConnectionRequests,
                K::ServerName => Var::ServerName,
                K::ServerAddr => Var::ServerAddr,
                K::ServerPort => Var::ServerPort,
                K::Host => Var::Host,
                K::Scheme => Var::Scheme,
                K::Https => Var::Https,
                K::Pipe => Var::Pipe,
                K::Pid => Var::Pid,
                K::RequestId => Var::RequestId,
                K::Hostname => Var::Hostname,
                K::BinaryRemoteAddr => Var::BinaryRemoteAddr,
                K::UidGot => Var::UidGot,
                K::UidSet => Var::UidSet,
                K::Uri | K::DocumentUri => Var::Uri,
                K::Args | K::QueryString => Var::Args,
                // nginx's `$content_type`/`$content_length` are these headers.
                K::ContentType | K::ContentLength => Var::Http(k.name().as_bytes().into()),
                K::UpstreamAddr
                | K::UpstreamStatus
                | K::UpstreamResponseTime
                | K::UpstreamConnectTime
                | K::UpstreamHeaderTime
                | K::UpstreamResponseLength
                | K::UpstreamBytesReceived
                | K::UpstreamBytesSent => Var::Upstream(k.name().as_bytes().into()),
                K::UpstreamCacheStatus | K::UpstreamQueueTime | K::GzipRatio => Var::NotFound,
                // limits: core's state, not carried to the log yet.
                K::LimitReqStatus | K::LimitConnStatus => Var::NotFound,
                k if let Some(n) = k.name().strip_prefix("ssl_") => Var::Ssl(n.into()),
                k if let Some(n) = k.name().strip_prefix("proxy_protocol_") => {
                    Var::ProxyProtocol(n.into())
                }
                // Core's to give (`RequestLog::modules`).
                _ => return None,
            },
            VarId::Family(f, rest) => {
                let suffix = rest.as_bytes().into();
                match f {
                    Family::SentHttp => Var::SentHttp(suffix),
                    Family::Http => Var::Http(suffix),
                    Family::Arg => Var::Arg(suffix),
                    Family::Cookie => Var::Cookie(suffix),
                    Family::UpstreamHttp => {
                        Var::Upstream(format!("upstream_http_{rest}").into_bytes().into())
                    }
                    Family::UpstreamCookie | Family::UpstreamTrailer => Var::NotFound,
                    Family::ProxyProtocolTlv => Var::ProxyProtocol(format!("tlv_{rest}").into()),
                    Family::SentTrailer => return None,
                }
            }
            VarId::Capture(_) => return None,
        };
        Some(fixed)
    }

    /// Appends the value. One arm per variable: the function is the
    /// dispatch table, kept whole so every variable's format is in one place.
    pub(crate) fn render(
        &self,
        rec: &RequestLog<'_>,
        time: &mut TimeCache,
        mode: LogEscape,
        out: &mut Vec<u8>,
    ) {
        let s = |out: &mut Vec<u8>, v: Option<&[u8]>| match v {
            Some(v) => push_escaped(out, mode, v),
            None => out.extend_from_slice(missing(mode)),
        };
        match self {
            // A client on a UNIX-domain socket: nginx's `unix:`, no port.
            Var::RemoteAddr if is_unix(rec.remote) => out.extend_from_slice(b"unix:"),
            Var::RemotePort if is_unix(rec.remote) => {}
            Var::RemoteAddr => push_ip(out, rec.remote.ip()),
            Var::RemotePort => push_u64(out, u64::from(rec.remote.port())),
            Var::RealipRemoteAddr => push_ip(out, rec.conn_remote.unwrap_or(rec.remote).ip()),
            Var::RealipRemotePort => {
                push_u64(out, u64::from(rec.conn_remote.unwrap_or(rec.remote).port()))
            }
            Var::RemoteUser => {
                if !basic_user(rec.request_headers, out, mode) {
                    out.extend_from_slice(missing(mode));
                }
            }
            Var::TimeLocal => out.extend_from_slice(time.local(unix_millis(rec.end) / 1000)),
            Var::TimeIso8601 => out.extend_from_slice(time.iso8601(unix_millis(rec.end) / 1000)),
            Var::Msec => push_millis(out, unix_millis(rec.end)),
            Var::Request => s(out, rec.request_line),
            Var::RequestMethod => s(out, rec.method),
            Var::RequestUri => s(out, rec.request_uri),
            Var::Uri => s(out, rec.uri),
            Var::Args => s(out, rec.args),
            Var::IsArgs => out.extend_from_slice(if rec.args.is_some() { b"?" } else { b"" }),
            Var::ServerProtocol => s(out, rec.protocol),
            Var::Status => push_status(out, rec.status),
            Var::BodyBytesSent => push_u64(out, rec.body_bytes_sent),
            Var::BytesSent => push_u64(out, rec.bytes_sent),
            Var::RequestLength => push_u64(out, rec.request_length),
            Var::RequestTime => {
                // nginx subtracts its millisecond clocks and clamps at 0.
                let ms = unix_millis(rec.end).saturating_sub(unix_millis(rec.start));
                push_millis(out, ms);
            }
            Var::Connection => push_u64(out, rec.connection),
            Var::ConnectionRequests => push_u64(out, rec.connection_requests),
            Var::ServerName => push_escaped(out, mode, rec.server_name),
            // The socket path is not in the record: `unix:` alone.
            Var::ServerAddr if is_unix(rec.local) => out.extend_from_slice(b"unix:"),
            Var::ServerPort if is_unix(rec.local) => {}
            Var::ServerAddr => push_ip(out, rec.local.ip()),
            Var::ServerPort => push_u64(out, u64::from(rec.local.port())),
            Var::Host => push_escaped(out, mode, rec.host.unwrap_or(rec.server_name)),
            Var::Scheme => out.extend_from_slice(if rec.https { b"https" } else { b"http" }),
            Var::Https => out.extend_from_slice(if rec.https { b"on" } else { b"" }),
            Var::Pipe => out.push(if rec.pipelined { b'p' } else { b'.' }),
            // getpid(2) each time (glibc no longer caches it), but only for
            // formats that use `$pid`; a cached value would go stale on fork.
            Var::Pid => push_u64(out, u64::from(std::process::id())),
            Var::RequestId => s(out, rec.request_id),
            Var::Hostname => push_escaped(out, mode, hostname()),
            // nginx: the sockaddr's bytes; for AF_UNIX nothing of use.
            Var::BinaryRemoteAddr if is_unix(rec.remote) => {}
            Var::BinaryRemoteAddr => match rec.remote.ip() {
                IpAddr::V4(ip) => push_escaped(out, mode, &ip.octets()),
                IpAddr::V6(ip) => push_escaped(out, mode, &ip.octets()),
            },
            Var::NotFound => out.extend_from_slice(missing(mode)),
            Var::Module(name) => {
                let mut v = String::new();
                match rec.modules {
                    Some(m) if m.value(name, &mut v) => push_escaped(out, mode, v.as_bytes()),
                    _ => out.extend_from_slice(missing(mode)),
                }
            }
            Var::Http(name) => push_header(out, mode, rec, name, false),
            // The engine writes `Connection` itself; after `101` it is
            // `upgrade` (nginx's `ngx_http_variable_sent_connection`).
            Var::SentHttp(name) if rec.status == 101 && &**name == b"connection" => {
                out.extend_from_slice(b"upgrade");
            }
            Var::SentHttp(name) => push_header(out, mode, rec, name, true),
            Var::Arg(name) => s(out, find_arg(rec.args, name)),
            Var::Cookie(name) => push_cookie(out, mode, rec, name),
            Var::UidGot => crate::uid::push(out, mode, rec, false),
            Var::UidSet => crate::uid::push(out, mode, rec, true),
            Var::Upstream(name) => {
                let v = rec
                    .upstream
                    .and_then(|u| u.value(std::str::from_utf8(name).unwrap_or("")));
                match v {
                    Some(v) if !v.is_empty() => push_escaped(out, mode, v.as_bytes()),
                    _ => out.extend_from_slice(missing(mode)),
                }
            }
            Var::Ssl(name) => s(
                out,
                rec.ssl.and_then(|v| v.ssl_value(name)).map(str::as_bytes),
            ),
            Var::ProxyProtocol(name) => {
                let v = rec
                    .proxy_protocol
                    .and_then(|h| proxy_protocol_value(h, name));
                match v {
                    Some(v) if !v.is_empty() => push_escaped(out, mode, &v),
                    _ => out.extend_from_slice(missing(mode)),
                }
            }
        }
    }
}

/// `$http_NAME`/`$sent_http_NAME`. nginx 1.22 returns the first field of a
/// name, except the few it joins: `Cookie` with `; `, `X-Forwarded-For`,
/// and on the response side `Cache-Control` and `Link`, with `, `.
fn push_header(out: &mut Vec<u8>, mode: LogEscape, rec: &RequestLog<'_>, name: &[u8], sent: bool) {
    let (headers, sep): (_, Option<&[u8]>) = if sent {
        let sep = matches!(name, b"cache_control" | b"link").then_some(b", ".as_slice());
        (rec.response_headers, sep)
    } else {
        let sep = match name {
            b"cookie" => Some(b"; ".as_slice()),
            b"x_forwarded_for" => Some(b", ".as_slice()),
            _ => None,
        };
        (rec.request_headers, sep)
    };
    let mut count = 0usize;
    each_value(headers, name, &mut |v| {
        if count > 0 {
            // Reached only for joined fields: the closure returns
            // `sep.is_some()`, so other names stop after the first value.
            out.extend_from_slice(sep.unwrap_or_default());
        }
        push_escaped(out, mode, v);
        count += 1;
        sep.is_some()
    });
    if count == 0 {
        out.extend_from_slice(missing(mode));
    }
}

/// `$cookie_NAME`: the first matching cookie of any `Cookie` field.
fn push_cookie(out: &mut Vec<u8>, mode: LogEscape, rec: &RequestLog<'_>, name: &[u8]) {
    let mut found = false;
    each_value(
        rec.request_headers,
        b"cookie",
        &mut |h| match find_cookie(h, name) {
            Some(v) => {
                push_escaped(out, mode, v);
                found = true;
                false
            }
            None => true,
        },
    );
    if !found {
        out.extend_from_slice(missing(mode));
    }
}

/// `ngx_http_arg`: the value of the first `name=` argument, the name matched
/// case-insensitively at the start or after `&`.
fn find_arg<'a>(args: Option<&'a [u8]>, name: &[u8]) -> Option<&'a [u8]> {
    args?.split(|&b| b == b'&').find_map(|pair| {
        let rest = pair.get(name.len()..)?;
        (pair[..name.len()].eq_ignore_ascii_case(name) && rest.first() == Some(&b'='))
            .then(|| &rest[1..])
    })
}

/// nginx's `$hostname` (gethostname(2) at start). Read once from procfs,
/// which needs no `unsafe`.
fn hostname() -> &'static [u8] {
    static NAME: OnceLock<Vec<u8>> = OnceLock::new();
    NAME.get_or_init(|| {
        std::fs::read("/proc/sys/kernel/hostname")
            .map(|mut v| {
                v.truncate(v.trim_ascii_end().len());
                v
            })
            .unwrap_or_default()
    })
}

/// Decimal without `fmt` (this runs several times per log line).
pub(crate) use peregrine_codec::response::push_u64;

/// nginx's `%T.%03M`: seconds, a dot, three digits of milliseconds.
fn push_millis(out: &mut Vec<u8>, ms: u64) {
    push_u64(out, ms / 1000);
    let frac = ms % 1000;
    out.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

/// nginx's `%03ui`.
fn push_status(out: &mut Vec<u8>, status: u16) {
    if status < 100 {
        out.extend_from_slice(if status < 10 { b"00" } else { b"0" });
    }
    push_u64(out, u64::from(status));
}

/// nginx prints IPv6 without brackets (`::1`), as `Display` does. IPv4,
/// the common case, skips the `fmt` machinery.
use peregrine_conf::model::is_unix;

fn push_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                push_u64(out, u64::from(octet));
            }
        }
        // Writing to a Vec cannot fail.
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}

/// `$proxy_protocol_addr`, `_port`, `_server_addr`, `_server_port`,
/// `_tlv_NAME` of a header (`None`: not found, logged as `-`).
fn proxy_protocol_value(
    h: &peregrine_codec::proxy_protocol::ProxyHeader,
    name: &str,
) -> Option<Vec<u8>> {
    if let Some(tlv) = name.strip_prefix("tlv_") {
        return h.tlv(tlv).ok().flatten().map(|v| v.into_owned());
    }
    let (src, dst) = h.inet()?;
    Some(
        match name {
            "addr" => src.addr.clone(),
            "port" => src.port.to_string(),
            "server_addr" => dst.addr.clone(),
            "server_port" => dst.port.to_string(),
            _ => return None,
        }
        .into_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        let mut v = Vec::new();
        push_u64(&mut v, 0);
        v.push(b' ');
        push_u64(&mut v, u64::MAX);
        v.push(b' ');
        push_millis(&mut v, 1_796_037_017_379);
        v.push(b' ');
        push_millis(&mut v, 5);
        v.push(b' ');
        push_status(&mut v, 0);
        v.push(b' ');
        push_status(&mut v, 9);
        v.push(b' ');
        push_status(&mut v, 404);
        assert_eq!(
            v,
            b"0 18446744073709551615 1796037017.379 0.005 000 009 404"
        );
    }

    #[test]
    fn args_and_cookies() {
        let a = Some(b"a=1&LOG=yes&log=no&b".as_slice());
        assert_eq!(find_arg(a, b"log"), Some(b"yes".as_slice()));
        assert_eq!(find_arg(a, b"b"), None);
        assert_eq!(find_arg(a, b"a"), Some(b"1".as_slice()));
        assert_eq!(find_arg(a, b"xx"), None);
        assert_eq!(find_arg(None, b"a"), None);
        assert_eq!(find_arg(Some(b"a="), b"a"), Some(b"".as_slice()));
        let c = b"x=1;  sid=abc; y=2".as_slice();
        assert_eq!(find_cookie(c, b"sid"), Some(b"abc".as_slice()));
        assert_eq!(find_cookie(c, b"x"), Some(b"1".as_slice()));
        assert_eq!(find_cookie(c, b"z"), None);
    }

    #[test]
    fn names() {
        assert_eq!(Var::parse("Remote_Addr"), Some(Var::RemoteAddr));
        assert_eq!(
            Var::parse("http_User_Agent"),
            Some(Var::Http(b"user_agent".as_slice().into()))
        );
        assert_eq!(
            Var::parse("sent_http_x"),
            Some(Var::SentHttp(b"x".as_slice().into()))
        );
        assert_eq!(Var::parse("http_"), Some(Var::Http(b"".as_slice().into())));
        assert_eq!(Var::parse("foo"), None);
        assert_eq!(Var::parse("1x"), None);
    }
}
