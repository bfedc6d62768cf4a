//! `mail { }` (nginx's `ngx_mail_*_module`): the block reads its own
//! directives from [`super::mail_table`], as nginx's mail modules declare
//! them (`server`, `listen`, `proxy` mean other things than in http). A
//! mail directive nginx has that Peregrine does not is refused by name
//! after nginx's context and argument checks.
//!
//! The block's values are merged into each server at the end of the block
//! (nginx's `merge_srv_conf` of each mail module), with nginx's defaults.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::handlers::{arg, flag, msg, set, size, time};
use super::mail_table::{self as mt};
use super::stream_table::Imp;
use super::{Builder, check_shape};
use crate::error::{ConfError, Result};
use crate::mail::*;
use crate::model::Span;
use crate::syntax::{Block, Directive};

/// `timeout` and `auth_http_timeout` (`ngx_mail_core_merge_srv_conf`,
/// `ngx_mail_auth_http_merge_conf`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// `proxy_timeout` (`ngx_mail_proxy_merge_conf`).
const DEFAULT_PROXY_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// `proxy_buffer`, `imap_client_buffer`, `smtp_client_buffer`: one page.
const DEFAULT_BUFFER: usize = 4096;
/// `max_errors`.
const DEFAULT_MAX_ERRORS: u32 = 5;
/// `ssl_session_timeout`.
const DEFAULT_SSL_SESSION_TIMEOUT: Duration = Duration::from_secs(300);
/// nginx's default capabilities (`ngx_mail_imap_default_capabilities`,
/// `ngx_mail_pop3_default_capabilities`; SMTP has none).
const IMAP_CAPABILITIES: &[&str] = &["IMAP4", "IMAP4rev1", "UIDPLUS"];
const POP3_CAPABILITIES: &[&str] = &["TOP", "USER", "UIDL"];

/// One level's settings as read: `None` is nginx's `NGX_CONF_UNSET`.
#[derive(Debug, Default, Clone)]
struct RawMailSrv {
    timeout: Option<Duration>,
    server_name: Option<String>,
    max_errors: Option<u32>,
    auth_http: Option<AuthHttp>,
    auth_http_timeout: Option<Duration>,
    auth_http_headers: Vec<(String, String)>,
    proxy: Option<bool>,
    proxy_buffer: Option<usize>,
    proxy_timeout: Option<Duration>,
    pass_error_message: Option<bool>,
    xclient: Option<bool>,
    imap_capabilities: Option<Vec<String>>,
    pop3_capabilities: Option<Vec<String>>,
    smtp_capabilities: Option<Vec<String>>,
    imap_auth: Option<u8>,
    pop3_auth: Option<u8>,
    smtp_auth: Option<u8>,
    imap_client_buffer: Option<usize>,
    smtp_client_buffer: Option<usize>,
    greeting_delay: Option<Duration>,
    starttls: Option<(Starttls, Span)>,
    certificates: Option<Vec<PathBuf>>,
    certificate_keys: Option<Vec<PathBuf>>,
    ssl_protocols: Option<Vec<String>>,
    ssl_ciphers: Option<String>,
    ssl_prefer_server_ciphers: Option<bool>,
    ssl_session_timeout: Option<Duration>,
    ssl_session_tickets: Option<bool>,
}

/// A server as read.
#[derive(Debug, Default)]
struct RawMailServer {
    listen: Vec<MailListen>,
    protocol: Option<MailProtocol>,
    srv: RawMailSrv,
    span: Span,
}

/// The block as read.
#[derive(Debug, Default)]
struct RawMail {
    srv: RawMailSrv,
    servers: Vec<RawMailServer>,
}

impl Builder {
    /// Reads `mail { ... }`.
    pub(super) fn mail(&mut self, block: &Block) -> Result<MailConf> {
        let mut raw = RawMail::default();
        self.walk_items(
            &block.items,
            block.error.as_ref(),
            &mut raw,
            None,
            Self::mail_directive,
        )?;
        let mut servers = Vec::with_capacity(raw.servers.len());
        for s in &raw.servers {
            servers.push(Arc::new(merge(s, &raw.srv, &self.hostname)?));
        }
        check_addresses(&servers)?;
        Ok(MailConf { servers })
    }

