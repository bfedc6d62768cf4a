//! The proxy module's content handler (`ngx_http_proxy_handler`): the
//! upstream request built from the location's settings ([`head`]) and
//! handed to the engine as a [`ProxyJob`], which connects, sends, reads
//! the answer's head and asks core again for the client's response
//! ([`HttpCore::proxied`], through the location's filters with
//! `$upstream_*` set) or for an error page ([`HttpCore::upstream_error`],
//! `error_page` applying). Core does no I/O: the engine owns sockets,
//! peers and timers (`peregrine_engine::upstream`).

pub mod answer;
pub mod cookie;
pub mod head;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use peregrine_conf::model::{LocConf, ProxyRedirect, ProxyTarget, RedirectRule, Regex, ServerConf};

use crate::http::{Ctx, HttpCore, Step};
use crate::request::{Method, RequestView};
use crate::response::Response;
use crate::special::Special;
use crate::vars::VarCtx;

/// Where the upstream request goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// An `upstream { }` group, by its index in the configuration.
    Group(usize),
    /// A host or address and port: all its addresses in one round-robin
    /// group (nginx's implicit upstream).
    Host(String, u16),
    Unix(PathBuf),
    /// A host name from variables, looked up at run time by the
    /// location's `resolver` (nginx's `ngx_http_upstream_resolve_handler`).
    Resolve(String, u16),
}

/// What the client's request body becomes upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobBody {
    None,
    /// The client's body, read whole by the engine first.
    Client,
    /// `proxy_set_body`'s value.
    Fixed(Vec<u8>),
}

/// The protocol spoken upstream: the proxy's HTTP/1 or a gateway's
/// records (`crate::gateway`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Http,
    FastCgi,
    Uwsgi,
    Scgi,
}

/// The upstream request core hands the engine (one per request; retried
/// on the next peer as `proxy_next_upstream` says).
#[derive(Debug, Clone)]
pub struct ProxyJob {
    pub conf: Arc<LocConf>,
    pub server: Arc<ServerConf>,
    pub server_index: usize,
    pub target: Target,
    /// `$proxy_host` (the upstream's name and port as the URL gives them;
    /// `Host` by default) for the error log's `upstream: "http://..."`.
    pub proxy_host: String,
    /// `$proxy_port`.
    pub proxy_port: String,
    /// The request line and headers, without `Content-Length` and the
    /// blank line (the engine adds them once the body's length is known).
    pub head: Vec<u8>,
    pub body: JobBody,
    /// The method sent is HEAD: the answer has no body.
    pub head_request: bool,
    /// GET, HEAD, PUT, DELETE, OPTIONS, TRACE: may be retried once sent.
    pub idempotent: bool,
    /// The request's URI and arguments now, and the location's prefix
    /// length, for the answer's filters and error pages.
    pub uri: String,
    pub args: Option<String>,
    pub name_len: Option<usize>,
    /// `hash KEY`'s value for this request (hash balancing).
    pub hash_key: Option<Vec<u8>>,
    /// `proxy_redirect`'s rules, their variables expanded.
    pub redirects: Vec<Redirect>,
    /// `proxy_cookie_*`'s rules, their variables expanded; `None`
    /// without any.
    pub cookies: Option<Box<cookie::CookieJob>>,
    /// `$limit_req_status`, `$limit_conn_status` and realip's address as
    /// the request's phases left them, for the answer's filters.
    pub(crate) limits: crate::limits::RequestLimits,
    /// `http://host[:port]` for a relative `Location` (`absolute_redirect`).
    pub origin: String,
    /// What `head` is: an HTTP/1 head, or a gateway's records.
    pub proto: Proto,
    /// The request's use of the upstream cache (`proxy_cache`).
    pub cache: crate::cache::CacheSlot,
    /// `https://`: TLS to the upstream (`None`: plain).
    pub tls: Option<Box<JobTls>>,
    /// A gateway's parameters waiting for the body's length
    /// ([`LateParams`]); `None` for the rest.
    pub late: Option<Box<LateParams>>,
    /// The values `set` gave the request's variables, for the answer's
    /// filters (`add_header X $var` in a proxied location).
    pub(crate) sets: Vec<Option<String>>,
    /// The status an `error_page` that led here imposes on the answer
    /// (nginx's `r->err_status`, applied by `ngx_http_send_header`).
    pub err_status: Option<u16>,
}

