//! What the engine hands over for one finished request: borrowed fields
//! only, so building one costs a few stores.

use std::net::SocketAddr;
use std::time::SystemTime;

/// A list of header fields, in arrival (or sending) order. The logger walks
/// it only for the `$http_*` / `$sent_http_*` / `$cookie_*` / `$remote_user`
/// variables a format actually uses.
pub trait Headers {
    /// Calls `f(name, value)` for each field in order until `f` returns
    /// `false`.
    fn visit(&self, f: &mut dyn FnMut(&[u8], &[u8]) -> bool);
}

/// No headers at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHeaders;

impl Headers for NoHeaders {
    fn visit(&self, _: &mut dyn FnMut(&[u8], &[u8]) -> bool) {}
}

fn visit_pairs<N: AsRef<[u8]>, V: AsRef<[u8]>>(
    pairs: &[(N, V)],
    f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) {
    for (n, v) in pairs {
        if !f(n.as_ref(), v.as_ref()) {
            break;
        }
    }
}

/// Adapts a slice of pairs (`(&str, &str)`, `(&[u8], Vec<u8>)`, ...).
#[derive(Debug, Clone, Copy)]
pub struct HeaderPairs<'a, N, V>(pub &'a [(N, V)]);

impl<N: AsRef<[u8]>, V: AsRef<[u8]>> Headers for HeaderPairs<'_, N, V> {
    fn visit(&self, f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        visit_pairs(self.0, f);
    }
}

impl<N: AsRef<[u8]>, V: AsRef<[u8]>> Headers for Vec<(N, V)> {
    fn visit(&self, f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        visit_pairs(self, f);
    }
}

/// The parsed request's fields, as received (codec's `Request::headers`).
impl Headers for peregrine_codec::Request {
    fn visit(&self, f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        for (n, v) in self.headers() {
            if !f(n.as_bytes(), v) {
                break;
            }
        }
    }
}

/// A response's header fields as core made them (`$sent_http_*`), values
/// trimmed of spaces and tabs.
impl Headers for peregrine_codec::fields::FieldList {
    fn visit(&self, f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        for field in self.fields() {
            if !f(&field.name, field.value.trim_ascii()) {
                break;
            }
        }
    }
}

/// The variables of a request the log does not compute itself (the
/// configuration's `map`, `geo`, `split_clients`; modules'), computed by
/// whoever answered the request (core) when a format uses them.
pub trait ModuleVars {
    /// Appends the value of `name` (lowercase) to `out`; `false` when the
    /// variable has no value (logged as not found).
    fn value(&self, name: &str, out: &mut String) -> bool;
}

/// One request as the access log sees it. `None` means "not known" and is
/// logged as `-` (or nothing with `escape=json|none`), as nginx logs a
/// variable that is "not found".
///
/// Field values are what nginx would hold at log time (after internal
/// redirects, `index`, `error_page`).
#[derive(Clone, Copy)]
pub struct RequestLog<'a> {
    /// Client address (`$remote_addr`, `$remote_port`).
    pub remote: SocketAddr,
    /// The connection's own address when realip replaced `remote`
    /// (`$realip_remote_addr`, `$realip_remote_port`; `None`: `remote`).
    pub conn_remote: Option<SocketAddr>,
    /// Accepting socket's local address (`$server_addr`, `$server_port`).
    pub local: SocketAddr,
    /// The request line as received, without CRLF (`$request`). For a
    /// request that failed to parse nginx logs what it read of the line.
    pub request_line: Option<&'a [u8]>,
    /// `$request_method`.
    pub method: Option<&'a [u8]>,
    /// The original URI with its arguments (`$request_uri`).
    pub request_uri: Option<&'a [u8]>,
    /// The current, normalised URI (`$uri`), e.g. `/index.html` after `index`.
    pub uri: Option<&'a [u8]>,
    /// Arguments after `?` (`$args`, `$query_string`, `$arg_NAME`). nginx
    /// logs `-` for both `/x` and `/x?`, so pass `None` when empty.
    pub args: Option<&'a [u8]>,
    /// `HTTP/1.1` (`$server_protocol`); `None` for HTTP/0.9 and bad requests.
    pub protocol: Option<&'a [u8]>,
    /// Request header fields (`$http_NAME`, `$cookie_NAME`, `$remote_user`).
    pub request_headers: &'a dyn Headers,
    /// Response header fields as sent (`$sent_http_NAME`).
    pub response_headers: &'a dyn Headers,
    /// Response status; 0 is logged as `000` like nginx.
    pub status: u16,
    /// Bytes written to the client for this request, header and body (`$bytes_sent`).
    pub bytes_sent: u64,
    /// Bytes of the body alone (`$body_bytes_sent`).
    pub body_bytes_sent: u64,
    /// Bytes read: request line, header and body (`$request_length`).
    pub request_length: u64,
    /// When the first byte of the request was read.
    pub start: SystemTime,
    /// Now, at logging time (`$msec`, `$time_local`, `$request_time`).
    pub end: SystemTime,
    /// The connection's serial number (`$connection`, `*N` in the error log).
    pub connection: u64,
    /// Requests served on this connection, this one included.
    pub connection_requests: u64,
    /// The matched server's first `server_name` (`$server_name`).
    pub server_name: &'a [u8],
    /// nginx's `$host`: Host (or request-line host) lowercased, port and
    /// trailing dot removed. `None` → `server_name` is logged, as nginx.
    pub host: Option<&'a [u8]>,
    /// `$scheme` is `https` when set.
    pub https: bool,
    /// The request was read from a buffer already holding it behind the
    /// previous one (`$pipe` = `p`).
    pub pipelined: bool,
    /// `$request_id`: 32 lowercase hex digits. `None` → the access log
    /// makes one per request (shared by all of the request's logs); set it
    /// when something else (a header) must show the same id.
    pub request_id: Option<&'a [u8]>,
    /// The location's userid settings (`$uid_got`, `$uid_set`); the access
    /// log fills it from the `access_log`'s configuration.
    pub userid: Option<&'a peregrine_conf::model::UseridConf>,
    // proxy
    /// The proxy's `$upstream_*` values, for a proxied request.
    pub upstream: Option<&'a dyn UpstreamValues>,
    // ssl
    /// The TLS session's `$ssl_*` values (`None`: a plain connection).
    pub ssl: Option<&'a dyn SslValues>,
    /// The request's other variables ([`ModuleVars`]; `None`: not found).
    pub modules: Option<&'a dyn ModuleVars>,
    // proxy_protocol
    /// The connection's PROXY protocol header (`$proxy_protocol_*`).
    pub proxy_protocol: Option<&'a peregrine_codec::proxy_protocol::ProxyHeader>,
}

