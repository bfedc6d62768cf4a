//! Configuration builders for core's tests and benches: the typed model
//! built directly, with nginx's defaults, so that core's tests do not
//! depend on the configuration parser; and the request, connection and
//! body helpers those tests and benches share.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use peregrine_conf::DEFAULT_WORKER_CONNECTIONS;
use peregrine_conf::build::raw::{
    DEFAULT_CLIENT_HEADER_BUFFER_SIZE, DEFAULT_CLIENT_HEADER_TIMEOUT,
    DEFAULT_LARGE_CLIENT_HEADER_BUFFERS,
};
use peregrine_conf::model::{
    Config, DocRoot, EventsConf, HttpConf, ListenConf, LocConf, LocationConf, LocationMatch,
    MainConf, MimeTypes, ServerConf, ServerName, Span, WorkerProcesses,
};

use crate::request::{HeaderLookup, Method, RequestView};
use crate::response::{Body, ConnInfo};

/// The first request of connection 1 from a fixed client, accepted on
/// `local`.
pub fn conn(local: &str) -> ConnInfo {
    ConnInfo {
        local: local.parse().expect("test address"),
        peer: "10.0.0.9:40000".parse().expect("test address"),
        id: 1,
        requests: 1,
        accepted: std::time::UNIX_EPOCH,
        ssl: None,
        proxy: None,
        http2: false,
    }
}

/// An HTTP/1.1 request for `path` (no query, no body) to `host`.
pub fn request<'a>(
    method: &'a str,
    path: &'a str,
    host: &'a str,
    headers: &'a dyn HeaderLookup,
) -> RequestView<'a> {
    RequestView {
        method: Method::from_name(method),
        method_name: method,
        version: (1, 1),
        path,
        args: None,
        target: path,
        host: Some(host),
        content_length: None,
        headers,
    }
}

/// A raw request head parsed as the engine parses it (the codec's request,
/// with its header mask), for tests that go through `handle_explained`.
pub fn parsed_request(raw: &str) -> peregrine_codec::Request {
    let mut req = peregrine_codec::Request::new();
    peregrine_codec::parse_request(
        raw.as_bytes(),
        &peregrine_codec::Limits::default(),
        &mut req,
    )
    .expect("valid request");
    req
}

/// The `ETag` value of a serialized head, for conditional requests.
pub fn etag_of(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("ETag: "))
        .expect("an ETag line")
        .to_string()
}

/// The bytes `body` stands for, files read, for assertions.
pub fn body_bytes(body: &Body) -> Vec<u8> {
    fn add(b: &Body, out: &mut Vec<u8>) {
        match b {
            Body::Empty => {}
            Body::Static(s) => out.extend_from_slice(s),
            Body::Shared(s) => out.extend_from_slice(s),
            Body::File { file, offset, len } => {
                let mut buf = vec![0; usize::try_from(*len).expect("test file size")];
                file.read_exact_at(&mut buf, *offset).expect("test file");
                out.extend_from_slice(&buf);
            }
            Body::Parts(parts) => parts.iter().for_each(|p| add(p, out)),
        }
    }
    let mut out = Vec::new();
    add(body, &mut out);
    out
}

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

/// nginx's location defaults with this root, and what core's tests rely on
/// besides: a few more MIME types than nginx's built-in three, no access log
/// (core writes none) and no memory cache (the tests that want one set it).
pub fn loc_conf(root: &str) -> LocConf {
    LocConf {
        root: DocRoot::Root(root.to_string()),
        root_has_vars: root.contains('$'),
        types: Arc::new(mime_types()),
        memory_cache: None,
        access_log: Vec::new(),
        ..LocConf::nginx_default(Path::new("/"))
    }
}

/// `conf` with its fast-path flag set as the parser would set it had every
/// directive that could clear it been written
/// ([`peregrine_conf::fast::admits_by_value`]): the tests that change a
/// setting see its verdict.
fn judged(mut conf: LocConf) -> LocConf {
    conf.fast_eligible = peregrine_conf::fast::admits_by_value(&conf);
    conf
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
            regex: peregrine_conf::Regex::new(arg).expect("test regex"),
            case_insensitive: false,
        },
        "~*" => LocationMatch::Regex {
            regex: peregrine_conf::Regex::with_case(arg, true).expect("test regex"),
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
        conf: Arc::new(judged(conf.clone())),
        locations: children,
        span: Span::default(),
    })
}