/// The `*_param` values as content time expanded them, for the records
/// built again once a body of unknown length was read whole: nginx makes
/// a gateway's request after reading the body (`create_request` after
/// `ngx_http_read_client_request_body`), when a chunked body's
/// `$content_length` is the bytes received. The values naming it are
/// `None` here, expanded again then; the others keep what content time
/// saw (`set` variables included).
#[derive(Debug, Clone)]
pub struct LateParams {
    pub(crate) values: Vec<Option<String>>,
}

/// What the engine's upstream TLS client needs that is per request (the
/// rest is the location's `proxy_ssl_*`, `conf.proxy_ssl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobTls {
    /// `proxy_ssl_name` expanded (default `$proxy_host`), without a port:
    /// the name checked in the certificate, and sent as SNI under
    /// `proxy_ssl_server_name on`.
    pub name: String,
    /// `proxy_ssl_certificate` and its key, expanded and made full names
    /// (`None`: no client certificate, an empty expansion included).
    pub certificate: Option<(PathBuf, PathBuf)>,
}

/// `proxy_cache_key`'s default.
const DEFAULT_CACHE_KEY: &str = "$scheme$proxy_host$request_uri";

impl ProxyJob {
    /// The upstream settings of the module that made the job (timeouts,
    /// buffering, `*_next_upstream`, headers hidden and passed).
    #[inline(always)]
    pub fn up(&self) -> &peregrine_conf::model::ProxyConf {
        match self.proto {
            Proto::Http => &self.conf.proxy,
            Proto::FastCgi => &self.conf.fastcgi.up,
            Proto::Uwsgi => &self.conf.uwsgi.up,
            Proto::Scgi => &self.conf.scgi.up,
        }
    }

    /// `fastcgi_keep_conn`: the FastCGI connection outlives the request.
    pub fn keep_conn(&self) -> bool {
        self.proto == Proto::FastCgi && self.conf.fastcgi.keep_conn
    }
}

/// A `proxy_redirect` rule of one request.
#[derive(Debug, Clone)]
pub enum Redirect {
    Prefix(String, String),
    Regex(Regex, String),
}

/// One attempt's numbers (`ngx_http_upstream_state_t`).
#[derive(Debug, Clone, Default)]
pub struct Tried {
    pub addr: String,
    /// `None`: no answer (nginx logs 502/504 there).
    pub status: Option<u16>,
    pub connect: Option<Duration>,
    pub header: Option<Duration>,
    /// `None` while the answer is still being sent (`-` in `add_header`).
    pub response: Option<Duration>,
    pub received: u64,
    pub sent: u64,
    /// Body bytes received (`$upstream_response_length`).
    pub length: u64,
}

/// What `$upstream_*` show: each attempt, and the last answer's head.
#[derive(Debug, Clone, Default)]
pub struct UpstreamVars {
    pub tries: Vec<Tried>,
    pub proxy_host: String,
    pub proxy_port: String,
    /// The last answer's head bytes and its header lines' ranges.
    pub head: Vec<u8>,
    pub headers: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// The client's body as the engine's body module read it:
    /// `$request_body` when it is in memory, `$request_body_file` when it
    /// went to a temporary file (`ngx_http_variable_request_body`).
    pub request_body: Option<Arc<Vec<u8>>>,
    pub request_body_file: Option<Arc<str>>,
    /// The body's length once read whole: `$content_length` of a body
    /// that came without one (nginx sets `content_length_n` to the bytes
    /// received when the chunked body ends).
    pub request_body_len: Option<u64>,
    /// `$upstream_cache_status`.
    pub cache_status: Option<&'static str>,
}

