//! The nginx variables usable in `return`, `try_files` and `error_page`
//! arguments (`$name` and `${name}`). Names outside
//! `peregrine_conf::variables` are refused at load; a known name this
//! expansion has no value for expands to nothing.

use std::net::SocketAddr;

use peregrine_conf::model::{IpText, Part, Template, VarDef, is_unix};

/// The first allocation of a value with variables: most fit.
const EVAL_CAPACITY: usize = 64;

use peregrine_conf::variables::{Family, Known, Known as K, VarId};

use crate::request::RequestView;

/// What the expansion can see.
#[derive(Clone, Copy)]
pub(crate) struct VarCtx<'a> {
    pub req: &'a RequestView<'a>,
    /// The request's method now (GET after an internal redirect that
    /// changed it).
    pub method: crate::request::Method,
    pub uri: &'a str,
    pub args: Option<&'a str>,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    pub server_name: &'a str,
    pub document_root: &'a str,
    /// `$0`..`$9` of the regex location that matched.
    pub captures: &'a [String],
    /// The location's settings and the server's names (module variables).
    pub conf: &'a peregrine_conf::model::LocConf,
    pub server_names: &'a [peregrine_conf::model::ServerName],
    /// The server's `listen`s (the path of a `unix:` one for `$server_addr`).
    pub listen: &'a [peregrine_conf::model::ListenConf],
    /// The request's userid state (`$uid_got`, `$uid_set`).
    pub uid: &'a crate::userid::UidCell,
    pub now: std::time::SystemTime,
    /// The named captures of the server name regex that chose the server
    /// (`server_name ~^(?P<name>.+)$` gives `$name`).
    pub named: &'a [(String, String)],
    // vars2
    /// The connection (`$connection_requests`, `$connection_time`).
    pub conn: &'a crate::response::ConnInfo,
    /// The engine's counters (`$connections_active`...).
    pub status: Option<&'a dyn crate::response::StatusSource>,
    // rewrite
    /// The values `set` gave the request (they shadow name families).
    pub sets: &'a crate::rewrite::SetVars<'a>,
    /// What `alias` replaces of the URI (`$request_filename`).
    pub name_len: Option<usize>,
    // map
    /// The configuration's `map` variables.
    pub maps: &'a [peregrine_conf::model::MapConf],
    /// Their values so far in this request (nginx caches a variable's
    /// value for the request unless its map is `volatile`).
    pub map_cache: &'a crate::map::MapCache,
    // split_clients
    pub splits: &'a [peregrine_conf::model::SplitClientsConf],
    // proxy
    pub upstream: Option<&'a crate::proxy::UpstreamVars>,
    // limits
    pub limits: &'a crate::limits::RequestLimits,
    // geo
    pub geos: &'a [peregrine_conf::model::GeoConf],
    // trailers
    /// The response's header fields and the trailer fields so far, once
    /// known (`$sent_http_*`, `$sent_trailer_*` in `add_trailer`).
    pub sent: Option<(
        &'a peregrine_codec::fields::FieldList,
        &'a peregrine_codec::fields::FieldList,
    )>,
    /// The status sent, once the response is (`$status` in a `map` an
    /// access log's format or `if=` asks for).
    pub sent_status: Option<u16>,
}

