//! Incremental HTTP/1.x response parser: the head with httparse, then the
//! body framed by Content-Length, the chunked coding or the connection
//! close (RFC 9112 §6.3), and whether the connection may be reused.
//!
//! It never copies a head that arrives in one read; a head split across
//! reads is gathered in a small per-connection buffer. The body framing is
//! hand-written (httparse parses heads only, and the HTTP client crates
//! own their sockets and allocate per response, which a load generator
//! cannot afford).

use crate::chunked::Chunked;

/// A response head larger than this is refused (ab's limit is its 8 KiB
/// `CBUFFSIZE`; nginx's `large_client_header_buffers` default is 4×8k,
/// so 64 KiB leaves room for any sane server).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Header lines parsed per response head (httparse needs a fixed array).
pub const MAX_HEADERS: usize = 64;

/// Why a response could not be parsed (ab counts these as failures).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("malformed response head")]
    Malformed,
    #[error("response head larger than {MAX_HEAD_BYTES} bytes")]
    HeadTooLarge,
    #[error("invalid Content-Length")]
    BadLength,
    #[error("malformed chunked body")]
    BadChunk,
}

/// A complete response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The connection may carry another request.
    pub keep_alive: bool,
    /// Payload bytes (chunk framing excluded).
    pub body_bytes: u64,
    /// The `Server` header, captured only when asked.
    pub server: Option<String>,
}

#[derive(Clone, Copy, Debug)]
enum Body {
    Length(u64),
    Chunked(Chunked),
    UntilClose,
}

#[derive(Debug)]
enum State {
    Head,
    Body(Body),
}

/// How the stream ended when the peer closed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Eof {
    /// Nothing of a response had arrived.
    Clean,
    /// A read-to-close body ended: the response is complete.
    Complete(Response),
    /// The close cut a head or a delimited body short; body bytes so far.
    Truncated { status: u16, body_bytes: u64 },
}

/// Parser for the responses of one connection, in order.
#[derive(Debug)]
pub struct Parser {
    state: State,
    head_buf: Vec<u8>,
    current: Response,
    /// Any byte of the current response seen.
    started: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Parser {
            state: State::Head,
            head_buf: Vec::new(),
            current: Response::default(),
            started: false,
        }
    }
}

fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|b| *b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

impl Parser {
    /// Forgets any partial response (the connection was replaced).
    pub fn reset(&mut self) {
        *self = Parser {
            head_buf: std::mem::take(&mut self.head_buf),
            ..Parser::default()
        };
        self.head_buf.clear();
    }

    /// Whether bytes of an unfinished response have been consumed.
    pub fn in_progress(&self) -> bool {
        self.started
    }

    /// Consumes `data`; returns the bytes used and the response that
    /// completed, if one did (the caller feeds the rest again).
    /// `head_request`: the response to HEAD has no body (RFC 9110 §9.3.2).
    pub fn feed(
        &mut self,
        data: &[u8],
        head_request: bool,
        want_server: bool,
    ) -> Result<(usize, Option<Response>), ParseError> {
        if !data.is_empty() {
            self.started = true;
        }
        match self.state {
            State::Head => self.feed_head(data, head_request, want_server),
            State::Body(_) => self.feed_body(data),
        }
    }

    fn feed_head(
        &mut self,
        data: &[u8],
        head_request: bool,
        want_server: bool,
    ) -> Result<(usize, Option<Response>), ParseError> {
        let old = self.head_buf.len();
        let parsed = if old == 0 {
            parse_head(data, head_request, want_server)?
        } else {
            let room = (MAX_HEAD_BYTES + 1).saturating_sub(old).min(data.len());
            self.head_buf.extend_from_slice(&data[..room]);
            parse_head(&self.head_buf, head_request, want_server)?
        };
        let Some((len, resp, body)) = parsed else {
            if old == 0 {
                if data.len() > MAX_HEAD_BYTES {
                    return Err(ParseError::HeadTooLarge);
                }
                self.head_buf.extend_from_slice(data);
            } else if self.head_buf.len() > MAX_HEAD_BYTES {
                return Err(ParseError::HeadTooLarge);
            }
            return Ok((data.len(), None));
        };
        self.head_buf.clear();
        let used = len - old;
        if (100..200).contains(&resp.status) && resp.status != 101 {
            // Interim responses (RFC 9110 §15.2) precede the real one.
            return Ok((used, None));
        }
        self.current = resp;
        match body {
            Body::Length(0) => Ok((used, Some(self.finish()))),
            b => {
                self.state = State::Body(b);
                Ok((used, None))
            }
        }
    }

    fn feed_body(&mut self, data: &[u8]) -> Result<(usize, Option<Response>), ParseError> {
        let State::Body(body) = &mut self.state else {
            return Ok((0, None));
        };
        match body {
            Body::Length(rem) => {
                let take = (*rem).min(data.len() as u64);
                *rem -= take;
                self.current.body_bytes += take;
                if *rem == 0 {
                    Ok((take as usize, Some(self.finish())))
                } else {
                    Ok((take as usize, None))
                }
            }
            Body::Chunked(c) => {
                let fed = c.feed(data).map_err(|_| ParseError::BadChunk)?;
                self.current.body_bytes += fed.payload;
                Ok((fed.consumed, fed.done.then(|| self.finish())))
            }
            Body::UntilClose => {
                self.current.body_bytes += data.len() as u64;
                Ok((data.len(), None))
            }
        }
    }