    fn mail_directive(
        &mut self,
        d: &Directive,
        raw: &mut RawMail,
        server: Option<usize>,
    ) -> Result<()> {
        let here = if server.is_some() { mt::SRV } else { mt::MAIN };
        let Some(entry) = mt::find(&d.name) else {
            return Err(msg(d, format!("unknown directive \"{}\"", d.name)));
        };
        check_shape(
            d,
            entry.contexts & here != 0,
            entry.args & crate::known::arg::BLOCK != 0,
            entry.accepts(d.args.len()),
        )?;
        if entry.imp == Imp::No {
            return Err(msg(
                d,
                format!("\"{}\" directive is not supported by Peregrine yet", d.name),
            ));
        }
        match (d.name.as_str(), server) {
            ("server", _) => {
                let block = d.block.as_ref().expect("checked: a block");
                raw.servers.push(RawMailServer {
                    span: d.span.clone(),
                    ..Default::default()
                });
                let i = raw.servers.len() - 1;
                self.walk_items(
                    &block.items,
                    block.error.as_ref(),
                    raw,
                    Some(i),
                    Self::mail_directive,
                )
            }
            ("listen", Some(i)) => {
                let l = listen(d)?;
                raw.servers[i].listen.push(l);
                Ok(())
            }
            ("protocol", Some(i)) => {
                let p = match arg(d, 0) {
                    "imap" => MailProtocol::Imap,
                    "pop3" => MailProtocol::Pop3,
                    "smtp" => MailProtocol::Smtp,
                    other => return Err(msg(d, format!("unknown protocol \"{other}\""))),
                };
                set(&mut raw.servers[i].protocol, p, d)
            }
            (_, i) => {
                let srv = match i {
                    None => &mut raw.srv,
                    Some(i) => &mut raw.servers[i].srv,
                };
                self.mail_setting(d, srv)
            }
        }
    }

    /// The directives of both levels.
    fn mail_setting(&mut self, d: &Directive, s: &mut RawMailSrv) -> Result<()> {
        let a = arg(d, 0);
        let conf_path = |p: &str| PathBuf::from(super::raw::full_name(&self.conf_dir, p));
        match d.name.as_str() {
            "timeout" => set(&mut s.timeout, time(d, a)?, d),
            "server_name" => set(&mut s.server_name, a.to_string(), d),
            "max_errors" => {
                let n = crate::values::parse_number(a)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| super::handlers::invalid_number(d))?;
                set(&mut s.max_errors, n, d)
            }
            "auth_http" => set(&mut s.auth_http, auth_http(d, a)?, d),
            "auth_http_timeout" => set(&mut s.auth_http_timeout, time(d, a)?, d),
            "auth_http_header" => {
                s.auth_http_headers
                    .push((a.to_string(), arg(d, 1).to_string()));
                Ok(())
            }
            "proxy" => set(&mut s.proxy, flag(d)?, d),
            "proxy_buffer" => set(&mut s.proxy_buffer, size(d, a)?, d),
            "proxy_timeout" => set(&mut s.proxy_timeout, time(d, a)?, d),
            "proxy_pass_error_message" => set(&mut s.pass_error_message, flag(d)?, d),
            "xclient" => set(&mut s.xclient, flag(d)?, d),
            "imap_capabilities" => set(&mut s.imap_capabilities, d.args.clone(), d),
            "pop3_capabilities" => set(&mut s.pop3_capabilities, d.args.clone(), d),
            "smtp_capabilities" => set(&mut s.smtp_capabilities, d.args.clone(), d),
            "imap_auth" => set(&mut s.imap_auth, auth_methods(d, IMAP_METHODS)?, d),
            "pop3_auth" => set(&mut s.pop3_auth, auth_methods(d, POP3_METHODS)?, d),
            "smtp_auth" => set(&mut s.smtp_auth, auth_methods(d, SMTP_METHODS)?, d),
            "imap_client_buffer" => set(&mut s.imap_client_buffer, size(d, a)?, d),
            "smtp_client_buffer" => set(&mut s.smtp_client_buffer, size(d, a)?, d),
            "smtp_greeting_delay" => set(&mut s.greeting_delay, time(d, a)?, d),
            "starttls" => {
                let v = match a {
                    "off" => Starttls::Off,
                    "on" => Starttls::On,
                    "only" => Starttls::Only,
                    _ => {
                        return Err(msg(
                            d,
                            format!(
                                "invalid value \"{a}\" in \"starttls\" directive, it must be \"off\", \"on\" or \"only\""
                            ),
                        ));
                    }
                };
                set(&mut s.starttls, (v, d.span.clone()), d)
            }
            "ssl_certificate" => {
                s.certificates
                    .get_or_insert_with(Vec::new)
                    .push(conf_path(a));
                Ok(())
            }
            "ssl_certificate_key" => {
                let keys = s.certificate_keys.get_or_insert_with(Vec::new);
                keys.push(conf_path(a));
                Ok(())
            }
            "ssl_protocols" => set(&mut s.ssl_protocols, d.args.clone(), d),
            "ssl_ciphers" => set(&mut s.ssl_ciphers, a.to_string(), d),
            "ssl_prefer_server_ciphers" => set(&mut s.ssl_prefer_server_ciphers, flag(d)?, d),
            "ssl_session_timeout" => set(&mut s.ssl_session_timeout, time(d, a)?, d),
            "ssl_session_tickets" => set(&mut s.ssl_session_tickets, flag(d)?, d),
            _ => Err(msg(
                d,
                format!("\"{}\" directive is not supported by Peregrine yet", d.name),
            )),
        }
    }
}