impl UpstreamVars {
    fn join(&self, out: &mut String, f: impl Fn(&Tried, &mut String)) {
        for (i, t) in self.tries.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            f(t, out);
        }
    }

    /// `$upstream_http_NAME` (`-` and `_` alike, any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| {
            let hn = self.head.get(n.clone())?;
            let same = hn.len() == name.len()
                && hn.iter().zip(name.bytes()).all(|(a, b)| {
                    let a = if *a == b'-' {
                        b'_'
                    } else {
                        a.to_ascii_lowercase()
                    };
                    a == b.to_ascii_lowercase()
                });
            same.then(|| std::str::from_utf8(self.head.get(v.clone())?).ok())?
        })
    }

    /// `$upstream_cookie_NAME`: the value of cookie `name` set by the
    /// answer, from the first `Set-Cookie` field whose cookie it is
    /// (`ngx_http_parse_set_cookie_lines`: the name opens the field, the
    /// value ends at `;`).
    pub fn set_cookie(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| {
            let hn = self.head.get(n.clone())?;
            if !hn.eq_ignore_ascii_case(b"set-cookie") {
                return None;
            }
            let v = std::str::from_utf8(self.head.get(v.clone())?).ok()?;
            let v = v.trim_start_matches([' ', '\t']);
            let rest = v.get(name.len()..)?;
            if !v.is_char_boundary(name.len()) || !v[..name.len()].eq_ignore_ascii_case(name) {
                return None;
            }
            let value = rest.strip_prefix('=')?;
            Some(value.split(';').next().unwrap_or("").trim_end())
        })
    }
}

/// nginx's `%T.%03M` for a duration, `-` for none.
fn secs(out: &mut String, d: Option<Duration>) {
    use std::fmt::Write;
    match d {
        Some(d) => {
            let _ = write!(out, "{}.{:03}", d.as_secs(), d.subsec_millis());
        }
        None => out.push('-'),
    }
}

/// The proxy's and the upstream module's variables.
pub(crate) fn push_var(v: &VarCtx<'_>, out: &mut String, name: &str) {
    use std::fmt::Write;
    if name == "proxy_add_x_forwarded_for" {
        if let Some(x) = v.req.header("X-Forwarded-For") {
            out.push_str(x);
            out.push_str(", ");
        }
        let _ = write!(out, "{}", peregrine_conf::model::IpText(v.peer));
        return;
    }
    if let Some(u) = v.upstream {
        u.push(out, name);
    }
}

impl UpstreamVars {
    /// Appends `$NAME` (`upstream_*`, `proxy_host`, `proxy_port`).
    pub fn push(&self, out: &mut String, name: &str) {
        use std::fmt::Write;
        let u = self;
        match name {
            "proxy_host" => out.push_str(&u.proxy_host),
            "proxy_port" => out.push_str(&u.proxy_port),
            "upstream_addr" => u.join(out, |t, o| o.push_str(&t.addr)),
            "upstream_status" => u.join(out, |t, o| match t.status {
                Some(s) => {
                    let _ = write!(o, "{s}");
                }
                None => o.push('-'),
            }),
            "upstream_connect_time" => u.join(out, |t, o| secs(o, t.connect)),
            "upstream_header_time" => u.join(out, |t, o| secs(o, t.header)),
            "upstream_response_time" => u.join(out, |t, o| secs(o, t.response)),
            "upstream_response_length" => u.join(out, |t, o| {
                let _ = write!(o, "{}", t.length);
            }),
            "upstream_bytes_received" => u.join(out, |t, o| {
                let _ = write!(o, "{}", t.received);
            }),
            "upstream_bytes_sent" => u.join(out, |t, o| {
                let _ = write!(o, "{}", t.sent);
            }),
            "upstream_cache_status" => out.push_str(u.cache_status.unwrap_or("")),
            _ => {
                if let Some(h) = name.strip_prefix("upstream_http_") {
                    out.push_str(u.header(h).unwrap_or(""));
                } else if let Some(c) = name.strip_prefix("upstream_cookie_") {
                    out.push_str(u.set_cookie(c).unwrap_or(""));
                }
            }
        }
    }
}

