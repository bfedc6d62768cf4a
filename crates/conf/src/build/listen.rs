//! `listen`: addresses as nginx's `ngx_parse_url` reads them for `listen`
//! (`addr:port`, `port`, `addr`, `[v6]:port`, `*:port`, `localhost:port`),
//! its parameters, and the http-wide checks nginx makes on them.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::error::{ConfError, Result};
use crate::model::{ListenConf, Span};
use crate::syntax::Directive;
use crate::values::parse_number;

/// nginx's default listen backlog on Linux (`NGX_LISTEN_BACKLOG`).
pub const DEFAULT_BACKLOG: i32 = 511;

/// `sizeof(sockaddr_un.sun_path)` on Linux: the longest socket path is one
/// less (the terminating NUL), as nginx's `ngx_parse_unix_domain_url`.
pub const UNIX_PATH_MAX: usize = 108;

/// Port used when a `listen` gives only an address.
pub const DEFAULT_PORT: u16 = 80;

/// Port of a server without `listen` when not running as root (nginx).
pub const DEFAULT_UNPRIVILEGED_PORT: u16 = 8000;

/// What the servers listening on one address have said so far.
#[derive(Debug, Clone, Copy)]
struct AddrState {
    /// The last server that listens here (servers are read in order, so a
    /// second `listen` of one server finds itself here).
    last_server: usize,
    /// Whether socket options were given for the address.
    options: bool,
    /// Whether a server is the address's `default_server`.
    default_server: bool,
}

/// Every `listen` of the http block, for nginx's duplicate checks.
#[derive(Debug, Default)]
pub struct Listens {
    /// Index of the server being read.
    pub current_server: usize,
    addrs: HashMap<SocketAddr, AddrState>,
    /// The `listen` lines that set socket options, in order.
    optioned: Vec<(SocketAddr, Span)>,
    /// The path of each UNIX-domain key seen (a hash collision check).
    unix_paths: HashMap<SocketAddr, Arc<str>>,
}

fn port(s: &str) -> Option<u16> {
    parse_number(s)
        .and_then(|n| u16::try_from(n).ok())
        .filter(|&p| p != 0)
}

/// Parses the address argument; errors are nginx's messages.
pub(super) fn parse_addr(arg: &str) -> std::result::Result<SocketAddr, String> {
    let invalid_port = || format!("invalid port in \"{arg}\" of the \"listen\" directive");
    let host_not_found = || format!("host not found in \"{arg}\" of the \"listen\" directive");
    if let Some(path) = arg.strip_prefix("unix:") {
        // ngx_parse_unix_domain_url: an empty path, or one longer than
        // sun_path holds, is refused with nginx's words.
        if path.is_empty() {
            return Err(format!(
                "no path in the unix domain socket in \"{arg}\" of the \"listen\" directive"
            ));
        }
        if path.len() >= UNIX_PATH_MAX {
            return Err(format!(
                "too long path in the unix domain socket in \"{arg}\" of the \"listen\" directive"
            ));
        }
        return Ok(crate::model::unix_key(path));
    }
    if arg.is_empty() {
        return Err("no host in \"\" of the \"listen\" directive".to_string());
    }
    // ngx_parse_inet_url: a `/` or `?` starts a URI part, which `listen`
    // refuses before looking at the host.
    if arg.contains(['/', '?']) {
        return Err(format!(
            "invalid host in \"{arg}\" of the \"listen\" directive"
        ));
    }
    if let Some(rest) = arg.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(format!(
                "invalid IPv6 address in \"{arg}\" of the \"listen\" directive"
            ));
        };
        let ip: Ipv6Addr = host.parse().map_err(|_| {
            format!("invalid IPv6 address in \"{arg}\" of the \"listen\" directive")
        })?;
        let p = match after {
            "" => DEFAULT_PORT,
            _ => after
                .strip_prefix(':')
                .and_then(port)
                .ok_or_else(invalid_port)?,
        };
        return Ok(SocketAddr::new(IpAddr::V6(ip), p));
    }
    let (host, p) = match arg.rsplit_once(':') {
        Some((h, p)) => (h, port(p).ok_or_else(invalid_port)?),
        // A number ngx_atoi cannot read (past 2^63-1) is not a port to
        // nginx but a host name, which does not resolve.
        None if arg.bytes().all(|b| b.is_ascii_digit()) && parse_number(arg).is_none() => {
            return Err(host_not_found());
        }
        None if arg.bytes().all(|b| b.is_ascii_digit()) => {
            return port(arg)
                .map(|p| SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), p))
                .ok_or_else(invalid_port);
        }
        None => (arg, DEFAULT_PORT),
    };
    let ip: IpAddr = match host {
        "" => {
            return Err(format!("no host in \"{arg}\" of the \"listen\" directive"));
        }
        "*" => Ipv4Addr::UNSPECIFIED.into(),
        "localhost" => Ipv4Addr::LOCALHOST.into(),
        _ => host
            .parse::<Ipv4Addr>()
            .map_err(|_| host_not_found())?
            .into(),
    };
    Ok(SocketAddr::new(ip, p))
}

