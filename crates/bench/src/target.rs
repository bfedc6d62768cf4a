//! Targets: the URL grammar ab accepts (`[http://]hostname[:port]/path`),
//! name resolution, and the request bytes each connection sends.
//!
//! The URL parser is hand-written because ab's grammar is not a URL's: the
//! scheme is optional and only `http://` (later `https://`) is meaningful;
//! a general URL crate would accept and normalise far more than ab does.
//!
//! With `--http1.0` the request is byte for byte what ab 2.3 sends (header
//! order included: Connection, Cookie, Authorization, Content-length and
//! Content-type, the `-H` lines, then Host, User-Agent and Accept unless a
//! `-H` line overrides them). Without it the request is HTTP/1.1 with the
//! same headers, `Connection: close` when `-k` is not given (HTTP/1.1
//! connections persist by default, RFC 9112 §9.3, and ab without `-k`
//! means one connection per request).

use std::net::{SocketAddr, ToSocketAddrs};

use base64::Engine as _;

use crate::error::BenchError;

/// The User-Agent ab sends; kept in `--http1.0` mode so servers log the
/// same line as under ab.
pub const AB_USER_AGENT: &str = "ApacheBench/2.3";
/// Our own User-Agent in HTTP/1.1 mode.
pub const USER_AGENT: &str = concat!("peregrine-bench/", env!("CARGO_PKG_VERSION"));

/// One parsed URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// Host as written (without brackets for IPv6).
    pub host: String,
    pub port: u16,
    /// Path and query, always starting with `/`.
    pub path: String,
}

impl Url {
    /// Parses ab's URL grammar. `https://` is refused until TLS lands.
    pub fn parse(s: &str) -> Result<Url, BenchError> {
        let rest = if let Some(r) = s.strip_prefix("http://") {
            r
        } else if s.starts_with("https://") {
            return Err(BenchError::Unsupported("https://".into()));
        } else if s.contains("://") {
            return Err(BenchError::Url(s.to_string()));
        } else {
            s
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, "/"),
        };
        let (host, port) = split_host_port(authority).ok_or_else(|| BenchError::Url(s.into()))?;
        if host.is_empty() || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(BenchError::Url(s.to_string()));
        }
        Ok(Url {
            host,
            port,
            path: path.to_string(),
        })
    }

    /// ab's Host header value: the port only when it is not 80, IPv6
    /// literals in brackets.
    pub fn host_field(&self) -> String {
        let h = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 80 {
            h
        } else {
            format!("{h}:{}", self.port)
        }
    }

    /// Resolves the host to its first address (ab uses the first too).
    pub fn resolve(&self) -> Result<SocketAddr, BenchError> {
        let err = |source| BenchError::Resolve {
            host: self.host.clone(),
            source,
        };
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(err)?
            .next()
            .ok_or_else(|| {
                err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no address",
                ))
            })
    }
}

fn split_host_port(authority: &str) -> Option<(String, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &rest[..end];
        let port = match &rest[end + 1..] {
            "" => 80,
            p => p.strip_prefix(':')?.parse().ok()?,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h.to_string(), p.parse().ok().filter(|p| *p != 0)?)),
        None => Some((authority.to_string(), 80)),
    }
}

/// Everything that shapes the request bytes.
#[derive(Clone, Debug, Default)]
pub struct RequestSpec {
    pub method: String,
    pub http10: bool,
    pub keepalive: bool,
    /// ab keeps only the last `-C`.
    pub cookie: Option<String>,
    /// `user:password` for `-A`.
    pub auth: Option<String>,
    pub headers: Vec<String>,
    pub body: Option<Vec<u8>>,
    pub content_type: String,
    /// HEAD responses carry no body whatever their Content-Length says.
    pub head: bool,
}

fn has_header(headers: &[String], name: &str) -> bool {
    headers.iter().any(|h| {
        h.split_once(':')
            .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case(name))
    })
}