/// nginx's idempotent methods (`ngx_http_upstream_non_idempotent`'s
/// complement: not POST, LOCK, PATCH).
pub(crate) fn idempotent(method: &str) -> bool {
    !matches!(method, "POST" | "LOCK" | "PATCH")
}

/// A request view of a parsed request (the engine hands the request back
/// after the upstream answered).
pub(crate) fn view_of(req: &peregrine_codec::Request) -> RequestView<'_> {
    RequestView {
        method: Method::from_name(req.method_str()),
        method_name: req.method_str(),
        version: match req.version() {
            peregrine_codec::Version::Http10 => (1, 0),
            peregrine_codec::Version::Http11 => (1, 1),
        },
        path: req.path(),
        args: req.query(),
        target: req.target(),
        host: req.host(),
        content_length: match req.body_kind() {
            peregrine_codec::BodyKind::Length(n) => Some(n),
            _ => None,
        },
        headers: req,
    }
}

impl HttpCore {
    /// The content handler of a location with `proxy_pass`.
    pub(crate) fn proxy(&mut self, ctx: &mut Ctx<'_>) -> Step {
        // The location's settings, shared (not copied per request).
        let conf = Arc::clone(&ctx.conf);
        let Some(pass) = conf.proxy.pass.as_ref() else {
            return Step::Special(Special::status(500));
        };
        let mut tls = pass.tls;
        let (target, uri_part, vars) = match &pass.target {
            ProxyTarget::Vars => {
                let url = ctx.vars().expand(&pass.url);
                let rest = match url.get(..7) {
                    Some(p) if p.eq_ignore_ascii_case("http://") => url[7..].to_string(),
                    _ if url
                        .get(..8)
                        .is_some_and(|p| p.eq_ignore_ascii_case("https://")) =>
                    {
                        tls = true;
                        url[8..].to_string()
                    }
                    _ => {
                        self.note_failure(crate::response::ErrorNote::Upstream(format!(
                            "invalid URL prefix in \"{url}\""
                        )));
                        return Step::Special(Special::status(500));
                    }
                };
                match peregrine_conf::build::proxy::parse_target(&rest) {
                    Ok((mut t, u)) => {
                        if let ProxyTarget::Host {
                            port, port_given, ..
                        } = &mut t
                            && tls
                            && !*port_given
                        {
                            *port = peregrine_conf::build::proxy::DEFAULT_TLS_PORT;
                        }
                        (Cow::Owned(t), u.map(Cow::Owned), true)
                    }
                    Err(m) => {
                        self.note_failure(crate::response::ErrorNote::Upstream(format!(
                            "{m} in upstream \"{rest}\""
                        )));
                        return Step::Special(Special::status(500));
                    }
                }
            }
            t => (
                Cow::Borrowed(t),
                pass.uri.as_deref().map(Cow::Borrowed),
                false,
            ),
        };
        let resolver = ctx.conf.resolver.is_some();
        let (target, proxy_host, port) = match self.target_of(&target, vars, resolver) {
            Ok(t) => t,
            Err(host) => {
                self.note_failure(crate::response::ErrorNote::Upstream(format!(
                    "no resolver defined to resolve {host}"
                )));
                return Step::Special(Special::status(502));
            }
        };
        let job = self.build_job(
            ctx,
            target,
            proxy_host,
            port,
            uri_part.as_deref(),
            vars,
            &pass.url,
        );
        match job {
            Some(mut job) => {
                if tls {
                    job.tls = Some(Box::new(job_tls(ctx, &job)));
                }
                Step::Upstream(Box::new(job))
            }
            None => {
                self.note_failure(crate::response::ErrorNote::Upstream(
                    "zero length URI to proxy".into(),
                ));
                Step::Special(Special::status(500))
            }
        }
    }

