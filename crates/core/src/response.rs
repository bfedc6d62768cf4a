//! The response description that core hands to the engine.
//!
//! Core never does I/O on sockets: it decides *what* to send (status, the
//! serialized header lines, and where the body bytes live) and the engine
//! writes it. The engine adds the headers that depend on the connection
//! (`Server`, `Date`, `Connection`, `Keep-Alive`), exactly where nginx's
//! header filter puts them: right after the status line.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use peregrine_codec::fields::{FieldList, SharedFields};
use peregrine_conf::model::{LocConf, ServerConf};

/// What the engine knows about the connection a request arrived on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnInfo {
    /// The local address the connection was accepted on (selects the server
    /// block by `listen`, as nginx's `ngx_http_find_virtual_server` does).
    pub local: SocketAddr,
    pub peer: SocketAddr,
    /// The connection number (`$connection`).
    pub id: u64,
    /// Requests served on this connection so far, this one included
    /// (`$connection_requests`).
    pub requests: u64,
    // vars2
    /// When the connection was accepted, on the wall clock the engine hands
    /// core as `now` (`$connection_time`).
    pub accepted: std::time::SystemTime,
    // tls
    /// The connection speaks TLS (`$https` is `on`, `$scheme` `https`)
    /// when set: the session's variables once its first request started,
    /// empty ones before.
    pub ssl: Option<Arc<crate::ssl_vars::SslVars>>,
    // proxy_protocol
    /// The PROXY protocol header the connection started with (a
    /// `listen ... proxy_protocol` address): `$proxy_protocol_*`, realip.
    pub proxy: Option<Arc<peregrine_codec::proxy_protocol::ProxyHeader>>,
    // http2
    /// The connection speaks HTTP/2 (`$http2`: `h2` over TLS, `h2c`).
    pub http2: bool,
}

impl ConnInfo {
    /// The connection speaks TLS.
    #[inline(always)]
    pub fn https(&self) -> bool {
        self.ssl.is_some()
    }
}