impl RequestSpec {
    /// The complete request (head and body) sent for `url`.
    pub fn build(&self, url: &Url) -> Vec<u8> {
        let mut r = String::with_capacity(256);
        let version = if self.http10 { "HTTP/1.0" } else { "HTTP/1.1" };
        r.push_str(&format!("{} {} {version}\r\n", self.method, url.path));
        if self.keepalive {
            r.push_str(if self.http10 {
                "Connection: Keep-Alive\r\n"
            } else {
                "Connection: keep-alive\r\n"
            });
        } else if !self.http10 {
            r.push_str("Connection: close\r\n");
        }
        if let Some(c) = &self.cookie {
            r.push_str(&format!("Cookie: {c}\r\n"));
        }
        if let Some(a) = &self.auth {
            let b64 = base64::engine::general_purpose::STANDARD.encode(a.as_bytes());
            r.push_str(&format!("Authorization: Basic {b64}\r\n"));
        }
        if let Some(body) = &self.body {
            r.push_str(&format!(
                "Content-length: {}\r\nContent-type: {}\r\n",
                body.len(),
                self.content_type
            ));
        }
        for h in &self.headers {
            r.push_str(h);
            r.push_str("\r\n");
        }
        if !has_header(&self.headers, "Host") {
            r.push_str(&format!("Host: {}\r\n", url.host_field()));
        }
        if !has_header(&self.headers, "User-Agent") {
            let ua = if self.http10 {
                AB_USER_AGENT
            } else {
                USER_AGENT
            };
            r.push_str(&format!("User-Agent: {ua}\r\n"));
        }
        if !has_header(&self.headers, "Accept") {
            r.push_str("Accept: */*\r\n");
        }
        r.push_str("\r\n");
        let mut bytes = r.into_bytes();
        if let Some(body) = &self.body {
            bytes.extend_from_slice(body);
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("http://127.0.0.1:8080/a?b").expect("url");
        assert_eq!(
            u,
            Url {
                host: "127.0.0.1".into(),
                port: 8080,
                path: "/a?b".into()
            }
        );
        assert_eq!(Url::parse("localhost/").expect("url").port, 80);
        assert_eq!(Url::parse("http://[::1]:81/").expect("url").host, "::1");
        assert_eq!(
            Url::parse("http://[::1]:81/").expect("url").host_field(),
            "[::1]:81"
        );
        assert_eq!(Url::parse("http://h").expect("url").path, "/");
        assert!(matches!(
            Url::parse("https://h/"),
            Err(BenchError::Unsupported(_))
        ));
        assert!(Url::parse("ftp://h/").is_err());
        assert!(Url::parse("http://h:x/").is_err());
        assert!(Url::parse("http://h:0/").is_err());
        assert!(Url::parse("http:///").is_err());
        assert!(Url::parse("http://h/a b").is_err());
    }

    /// The exact bytes ab 2.3 sends for
    /// `ab -k -p file -C a=b -C c=d -A u:p -H 'X-A: 1' http://127.0.0.1:18081/x?y`
    /// (captured from Debian's ab).
    #[test]
    fn ab_request_bytes() {
        let spec = RequestSpec {
            method: "POST".into(),
            http10: true,
            keepalive: true,
            cookie: Some("c=d".into()),
            auth: Some("u:p".into()),
            headers: vec!["X-A: 1".into()],
            body: Some(b"body\n".to_vec()),
            content_type: "text/plain".into(),
            head: false,
        };
        let url = Url::parse("http://127.0.0.1:18081/x?y").expect("url");
        let want = "POST /x?y HTTP/1.0\r\nConnection: Keep-Alive\r\nCookie: c=d\r\n\
            Authorization: Basic dTpw\r\nContent-length: 5\r\nContent-type: text/plain\r\n\
            X-A: 1\r\nHost: 127.0.0.1:18081\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\nbody\n";
        assert_eq!(String::from_utf8_lossy(&spec.build(&url)), want);
    }

    #[test]
    fn http11_and_overrides() {
        let spec = RequestSpec {
            method: "GET".into(),
            headers: vec!["host: other".into()],
            ..Default::default()
        };
        let url = Url::parse("http://h/").expect("url");
        let got = String::from_utf8(spec.build(&url)).expect("utf8");
        assert!(got.starts_with("GET / HTTP/1.1\r\nConnection: close\r\nhost: other\r\n"));
        assert!(!got.contains("Host: h"));
    }
}