/// `$upstream_*` by name (the proxy's numbers): `None` when the request
/// went to no upstream (logged as `-`).
pub trait UpstreamValues {
    fn value(&self, name: &str) -> Option<String>;
}

/// Where a record's `$ssl_*` values come from (the engine's TLS session).
pub trait SslValues {
    /// The value of `$ssl_NAME` (`name` without the prefix).
    fn ssl_value(&self, name: &str) -> Option<&str>;
}

impl RequestLog<'static> {
    /// A record with nothing known but the addresses and times: no request
    /// line, no headers, status 0, zero counters. Fill the rest with struct
    /// update syntax or [`RequestLog::with_request`].
    pub fn new(remote: SocketAddr, local: SocketAddr, start: SystemTime, end: SystemTime) -> Self {
        RequestLog {
            remote,
            conn_remote: None,
            local,
            request_line: None,
            method: None,
            request_uri: None,
            uri: None,
            args: None,
            protocol: None,
            request_headers: &NoHeaders,
            response_headers: &NoHeaders,
            status: 0,
            bytes_sent: 0,
            body_bytes_sent: 0,
            request_length: 0,
            start,
            end,
            connection: 0,
            connection_requests: 0,
            server_name: b"",
            host: None,
            https: false,
            pipelined: false,
            request_id: None,
            userid: None,
            upstream: None,
            ssl: None,
            modules: None,
            proxy_protocol: None,
        }
    }
}

