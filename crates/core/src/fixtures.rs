//! Configuration builders for core's tests and benches: the typed model
//! built directly, with nginx's defaults, so that core's tests do not
//! depend on the configuration parser.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use peregrine_conf::model::{
    CompressConf, Config, DocRoot, EventsConf, GzipConf, GzipProxied, HttpConf, ListenConf,
    LocConf, LocationConf, LocationMatch, MainConf, MimeTypes, ServerConf, ServerName, Span,
    StaticMode, WorkerProcesses,
};

/// (address, default_server).
pub type ListenSpec = (&'static str, bool);

/// A few of nginx's `mime.types`.
pub fn mime_types() -> MimeTypes {
    let mut by_ext = HashMap::new();
    for (ext, ty) in [
        ("html", "text/html"),
        ("htm", "text/html"),
        ("txt", "text/plain"),
        ("css", "text/css"),
        ("js", "application/javascript"),
        ("json", "application/json"),
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
    ] {
        by_ext.insert(ext.to_string(), ty.to_string());
    }
    MimeTypes { by_ext }
}

fn compress_off() -> CompressConf {
    CompressConf {
        on: false,
        types: vec!["text/html".into()],
        comp_level: 6,
        min_length: 20,
        static_: StaticMode::Off,
    }
}

/// Location settings with nginx's defaults and this root.
pub fn loc_conf(root: &str) -> LocConf {
    LocConf {
        root: DocRoot::Root(root.to_string()),
        index: vec!["index.html".into()],
        autoindex: false,
        try_files: Vec::new(),
        return_: None,
        error_pages: Vec::new(),
        stub_status: false,
        metrics: false,
        types: Arc::new(mime_types()),
        default_type: "text/plain".into(),
        charset: None,
        charset_types: peregrine_conf::build::raw::DEFAULT_CHARSET_TYPES
            .iter()
            .map(|s| s.to_string())
            .collect(),
        sendfile: false,
        tcp_nopush: false,
        tcp_nodelay: true,
        keepalive_timeout: Duration::from_secs(75),
        keepalive_header: None,
        keepalive_requests: 1000,
        reset_timedout_connection: false,
        client_body_timeout: Duration::from_secs(60),
        send_timeout: Duration::from_secs(60),
        client_max_body_size: 1024 * 1024,
        client_body_buffer_size: 16 * 1024,
        open_file_cache: None,
        open_file_cache_valid: Duration::from_secs(60),
        open_file_cache_min_uses: 1,
        open_file_cache_errors: false,
        memory_cache: None,
        access_log: Vec::new(),
        gzip: GzipConf {
            on: false,
            types: vec!["text/html".into()],
            min_length: 20,
            comp_level: 1,
            proxied: GzipProxied::default(),
            disable: Vec::new(),
            disable_msie6: false,
            vary: false,
            http_version: (1, 1),
            buffers: (32, 4096),
            static_: StaticMode::Off,
        },
        brotli: compress_off(),
        zstd: compress_off(),
        proxy_buffers: None,
        proxy_busy_buffers_size: None,
    }
}

/// Parses a location head as written after `location`: `= /x`, `^~ /x`,
/// `~ re`, `~* re`, `@name`, `/x`.
fn matcher(spec: &str) -> LocationMatch {
    let (m, arg) = spec.split_once(' ').unwrap_or(("", spec));
    match m {
        "=" => LocationMatch::Exact(arg.into()),
        "^~" => LocationMatch::Prefix {
            path: arg.into(),
            no_regex: true,
        },
        "~" => LocationMatch::Regex {
            regex: regex::Regex::new(arg).expect("test regex"),
            case_insensitive: false,
        },
        "~*" => LocationMatch::Regex {
            regex: regex::Regex::new(&format!("(?i){arg}")).expect("test regex"),
            case_insensitive: true,
        },
        _ if spec.starts_with('@') => LocationMatch::Named(spec[1..].into()),
        _ => LocationMatch::Prefix {
            path: spec.into(),
            no_regex: false,
        },
    }
}

pub fn loc(spec: &str, conf: &LocConf) -> Arc<LocationConf> {
    nested(spec, conf, Vec::new())
}

pub fn nested(spec: &str, conf: &LocConf, children: Vec<Arc<LocationConf>>) -> Arc<LocationConf> {
    Arc::new(LocationConf {
        matcher: matcher(spec),
        conf: Arc::new(conf.clone()),
        locations: children,
        span: Span::default(),
    })
}

fn server_name(n: &str) -> ServerName {
    if let Some(re) = n.strip_prefix('~') {
        ServerName::Regex(regex::Regex::new(re).expect("test regex"))
    } else if let Some(s) = n.strip_prefix('*') {
        ServerName::WildcardStart {
            suffix: s.into(),
            also_bare: false,
        }
    } else if n.starts_with('.') {
        ServerName::WildcardStart {
            suffix: n.into(),
            also_bare: true,
        }
    } else if let Some(p) = n.strip_suffix('*') {
        ServerName::WildcardEnd(p.into())
    } else {
        ServerName::Exact(n.into())
    }
}

pub fn server(
    listen: &[ListenSpec],
    names: &[&str],
    locations: Vec<Arc<LocationConf>>,
) -> ServerConf {
    server_with(listen, names, locations, loc_conf("/nonexistent"))
}

pub fn server_with(
    listen: &[ListenSpec],
    names: &[&str],
    locations: Vec<Arc<LocationConf>>,
    conf: LocConf,
) -> ServerConf {
    ServerConf {
        listen: listen
            .iter()
            .map(|(a, d)| ListenConf {
                addr: a.parse::<SocketAddr>().expect("test address"),
                default_server: *d,
                reuseport: false,
                backlog: 511,
                ssl: false,
                http2: false,
                span: Span::default(),
            })
            .collect(),
        server_names: names.iter().map(|n| server_name(n)).collect(),
        client_header_timeout: Duration::from_secs(60),
        client_header_buffer_size: 1024,
        large_client_header_buffers: (4, 8192),
        locations,
        conf: Arc::new(conf),
        span: Span::default(),
    }
}

pub fn config(servers: Vec<ServerConf>) -> Config {
    Config {
        prefix: PathBuf::from("/tmp"),
        conf_file: PathBuf::from("/tmp/nginx.conf"),
        main: MainConf {
            worker_processes: WorkerProcesses::Count(1),
            worker_cpu_affinity: None,
            worker_rlimit_nofile: None,
            error_log: Vec::new(),
            pid: None,
            daemon: false,
            user: None,
            worker_shutdown_timeout: None,
        },
        events: EventsConf {
            worker_connections: 512,
            multi_accept: false,
            use_method: None,
        },
        http: Some(HttpConf {
            servers: servers.into_iter().map(Arc::new).collect(),
            log_formats: Vec::new(),
        }),
        files: Vec::new(),
        notices: Vec::new(),
    }
}
