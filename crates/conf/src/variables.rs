//! The one list of the `$variables` Peregrine knows. A configuration that
//! uses any other name is refused at load with nginx's `unknown "NAME"
//! variable` (nginx's `ngx_http_variables_init_vars`, after the whole
//! `http { }` block is read, so the message has no file and line).
//!
//! **To add a variable**: add its name (lowercase, without `$`) to
//! [`KNOWN`], or a name family (`$arg_NAME`...) to [`PREFIXES`], in one
//! line; then give it a value where values are made: `crates/core/src/vars.rs`
//! (`return`, `try_files`, `root`, `error_page`, `index`...) and
//! `crates/log/src/var.rs` (`log_format`; a known name the log cannot
//! render is logged as `-`). A name a directive defines (`set`, `map`) is
//! declared with [`crate::build::Builder::declare_variable`].

/// Generates [`Known`] (one variant per name, in the list's order),
/// [`KNOWN`] (the names, indexed by the variant) and the lookup from a
/// name: one line per variable below.
macro_rules! known {
    ($($v:ident = $n:literal,)*) => {
        /// A variable known by name (nginx's core variables Peregrine has,
        /// and the ones of the modules it has or accepts), resolved from
        /// its name when the configuration loads: run-time code matches
        /// the variant, never the name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Known {
            $($v,)*
        }

        /// The names of [`Known`]'s variables, by variant.
        pub const KNOWN: &[&str] = &[$($n,)*];

        impl Known {
            /// The variable's name (lowercase, without `$`).
            pub fn name(self) -> &'static str {
                KNOWN[self as usize]
            }

            /// The variable named `lower` (lowercase, without `$`).
            pub fn from_name(lower: &str) -> Option<Known> {
                match lower {
                    $($n => Some(Known::$v),)*
                    _ => None,
                }
            }
        }
    };
}

