//! `stream { }` (nginx's `ngx_stream_*_module`): the block reads its own
//! directives from [`super::stream_table`], as nginx's stream modules
//! declare them, because their names are http's (`server`, `listen`,
//! `proxy_pass`, `access_log`...) with other meanings and contexts. A
//! stream directive nginx has that Peregrine does not is refused by name
//! after nginx's context and argument checks, as in http.
//!
//! The block's values are merged into each server (nginx's
//! `merge_srv_conf`) at the end of the block; `proxy_pass NAME` is matched
//! with the block's `upstream`s then, as nginx's
//! `ngx_stream_upstream_init_main_conf` does.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::handlers::{arg, duplicate, flag, msg, set, size, time};
use super::stream_table::{self as st, Imp};
use super::{Builder, check_shape};
use crate::error::{ConfError, Result};
use crate::model::*;
use crate::stream::*;
use crate::syntax::{Block, Directive};

/// nginx's stream proxy defaults (`ngx_stream_proxy_merge_srv_conf`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(60);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_BUFFER_SIZE: usize = 16 * 1024;
/// `proxy_protocol_timeout` (`ngx_stream_core_merge_srv_conf`).
const DEFAULT_PROXY_PROTOCOL_TIMEOUT: Duration = Duration::from_secs(30);

/// One level's settings as read (the block's or a server's): `None` is
/// nginx's `NGX_CONF_UNSET`, merged from the block at its end.
#[derive(Debug, Default, Clone)]
struct RawStreamSrv {
    connect_timeout: Option<Duration>,
    timeout: Option<Duration>,
    buffer_size: Option<usize>,
    proxy_protocol: Option<bool>,
    next_upstream: Option<bool>,
    next_upstream_tries: Option<u32>,
    next_upstream_timeout: Option<Duration>,
    upload_rate: Option<usize>,
    download_rate: Option<usize>,
    responses: Option<u32>,
    requests: Option<u32>,
    half_close: Option<bool>,
    tcp_nodelay: Option<bool>,
    proxy_protocol_timeout: Option<Duration>,
    access: Option<Vec<AccessRule>>,
    /// `Some(vec![])`: `access_log off`.
    access_log: Option<Vec<StreamAccessLog>>,
}

/// A server as read.
#[derive(Debug, Default)]
struct RawStreamServer {
    listen: Vec<StreamListen>,
    pass: Option<(String, Directive)>,
    ret: Option<String>,
    srv: RawStreamSrv,
    span: Span,
}

/// The block as read.
#[derive(Debug, Default)]
struct RawStream {
    srv: RawStreamSrv,
    servers: Vec<RawStreamServer>,
    upstreams: Vec<UpstreamConf>,
    log_formats: Vec<StreamLogFormat>,
    /// Variables used, for the unknown-variable check at the end.
    used_vars: Vec<(String, Span)>,
}