/// The methods each protocol's `*_auth` takes, with their bits
/// (`ngx_mail_imap_auth_methods`, `..._pop3_...`, `..._smtp_...`).
const IMAP_METHODS: &[(&str, u8)] = &[
    ("plain", auth::PLAIN),
    ("login", auth::LOGIN),
    ("cram-md5", auth::CRAM_MD5),
    ("external", auth::EXTERNAL),
];
const POP3_METHODS: &[(&str, u8)] = &[
    ("plain", auth::PLAIN),
    ("apop", auth::APOP),
    ("cram-md5", auth::CRAM_MD5),
    ("external", auth::EXTERNAL),
];
const SMTP_METHODS: &[(&str, u8)] = &[
    ("plain", auth::PLAIN),
    ("login", auth::LOGIN),
    ("cram-md5", auth::CRAM_MD5),
    ("external", auth::EXTERNAL),
    ("none", auth::NONE),
];

/// nginx's `ngx_conf_set_bitmask_slot`.
fn auth_methods(d: &Directive, names: &[(&str, u8)]) -> Result<u8> {
    let mut bits = 0;
    for a in &d.args {
        let Some((_, b)) = names.iter().find(|(n, _)| a.eq_ignore_ascii_case(n)) else {
            return Err(msg(d, format!("invalid value \"{a}\"")));
        };
        bits |= b;
    }
    Ok(bits)
}