known! {
    // ngx_http_core_module
    Args = "args",
    BinaryRemoteAddr = "binary_remote_addr",
    BodyBytesSent = "body_bytes_sent",
    BytesSent = "bytes_sent",
    Connection = "connection",
    ConnectionRequests = "connection_requests",
    ConnectionTime = "connection_time",
    ContentLength = "content_length",
    ContentType = "content_type",
    DocumentRoot = "document_root",
    DocumentUri = "document_uri",
    Host = "host",
    Hostname = "hostname",
    Https = "https",
    // ngx_http_v2_module
    Http2 = "http2",
    IsArgs = "is_args",
    LimitRate = "limit_rate",
    Msec = "msec",
    Pid = "pid",
    Pipe = "pipe",
    QueryString = "query_string",
    RealpathRoot = "realpath_root",
    RemoteAddr = "remote_addr",
    RemotePort = "remote_port",
    RemoteUser = "remote_user",
    Request = "request",
    RequestBody = "request_body",
    RequestBodyFile = "request_body_file",
    RequestFilename = "request_filename",
    RequestId = "request_id",
    RequestLength = "request_length",
    RequestMethod = "request_method",
    RequestTime = "request_time",
    RequestUri = "request_uri",
    Scheme = "scheme",
    ServerAddr = "server_addr",
    ServerName = "server_name",
    ServerPort = "server_port",
    ServerProtocol = "server_protocol",
    Status = "status",
    TimeIso8601 = "time_iso8601",
    TimeLocal = "time_local",
    Uri = "uri",
    // ngx_http_stub_status_module
    ConnectionsActive = "connections_active",
    ConnectionsReading = "connections_reading",
    ConnectionsWaiting = "connections_waiting",
    ConnectionsWriting = "connections_writing",
    // ngx_http_ssi_filter_module
    DateGmt = "date_gmt",
    DateLocal = "date_local",
    // ngx_http_gzip_filter_module
    GzipRatio = "gzip_ratio",
    // ngx_http_proxy_module
    ProxyAddXForwardedFor = "proxy_add_x_forwarded_for",
    ProxyHost = "proxy_host",
    ProxyPort = "proxy_port",
    // ngx_http_fastcgi_module (`fastcgi_split_path_info`, `fastcgi_index`)
    FastcgiPathInfo = "fastcgi_path_info",
    FastcgiScriptName = "fastcgi_script_name",
    // ngx_http_core_module's version (Debian's fastcgi.conf: SERVER_SOFTWARE)
    NginxVersion = "nginx_version",
    // ngx_http_realip_module: the address before realip replaces it; with
    // no realip yet, the connection's own (what nginx gives without a
    // trusted `set_real_ip_from`)
    RealipRemoteAddr = "realip_remote_addr",
    RealipRemotePort = "realip_remote_port",
    // ngx_http_referer_module
    InvalidReferer = "invalid_referer",
    // ngx_http_secure_link_module
    SecureLink = "secure_link",
    SecureLinkExpires = "secure_link_expires",
    // ngx_http_userid_filter_module
    UidGot = "uid_got",
    UidReset = "uid_reset",
    UidSet = "uid_set",
    // ngx_http_upstream
    UpstreamAddr = "upstream_addr",
    UpstreamBytesReceived = "upstream_bytes_received",
    UpstreamBytesSent = "upstream_bytes_sent",
    UpstreamCacheStatus = "upstream_cache_status",
    UpstreamConnectTime = "upstream_connect_time",
    UpstreamHeaderTime = "upstream_header_time",
    UpstreamQueueTime = "upstream_queue_time",
    UpstreamResponseLength = "upstream_response_length",
    UpstreamResponseTime = "upstream_response_time",
    UpstreamStatus = "upstream_status",
    // ngx_http_ssl_module (values on TLS connections only)
    SslAlpnProtocol = "ssl_alpn_protocol",
    SslCipher = "ssl_cipher",
    SslCiphers = "ssl_ciphers",
    SslClientCert = "ssl_client_cert",
    SslClientEscapedCert = "ssl_client_escaped_cert",
    SslClientFingerprint = "ssl_client_fingerprint",
    SslClientIDn = "ssl_client_i_dn",
    SslClientRawCert = "ssl_client_raw_cert",
    SslClientSDn = "ssl_client_s_dn",
    SslClientSDnLegacy = "ssl_client_s_dn_legacy",
    SslClientIDnLegacy = "ssl_client_i_dn_legacy",
    SslClientVStart = "ssl_client_v_start",
    SslClientVEnd = "ssl_client_v_end",
    SslClientVRemain = "ssl_client_v_remain",
    SslClientSerial = "ssl_client_serial",
    SslClientVerify = "ssl_client_verify",
    SslCurve = "ssl_curve",
    SslCurves = "ssl_curves",
    // `$ssl_early_data`: "1" while 0-RTT data is accepted and the handshake
    // is not complete; Peregrine answers after the handshake: empty.
    SslEarlyData = "ssl_early_data",
    SslProtocol = "ssl_protocol",
    SslServerName = "ssl_server_name",
    SslSessionId = "ssl_session_id",
    SslSessionReused = "ssl_session_reused",
    // proxy_protocol: ngx_http_variables.c (the header of a
    // `listen ... proxy_protocol` connection; `$proxy_protocol_tlv_NAME`
    // is a family below)
    ProxyProtocolAddr = "proxy_protocol_addr",
    ProxyProtocolPort = "proxy_protocol_port",
    ProxyProtocolServerAddr = "proxy_protocol_server_addr",
    ProxyProtocolServerPort = "proxy_protocol_server_port",
    // limits: ngx_http_limit_req_module, ngx_http_limit_conn_module
    LimitReqStatus = "limit_req_status",
    LimitConnStatus = "limit_conn_status",
}

/// Name families: any name starting with one of these.
pub const PREFIXES: &[&str] = &[
    "arg_",
    "cookie_",
    "http_",
    "proxy_protocol_tlv_",
    "sent_http_",
    "sent_trailer_",
    "upstream_cookie_",
    "upstream_http_",
    "upstream_trailer_",
];

/// A name family of [`PREFIXES`], by the same index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `$arg_NAME`: the first `NAME=` of the query.
    Arg,
    /// `$cookie_NAME`.
    Cookie,
    /// `$http_NAME`: a request header (`_` standing for `-`).
    Http,
    /// `$proxy_protocol_tlv_NAME`.
    ProxyProtocolTlv,
    /// `$sent_http_NAME`: a response header sent.
    SentHttp,
    /// `$sent_trailer_NAME`.
    SentTrailer,
    UpstreamCookie,
    UpstreamHttp,
    UpstreamTrailer,
}