impl VarCtx<'_> {
    /// Appends the variable named `name` (as written after `$`): resolved
    /// here, for the values that are still kept as text (`try_files`,
    /// `root`, `error_page`...); compiled values resolve at load and call
    /// [`VarCtx::push_id`].
    pub(crate) fn push(&self, out: &mut String, name: &str) {
        match VarId::resolve(name) {
            Some(id) => self.push_id(out, &id),
            None => self.push_declared(out, name),
        }
    }

    /// Appends the value of a variable of nginx's core or a module.
    pub(crate) fn push_id(&self, out: &mut String, id: &VarId) {
        match id {
            VarId::Known(k) => self.push_known(out, *k),
            VarId::Capture(n) => out.push_str(self.captures.get(*n).map_or("", String::as_str)),
            VarId::Family(f, rest) => self.push_family(out, *f, rest),
        }
    }

    /// `$arg_*`, `$http_*`, `$cookie_*`, `$sent_http_*`...
    fn push_family(&self, out: &mut String, f: Family, rest: &str) {
        if self.sets.table.shadows_family
            && let Some(v) = self.sets.by_name(&format!("{}{rest}", f.prefix()))
        {
            out.push_str(v);
            return;
        }
        match f {
            Family::Http => {
                let header: String = rest
                    .chars()
                    .map(|c| if c == '_' { '-' } else { c })
                    .collect();
                match self.req.header(&header) {
                    Some(v) => out.push_str(v),
                    None if rest.contains('_') => push_underscored(self.req.headers, rest, out),
                    None => {}
                }
            }
            Family::Arg => out.push_str(arg(self.args.unwrap_or(""), rest).unwrap_or("")),
            Family::Cookie => {
                let mut found = None;
                self.req.headers.each_value("Cookie", &mut |v| {
                    found = found.or_else(|| cookie(v, rest));
                });
                out.push_str(found.unwrap_or(""));
            }
            Family::SentHttp | Family::SentTrailer => {
                if let Some((head, trailers)) = self.sent {
                    let list = if f == Family::SentHttp {
                        head
                    } else {
                        trailers
                    };
                    if let Some(v) = crate::headers::field_value(list, rest) {
                        out.push_str(v);
                    }
                }
            }
            Family::ProxyProtocolTlv => {
                crate::proxy_protocol::push(self.conn, &format!("{}{rest}", f.prefix()), out);
            }
            Family::UpstreamCookie | Family::UpstreamHttp | Family::UpstreamTrailer => {
                crate::proxy::push_var(self, out, &format!("{}{rest}", f.prefix()));
            }
        }
    }

    /// A variable a configuration defines (`set`, `map`, `geo`,
    /// `split_clients`, a regex's named group), by name: for the values
    /// still kept as text (compiled ones hold the index).
    fn push_declared(&self, out: &mut String, name: &str) {
        if let Some(i) = self.sets.table.index(name) {
            self.push_index(out, i);
        } else if let Some((_, v)) = self.named.iter().find(|(n, _)| n == name) {
            out.push_str(v);
        }
    }

    /// Appends the configuration's variable `i` (the index of
    /// [`peregrine_conf::model::VarTable`]):
    /// the value `set` gave it, else what defines it. `false`: it has no
    /// value (nginx's "not found"; a `set` not run, a group not matched).
    pub(crate) fn push_index(&self, out: &mut String, i: usize) -> bool {
        if let Some(v) = self.sets.get(i) {
            out.push_str(v);
            return true;
        }
        match self.sets.table.defs.get(i) {
            Some(VarDef::Map(m)) if let Some(m) = self.maps.get(*m) => {
                crate::map::push(self, m, out)
            }
            Some(VarDef::Geo(g)) if let Some(geo) = self.geos.get(*g) => {
                crate::geo::push(self, geo, *g, out);
            }
            Some(VarDef::Split(s)) if let Some(sp) = self.splits.get(*s) => {
                crate::split_clients::push(self, sp, out);
            }
            _ => {
                let name = self.sets.table.names.get(i).map_or("", String::as_str);
                match self.named.iter().find(|(n, _)| n == name) {
                    Some((_, v)) => out.push_str(v),
                    None => return false,
                }
            }
        }
        true
    }

    /// Appends a [`Known`] variable's value. Long because it is the table
    /// of nginx's core variables, one arm each (nginx's
    /// `ngx_http_core_variables`).
    fn push_known(&self, out: &mut String, k: Known) {
        use std::fmt::Write;
        match k {
            K::Uri | K::DocumentUri => out.push_str(self.uri),
            K::RequestUri => out.push_str(self.req.target),
            K::Args | K::QueryString => out.push_str(self.args.unwrap_or("")),
            K::IsArgs => {
                if self.args.is_some_and(|a| !a.is_empty()) {
                    out.push('?');
                }
            }
            K::Host => match self.req.host {
                Some(h) if !h.is_empty() => out.push_str(h),
                _ => out.push_str(self.server_name),
            },
            K::ServerName => out.push_str(self.server_name),
            K::Scheme => out.push_str(if self.conn.https() { "https" } else { "http" }),
            K::Https => {
                if self.conn.https() {
                    out.push_str("on");
                }
            }
            K::Http2 if self.conn.http2 => {
                out.push_str(if self.conn.https() { "h2" } else { "h2c" });
            }
            K::Http2 => {}
            k if k.name().starts_with("ssl_") => {
                if let Some(v) = self.conn.ssl.as_ref().and_then(|s| s.get(&k.name()[4..])) {
                    out.push_str(v);
                }
            }
            // An internal redirect by error_page or X-Accel-Redirect makes
            // the request a GET (nginx sets `r->method_name` too).
            K::RequestMethod if self.method == crate::request::Method::Get => out.push_str("GET"),
            K::RequestMethod => out.push_str(self.req.method_name),
            // A UNIX-domain socket: nginx's `unix:PATH` and no port.
            K::ServerPort if is_unix(self.local) => {}
            K::RemotePort if is_unix(self.peer) => {}
            K::RealipRemotePort if is_unix(self.conn.peer) => {}
            K::ServerAddr if is_unix(self.local) => {
                out.push_str("unix:");
                let l = self.listen.iter().find(|l| l.addr == self.local);
                out.push_str(l.and_then(|l| l.unix.as_deref()).unwrap_or_default());
            }
            K::ServerPort => {
                let _ = write!(out, "{}", self.local.port());
            }
            K::ServerAddr => {
                let _ = write!(out, "{}", self.local.ip());
            }
            // `$realip_remote_*`: the connection's address, before realip
            // replaced it; `$remote_port` of an address without a port
            // (an X-Forwarded-For entry) is empty, as nginx's.
            K::RemoteAddr => {
                let _ = write!(out, "{}", IpText(self.peer));
            }
            K::RealipRemoteAddr => {
                let _ = write!(out, "{}", IpText(self.conn.peer));
            }
            K::RemotePort if self.peer.port() != 0 => {
                let _ = write!(out, "{}", self.peer.port());
            }
            K::RemotePort => {}
            K::RealipRemotePort => {
                let _ = write!(out, "{}", self.conn.peer.port());
            }
            K::Status => {
                if let Some(s) = self.sent_status {
                    let _ = write!(out, "{s:03}");
                }
            }
            K::LimitReqStatus => out.push_str(self.limits.req.map_or("", |s| s.as_str())),
            K::LimitConnStatus => out.push_str(self.limits.conn.map_or("", |s| s.as_str())),
            K::BinaryRemoteAddr => match self.peer.ip() {
                // Not text: the bytes as Latin-1 would mangle them; nginx
                // users put it in keys (`limit_req_zone`), read as bytes.
                std::net::IpAddr::V4(a) => out.extend(a.octets().iter().map(|&b| char::from(b))),
                std::net::IpAddr::V6(a) => out.extend(a.octets().iter().map(|&b| char::from(b))),
            },
            K::RequestTime => crate::limits::push_request_time(out, self.limits.started, self.now),
            // The head as received: the body is not read while the phases
            // run (nginx's `r->request_length` at that point).
            K::RequestLength => {
                if let Some(n) = self.req.headers.head_len() {
                    let _ = write!(out, "{n}");
                }
            }
            K::DocumentRoot => self.push_document_root(out),
            K::RequestFilename => self.push_request_filename(out),
            K::InvalidReferer => out.push_str(crate::referer::invalid_referer(self)),
            K::SecureLink | K::SecureLinkExpires => crate::secure_link::push(self, k.name(), out),
            K::UidGot | K::UidSet => crate::userid::push(self, k.name(), out),
            // The request's time in seconds with milliseconds, as nginx's
            // `ngx_http_variable_msec`.
            K::Msec => {
                let d = self
                    .now
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                let _ = write!(out, "{}.{:03}", d.as_secs(), d.subsec_millis());
            }
            K::Connection => {
                let _ = write!(out, "{}", self.conn.id);
            }
            // The master's pid: workers are its threads.
            K::Pid => {
                let _ = write!(out, "{}", std::process::id());
            }
            K::ConnectionRequests => {
                let _ = write!(out, "{}", self.conn.requests);
            }
            K::ConnectionTime => push_connection_time(out, self.conn.accepted, self.now),
            K::RequestId => out.push_str(&request_id(self.conn)),
            // ssi: outside an SSI body, in the default `timefmt`.
            K::DateLocal | K::DateGmt => out.push_str(&crate::filters::timefmt::format(
                crate::filters::timefmt::DEFAULT_TIMEFMT,
                self.now,
                k == K::DateGmt,
            )),
            K::ConnectionsActive
            | K::ConnectionsReading
            | K::ConnectionsWriting
            | K::ConnectionsWaiting => {
                let s = self.status.map(|s| s.stub_status()).unwrap_or_default();
                let n = match k {
                    K::ConnectionsActive => s.active,
                    K::ConnectionsReading => s.reading,
                    K::ConnectionsWriting => s.writing,
                    _ => s.waiting,
                };
                let _ = write!(out, "{n}");
            }
            K::FastcgiScriptName | K::FastcgiPathInfo => {
                crate::gateway::push_var(self, out, k.name());
            }
            K::LimitRate => {
                let _ = write!(out, "{}", crate::limit_rate::variable(self));
            }
            K::ContentLength => match self.req.header("Content-Length") {
                Some(v) => out.push_str(v),
                None => {
                    if let Some(n) = self.upstream.and_then(|u| u.request_body_len) {
                        let _ = write!(out, "{n}");
                    }
                }
            },
            K::ContentType => out.push_str(self.req.header("Content-Type").unwrap_or("")),
            // An HTTP/2 stream's head went through the HTTP/1.1 codec.
            K::ServerProtocol if self.conn.http2 => out.push_str("HTTP/2.0"),
            K::ServerProtocol => {
                let (a, b) = self.req.version;
                let _ = write!(out, "HTTP/{a}.{b}");
            }
            K::NginxVersion => out.push_str(
                peregrine_codec::response::SERVER_VERSION
                    .strip_prefix("nginx/")
                    .unwrap_or(""),
            ),
            k if k.name().starts_with("proxy_protocol_") => {
                crate::proxy_protocol::push(self.conn, k.name(), out);
            }
            K::RequestBody => {
                if let Some(b) = self.upstream.and_then(|u| u.request_body.as_deref()) {
                    out.push_str(&String::from_utf8_lossy(b));
                }
            }
            K::RequestBodyFile => {
                if let Some(f) = self.upstream.and_then(|u| u.request_body_file.as_deref()) {
                    out.push_str(f);
                }
            }
            k if k.name().starts_with("upstream_") || k.name().starts_with("proxy_") => {
                crate::proxy::push_var(self, out, k.name());
            }
            // Known names this expansion has no value of its own for: a
            // changeable one (`$uid_reset`) is what `set` or a `map` gave
            // it; the others (`$bytes_sent`... the log's) are empty here.
            k => self.push_declared(out, k.name()),
        }
    }

    /// `ngx_http_variable_document_root`: the `root`/`alias` value with
    /// its variables (`alias /d/$1;`) expanded; inside that expansion the
    /// name itself is empty, not a loop.
    fn push_document_root(&self, out: &mut String) {
        if self.document_root.contains('$') {
            let inner = VarCtx {
                document_root: "",
                ..*self
            };
            out.push_str(&inner.expand(self.document_root));
        } else {
            out.push_str(self.document_root);
        }
    }

    /// `$request_filename`: the URI mapped under `root`/`alias`
    /// (`ngx_http_map_uri_to_path`).
    fn push_request_filename(&self, out: &mut String) {
        use peregrine_conf::model::DocRoot;
        let raw = crate::phases::root_text(&self.conf.root);
        let root = if raw.contains('$') {
            let e = self.expand(raw);
            match self.conf.root {
                DocRoot::Root(_) => DocRoot::Root(e),
                DocRoot::Alias(_) => DocRoot::Alias(e),
            }
        } else {
            self.conf.root.clone()
        };
        let mut path = String::new();
        crate::phases::map_path(&mut path, &root, self.name_len, self.uri);
        out.push_str(&path);
    }

    /// A value compiled at load: borrowed when it has no variables (most
    /// `add_header` values), else its parts appended in turn.
    pub(crate) fn eval<'t>(&self, t: &'t Template) -> std::borrow::Cow<'t, str> {
        if let Some(text) = t.literal() {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(EVAL_CAPACITY);
        for p in &t.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Var(id) => self.push_id(&mut out, id),
                Part::Capture(n) => out.push_str(self.captures.get(*n).map_or("", String::as_str)),
                Part::Set(i, _) => {
                    self.push_index(&mut out, *i);
                }
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// [`VarCtx::expand`], borrowing a template without variables as it
    /// is (most `add_header` values, realms and file names): no copy.
    pub(crate) fn expand_cow<'a>(&self, template: &'a str) -> std::borrow::Cow<'a, str> {
        if template.contains('$') {
            std::borrow::Cow::Owned(self.expand(template))
        } else {
            std::borrow::Cow::Borrowed(template)
        }
    }

    /// Expands every `$name` / `${name}` in `template`.
    pub(crate) fn expand(&self, template: &str) -> String {
        let mut out = String::with_capacity(template.len() + 32);
        let b = template.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'$' {
                let next = template[i..].find('$').map_or(b.len(), |n| i + n);
                out.push_str(&template[i..next]);
                i = next;
                continue;
            }
            let (name, end) = if b.get(i + 1) == Some(&b'{') {
                match template[i + 2..].find('}') {
                    Some(n) => (&template[i + 2..i + 2 + n], i + 3 + n),
                    None => (&template[i + 2..], b.len()),
                }
            } else {
                // nginx: `$1` is a single digit (`$12` is `$1` then `2`).
                let n = if b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    1
                } else {
                    template[i + 1..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(b.len() - i - 1)
                };
                (&template[i + 1..i + 1 + n], i + 1 + n)
            };
            if name.is_empty() {
                out.push('$');
            } else {
                self.push(&mut out, name);
            }
            i = end;
        }
        out
    }
}