/// Where a directive of the block is read.
enum Level<'a> {
    Main(&'a mut RawStream),
    Server(&'a mut RawStream, usize),
}

impl Builder {
    /// Reads `stream { ... }`.
    pub(super) fn stream(&mut self, block: &Block) -> Result<StreamConf> {
        let mut raw = RawStream::default();
        self.walk_items(
            &block.items,
            block.error.as_ref(),
            &mut raw,
            None,
            Self::stream_directive,
        )?;
        finish(raw)
    }

    fn stream_directive(
        &mut self,
        d: &Directive,
        raw: &mut RawStream,
        server: Option<usize>,
    ) -> Result<()> {
        let here = if server.is_some() { st::SRV } else { st::MAIN };
        let Some(entry) = st::find(&d.name, here) else {
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
        for a in &d.args {
            for v in super::vars::names(a) {
                raw.used_vars.push((v.to_string(), d.span.clone()));
            }
        }
        let level = match server {
            None => Level::Main(raw),
            Some(i) => Level::Server(raw, i),
        };
        self.stream_apply(d, level)
    }

    fn stream_apply(&mut self, d: &Directive, level: Level<'_>) -> Result<()> {
        let (raw, server) = match level {
            Level::Main(r) => (r, None),
            Level::Server(r, i) => (r, Some(i)),
        };
        match (d.name.as_str(), server) {
            ("server", None) => {
                let block = d.block.as_ref().expect("checked: a block");
                raw.servers.push(RawStreamServer {
                    span: d.span.clone(),
                    ..Default::default()
                });
                let i = raw.servers.len() - 1;
                self.walk_items(
                    &block.items,
                    block.error.as_ref(),
                    raw,
                    Some(i),
                    Self::stream_directive,
                )?;
                if raw.servers[i].listen.is_empty() {
                    return Err(ConfError::bare(format!(
                        "no \"listen\" is defined for server in {}",
                        d.span
                    )));
                }
                Ok(())
            }
            ("upstream", None) => {
                let block = d.block.as_ref().expect("checked: a block");
                check_upstream_block(block)?;
                let up = self.upstream(d, block, &raw.upstreams)?;
                raw.upstreams.push(up);
                Ok(())
            }
            ("log_format", None) => {
                let f = log_format(d, &raw.log_formats)?;
                raw.log_formats.push(f);
                Ok(())
            }
            ("listen", Some(i)) => {
                let l = listen(d)?;
                raw.servers[i].listen.push(l);
                Ok(())
            }
            ("proxy_pass", Some(i)) | ("return", Some(i)) => {
                let s = &mut raw.servers[i];
                if s.pass.is_some() || s.ret.is_some() {
                    return Err(duplicate(d));
                }
                if d.name == "return" {
                    s.ret = Some(d.args[0].clone());
                } else {
                    s.pass = Some((d.args[0].clone(), d.clone()));
                }
                Ok(())
            }
            (_, i) => {
                let formats = raw.log_formats.clone();
                let srv = match i {
                    None => &mut raw.srv,
                    Some(i) => &mut raw.servers[i].srv,
                };
                self.stream_setting(d, srv, &formats)
            }
        }
    }

    /// The directives of both levels (`NGX_STREAM_MAIN_CONF|NGX_STREAM_SRV_CONF`).
    fn stream_setting(
        &mut self,
        d: &Directive,
        s: &mut RawStreamSrv,
        formats: &[StreamLogFormat],
    ) -> Result<()> {
        let a = arg(d, 0);
        let rate = |d: &Directive| size(d, arg(d, 0));
        match d.name.as_str() {
            "proxy_connect_timeout" => set(&mut s.connect_timeout, time(d, a)?, d),
            "proxy_timeout" => set(&mut s.timeout, time(d, a)?, d),
            "proxy_next_upstream_timeout" => set(&mut s.next_upstream_timeout, time(d, a)?, d),
            "proxy_protocol_timeout" => set(&mut s.proxy_protocol_timeout, time(d, a)?, d),
            "proxy_buffer_size" => set(&mut s.buffer_size, size(d, a)?, d),
            "proxy_upload_rate" => set(&mut s.upload_rate, rate(d)?, d),
            "proxy_download_rate" => set(&mut s.download_rate, rate(d)?, d),
            "proxy_protocol" => set(&mut s.proxy_protocol, flag(d)?, d),
            "proxy_next_upstream" => set(&mut s.next_upstream, flag(d)?, d),
            "proxy_half_close" => set(&mut s.half_close, flag(d)?, d),
            "tcp_nodelay" => set(&mut s.tcp_nodelay, flag(d)?, d),
            "proxy_next_upstream_tries" => set(&mut s.next_upstream_tries, count(d)?, d),
            "proxy_responses" => set(&mut s.responses, count(d)?, d),
            "proxy_requests" => set(&mut s.requests, count(d)?, d),
            "allow" | "deny" => {
                let mut l = super::raw::RawLoc::default();
                super::access::rule(&mut l, d, &self.env(false))?;
                let rules = l.access.unwrap_or_default();
                s.access.get_or_insert_with(Vec::new).extend(rules);
                Ok(())
            }
            "access_log" => {
                let logs = s.access_log.get_or_insert_with(Vec::new);
                if let Some(log) = access_log(d, formats, &self.prefix)? {
                    logs.push(log);
                }
                Ok(())
            }
            // Hash sizing: accepted, the values checked (Peregrine's
            // variables are not hashed).
            "variables_hash_max_size" | "variables_hash_bucket_size" => size(d, a).map(|_| ()),
            _ => Err(msg(
                d,
                format!("\"{}\" directive is not supported by Peregrine yet", d.name),
            )),
        }
    }
}

/// nginx's `ngx_conf_set_num_slot` for a count.
fn count(d: &Directive) -> Result<u32> {
    crate::values::parse_number(arg(d, 0))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| super::handlers::invalid_number(d))
}

/// Directives of http's `upstream { }` that the stream one does not have
/// (`ip_hash`, the keepalive pool), and `server` lines without a port
/// (`ngx_stream_upstream_server`: "no port in upstream"), refused before
/// http's reader sees them.
fn check_upstream_block(block: &Block) -> Result<()> {
    for d in &block.items {
        match d.name.as_str() {
            "ip_hash" | "keepalive" | "keepalive_requests" | "keepalive_time"
            | "keepalive_timeout" => {
                return Err(msg(d, format!("unknown directive \"{}\"", d.name)));
            }
            "server" => {
                let url = arg(d, 0);
                if !url.starts_with("unix:") && !has_port(url) {
                    return Err(msg(d, format!("no port in upstream \"{url}\"")));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether `host:port` or `[v6]:port` names a port.
fn has_port(url: &str) -> bool {
    match url.strip_prefix('[') {
        Some(rest) => rest
            .split_once(']')
            .is_some_and(|(_, p)| p.starts_with(':')),
        None => url.rsplit_once(':').is_some_and(|(h, _)| !h.contains(':')),
    }
}

/// `listen ADDRESS [udp] [proxy_protocol] [backlog=N] [reuseport] [bind]
/// [so_keepalive=...] [ssl]`.
fn listen(d: &Directive) -> Result<StreamListen> {
    let a = arg(d, 0);
    let addr = super::listen::parse_addr(a).map_err(|m| msg(d, m))?;
    let mut l = StreamListen {
        addr,
        unix: a.strip_prefix("unix:").map(Arc::from),
        udp: false,
        proxy_protocol: false,
        backlog: super::DEFAULT_BACKLOG,
        span: d.span.clone(),
    };
    let mut backlog = false;
    let mut keepalive = false;
    for p in &d.args[1..] {
        match p.as_str() {
            "udp" => l.udp = true,
            "proxy_protocol" => l.proxy_protocol = true,
            // Every listening socket is SO_REUSEPORT already (engine's listen.rs).
            "reuseport" | "bind" | "default_server" => {}
            "ssl" => {
                return Err(msg(
                    d,
                    "the \"ssl\" parameter of the \"listen\" directive is not supported by Peregrine yet",
                ));
            }
            _ if p.starts_with("backlog=") => {
                backlog = true;
                l.backlog = crate::values::parse_number(&p["backlog=".len()..])
                    .and_then(|n| i32::try_from(n).ok())
                    .filter(|&n| n != 0)
                    .ok_or_else(|| msg(d, format!("invalid backlog \"{p}\"")))?;
            }
            _ if p.starts_with("so_keepalive=") => keepalive = true,
            _ if ["rcvbuf=", "sndbuf=", "ipv6only="]
                .iter()
                .any(|x| p.starts_with(x)) => {}
            _ => return Err(msg(d, format!("invalid parameter \"{p}\""))),
        }
    }
    if l.udp {
        let bad = [
            (backlog, "backlog"),
            (keepalive, "so_keepalive"),
            (l.proxy_protocol, "proxy_protocol"),
        ];
        if let Some((_, name)) = bad.iter().find(|(set, _)| *set) {
            return Err(msg(
                d,
                format!("\"listen\" directive \"{name}\" parameter is incompatible with \"udp\""),
            ));
        }
    }
    Ok(l)
}

/// `log_format NAME [escape=...] STRING...` (the stream block has no
/// predefined `combined`).
fn log_format(d: &Directive, existing: &[StreamLogFormat]) -> Result<StreamLogFormat> {
    let name = arg(d, 0).to_string();
    if existing.iter().any(|f| f.name == name) {
        return Err(msg(d, format!("duplicate \"log_format\" name \"{name}\"")));
    }
    let mut rest = &d.args[1..];
    let mut escape = LogEscape::Default;
    if let Some(e) = rest.first().and_then(|a| a.strip_prefix("escape=")) {
        escape = match e {
            "default" => LogEscape::Default,
            "json" => LogEscape::Json,
            "none" => LogEscape::None,
            _ => return Err(msg(d, format!("unknown log format escaping \"{e}\""))),
        };
        rest = &rest[1..];
    }
    super::vars::check_log_format(d, rest)?;
    Ok(StreamLogFormat {
        name,
        escape,
        format: rest.concat(),
    })
}

/// `access_log off | PATH FORMAT [if=COND]` (buffering and gzip refused
/// by name: each line is written as the session ends).
fn access_log(
    d: &Directive,
    formats: &[StreamLogFormat],
    prefix: &std::path::Path,
) -> Result<Option<StreamAccessLog>> {
    let path = arg(d, 0);
    if path == "off" {
        return match d.args.get(1) {
            None => Ok(None),
            Some(p) => Err(msg(d, format!("invalid parameter \"{p}\""))),
        };
    }
    let Some(fname) = d.args.get(1) else {
        return Err(msg(
            d,
            "invalid number of arguments in \"access_log\" directive",
        ));
    };
    let format = formats
        .iter()
        .position(|f| &f.name == fname)
        .ok_or_else(|| msg(d, format!("unknown log format \"{fname}\"")))?;
    if path.starts_with("syslog:") || path.contains('$') {
        return Err(msg(
            d,
            format!("\"access_log {path}\" in stream is not supported by Peregrine yet"),
        ));
    }
    let mut log = StreamAccessLog {
        path: PathBuf::from(super::raw::full_name(prefix, path)),
        format,
        condition: None,
    };
    for p in &d.args[2..] {
        if let Some(c) = p.strip_prefix("if=") {
            log.condition = Some(c.to_string());
        } else if p.starts_with("buffer=") || p.starts_with("flush=") || p.starts_with("gzip") {
            return Err(msg(
                d,
                format!(
                    "the \"{p}\" parameter of \"access_log\" in stream is not supported by Peregrine yet"
                ),
            ));
        } else {
            return Err(msg(d, format!("invalid parameter \"{p}\"")));
        }
    }
    Ok(Some(log))
}

/// Merges the block into its servers and checks what nginx checks when
/// the block ends.
fn finish(raw: RawStream) -> Result<StreamConf> {
    if let Some((name, span)) = raw.used_vars.iter().find(|(n, _)| !known_variable(n)) {
        let _ = span;
        return Err(ConfError::bare(format!("unknown \"{name}\" variable")));
    }
    let mut servers = Vec::with_capacity(raw.servers.len());
    for s in &raw.servers {
        servers.push(Arc::new(merge(s, &raw)?));
    }
    check_addresses(&servers)?;
    Ok(StreamConf {
        servers,
        upstreams: raw.upstreams,
        log_formats: raw.log_formats,
    })
}

fn merge(s: &RawStreamServer, raw: &RawStream) -> Result<StreamServer> {
    let (m, o) = (&raw.srv, &s.srv);
    macro_rules! pick {
        ($f:ident, $default:expr) => {
            o.$f.clone().or_else(|| m.$f.clone()).unwrap_or($default)
        };
    }
    let handler = match (&s.ret, &s.pass) {
        (Some(v), _) => StreamHandler::Return(v.clone()),
        (None, Some((target, d))) => StreamHandler::Proxy(pass(target, d, &raw.upstreams)?),
        (None, None) => {
            return Err(ConfError::at(&s.span, "no handler for server"));
        }
    };
    Ok(StreamServer {
        listen: s.listen.clone(),
        handler,
        connect_timeout: pick!(connect_timeout, DEFAULT_CONNECT_TIMEOUT),
        timeout: pick!(timeout, DEFAULT_TIMEOUT),
        buffer_size: pick!(buffer_size, DEFAULT_BUFFER_SIZE),
        proxy_protocol: pick!(proxy_protocol, false),
        next_upstream: pick!(next_upstream, true),
        next_upstream_tries: pick!(next_upstream_tries, 0),
        next_upstream_timeout: pick!(next_upstream_timeout, Duration::ZERO),
        upload_rate: pick!(upload_rate, 0),
        download_rate: pick!(download_rate, 0),
        responses: o.responses.or(m.responses),
        requests: pick!(requests, 0),
        half_close: pick!(half_close, false),
        tcp_nodelay: pick!(tcp_nodelay, true),
        proxy_protocol_timeout: pick!(proxy_protocol_timeout, DEFAULT_PROXY_PROTOCOL_TIMEOUT),
        access: pick!(access, Vec::new()),
        access_log: pick!(access_log, Vec::new()),
        span: s.span.clone(),
    })
}

/// `proxy_pass NAME | host:port | unix:PATH`.
fn pass(target: &str, d: &Directive, upstreams: &[UpstreamConf]) -> Result<StreamPass> {
    if let Some(i) = upstreams
        .iter()
        .position(|u| u.name.eq_ignore_ascii_case(target))
    {
        return Ok(StreamPass::Upstream(i));
    }
    if target.contains('$') {
        return Err(msg(
            d,
            "\"proxy_pass\" with variables in stream is not supported by Peregrine yet",
        ));
    }
    if !target.starts_with("unix:") && !has_port(target) {
        return Err(msg(d, format!("no port in upstream \"{target}\"")));
    }
    Ok(StreamPass::Addrs {
        name: target.to_string(),
        addrs: super::upstream::resolve(d, target)?,
    })
}

/// Two servers on one address (and protocol) are one server to
/// Peregrine, which does not choose by `server_name`: refused as nginx
/// before 1.25.5 refused them.
fn check_addresses(servers: &[Arc<StreamServer>]) -> Result<()> {
    let mut seen: Vec<(std::net::SocketAddr, bool)> = Vec::new();
    for s in servers {
        for l in &s.listen {
            if seen.contains(&(l.addr, l.udp)) {
                return Err(ConfError::at(
                    &l.span,
                    format!("duplicate \"{}\" address and port pair", l.display()),
                ));
            }
            seen.push((l.addr, l.udp));
        }
    }
    Ok(())
}

/// The stream variables (`ngx_stream_core_variables`, the upstream's).
pub fn known_variable(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    STREAM_VARIABLES.contains(&n.as_str()) || n.starts_with("proxy_protocol_tlv_")
}

/// Every stream variable name Peregrine fills (the engine's
/// `stream::vars` gives their values).
pub const STREAM_VARIABLES: &[&str] = &[
    "binary_remote_addr",
    "remote_addr",
    "remote_port",
    "proxy_protocol_addr",
    "proxy_protocol_port",
    "proxy_protocol_server_addr",
    "proxy_protocol_server_port",
    "server_addr",
    "server_port",
    "bytes_sent",
    "bytes_received",
    "session_time",
    "status",
    "connection",
    "nginx_version",
    "hostname",
    "pid",
    "msec",
    "time_iso8601",
    "time_local",
    "protocol",
    "upstream_addr",
    "upstream_bytes_sent",
    "upstream_bytes_received",
    "upstream_connect_time",
    "upstream_first_byte_time",
    "upstream_session_time",
];
