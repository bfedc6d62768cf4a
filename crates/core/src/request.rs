//! The request as core sees it: a borrowed view with the few fields the
//! phases read, so that the phases do not depend on the codec's types (and
//! tests and benches can build requests without a parser).

/// The methods core distinguishes (nginx's static module allows GET, HEAD
/// and, until it has opened the file, POST).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Other,
}

impl Method {
    pub fn from_name(name: &str) -> Method {
        match name {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            _ => Method::Other,
        }
    }
}

/// A request, borrowed from the parser's buffer.
#[derive(Clone, Copy)]
pub struct RequestView<'a> {
    pub method: Method,
    pub method_name: &'a str,
    /// (major, minor), e.g. (1, 1).
    pub version: (u8, u8),
    /// The decoded, normalized path (`$uri`): starts with `/`, no `.`/`..`
    /// segments.
    pub path: &'a str,
    /// The query string without `?` (`$args`).
    pub args: Option<&'a str>,
    /// The request target as received (`$request_uri`).
    pub target: &'a str,
    /// The Host (from the absolute request target or the Host header), as
    /// received; core lowercases it and strips the port and a trailing dot.
    pub host: Option<&'a str>,
    /// `Content-Length` of the request body, when present.
    pub content_length: Option<u64>,
    /// Any request header by name (case-insensitive), first occurrence, as
    /// nginx 1.22 keeps the first of the conditional headers.
    pub headers: &'a dyn HeaderLookup,
}

/// Looks request headers up by name (ASCII case-insensitive, first one).
pub trait HeaderLookup {
    fn get(&self, name: &str) -> Option<&str>;

    /// `false` only when no header named in `mask`
    /// ([`peregrine_codec::request::header_mask`]) is present; `true` means
    /// "look them up".
    fn may_have_any(&self, mask: u64) -> bool {
        let _ = mask;
        true
    }

    /// The head's bytes as received (`$request_length` before the body),
    /// when the request came off the wire.
    fn head_len(&self) -> Option<usize> {
        None
    }

    /// Every header in order (the proxy passes them on).
    fn each(&self, f: &mut dyn FnMut(&str, &[u8])) {
        let _ = f;
    }

    /// Every value of `name`, in order (several `X-Forwarded-For` lines;
    /// realip): by default the first alone.
    fn each_value<'s>(&'s self, name: &str, f: &mut dyn FnMut(&'s str)) {
        if let Some(v) = self.get(name) {
            f(v);
        }
    }
}

impl HeaderLookup for peregrine_codec::Request {
    fn get(&self, name: &str) -> Option<&str> {
        self.header(name)
    }

    fn each(&self, f: &mut dyn FnMut(&str, &[u8])) {
        for (n, v) in self.headers() {
            f(n, v);
        }
    }

    fn may_have_any(&self, mask: u64) -> bool {
        peregrine_codec::Request::may_have_any(self, mask)
    }

    fn head_len(&self) -> Option<usize> {
        Some(peregrine_codec::Request::head_len(self))
    }

    fn each_value<'s>(&'s self, name: &str, f: &mut dyn FnMut(&'s str)) {
        for (n, v) in self.headers() {
            if n.eq_ignore_ascii_case(name)
                && let Ok(v) = std::str::from_utf8(v)
            {
                f(v);
            }
        }
    }
}

/// (name, value) pairs, e.g. for tests and benches.
impl<N: AsRef<str>, V: AsRef<str>> HeaderLookup for Vec<(N, V)> {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    fn each(&self, f: &mut dyn FnMut(&str, &[u8])) {
        for (n, v) in self {
            f(n.as_ref(), v.as_ref().as_bytes());
        }
    }
}

impl std::fmt::Debug for RequestView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestView")
            .field("method", &self.method_name)
            .field("version", &self.version)
            .field("path", &self.path)
            .field("args", &self.args)
            .field("host", &self.host)
            .finish()
    }
}

impl<'a> RequestView<'a> {
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers.get(name)
    }
}