/// `$connection_time`: seconds since the connection was accepted, with
/// milliseconds (`ngx_http_variable_connection_time`: `%T.%03M`).
pub(crate) fn push_connection_time(
    out: &mut String,
    accepted: std::time::SystemTime,
    now: std::time::SystemTime,
) {
    use std::fmt::Write;
    let ms = now.duration_since(accepted).map_or(0, |d| d.as_millis());
    let _ = write!(out, "{}.{:03}", ms / 1000, ms % 1000);
}

/// `$request_id`: 32 hex digits, random to the outside and the same for
/// every reading in one request (its subrequests included), as nginx's
/// 16 random bytes kept per request: a keyed hash of the connection's
/// identity and its request count, under a key drawn once per process
/// (std's `RandomState`, seeded from the system).
pub fn request_id(conn: &crate::response::ConnInfo) -> String {
    use std::hash::BuildHasher;
    static KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    let key = KEY.get_or_init(std::collections::hash_map::RandomState::new);
    let at = conn
        .accepted
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let who = (conn.id, conn.requests, at, conn.peer);
    let (a, b) = (key.hash_one((0u8, &who)), key.hash_one((1u8, &who)));
    format!("{a:016x}{b:016x}")
}

/// `$http_NAME` for a field whose name has `_` itself (kept with
/// `underscores_in_headers on` or `ignore_invalid_headers off`): nginx's
/// `ngx_http_variable_unknown_header` compares names with `-` read as `_`,
/// any case, so `$http_x_foo` finds `x_foo` as well as `x-foo`.
fn push_underscored(headers: &dyn crate::request::HeaderLookup, var: &str, out: &mut String) {
    let mut done = false;
    headers.each(&mut |n, v| {
        let same = n.len() == var.len()
            && n.bytes().zip(var.bytes()).all(|(a, b)| {
                let a = if a == b'-' {
                    b'_'
                } else {
                    a.to_ascii_lowercase()
                };
                a == b.to_ascii_lowercase()
            });
        if same && !done {
            done = true;
            out.push_str(&String::from_utf8_lossy(v));
        }
    });
}