impl Family {
    const ALL: [Family; 9] = [
        Family::Arg,
        Family::Cookie,
        Family::Http,
        Family::ProxyProtocolTlv,
        Family::SentHttp,
        Family::SentTrailer,
        Family::UpstreamCookie,
        Family::UpstreamHttp,
        Family::UpstreamTrailer,
    ];

    /// The family's prefix (`"http_"`).
    pub fn prefix(self) -> &'static str {
        PREFIXES[self as usize]
    }
}

/// A variable of nginx's core or a module, resolved from its name when
/// the configuration loads (nginx's `ngx_http_get_variable_index`): what
/// run-time code matches instead of the name. Variables a configuration
/// defines (`set`, `map`, `geo`, `split_clients`, named captures) are not
/// here: they are indexes of the request's table (`model::Part::Set`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum VarId {
    Known(Known),
    /// A name family and the rest of the name, lowercase (`$http_user_agent`:
    /// `(Http, "user_agent")`).
    Family(Family, Box<str>),
    /// `$0`, `$1`...: a regex capture (digits only; `$12345...` beyond
    /// `usize` reads as no capture).
    Capture(usize),
}

impl VarId {
    /// Resolves a name as written after `$` (any case: nginx lowercases
    /// names before looking them up). `None`: not a variable of nginx's
    /// core or a module Peregrine knows (a configuration may define it).
    pub fn resolve(name: &str) -> Option<VarId> {
        if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
            return Some(VarId::Capture(name.parse().unwrap_or(usize::MAX)));
        }
        let lower = name.to_ascii_lowercase();
        if let Some(k) = Known::from_name(&lower) {
            return Some(VarId::Known(k));
        }
        Family::ALL.into_iter().find_map(|f| {
            let rest = lower.strip_prefix(f.prefix())?;
            Some(VarId::Family(f, rest.into()))
        })
    }
}

impl std::fmt::Display for VarId {
    /// The name, lowercase, without `$`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VarId::Known(k) => f.write_str(k.name()),
            VarId::Family(fam, rest) => write!(f, "{}{rest}", fam.prefix()),
            VarId::Capture(n) => write!(f, "{n}"),
        }
    }
}

/// Whether `name` (as written after `$`, any case) is a variable Peregrine
/// knows: in [`KNOWN`], of a [`PREFIXES`] family (nginx takes the bare
/// prefix too: `$http_` is the empty header name), or a
/// regex capture `$0`..`$9`... (digits).
pub fn is_known(name: &str) -> bool {
    VarId::resolve(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_families_and_captures() {
        for ok in [
            "uri",
            "URI",
            "http_user_agent",
            "arg_x",
            "cookie_a",
            "1",
            "sent_http_etag",
            "http_",
        ] {
            assert!(is_known(ok), "{ok}");
        }
        for bad in ["foo", "http", "urix", "", "upstream", "1x"] {
            assert!(!is_known(bad), "{bad}");
        }
    }

    #[test]
    fn names_resolve_to_ids_and_back() {
        for k in KNOWN {
            let id = VarId::resolve(&k.to_ascii_uppercase()).unwrap();
            assert_eq!(id.to_string(), *k);
            assert!(matches!(id, VarId::Known(v) if v.name() == *k));
        }
        assert_eq!(
            VarId::resolve("HTTP_User_Agent"),
            Some(VarId::Family(Family::Http, "user_agent".into()))
        );
        assert_eq!(VarId::resolve("http_").unwrap().to_string(), "http_");
        assert_eq!(VarId::resolve("12"), Some(VarId::Capture(12)));
        assert_eq!(
            VarId::resolve("99999999999999999999999"),
            Some(VarId::Capture(usize::MAX))
        );
        assert_eq!(VarId::resolve("nope"), None);
        for (i, f) in Family::ALL.iter().enumerate() {
            assert_eq!(f.prefix(), PREFIXES[i]);
        }
    }

    #[test]
    fn list_is_lowercase_and_without_duplicates() {
        let mut seen = std::collections::HashSet::new();
        for n in KNOWN.iter().chain(PREFIXES) {
            assert_eq!(n.to_ascii_lowercase(), *n);
            assert!(seen.insert(n), "{n}");
        }
    }
}