/// Parameters nginx has that change nothing observable here; accepted.
const IGNORED_PARAMS: &[&str] = &["bind"];
/// Parameters nginx has that change the protocol spoken: refused until
/// implemented (accepting them would speak plain HTTP/1 to a client that
/// expects TLS, HTTP/2 or a PROXY header).
const REFUSED_PARAMS: &[&str] = &["quic"];
const IGNORED_PREFIXES: &[&str] = &[
    "rcvbuf=",
    "sndbuf=",
    "so_keepalive=",
    "fastopen=",
    "accept_filter=",
    "setfib=",
];

/// `listen addr [params]`.
pub fn parse(d: &Directive) -> Result<ListenConf> {
    let err = |m: String| ConfError::at(&d.span, m);
    let arg = d.args.first().map(String::as_str).unwrap_or_default();
    let addr = parse_addr(arg).map_err(err)?;
    let unix = arg.strip_prefix("unix:").map(Arc::from);
    let mut conf = ListenConf {
        addr,
        unix,
        default_server: false,
        reuseport: false,
        backlog: DEFAULT_BACKLOG,
        deferred: None,
        ipv6only: true,
        span: d.span.clone(),
        ssl: false,
        proxy_protocol: false,
        http2: false,
    };
    for p in d.args.iter().skip(1) {
        match p.as_str() {
            "default_server" | "default" => conf.default_server = true,
            "reuseport" => conf.reuseport = true,
            "deferred" | "deferred=on" => conf.deferred = Some(true),
            "deferred=off" => conf.deferred = Some(false),
            "ipv6only=on" => conf.ipv6only = true,
            "ipv6only=off" => conf.ipv6only = false,
            _ if p.starts_with("ipv6only=") => {
                return Err(err(format!("invalid ipv6only flags \"{}\"", &p[9..])));
            }
            // TLS on this address (see build::ssl).
            "ssl" => conf.ssl = true,
            // A PROXY protocol header precedes the client's bytes (the
            // engine's `proxy_protocol`).
            "proxy_protocol" => conf.proxy_protocol = true,
            // http2: the deprecated form (warned about by the caller).
            "http2" => conf.http2 = true,
            _ if REFUSED_PARAMS.contains(&p.as_str()) => {
                return Err(err(format!(
                    "the \"{p}\" parameter of the \"listen\" directive is not supported by Peregrine yet"
                )));
            }
            _ if p.starts_with("backlog=") => {
                let n = parse_number(&p["backlog=".len()..])
                    .and_then(|n| i32::try_from(n).ok())
                    .filter(|&n| n != 0)
                    .ok_or_else(|| err(format!("invalid backlog \"{p}\"")))?;
                conf.backlog = n;
            }
            _ if IGNORED_PARAMS.contains(&p.as_str())
                || IGNORED_PREFIXES.iter().any(|x| p.starts_with(x)) => {}
            _ => return Err(err(format!("invalid parameter \"{p}\""))),
        }
    }
    Ok(conf)
}

/// Whether a listen sets socket options (nginx allows them once per address).
fn has_options(d: &Directive) -> bool {
    d.args.iter().skip(1).any(|p| {
        // nginx's `ngx_http_core_listen` marks these as not socket
        // options (no `lsopt.set`): any `listen` of an address may say them.
        !matches!(
            p.as_str(),
            "default_server" | "default" | "ssl" | "http2" | "proxy_protocol"
        )
    })
}