/// Where the body bytes come from.
#[derive(Debug, Clone)]
pub enum Body {
    Empty,
    Static(&'static [u8]),
    /// Memory-cache hits, error pages, autoindex HTML, multipart boundaries.
    Shared(Arc<[u8]>),
    /// A byte range of an open file, sent with sendfile (or read+write).
    File {
        file: Rc<std::fs::File>,
        offset: u64,
        len: u64,
    },
    /// multipart/byteranges: alternating `Shared` boundaries and `File` pieces.
    Parts(Vec<Body>),
}

impl Body {
    /// The number of body bytes this describes.
    pub fn len(&self) -> u64 {
        match self {
            Body::Empty => 0,
            Body::Static(b) => b.len() as u64,
            Body::Shared(b) => b.len() as u64,
            Body::File { len, .. } => *len,
            Body::Parts(parts) => parts.iter().map(Body::len).sum(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A response's header fields: shared with a cache (a memory-cache hit
/// allocates nothing) or the response's own. Serialized only by the
/// engine's protocol writers.
#[derive(Debug, Clone)]
pub enum Head {
    Shared(Arc<SharedFields>),
    Owned(FieldList),
}

impl Head {
    /// The fields, to change: a shared list is copied first.
    pub fn to_mut(&mut self) -> &mut FieldList {
        if let Head::Shared(s) = self {
            *self = Head::Owned(s.list().clone());
        }
        match self {
            Head::Owned(l) => l,
            Head::Shared(_) => unreachable!("made owned above"),
        }
    }
}

impl std::ops::Deref for Head {
    type Target = FieldList;

    #[inline]
    fn deref(&self) -> &FieldList {
        match self {
            Head::Shared(l) => l.list(),
            Head::Owned(l) => l,
        }
    }
}

impl Default for Head {
    fn default() -> Self {
        Head::Owned(FieldList::new())
    }
}

impl From<FieldList> for Head {
    fn from(l: FieldList) -> Head {
        Head::Owned(l)
    }
}

/// A complete response description.
///
/// Status 444 (nginx's `return 444`) means: close the connection without
/// sending anything.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    /// The header fields, in nginx's order, EXCEPT `Server`, `Date`,
    /// `Connection` and `Keep-Alive`, which the protocol writer adds:
    /// Content-Type, Content-Length (when known), Last-Modified, ETag,
    /// Accept-Ranges, Location, Content-Range, ... The list's split is where
    /// nginx's header filter puts `Connection` in HTTP/1.
    pub head: Head,
    pub body: Body,
    /// The body length announced in `Content-Length` (also for HEAD, where
    /// the body is not sent). `None` when the head has no Content-Length:
    /// then either `chunked` is set (HTTP/1.1 autoindex as nginx) or
    /// `keepalive` is false and the body ends with the connection
    /// (HTTP/1.0).
    pub content_length: Option<u64>,
    /// nginx's `r->chunked` (`ngx_http_chunked_header_filter`): an HTTP/1.1
    /// client, no length, a body (not HEAD, 204 or 304). The head says
    /// `Transfer-Encoding: chunked`; `body` is the payload alone, and only
    /// the HTTP/1 writer frames it as chunks (HTTP/2 sends it as DATA).
    pub chunked: bool,
    /// `add_trailer`'s fields with non-empty values, in order: written
    /// after the last chunk by the HTTP/1 writer, as a HEADERS frame with
    /// END_STREAM by HTTP/2. Only with `chunked`.
    pub trailers: Option<Box<FieldList>>,
    /// `false` when the response requires closing the connection (nginx
    /// closes after 400, 413, 414, 500, 501 — `ngx_http_special_response_handler`).
    pub keepalive: bool,
    /// HEAD (or 304): the engine sends the head only.
    pub header_only: bool,
    /// The location settings that produced the response (keepalive_timeout,
    /// sendfile, tcp_nopush, access_log, send_timeout, ... for the engine and
    /// the log). `None` only when there is no `http` block at all.
    pub conf: Option<Arc<LocConf>>,
    /// The server block that was selected, for logs (`$server_name`).
    pub server: Option<Arc<ServerConf>>,
    /// The body may be passed to the compression filter (gzip/brotli/zstd),
    /// which decides by status (nginx: 200, 403, 404), type, length and
    /// request: core sets it on whole bodies — static files, `return` text,
    /// stub_status, built-in error pages — and not on 206/304/204/444 or on
    /// autoindex listings. The compression
    /// hook lives in the engine/compress crates; core never compresses.
    pub compressible: bool,
}

/// stub_status counters; the engine keeps them, core renders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StubStatus {
    pub active: u64,
    pub accepts: u64,
    pub handled: u64,
    pub requests: u64,
    pub reading: u64,
    pub writing: u64,
    pub waiting: u64,
}

/// The engine's side of stub_status (and of `metrics`): the counters summed
/// over all workers, as nginx keeps them in shared memory. Installed with
/// `HttpCore::set_status_source`; without one, stub_status renders zeros.
pub trait StatusSource {
    fn stub_status(&self) -> StubStatus;

    /// The scrape of a `metrics on` location, summed over workers; `None`
    /// (the default) renders zeros.
    fn metrics(&self) -> Option<crate::metrics::MetricsSnapshot> {
        None
    }

    /// A graceful shutdown has begun (`health_status` answers 503).
    fn draining(&self) -> bool {
        false
    }
}

/// Why a request failed, for the error log (nginx logs these from the
/// static and index handlers and the content phase). Noted by the handler
/// from the call that failed (its name and `errno`: the path is not looked
/// at again), handed to the engine when it asks (the error level is
/// enabled); rendered with `Display` in nginx's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorNote {
    /// `CALL "PATH" failed (ERRNO: TEXT)` (`ngx_http_static_handler`; the
    /// call is `open()`, `openat()` under `disable_symlinks`, `stat()` when
    /// the open file cache revalidated, `fstat()`).
    Open {
        call: &'static str,
        path: String,
        errno: i32,
    },
    /// `"PATH" is forbidden (ERRNO: TEXT)` (`ngx_http_index_error`: an
    /// index file that may not be opened).
    Forbidden { path: String, errno: i32 },
    /// `"DIR/INDEX" is not found (ERRNO: TEXT)` (`ngx_http_index_error`:
    /// the directory of an index lookup does not exist).
    IndexNotFound { path: String, errno: i32 },
    /// `directory index of "DIR/" is forbidden`
    /// (`ngx_http_core_content_phase`: no index file, no autoindex).
    IndexForbidden { dir: String },
    /// `client intended to send too large body: N bytes`
    /// (`ngx_http_core_find_config_handler`, over `client_max_body_size`).
    TooLargeBody { length: u64 },
    // rewrite
    /// `rewrite or internal redirection cycle while processing "URI"`
    /// (and nginx's other two wordings: `doing` is the middle).
    Cycle { doing: &'static str, uri: String },
    /// `the rewritten URI has a zero length`.
    EmptyRewrite,
    // access
    /// `access forbidden by rule` (`ngx_http_access_found`).
    AccessForbidden,
    // auth_basic
    /// `user "NAME" was not found in "FILE"`.
    UserNotFound { user: String, file: String },
    /// `user "NAME": password mismatch`.
    PasswordMismatch { user: String },
    // proxy
    /// The proxy's own words (`no resolver defined to resolve HOST`,
    /// `zero length URI to proxy`...).
    Upstream(String),
}

/// nginx's `(ERRNO: strerror)`.
fn os_error(f: &mut std::fmt::Formatter<'_>, errno: i32) -> std::fmt::Result {
    let full = std::io::Error::from_raw_os_error(errno).to_string();
    // std renders "Description (os error N)".
    let desc = full.split(" (os error").next().unwrap_or(&full);
    write!(f, "({errno}: {desc})")
}

impl std::fmt::Display for ErrorNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorNote::Open { call, path, errno } => {
                write!(f, "{call} \"{path}\" failed ")?;
                os_error(f, *errno)
            }
            ErrorNote::Forbidden { path, errno } => {
                write!(f, "\"{path}\" is forbidden ")?;
                os_error(f, *errno)
            }
            ErrorNote::IndexNotFound { path, errno } => {
                write!(f, "\"{path}\" is not found ")?;
                os_error(f, *errno)
            }
            ErrorNote::IndexForbidden { dir } => {
                write!(f, "directory index of \"{dir}\" is forbidden")
            }
            ErrorNote::TooLargeBody { length } => {
                write!(f, "client intended to send too large body: {length} bytes")
            }
            ErrorNote::Cycle { doing, uri } => {
                write!(f, "rewrite or internal redirection cycle {doing} \"{uri}\"")
            }
            ErrorNote::EmptyRewrite => f.write_str("the rewritten URI has a zero length"),
            ErrorNote::AccessForbidden => f.write_str("access forbidden by rule"),
            ErrorNote::UserNotFound { user, file } => {
                write!(f, "user \"{user}\" was not found in \"{file}\"")
            }
            ErrorNote::PasswordMismatch { user } => write!(f, "user \"{user}\": password mismatch"),
            ErrorNote::Upstream(text) => f.write_str(text),
        }
    }
}