impl<'a> RequestLog<'a> {
    /// Takes the request line, method, URIs, arguments, protocol, headers
    /// and `$host` from a parsed head. `uri` is the head's normalised path:
    /// overwrite it after an internal redirect.
    pub fn with_request(self, req: &'a peregrine_codec::Request) -> RequestLog<'a> {
        let non_empty = |s: &'a str| (!s.is_empty()).then_some(s.as_bytes());
        RequestLog {
            request_line: non_empty(req.request_line()),
            method: non_empty(req.method_str()),
            request_uri: non_empty(req.target()),
            // Empty only for a URI refused while normalised: nginx logs
            // it as found and empty.
            uri: Some(req.path().as_bytes()),
            // nginx logs `-` for both `/x` and `/x?`.
            args: req.query().and_then(non_empty),
            protocol: Some(req.version().as_str().as_bytes()),
            request_headers: req,
            host: req.host().and_then(non_empty),
            ..self
        }
    }
}

impl std::fmt::Debug for RequestLog<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestLog")
            .field("remote", &self.remote)
            .field(
                "request_line",
                &self.request_line.map(String::from_utf8_lossy),
            )
            .field("status", &self.status)
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

/// `name` as a `$http_`/`$sent_http_` suffix: lowercase, `-` written `_`.
/// nginx compares each header byte lowercased with `-` mapped to `_`.
pub(crate) fn header_name_matches(var: &[u8], header: &[u8]) -> bool {
    var.len() == header.len()
        && var.iter().zip(header).all(|(&v, &h)| {
            let h = if h == b'-' {
                b'_'
            } else {
                h.to_ascii_lowercase()
            };
            v == h
        })
}

/// Calls `f` with every value of the fields whose name matches the
/// variable suffix `var`, until it returns `false`.
pub(crate) fn each_value(headers: &dyn Headers, var: &[u8], f: &mut dyn FnMut(&[u8]) -> bool) {
    headers.visit(&mut |n, v| !header_name_matches(var, n) || f(v));
}

/// The first value of a field named like `var`, handed to `f`.
pub(crate) fn with_first<R>(
    headers: &dyn Headers,
    var: &[u8],
    f: impl FnOnce(&[u8]) -> R,
) -> Option<R> {
    let mut f = Some(f);
    let mut out = None;
    each_value(headers, var, &mut |v| {
        out = f.take().map(|f| f(v));
        false
    });
    out
}

/// The value of cookie `name` in one `Cookie` field: pairs split on `;`,
/// leading spaces skipped, the name matched case-insensitively, as
/// `ngx_http_parse_multi_header_lines` in nginx 1.22.
pub(crate) fn find_cookie<'a>(field: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    field.split(|&b| b == b';').find_map(|pair| {
        let pair = pair.trim_ascii_start();
        let rest = pair.get(name.len()..)?;
        (pair[..name.len()].eq_ignore_ascii_case(name) && rest.first() == Some(&b'='))
            .then(|| &rest[1..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_matching() {
        assert!(header_name_matches(b"user_agent", b"User-Agent"));
        assert!(header_name_matches(b"user_agent", b"USER_AGENT"));
        assert!(!header_name_matches(b"user_agent", b"User-Agents"));
        assert!(!header_name_matches(b"user-agent", b"User-Agent"));
        let h = vec![("X-A", "1"), ("Host", "h"), ("x-a", "2"), ("X-A", "3")];
        let mut got = Vec::new();
        each_value(&h, b"x_a", &mut |v| {
            got.push(v.to_vec());
            got.len() < 2
        });
        assert_eq!(got, [b"1", b"2"]);
        assert_eq!(with_first(&h, b"x_a", <[u8]>::to_vec), Some(b"1".to_vec()));
        assert_eq!(with_first(&NoHeaders, b"x", <[u8]>::len), None);
        let pairs = [(b"A".as_slice(), b"v".as_slice())];
        assert_eq!(
            with_first(&HeaderPairs(&pairs), b"a", <[u8]>::to_vec),
            Some(b"v".to_vec())
        );
    }

    #[test]
    fn from_a_parsed_request() {
        let raw = b"GET /a/../b?x=1 HTTP/1.1\r\nHost: Example.COM:8080\r\nX-A: v\r\n\r\n";
        let mut req = peregrine_codec::Request::new();
        let parsed = peregrine_codec::parse_request(raw, &Default::default(), &mut req);
        assert!(
            matches!(parsed, Ok(peregrine_codec::Parsed::Complete(_))),
            "{parsed:?}"
        );
        let addr = SocketAddr::from(([127, 0, 0, 1], 1));
        let t = SystemTime::UNIX_EPOCH;
        let rec = RequestLog::new(addr, addr, t, t).with_request(&req);
        assert_eq!(
            rec.request_line,
            Some(b"GET /a/../b?x=1 HTTP/1.1".as_slice())
        );
        assert_eq!(rec.method, Some(b"GET".as_slice()));
        assert_eq!(rec.request_uri, Some(b"/a/../b?x=1".as_slice()));
        assert_eq!(rec.uri, Some(b"/b".as_slice()));
        assert_eq!(rec.args, Some(b"x=1".as_slice()));
        assert_eq!(rec.protocol, Some(b"HTTP/1.1".as_slice()));
        assert_eq!(rec.host, Some(b"example.com".as_slice()));
        assert_eq!(
            with_first(rec.request_headers, b"x_a", <[u8]>::to_vec),
            Some(b"v".to_vec())
        );
    }

    #[test]
    fn response_fields() {
        let mut head = peregrine_codec::fields::FieldList::new();
        head.push_first("Content-Type", "text/html");
        head.push("X-Empty", "");
        head.push("Cache-Control", " a ");
        let mut got = Vec::new();
        head.visit(&mut |n, v| {
            got.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ));
            true
        });
        let want = [
            ("Content-Type", "text/html"),
            ("X-Empty", ""),
            ("Cache-Control", "a"),
        ];
        assert_eq!(got.len(), want.len());
        for ((n, v), (wn, wv)) in got.iter().zip(want) {
            assert_eq!((n.as_str(), v.as_str()), (wn, wv));
        }
    }
}