/// `auth_http [http://]HOST[:PORT][/URI]` (`ngx_mail_auth_http`): the host
/// is resolved now, as nginx does.
fn auth_http(d: &Directive, url: &str) -> Result<AuthHttp> {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let (hostport, uri) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let fail = |what: &str| msg(d, format!("{what} in auth_http \"{url}\""));
    if hostport.is_empty() {
        return Err(fail("no host"));
    }
    let with_port = if has_port(hostport) {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    let addrs = super::upstream::resolve(d, &with_port)
        .map_err(|_| fail("host not found"))?
        .into_iter()
        .filter_map(|a| match a {
            crate::model::PeerAddr::Inet(s) => Some(s),
            crate::model::PeerAddr::Unix(_) => None,
        })
        .collect::<Vec<_>>();
    if addrs.is_empty() {
        return Err(fail("host not found"));
    }
    Ok(AuthHttp {
        addrs,
        host: hostport.to_string(),
        uri: uri.to_string(),
    })
}

/// Whether `host:port` or `[v6]:port` names a port.
fn has_port(hostport: &str) -> bool {
    match hostport.strip_prefix('[') {
        Some(rest) => rest
            .split_once(']')
            .is_some_and(|(_, p)| p.starts_with(':')),
        None => hostport
            .rsplit_once(':')
            .is_some_and(|(h, _)| !h.contains(':')),
    }
}

/// `listen ADDRESS [ssl] [backlog=N] [bind] [reuseport] [rcvbuf=] [sndbuf=]
/// [so_keepalive=] [ipv6only=]`.
fn listen(d: &Directive) -> Result<MailListen> {
    let a = arg(d, 0);
    if a.starts_with("unix:") {
        return Err(msg(
            d,
            "\"listen unix:\" in mail is not supported by Peregrine yet",
        ));
    }
    let addr = super::listen::parse_addr(a).map_err(|m| msg(d, m))?;
    let mut l = MailListen {
        addr,
        ssl: false,
        backlog: super::DEFAULT_BACKLOG,
        span: d.span.clone(),
    };
    for p in &d.args[1..] {
        match p.as_str() {
            "ssl" => l.ssl = true,
            "bind" | "reuseport" => {}
            "proxy_protocol" => {
                return Err(msg(
                    d,
                    "the \"proxy_protocol\" parameter of \"listen\" in mail is not supported by Peregrine yet",
                ));
            }
            _ if p.starts_with("backlog=") => {
                l.backlog = crate::values::parse_number(&p["backlog=".len()..])
                    .and_then(|n| i32::try_from(n).ok())
                    .filter(|&n| n != 0)
                    .ok_or_else(|| msg(d, format!("invalid backlog \"{p}\"")))?;
            }
            _ if ["rcvbuf=", "sndbuf=", "ipv6only=", "so_keepalive="]
                .iter()
                .any(|x| p.starts_with(x)) => {}
            _ => return Err(msg(d, format!("invalid parameter \"{p}\""))),
        }
    }
    Ok(l)
}

/// nginx's guess of a server's protocol from its first port when it has
/// no `protocol` (`ngx_mail_core_listen`: each protocol module's ports).
fn protocol_of_port(port: u16) -> Option<MailProtocol> {
    match port {
        143 | 993 => Some(MailProtocol::Imap),
        110 | 995 => Some(MailProtocol::Pop3),
        25 | 465 | 587 => Some(MailProtocol::Smtp),
        _ => None,
    }
}

fn merge(s: &RawMailServer, m: &RawMailSrv, hostname: &str) -> Result<MailServer> {
    let o = &s.srv;
    macro_rules! pick {
        ($f:ident, $default:expr) => {
            o.$f.clone().or_else(|| m.$f.clone()).unwrap_or($default)
        };
    }
    if s.listen.is_empty() {
        return Err(ConfError::bare(format!(
            "no \"listen\" is defined for server in {}",
            s.span
        )));
    }
    let protocol = s
        .protocol
        .or_else(|| protocol_of_port(s.listen[0].addr.port()))
        .ok_or_else(|| {
            ConfError::bare(format!("unknown mail protocol for server in {}", s.span))
        })?;
    let Some(auth_http) = o.auth_http.clone().or_else(|| m.auth_http.clone()) else {
        return Err(ConfError::bare(format!(
            "no \"auth_http\" is defined for server in {}",
            s.span
        )));
    };
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (capabilities, auth_methods, client_buffer) = match protocol {
        MailProtocol::Imap => (
            pick!(imap_capabilities, strings(IMAP_CAPABILITIES)),
            pick!(imap_auth, auth::PLAIN),
            pick!(imap_client_buffer, DEFAULT_BUFFER),
        ),
        MailProtocol::Pop3 => (
            pick!(pop3_capabilities, strings(POP3_CAPABILITIES)),
            pick!(pop3_auth, auth::PLAIN),
            DEFAULT_BUFFER,
        ),
        MailProtocol::Smtp => (
            pick!(smtp_capabilities, Vec::new()),
            pick!(smtp_auth, auth::PLAIN | auth::LOGIN),
            pick!(smtp_client_buffer, DEFAULT_BUFFER),
        ),
    };
    let ssl = ssl(o, m)?;
    let starttls = o.starttls.clone().or_else(|| m.starttls.clone());
    if let Some((v, span)) = &starttls
        && *v != Starttls::Off
        && ssl.is_none()
    {
        return Err(ConfError::at(
            span,
            "no \"ssl_certificate\" is defined for the \"starttls\" directive",
        ));
    }
    if let Some(l) = s.listen.iter().find(|l| l.ssl)
        && ssl.is_none()
    {
        return Err(ConfError::at(
            &l.span,
            "no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive",
        ));
    }
    Ok(MailServer {
        listen: s.listen.clone(),
        protocol,
        server_name: pick!(server_name, hostname.to_string()),
        timeout: pick!(timeout, DEFAULT_TIMEOUT),
        auth_http,
        auth_http_timeout: pick!(auth_http_timeout, DEFAULT_TIMEOUT),
        auth_http_headers: if o.auth_http_headers.is_empty() {
            m.auth_http_headers.clone()
        } else {
            o.auth_http_headers.clone()
        },
        proxy_buffer: pick!(proxy_buffer, DEFAULT_BUFFER),
        proxy_timeout: pick!(proxy_timeout, DEFAULT_PROXY_TIMEOUT),
        pass_error_message: pick!(pass_error_message, false),
        xclient: pick!(xclient, true),
        capabilities,
        auth_methods,
        client_buffer,
        greeting_delay: pick!(greeting_delay, Duration::ZERO),
        max_errors: pick!(max_errors, DEFAULT_MAX_ERRORS),
        starttls: starttls.map_or(Starttls::Off, |(v, _)| v),
        ssl,
        span: s.span.clone(),
    })
}

/// The merged `ssl_*` settings, `None` without a certificate. Each
/// certificate needs its key (nginx: `no "ssl_certificate_key" is defined
/// for certificate "X"`).
fn ssl(o: &RawMailSrv, m: &RawMailSrv) -> Result<Option<MailSsl>> {
    let certs = o.certificates.clone().or_else(|| m.certificates.clone());
    let keys = o
        .certificate_keys
        .clone()
        .or_else(|| m.certificate_keys.clone())
        .unwrap_or_default();
    let Some(certs) = certs else {
        return Ok(None);
    };
    if let Some(c) = certs.get(keys.len()) {
        return Err(ConfError::bare(format!(
            "no \"ssl_certificate_key\" is defined for certificate \"{}\"",
            c.display()
        )));
    }
    macro_rules! pick {
        ($f:ident, $default:expr) => {
            o.$f.clone().or_else(|| m.$f.clone()).unwrap_or($default)
        };
    }
    Ok(Some(MailSsl {
        certificates: certs.into_iter().zip(keys).collect(),
        protocols: pick!(
            ssl_protocols,
            vec!["TLSv1.2".to_string(), "TLSv1.3".to_string()]
        ),
        ciphers: pick!(ssl_ciphers, "HIGH:!aNULL:!MD5".to_string()),
        prefer_server_ciphers: pick!(ssl_prefer_server_ciphers, false),
        session_timeout: pick!(ssl_session_timeout, DEFAULT_SSL_SESSION_TIMEOUT),
        session_tickets: pick!(ssl_session_tickets, true),
    }))
}

/// Two servers on one address are refused, as nginx refuses them
/// (`ngx_mail_add_addrs`: "duplicate ... address and port pair").
fn check_addresses(servers: &[Arc<MailServer>]) -> Result<()> {
    let mut seen = Vec::new();
    for s in servers {
        for l in &s.listen {
            if seen.contains(&l.addr) {
                return Err(ConfError::at(
                    &l.span,
                    format!("duplicate \"{}\" address and port pair", l.addr),
                ));
            }
            seen.push(l.addr);
        }
    }
    Ok(())
}