    fn finish(&mut self) -> Response {
        self.state = State::Head;
        self.started = false;
        std::mem::take(&mut self.current)
    }

    /// The peer closed the connection.
    pub fn eof(&mut self) -> Eof {
        let out = match self.state {
            State::Body(Body::UntilClose) => Eof::Complete(self.finish()),
            _ if !self.started => Eof::Clean,
            _ => Eof::Truncated {
                status: self.current.status,
                body_bytes: self.current.body_bytes,
            },
        };
        self.reset();
        out
    }
}

/// Parses a complete head, or returns None when more bytes are needed.
fn parse_head(
    buf: &[u8],
    head_request: bool,
    want_server: bool,
) -> Result<Option<(usize, Response, Body)>, ParseError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut r = httparse::Response::new(&mut headers);
    let len = match r.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ParseError::Malformed),
    };
    let status = r.code.unwrap_or(0);
    let http11 = r.version == Some(1);
    let mut resp = Response {
        status,
        keep_alive: http11,
        ..Response::default()
    };
    let mut length: Option<u64> = None;
    let mut chunked = false;
    for h in r.headers.iter() {
        let name = h.name;
        if name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok());
            let v = v.ok_or(ParseError::BadLength)?;
            if length.is_some_and(|l| l != v) {
                return Err(ParseError::BadLength);
            }
            length = Some(v);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h
                .value
                .rsplit(|b| *b == b',')
                .next()
                .is_some_and(|t| t.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case("connection") {
            if has_token(h.value, "close") {
                resp.keep_alive = false;
            } else if has_token(h.value, "keep-alive") {
                resp.keep_alive = true;
            }
        } else if want_server && name.eq_ignore_ascii_case("server") {
            resp.server = Some(String::from_utf8_lossy(h.value).into_owned());
        }
    }
    // RFC 9112 §6.3: HEAD, 1xx, 204 and 304 have no body; chunked wins
    // over Content-Length; otherwise the body runs to the close.
    let body = if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        Body::Length(0)
    } else if chunked {
        Body::Chunked(Chunked::default())
    } else if let Some(l) = length {
        Body::Length(l)
    } else {
        resp.keep_alive = false;
        Body::UntilClose
    };
    Ok(Some((len, resp, body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `parts` in order; returns the completed responses and the
    /// parser for inspection.
    fn run(parts: &[&[u8]], head: bool) -> (Vec<Response>, Parser) {
        let mut p = Parser::default();
        let mut out = Vec::new();
        for part in parts {
            let mut rest = *part;
            while !rest.is_empty() {
                let (used, done) = p.feed(rest, head, true).expect("valid");
                rest = &rest[used..];
                out.extend(done);
            }
        }
        (out, p)
    }

    const TWO: &[u8] = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 404 No\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n";

    #[test]
    fn split_everywhere() {
        for cut in 0..=TWO.len() {
            let (a, b) = TWO.split_at(cut);
            let (out, p) = run(&[a, b], false);
            assert_eq!(out.len(), 2, "cut {cut}");
            assert_eq!(
                (out[0].status, out[0].body_bytes, out[0].keep_alive),
                (200, 5, true)
            );
            assert_eq!(out[0].server.as_deref(), Some("x"));
            assert_eq!(
                (out[1].status, out[1].body_bytes, out[1].keep_alive),
                (404, 3, false)
            );
            assert!(!p.in_progress());
        }
    }

    #[test]
    fn http10_keepalive_and_close_delimited() {
        let (out, _) = run(
            &[b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"],
            false,
        );
        assert!(out[0].keep_alive);
        let (out, _) = run(&[b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"], false);
        assert!(!out[0].keep_alive);
        let (out, mut p) = run(&[b"HTTP/1.1 200 OK\r\n\r\nabc", b"de"], false);
        assert!(out.is_empty());
        assert_eq!(
            p.eof(),
            Eof::Complete(Response {
                status: 200,
                keep_alive: false,
                body_bytes: 5,
                server: None
            })
        );
    }

    #[test]
    fn head_and_interim() {
        let (out, _) = run(&[b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"], true);
        assert_eq!(out[0].body_bytes, 0);
        let (out, _) = run(
            &[b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No\r\n\r\n"],
            false,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].status, 204);
    }

    #[test]
    fn truncation_and_errors() {
        let (_, mut p) = run(&[b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc"], false);
        assert_eq!(
            p.eof(),
            Eof::Truncated {
                status: 200,
                body_bytes: 3
            }
        );
        assert_eq!(p.eof(), Eof::Clean);
        let mut p = Parser::default();
        assert_eq!(
            p.feed(b"garbage\r\n\r\n", false, false),
            Err(ParseError::Malformed)
        );
        let mut p = Parser::default();
        assert_eq!(
            p.feed(
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                false,
                false
            ),
            Err(ParseError::BadLength)
        );
        let mut p = Parser::default();
        let big = vec![b'a'; MAX_HEAD_BYTES + 10];
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nX: ", false, false).map(|r| r.0),
            Ok(20)
        );
        assert_eq!(p.feed(&big, false, false), Err(ParseError::HeadTooLarge));
    }
}