fn server_name(n: &str) -> ServerName {
    if let Some(re) = n.strip_prefix('~') {
        ServerName::Regex(peregrine_conf::Regex::new(re).expect("test regex"))
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
                unix: None,
                default_server: *d,
                reuseport: false,
                backlog: 511,
                deferred: None,
                ipv6only: true,
                span: Span::default(),
                ssl: false,
                proxy_protocol: false,
                http2: false,
            })
            .collect(),
        server_names: names.iter().map(|n| server_name(n)).collect(),
        client_header_timeout: DEFAULT_CLIENT_HEADER_TIMEOUT,
        client_header_buffer_size: DEFAULT_CLIENT_HEADER_BUFFER_SIZE,
        large_client_header_buffers: DEFAULT_LARGE_CLIENT_HEADER_BUFFERS,
        locations,
        conf: Arc::new(judged(conf)),
        span: Span::default(),
        merge_slashes: true,
        headers: Default::default(),
        ssl: Default::default(),
        http2: Default::default(),
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
            shutdown_delay: std::time::Duration::ZERO,
            config_watch: None,
        },
        events: EventsConf {
            worker_connections: DEFAULT_WORKER_CONNECTIONS,
            multi_accept: false,
            use_method: None,
        },
        stream: None,
        mail: None,
        http: Some(HttpConf {
            servers: servers.into_iter().map(Arc::new).collect(),
            log_formats: Vec::new(),
            charset_maps: Vec::new(),
            upstreams: Vec::new(),
            maps: Vec::new(),
            split_clients: Vec::new(),
            limit_req_zones: Vec::new(),
            limit_conn_zones: Vec::new(),
            cache_paths: Vec::new(),
            geos: Vec::new(),
            variables: Default::default(),
        }),
        files: Vec::new(),
        temp_paths: Vec::new(),
        notices: Vec::new(),
    }
}

/// `t` compiled as the configuration compiles a value: `$name`s of
/// nginx's core variables (a test's names must be known ones).
pub fn template(t: &str) -> peregrine_conf::model::Template {
    use peregrine_conf::model::{Part, Template};
    let mut parts = Vec::new();
    for (i, piece) in t.split('$').enumerate() {
        if i == 0 {
            if !piece.is_empty() {
                parts.push(Part::Lit(piece.to_string()));
            }
            continue;
        }
        let n = piece
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(piece.len());
        let id = peregrine_conf::variables::VarId::resolve(&piece[..n]);
        parts.push(Part::Var(id.expect("a known variable")));
        if n < piece.len() {
            parts.push(Part::Lit(piece[n..].to_string()));
        }
    }
    Template { parts }
}

/// Gives `conf` the script `return code [text]` (`$name` variables in
/// `text` compiled as the configuration compiles them).
pub fn set_return(conf: &mut LocConf, code: u16, text: Option<&str>) {
    use peregrine_conf::model::{Op, Script};
    let text = text.map(template);
    conf.rewrite.script = Some(Arc::new(Script {
        ops: vec![Op::Return { code, text }],
    }));
}

/// A head's fields as `Name: value\r\n` lines, for tests to compare with
/// what nginx writes (the engine's HTTP/1 writer serializes them so).
pub fn head_text(l: &peregrine_codec::fields::FieldList) -> String {
    let (first, rest) = head_parts(l);
    first + &rest
}

/// [`head_text`] of the fields before the split and of those after.
pub fn head_parts(l: &peregrine_codec::fields::FieldList) -> (String, String) {
    let t = |fs: &[peregrine_codec::fields::Field]| {
        fs.iter()
            .map(|f| {
                format!(
                    "{}: {}\r\n",
                    String::from_utf8_lossy(&f.name),
                    String::from_utf8_lossy(&f.value)
                )
            })
            .collect::<String>()
    };
    (t(l.first()), t(l.rest()))
}

/// A field list from `Name: value\r\n` lines, the first `first` of them
/// before the split.
pub fn fields_of(text: &str, first: usize) -> peregrine_codec::fields::FieldList {
    let mut l = peregrine_codec::fields::FieldList::new();
    for (i, line) in text.split("\r\n").filter(|s| !s.is_empty()).enumerate() {
        let (n, v) = line.split_once(": ").unwrap_or((line, ""));
        if i < first {
            l.push_first(n.to_string(), v.to_string());
        } else {
            l.push(n.to_string(), v.to_string());
        }
    }
    l
}
