//! The typed settings of nginx's `stream { }` block (TCP and UDP proxying,
//! `ngx_stream_*_module`): its servers with their listening addresses,
//! what each does with a session (`proxy_pass`, `return`), the proxy's
//! timeouts and limits, access rules and logs. Read by
//! `build/stream.rs`; acted on by the engine's `stream` module.
//!
//! A stream server has one level of settings below the block (nginx's
//! `NGX_STREAM_MAIN_CONF` and `NGX_STREAM_SRV_CONF`): the block's values
//! are merged into each server's when the block ends, so the engine reads
//! only [`StreamServer`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::model::{AccessRule, LogEscape, PeerAddr, Span, UpstreamConf};

/// `stream { }`.
#[derive(Debug, Clone)]
pub struct StreamConf {
    pub servers: Vec<Arc<StreamServer>>,
    /// `upstream { }` groups of the stream block (their own namespace:
    /// http's groups are not seen here, as in nginx).
    pub upstreams: Vec<UpstreamConf>,
    /// `log_format`s of the stream block (no predefined `combined`).
    pub log_formats: Vec<StreamLogFormat>,
}

/// One `log_format` of the stream block.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamLogFormat {
    pub name: String,
    pub escape: LogEscape,
    /// The format, its strings joined.
    pub format: String,
}

/// One `access_log PATH FORMAT [buffer=] [flush=] [gzip] [if=]`.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamAccessLog {
    /// Absolute path.
    pub path: std::path::PathBuf,
    /// Index into [`StreamConf::log_formats`].
    pub format: usize,
    /// `if=CONDITION`: the line is written when it is neither empty nor "0".
    pub condition: Option<String>,
}

/// One `listen` of a stream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamListen {
    /// The address, or for `unix:PATH` its key (`model::unix_key`).
    pub addr: SocketAddr,
    pub unix: Option<Arc<str>>,
    /// `udp`: a datagram socket.
    pub udp: bool,
    /// `proxy_protocol`: sessions start with a PROXY protocol header.
    pub proxy_protocol: bool,
    pub backlog: i32,
    pub span: Span,
}

impl StreamListen {
    /// The address as nginx prints it (`server:` in log lines).
    pub fn display(&self) -> String {
        match &self.unix {
            Some(p) => format!("unix:{p}"),
            None => self.addr.to_string(),
        }
    }
}

/// Where `proxy_pass` sends a session.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamPass {
    /// `proxy_pass host:port` or `unix:PATH`: the addresses it resolved to
    /// at load (each one tried in turn, as nginx's implicit group), with
    /// the name as written (`$upstream_addr` shows the addresses).
    Addrs { name: String, addrs: Vec<PeerAddr> },
    /// `proxy_pass NAME`: index into [`StreamConf::upstreams`].
    Upstream(usize),
}

/// What a stream server does with a session.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamHandler {
    Proxy(StreamPass),
    /// `return VALUE`: the value (variables expanded) is sent, then close.
    Return(String),
}

/// One `server { }` of the stream block, its settings merged.
#[derive(Debug, Clone)]
pub struct StreamServer {
    pub listen: Vec<StreamListen>,
    pub handler: StreamHandler,
    /// `proxy_connect_timeout` (default 60s).
    pub connect_timeout: Duration,
    /// `proxy_timeout` (default 10m): between two successive reads or
    /// writes on either side.
    pub timeout: Duration,
    /// `proxy_buffer_size` (default 16k): each direction's buffer.
    pub buffer_size: usize,
    /// `proxy_protocol on`: a PROXY protocol v1 header to the upstream.
    pub proxy_protocol: bool,
    /// `proxy_next_upstream` (default on).
    pub next_upstream: bool,
    /// `proxy_next_upstream_tries` (0: no limit).
    pub next_upstream_tries: u32,
    /// `proxy_next_upstream_timeout` (0: no limit).
    pub next_upstream_timeout: Duration,
    /// `proxy_upload_rate` / `proxy_download_rate` (0: no limit), bytes a second.
    pub upload_rate: usize,
    pub download_rate: usize,
    /// `proxy_responses` (UDP): datagrams expected back per request
    /// (`None`: unlimited, the session ends by `proxy_timeout`).
    pub responses: Option<u32>,
    /// `proxy_requests` (UDP, 0: unlimited).
    pub requests: u32,
    /// `proxy_half_close` (default off).
    pub half_close: bool,
    /// `tcp_nodelay` (default on).
    pub tcp_nodelay: bool,
    /// `proxy_protocol_timeout` (default 30s).
    pub proxy_protocol_timeout: Duration,
    /// `allow` / `deny`, in order.
    pub access: Vec<AccessRule>,
    /// `access_log` (none by default: nginx's stream logs nothing unless told).
    pub access_log: Vec<StreamAccessLog>,
    pub span: Span,
}