/// `$cookie_NAME` in one `Cookie` field: pairs split on `;`, leading
/// spaces skipped, the name matched case-insensitively
/// (`ngx_http_parse_multi_header_lines`). Over HTTP/2 the `cookie` fields
/// arrive joined into one (RFC 9113 §8.2.3).
pub(crate) fn cookie<'a>(field: &'a str, name: &str) -> Option<&'a str> {
    field.split(';').find_map(|pair| {
        let pair = pair.trim_start_matches([' ', '\t']);
        let rest = pair.get(name.len()..)?;
        (pair.is_char_boundary(name.len())
            && pair[..name.len()].eq_ignore_ascii_case(name)
            && rest.starts_with('='))
        .then(|| &rest[1..])
    })
}

/// `$arg_NAME`: the first `NAME=value` of the query (case-insensitive name).
pub(crate) fn arg<'a>(args: &'a str, name: &str) -> Option<&'a str> {
    args.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        k.eq_ignore_ascii_case(name).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Method;

    #[test]
    fn expands_common_variables() {
        let hdr = vec![
            ("User-Agent", "curl"),
            ("Cookie", "x=1;  A=two; b"),
            ("x_foo", "bar"),
        ];
        let req = RequestView {
            method: Method::Get,
            method_name: "GET",
            version: (1, 1),
            path: "/a b",
            args: Some("x=1&Y=2"),
            target: "/a%20b?x=1&Y=2",
            host: Some("example.com"),
            content_length: None,
            headers: &hdr,
        };
        let v = VarCtx {
            req: &req,
            uri: "/a b",
            args: req.args,
            local: "127.0.0.1:8080".parse().unwrap(),
            peer: "10.0.0.1:5555".parse().unwrap(),
            server_name: "srv",
            document_root: "/www",
            captures: &["/a b".to_string(), "a".to_string()],
            conf: &crate::fixtures::loc_conf("/www"),
            server_names: &[],
            listen: &[],
            method: crate::request::Method::Get,
            uid: &Default::default(),
            now: std::time::SystemTime::now(),
            named: &[("sub".to_string(), "www".to_string())],
            conn: &crate::fixtures::conn("127.0.0.1:8080"),
            status: None,
            sets: &Default::default(),
            name_len: Some(0),
            maps: &[],
            map_cache: &Default::default(),
            splits: &[],
            upstream: None,
            limits: &Default::default(),
            geos: &[],
            sent: None,
            sent_status: None,
        };
        assert_eq!(
            v.expand("https://$host$request_uri"),
            "https://example.com/a%20b?x=1&Y=2"
        );
        assert_eq!(v.expand("$uri$is_args$args"), "/a b?x=1&Y=2");
        assert_eq!(v.expand("${uri}.html"), "/a b.html");
        assert_eq!(
            v.expand("$arg_y-$http_user_agent-$server_port"),
            "2-curl-8080"
        );
        assert_eq!(v.expand("$http_x_foo|$http_x_bar"), "bar|");
        assert_eq!(v.expand("$ $unknown end$"), "$  end$");
        assert_eq!(v.expand("${unterminated"), "");
        assert_eq!(v.expand("$remote_addr $scheme"), "10.0.0.1 http");
        assert_eq!(v.expand("/x/$1/$2/$0"), "/x/a///a b");
        assert_eq!(v.expand("$sub.$subx"), "www.");
        assert_eq!(v.expand("$connection:$connection_requests"), "1:1");
        assert_eq!(v.expand("$connections_active"), "0");
        assert_eq!(v.expand("[$cookie_a|$cookie_X|$cookie_b]"), "[two|1|]");
    }

    #[test]
    fn connection_time_is_seconds_with_milliseconds() {
        let t0 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(100);
        let mut out = String::new();
        push_connection_time(&mut out, t0, t0 + std::time::Duration::from_millis(1_234));
        assert_eq!(out, "1.234");
        out.clear();
        push_connection_time(&mut out, t0, t0 + std::time::Duration::from_millis(7));
        assert_eq!(out, "0.007");
        out.clear();
        // The wall clock stepped back: nginx's msec difference would wrap;
        // 0 is the sane answer.
        push_connection_time(&mut out, t0, t0 - std::time::Duration::from_secs(1));
        assert_eq!(out, "0.000");
    }
}
