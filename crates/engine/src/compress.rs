//! On-the-fly compression of the responses core marks `compressible`:
//! gzip, brotli and zstd as nginx's filter modules apply them.
//!
//! The decision (`gzip`, `gzip_types`, `gzip_min_length`, `gzip_http_version`,
//! `Accept-Encoding`, ...) and the encoders are peregrine-compress's. This
//! module does what nginx's filters do around them: rewrite the head with
//! peregrine-compress's `rewrite_head` (drop `Content-Length` and
//! `Accept-Ranges`, weaken the ETag, add `Transfer-Encoding: chunked`,
//! `Vary` and `Content-Encoding` where nginx's header filter puts them) and
//! stream the body through the encoder, chunk-framed for HTTP/1.1 (an
//! HTTP/1.0 body ends with the connection).

use std::time::SystemTime;

use peregrine_codec::{Request, Version};
use peregrine_compress::{
    Accepted, Encoded, Encoder, Policy, RequestFacts, ResponseFacts, decide, rewrite_head,
};
use peregrine_core::Response;

/// A body to be sent through an encoder.
pub struct Compressing {
    pub encoder: Encoder,
    /// HTTP/1.1: chunked transfer coding; HTTP/1.0: delimited by close.
    pub chunked: bool,
}

/// Decides and, when compressing or varying, rewrites `resp`'s head.
/// Returns the encoder when the body must go through one (boxed: an
/// encoder's state is large, and most responses carry `None` around).
pub fn apply(req: &Request, resp: &mut Response, now: SystemTime) -> Option<Box<Compressing>> {
    if !resp.compressible {
        return None;
    }
    // The settings are borrowed, not cloned: a clone is an atomic increment
    // and decrement of a count every worker shares, per response.
    let (encoder, vary) = {
        let policy = Policy::of(resp.conf.as_deref()?);
        if !policy.may_change(req.header("accept-encoding").is_some()) {
            return None;
        }
        let (req_facts, resp_facts) = facts(req, resp, now);
        let decision = decide(&req_facts, &resp_facts, &policy);
        let encoder = decision
            .coding
            .and_then(|c| Encoder::with_length_hint(c, policy.level(c), resp.content_length).ok());
        (encoder, decision.vary)
    };
    if encoder.is_none() && !vary {
        return None;
    }
    // `chunked_transfer_encoding off`: framed as for HTTP/1.0 (the close
    // ends the body).
    let http11 = req.version() == Version::Http11
        && resp
            .conf
            .as_ref()
            .is_none_or(|c| c.conn.chunked_transfer_encoding);
    let coding = encoder.as_ref().map(Encoder::coding);
    let chunked = http11 && !resp.header_only;
    let encoded = coding.map_or(Encoded::No, Encoded::OnTheFly);
    rewrite_head(resp.head.to_mut(), encoded, vary, chunked);
    if coding.is_some() {
        resp.content_length = None;
        // The encoder's output is framed by the HTTP/1 writer.
        resp.chunked = chunked;
        if !http11 {
            // No length and no chunked coding: the close ends the body.
            resp.keepalive = false;
        }
    }
    let encoder = encoder?;
    (!resp.header_only).then(|| Box::new(Compressing { encoder, chunked }))
}

/// What the compression decision reads of the request and of the response
/// core made.
fn facts<'a>(
    req: &'a Request,
    resp: &'a Response,
    now: SystemTime,
) -> (RequestFacts<'a>, ResponseFacts<'a>) {
    let head = &resp.head;
    let req_facts = RequestFacts {
        accepted: Accepted::from_header(req.header("accept-encoding")),
        http_version: if req.version() == Version::Http11 {
            (1, 1)
        } else {
            (1, 0)
        },
        user_agent: req.header("user-agent"),
        via: req.header("via").is_some(),
        authorization: req.header("authorization").is_some(),
        gzip_tested: None,
    };
    let resp_facts = ResponseFacts {
        status: resp.status,
        content_type: head.get_str("content-type").map(str::trim),
        content_length: resp.content_length,
        content_encoding: head.get_str("content-encoding").map(str::trim),
        // A static file's Last-Modified is made after the filters ran.
        last_modified: false,
        etag: head.has("etag"),
        now: peregrine_codec::date::unix_secs(now),
        ..ResponseFacts::default()
    };
    (req_facts, resp_facts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_core::Body;
    use peregrine_core::fixtures::{fields_of, head_parts, head_text};

    fn request(text: &str) -> Request {
        let mut r = Request::new();
        let limits = peregrine_codec::Limits::default();
        peregrine_codec::parse_request(text.as_bytes(), &limits, &mut r).unwrap();
        r
    }

    /// A response with the fields of `head` (`Name: value` lines), the
    /// first `first` of them before the split.
    fn response(head: &str, first: usize) -> Response {
        let conf = peregrine_conf::parse_str(
            "events {} http { gzip on; server { listen 8080; } }",
            "/tmp/peregrine-compress-test/nginx.conf",
        )
        .unwrap();
        let loc = conf.http.as_ref().unwrap().servers[0].conf.clone();
        Response {
            status: 200,
            head: fields_of(head, first).into(),
            body: Body::Static(b"x"),
            content_length: Some(100),
            chunked: false,
            trailers: None,
            keepalive: true,
            header_only: false,
            conf: Some(loc),
            server: None,
            compressible: true,
        }
    }

    #[test]
    fn rewrites_head_like_nginx() {
        let head = "Content-Type: text/html\r\nContent-Length: 100\r\nETag: bogus\r\nX-No-Value: \r\nAccept-Ranges: bytes\r\n";
        let mut resp = response(head, 2);
        let req = request("GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
        let c = apply(&req, &mut resp, SystemTime::now()).expect("compresses");
        assert!(c.chunked);
        // An ETag that is not a quoted tag is dropped (ngx_http_weak_etag).
        assert_eq!(
            head_parts(&resp.head),
            (
                "Content-Type: text/html\r\nTransfer-Encoding: chunked\r\n".to_string(),
                "X-No-Value: \r\nContent-Encoding: gzip\r\n".to_string()
            )
        );
        assert_eq!(resp.content_length, None);
    }

    #[test]
    fn untouched_when_not_compressible_or_not_accepted() {
        let head = "Content-Type: text/plain\r\nContent-Length: 100\r\n";
        let mut resp = response(head, 2);
        resp.compressible = false;
        let req = request("GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
        assert!(apply(&req, &mut resp, SystemTime::now()).is_none());
        assert_eq!(head_text(&resp.head), head);
        // text/plain is not in gzip_types (default text/html only): no Vary either.
        resp.compressible = true;
        assert!(apply(&req, &mut resp, SystemTime::now()).is_none());
        assert_eq!(head_text(&resp.head), head);
    }

    #[test]
    fn vary_is_not_repeated() {
        let head = "Content-Type: text/html\r\nContent-Length: 100\r\nVary: Accept-Encoding\r\n";
        let mut resp = response(head, 2);
        let req = request("GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
        assert!(apply(&req, &mut resp, SystemTime::now()).is_some());
        let text = head_text(&resp.head);
        assert_eq!(text.matches("Vary").count(), 1, "{text}");
    }
}