impl Listens {
    /// A specific address whose port a wildcard `listen` of the same
    /// family also takes is served by the wildcard's socket (see the
    /// engine's `listen::wanted`), so socket options given on the specific
    /// `listen` (`deferred`, `backlog=`) could not apply. nginx binds such
    /// a `listen` separately and fails at start ("bind() ... failed (98:
    /// Address already in use)"); Peregrine says why at load instead of
    /// dropping the options silently.
    pub fn check_covered(&self) -> Result<()> {
        for (addr, span) in &self.optioned {
            let covered = !addr.ip().is_unspecified()
                && self.addrs.keys().any(|w| {
                    w.ip().is_unspecified()
                        && w.port() == addr.port()
                        && w.is_ipv4() == addr.is_ipv4()
                });
            if covered {
                return Err(ConfError::at(
                    span,
                    format!(
                        "socket options of \"listen {addr}\" cannot apply: a wildcard \"listen\" of port {} takes its connections",
                        addr.port()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// nginx's `ngx_http_add_addresses` checks, at the `listen` line.
    pub fn register(&mut self, conf: &ListenConf, d: &Directive) -> Result<()> {
        let opts = has_options(d);
        let addr = conf.addr;
        if opts {
            self.optioned.push((addr, d.span.clone()));
        }
        let new = AddrState {
            last_server: self.current_server,
            options: opts,
            default_server: conf.default_server,
        };
        if let Some(path) = &conf.unix {
            let known = self.unix_paths.entry(addr).or_insert_with(|| path.clone());
            if known != path {
                return Err(ConfError::at(
                    &d.span,
                    format!(
                        "the unix domain socket paths \"{known}\" and \"{path}\" have the same key: rename one"
                    ),
                ));
            }
        }
        let Some(state) = self.addrs.get_mut(&addr) else {
            self.addrs.insert(addr, new);
            return Ok(());
        };
        let err = |m: String| Err(ConfError::at(&d.span, m));
        let addr = conf.display();
        if state.last_server == self.current_server {
            return err(format!("a duplicate listen {addr}"));
        }
        if state.options && opts {
            return err(format!("duplicate listen options for {addr}"));
        }
        if state.default_server && conf.default_server {
            return err(format!("a duplicate default server for {addr}"));
        }
        state.last_server = self.current_server;
        state.options |= opts;
        state.default_server |= conf.default_server;
        Ok(())
    }
}

/// Whether the process runs as root, read from /proc (the only crate allowed
/// system calls is `sys`; /proc needs none).
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// nginx's listen for a server without one: `*:80` as root, `*:8000` otherwise.
pub fn default_listen(span: &Span) -> ListenConf {
    let p = if running_as_root() {
        DEFAULT_PORT
    } else {
        DEFAULT_UNPRIVILEGED_PORT
    };
    ListenConf {
        addr: SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), p),
        unix: None,
        default_server: false,
        reuseport: false,
        backlog: DEFAULT_BACKLOG,
        deferred: None,
        ipv6only: true,
        span: span.clone(),
        ssl: false,
        proxy_protocol: false,
        http2: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> std::result::Result<SocketAddr, String> {
        parse_addr(s)
    }

    #[test]
    fn address_forms() {
        assert_eq!(a("8080").unwrap(), "0.0.0.0:8080".parse().unwrap());
        assert_eq!(
            a("127.0.0.1:8080").unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(a("127.0.0.1").unwrap(), "127.0.0.1:80".parse().unwrap());
        assert_eq!(a("*:81").unwrap(), "0.0.0.0:81".parse().unwrap());
        assert_eq!(a("[::]:8080").unwrap(), "[::]:8080".parse().unwrap());
        assert_eq!(a("[::1]").unwrap(), "[::1]:80".parse().unwrap());
        assert_eq!(a("localhost:9").unwrap(), "127.0.0.1:9".parse().unwrap());
        assert_eq!(
            a("x:abc").unwrap_err(),
            "invalid port in \"x:abc\" of the \"listen\" directive"
        );
        assert_eq!(
            a("0").unwrap_err(),
            "invalid port in \"0\" of the \"listen\" directive"
        );
        assert_eq!(
            a("[::1]:99999").unwrap_err(),
            "invalid port in \"[::1]:99999\" of the \"listen\" directive"
        );
        assert_eq!(
            a("abc").unwrap_err(),
            "host not found in \"abc\" of the \"listen\" directive"
        );
        // Found by the differential check against nginx -t (examples/nginx_diff.rs).
        for (arg, want) in [
            ("a/b", "invalid host"),
            ("80/x", "invalid host"),
            ("1.2.3.4:80?", "invalid host"),
            ("[::1]/x", "invalid host"),
            ("*:80/", "invalid host"),
            (":80", "no host"),
            ("", "no host"),
            (":", "invalid port"),
            ("4294967296", "invalid port"),
            ("9223372036854775808", "host not found"),
            ("[::]:", "invalid port"),
        ] {
            assert_eq!(
                a(arg).unwrap_err(),
                format!("{want} in \"{arg}\" of the \"listen\" directive")
            );
        }
        assert_eq!(a("*").unwrap(), "0.0.0.0:80".parse().unwrap());
        assert!(a("[zz]:80").is_err());
        assert!(a("[::1").is_err());
        assert_eq!(a("unix:/tmp/s").unwrap(), crate::model::unix_key("/tmp/s"));
        assert!(crate::model::is_unix(a("unix:/tmp/s").unwrap()));
        assert_ne!(a("unix:/tmp/s").unwrap(), a("unix:/tmp/t").unwrap());
        assert!(!crate::model::is_unix(a("[::1]:80").unwrap()));
        assert!(a("unix:").unwrap_err().starts_with("no path"));
        assert!(
            a(&format!("unix:/{}", "x".repeat(107)))
                .unwrap_err()
                .starts_with("too long")
        );
    }
}