    /// The run-time target, `$proxy_host` and `$proxy_port`; `Err(host)`
    /// for a name from variables that needs a resolver.
    pub(crate) fn target_of(
        &self,
        t: &ProxyTarget,
        vars: bool,
        resolver: bool,
    ) -> Result<(Target, String, String), String> {
        match t {
            ProxyTarget::Unix(p) => {
                Ok((Target::Unix(p.clone()), "localhost".into(), String::new()))
            }
            ProxyTarget::Host {
                host,
                port,
                port_given,
            } => {
                let shown = if *port_given && *port != 80 {
                    format!("{host}:{port}")
                } else {
                    host.clone()
                };
                if !port_given
                    && let Some(i) = self
                        .upstreams
                        .iter()
                        .position(|u| u.name.eq_ignore_ascii_case(host))
                {
                    return Ok((Target::Group(i), shown, port.to_string()));
                }
                let literal = host.trim_start_matches('[').trim_end_matches(']');
                let known = self
                    .implicit
                    .iter()
                    .any(|(h, p)| h.eq_ignore_ascii_case(host) && p == port);
                if vars && !known && literal.parse::<std::net::IpAddr>().is_err() {
                    if !resolver {
                        return Err(host.clone());
                    }
                    let t = Target::Resolve(host.clone(), *port);
                    return Ok((t, shown, port.to_string()));
                }
                Ok((Target::Host(host.clone(), *port), shown, port.to_string()))
            }
            ProxyTarget::Vars => Err(String::new()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn build_job(
        &self,
        ctx: &Ctx<'_>,
        target: Target,
        proxy_host: String,
        port: String,
        uri_part: Option<&str>,
        vars: bool,
        url: &str,
    ) -> Option<ProxyJob> {
        let p = &ctx.conf.proxy;
        // `$proxy_host` and `$proxy_port` for the values expanded here;
        // moved back into the job at the end (no copy).
        let uv = UpstreamVars {
            proxy_host,
            proxy_port: port,
            ..UpstreamVars::default()
        };
        let v = VarCtx {
            upstream: Some(&uv),
            ..ctx.vars()
        };
        let mut method: Cow<'_, str> = match &p.method {
            Some(m) => Cow::Owned(v.expand(m)),
            None => Cow::Borrowed(ctx.req.method_name),
        };
        let cache = crate::cache::decide(
            &self.caches,
            &p.cache,
            ctx.req.method_name,
            ctx.req.header("Range"),
            DEFAULT_CACHE_KEY,
            &|t| v.expand(t),
            peregrine_codec::date::unix_secs(ctx.now),
        );
        if cache.is_some() && p.cache.convert_head && method == "HEAD" {
            // `proxy_cache_convert_head`: the cache is filled by a GET.
            method = Cow::Borrowed("GET");
        }
        let original = ctx.is_original();
        let uri = head::upstream_uri(&head::UriParts {
            pass_uri: uri_part.filter(|_| vars || ctx.valid_location),
            vars,
            unparsed: original.then_some(ctx.req.target),
            uri: &ctx.uri,
            args: ctx.args.as_deref(),
            loc_len: ctx.name_len,
        })?;
        let mut set: Vec<head::Line<'_>> = Vec::with_capacity(p.set_headers.len());
        set.extend(
            p.set_headers
                .iter()
                .map(|(n, val)| (n.as_str(), set_value(&v, &uv.proxy_host, val))),
        );
        if cache.as_ref().is_some_and(|c| c.cacheable) {
            for (n, val) in crate::cache::upstream_headers(&p.cache, cache.as_deref()) {
                if !set.iter().any(|(o, _)| o.eq_ignore_ascii_case(n)) {
                    set.push((n, Cow::Owned(val)));
                }
            }
        }
        let host_line: &str = match set.iter().find(|(n, _)| n.eq_ignore_ascii_case("Host")) {
            Some((_, h)) if h.is_empty() && p.http11 => &uv.proxy_host,
            Some((_, h)) => h,
            None => &uv.proxy_host,
        };
        let headers = ctx.req.headers;
        let client = |f: &mut dyn FnMut(&str, &[u8])| {
            if p.pass_request_headers {
                headers.each(f);
            }
        };
        let head = head::build_head(&method, &uri, p.http11, Some(host_line), &set, &client);
        drop(set);
        let body = match &p.set_body {
            Some(b) => JobBody::Fixed(v.expand(b).into_bytes()),
            None if p.pass_request_body
                && (ctx.req.content_length.is_some_and(|n| n > 0)
                    || ctx.req.headers.get("Transfer-Encoding").is_some()) =>
            {
                JobBody::Client
            }
            None => JobBody::None,
        };
        let hash_key = match &target {
            Target::Group(i) => self.upstreams[*i]
                .hash_key
                .as_ref()
                .map(|k| v.expand(k).into_bytes()),
            _ => None,
        };
        let location = match ctx.name_len {
            Some(n) if n > 0 => ctx.uri.get(..n).unwrap_or("/"),
            _ => "/",
        };
        let redirects = match &p.redirect {
            ProxyRedirect::Off => Vec::new(),
            ProxyRedirect::Default if vars => Vec::new(),
            ProxyRedirect::Default => vec![default_redirect(url, uri_part, location)],
            ProxyRedirect::List(l) => l
                .iter()
                .filter_map(|e| match e {
                    RedirectRule::Default if vars => None,
                    RedirectRule::Default => Some(default_redirect(url, uri_part, location)),
                    RedirectRule::Prefix(f, t) => Some(Redirect::Prefix(v.expand(f), v.expand(t))),
                    RedirectRule::Regex(re, t) => Some(Redirect::Regex(re.clone(), t.clone())),
                })
                .collect(),
        };
        let cookies = cookie::for_request(p, &v);
        let head_request = method.eq_ignore_ascii_case("HEAD");
        let idempotent = idempotent(&method);
        drop(method);
        let UpstreamVars {
            proxy_host,
            proxy_port,
            ..
        } = uv;
        Some(ProxyJob {
            err_status: ctx.err_status,
            limits: ctx.limits,
            conf: ctx.conf.clone(),
            server: Arc::clone(&self.servers[ctx.server].conf),
            server_index: ctx.server,
            target,
            proxy_host,
            proxy_port,
            head,
            body,
            head_request,
            idempotent,
            uri: ctx.uri.to_string(),
            args: ctx.args.as_deref().map(str::to_string),
            name_len: ctx.name_len,
            hash_key,
            redirects,
            cookies,
            origin: ctx.origin(),
            proto: Proto::Http,
            tls: None,
            cache: crate::cache::CacheSlot(cache),
            late: None,
            sets: ctx.sets.values.clone(),
        })
    }

    /// The engine's side of a proxied request starts: core's answer is a
    /// placeholder until [`HttpCore::take_proxy`].
    pub(crate) fn hand_over(&mut self, ctx: &Ctx<'_>, job: Box<ProxyJob>) -> Response {
        let mut r = self.error_response(502);
        r.conf = Some(ctx.conf.clone());
        r.server = Some(job.server.clone());
        self.proxy_job = Some(job);
        r
    }

    /// Whether the last [`HttpCore::handle`] left an upstream request.
    #[inline(always)]
    pub fn has_proxy(&self) -> bool {
        self.proxy_job.is_some()
    }

    /// The upstream request of the last [`HttpCore::handle`], if its
    /// location proxies.
    #[inline]
    pub fn take_proxy(&mut self) -> Option<Box<ProxyJob>> {
        self.proxy_job.take()
    }
}

/// The request's side of TLS to the upstream: `proxy_ssl_name` (a port
/// dropped, as `ngx_http_upstream_ssl_name` does) and the client
/// certificate's names, expanded.
fn job_tls(ctx: &Ctx<'_>, job: &ProxyJob) -> JobTls {
    let c = &ctx.conf.proxy_ssl;
    let uv = UpstreamVars {
        proxy_host: job.proxy_host.clone(),
        proxy_port: job.proxy_port.clone(),
        ..UpstreamVars::default()
    };
    let v = VarCtx {
        upstream: Some(&uv),
        ..ctx.vars()
    };
    let name = match &c.name {
        Some(n) => v.expand(n),
        None => job.proxy_host.clone(),
    };
    let name = match name.strip_prefix('[') {
        Some(r) => r.split(']').next().unwrap_or_default().to_string(),
        None => match name.rsplit_once(':') {
            Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => h.to_string(),
            _ => name,
        },
    };
    let full = |t: &str| {
        let e = v.expand(t);
        (!e.is_empty()).then(|| c.conf_dir.join(e))
    };
    let certificate = c
        .certificate
        .as_ref()
        .and_then(|(cert, key)| Some((full(cert)?, full(key)?)));
    JobTls { name, certificate }
}

/// Every `host:port` of a `proxy_pass` without variables.
pub(crate) fn implicit_hosts(conf: &peregrine_conf::model::Config) -> Vec<(String, u16)> {
    fn walk(l: &peregrine_conf::model::LocationConf, out: &mut Vec<(String, u16)>) {
        add(&l.conf, out);
        l.locations.iter().for_each(|n| walk(n, out));
    }
    fn add(c: &LocConf, out: &mut Vec<(String, u16)>) {
        let passes = [&c.proxy, &c.fastcgi.up, &c.uwsgi.up, &c.scgi.up];
        for p in passes.iter().filter_map(|u| u.pass.as_ref()) {
            if let ProxyTarget::Host { host, port, .. } = &p.target {
                out.push((host.clone(), *port));
            }
        }
    }
    let mut out = Vec::new();
    for s in conf.http.iter().flat_map(|h| h.servers.iter()) {
        add(&s.conf, &mut out);
        s.locations.iter().for_each(|l| walk(l, &mut out));
    }
    out
}

/// `proxy_redirect default`: the URL as written (with `/` when it has no
/// URI part) becomes the location's name (`/`).
fn default_redirect(url: &str, uri_part: Option<&str>, location: &str) -> Redirect {
    match uri_part {
        Some(_) => Redirect::Prefix(url.to_string(), location.to_string()),
        None => {
            let mut from = String::with_capacity(url.len() + 1);
            from.push_str(url);
            from.push('/');
            Redirect::Prefix(from, "/".to_string())
        }
    }
}

/// A `proxy_set_header` value for this request: the configuration's own
/// text when it has no variables (nginx compiles constant values once,
/// `ngx_http_proxy_init_headers`), `$proxy_host` alone (the default
/// `Host`) without parsing the template.
fn set_value<'a>(v: &VarCtx<'_>, proxy_host: &'a str, template: &'a str) -> Cow<'a, str> {
    match template {
        "$proxy_host" => Cow::Borrowed(proxy_host),
        _ => v.expand_cow(template),
    }
}

#[cfg(test)]
mod tests {
    use super::UpstreamVars;

    #[test]
    fn upstream_cookie_is_the_first_set_cookie_of_that_name() {
        let mut u = UpstreamVars::default();
        for (n, v) in [
            ("Set-Cookie", "a=b; Path=/"),
            ("X-Other", "c=x"),
            ("set-cookie", " C=d"),
            ("Set-Cookie", "a=second"),
        ] {
            let start = u.head.len();
            u.head.extend_from_slice(n.as_bytes());
            let mid = u.head.len();
            u.head.extend_from_slice(v.as_bytes());
            u.headers.push((start..mid, mid..u.head.len()));
        }
        assert_eq!(u.set_cookie("a"), Some("b"));
        assert_eq!(u.set_cookie("c"), Some("d"));
        assert_eq!(u.set_cookie("path"), None);
        assert_eq!(u.set_cookie("x"), None);
    }
}
