//! The gateway protocols on the proxy's state machine (nginx's fastcgi,
//! uwsgi and scgi modules on `ngx_http_upstream.c`). The request side
//! frames the body after core's records (FastCGI `STDIN` records, SCGI's
//! netstring with `CONTENT_LENGTH` first, uwsgi's bytes as they are); the
//! answer side turns what the application sends into what the HTTP/1
//! path reads: FastCGI's records decoded (`STDOUT` into the answer's
//! buffer, `STDERR` logged as nginx logs it, `END_REQUEST` the body's
//! end), and a CGI head (`Status:`, `Location:`; FastCGI always, uwsgi
//! and SCGI when they send no status line) rewritten as an HTTP/1.1
//! head for `codec::upstream`. The body's framing then is the HTTP
//! path's (a `Content-Length`, else until the answer ends).

use std::io::{self, Read};

use peregrine_core::proxy::Proto;
use peregrine_fastcgi as fcgi;

use super::Proxy;

/// One gateway answer being read.
pub struct Gw {
    dec: fcgi::Decoder,
    /// FastCGI record bytes read and not yet decoded.
    raw: Vec<u8>,
    /// The CGI head while it is being read (`None` once rewritten, or for
    /// an answer with an HTTP status line).
    head: Option<fcgi::HeadParser>,
    /// Whether the answer's first bytes were looked at (uwsgi, SCGI: a
    /// status line or a CGI head).
    decided: bool,
    /// `END_REQUEST` arrived: the answer is over.
    pub ended: bool,
    /// `STDERR` contents not yet logged, as read (each trimmed when
    /// logged, as nginx trims what one read brought).
    pub stderr: Vec<Vec<u8>>,
}

/// What the CGI head step found.
pub enum HeadStep {
    /// `p.inb` now starts with an HTTP/1.1 head (or had one).
    Ready,
    /// More bytes are needed.
    More,
    /// nginx's error text; the answer is invalid (502 or the next peer).
    Invalid(String),
}

impl Gw {
    pub fn new(proto: Proto, head_limit: usize) -> Gw {
        Gw {
            dec: fcgi::Decoder::new(fcgi::NGINX_REQUEST_ID),
            raw: Vec::new(),
            head: (proto == Proto::FastCgi).then(|| fcgi::HeadParser::new(head_limit)),
            decided: proto == Proto::FastCgi,
            ended: false,
            stderr: Vec::new(),
        }
    }
}

/// The request's bytes for a gateway: core's records, then the body.
pub fn build_request(p: &mut Proxy) {
    p.out.clear();
    let (len, feed) = super::body_out::plan(p);
    p.feed = feed;
    let body = super::body_out::inline(&p.job.body, feed, &p.vars);
    match p.job.proto {
        Proto::FastCgi => {
            p.out.extend_from_slice(&p.job.head);
            fcgi::stdin(&mut p.out, fcgi::NGINX_REQUEST_ID, body);
            if feed == super::body_out::Feed::Done {
                fcgi::end_stdin(&mut p.out, fcgi::NGINX_REQUEST_ID);
            }
        }
        Proto::Scgi => {
            // `ngx_http_scgi_create_request`: CONTENT_LENGTH first, the
            // headers as a netstring ("len:...,"), the body after.
            let cl = format!("CONTENT_LENGTH\0{}\0", len.unwrap_or(0));
            let len = cl.len() + p.job.head.len();
            p.out.extend_from_slice(format!("{len}:").as_bytes());
            p.out.extend_from_slice(cl.as_bytes());
            p.out.extend_from_slice(&p.job.head);
            p.out.push(b',');
            p.out.extend_from_slice(body);
        }
        Proto::Uwsgi | Proto::Http => {
            p.out.extend_from_slice(&p.job.head);
            p.out.extend_from_slice(body);
        }
    }
    p.sent = 0;
    p.gw = Some(Box::new(Gw::new(p.job.proto, p.job.up().buffer_size)));
}

/// FastCGI's read: records from the socket until some `STDOUT` content is
/// in `p.inb` (its length returned), `Ok(0)` once the request ended or the
/// socket closed, `InvalidData` with nginx's text for a broken stream.
///
/// Reads go into the proxy's per-thread buffer ([`super::SCRATCH`],
/// zeroed once) and are decoded from it; only a record cut by the read's
/// end is kept in `gw.raw`. (A read into `gw.raw` grown by `resize`
/// zeroed 16 KiB per read and allocated them per request.) The caller
/// (`read_up`) reads only after readiness, as for the proxy.
pub fn read_fcgi(p: &mut Proxy) -> io::Result<usize> {
    let Some(gw) = p.gw.as_deref_mut() else {
        return Ok(0);
    };
    let before = p.inb.len();
    let mut raw = std::mem::take(&mut gw.raw);
    let r = decode(gw, &raw, &mut p.inb);
    raw.drain(..*r.as_ref().unwrap_or(&0));
    gw.raw = raw;
    r?;
    loop {
        let got = p.inb.len() - before;
        if got > 0 || gw.ended {
            return Ok(got);
        }
        let Some(s) = p.sock.as_mut() else {
            return Ok(0);
        };
        let drained = &mut p.drained;
        let n = super::SCRATCH.with_borrow_mut(|buf| -> io::Result<usize> {
            if buf.is_empty() {
                buf.resize(super::READ_CHUNK, 0);
            }
            let n = s.read(buf)?;
            // Less than asked for: the socket is empty, and the
            // connection may be pooled without a look (`end_upstream`).
            *drained = n < buf.len();
            if gw.raw.is_empty() {
                let used = decode(gw, &buf[..n], &mut p.inb)?;
                gw.raw.extend_from_slice(&buf[used..n]);
            } else {
                gw.raw.extend_from_slice(&buf[..n]);
                let raw = std::mem::take(&mut gw.raw);
                let used = decode(gw, &raw, &mut p.inb);
                gw.raw = raw;
                gw.raw.drain(..used?);
            }
            Ok(n)
        })?;
        if let Some(t) = p.vars.tries.last_mut() {
            t.received += n as u64;
        }
        if n == 0 {
            return Ok(0);
        }
    }
}

/// Decodes the records of `raw`: `STDOUT` contents appended to `inb`,
/// `STDERR` kept, `END_REQUEST` noted. Returns the bytes used (a record
/// cut at the end is left).
fn decode(gw: &mut Gw, raw: &[u8], inb: &mut Vec<u8>) -> io::Result<usize> {
    let mut pos = 0;
    while pos < raw.len() && !gw.ended {
        let pr = gw
            .dec
            .decode(&raw[pos..])
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        let base = pos;
        match pr.event {
            Some(fcgi::Event::Stdout(r)) => {
                inb.extend_from_slice(&raw[base + r.start..base + r.end]);
            }
            Some(fcgi::Event::Stderr(r)) => {
                gw.stderr.push(raw[base + r.start..base + r.end].to_vec());
            }
            Some(fcgi::Event::End(_)) => gw.ended = true,
            Some(fcgi::Event::StdoutEnd | fcgi::Event::Ignored(_)) | None => {}
        }
        pos += pr.consumed;
        if pr.consumed == 0 {
            break;
        }
    }
    Ok(pos)
}

/// Whether the connection may serve another request: the FastCGI request
/// ended with nothing after it and `fastcgi_keep_conn` asked for it
/// (uwsgi and SCGI close, as nginx's modules do).
pub fn reusable(p: &Proxy) -> bool {
    p.job.keep_conn() && p.gw.as_ref().is_some_and(|g| g.ended && g.raw.is_empty())
}

/// The CGI head at the start of `p.inb` rewritten as an HTTP/1.1 head
/// (`ngx_http_fastcgi_process_header`, the scgi and uwsgi modules'
/// `process_status_line` falling back to it).
pub fn cgi_head(p: &mut Proxy) -> HeadStep {
    let Some(gw) = p.gw.as_deref_mut() else {
        return HeadStep::Ready;
    };
    if !gw.decided {
        if p.inb.len() < 5 && !p.inb.is_empty() && b"HTTP/".starts_with(&p.inb) {
            return HeadStep::More;
        }
        if p.inb.is_empty() {
            return HeadStep::More;
        }
        gw.decided = true;
        if !p.inb.starts_with(b"HTTP/") {
            gw.head = Some(fcgi::HeadParser::new(p.job.up().buffer_size));
        }
    }
    let Some(parser) = gw.head.as_mut() else {
        return HeadStep::Ready;
    };
    match parser.feed(&p.inb) {
        Ok(fcgi::HeadStatus::Partial) => {
            p.inb.clear();
            if gw.ended {
                return HeadStep::Invalid(fcgi::HeadError::PrematureStdout.to_string());
            }
            HeadStep::More
        }
        Ok(fcgi::HeadStatus::Complete(n)) => {
            let h = parser.head();
            let mut out = Vec::with_capacity(n + 32);
            out.extend_from_slice(b"HTTP/1.1 ");
            match h.status_line() {
                Some(l) => out.extend_from_slice(l),
                None => out.extend_from_slice(h.status().to_string().as_bytes()),
            }
            out.extend_from_slice(b"\r\n");
            for (name, value) in h.headers() {
                if name.eq_ignore_ascii_case(b"status") {
                    continue;
                }
                out.extend_from_slice(name);
                out.extend_from_slice(b": ");
                out.extend_from_slice(value);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&p.inb[n..]);
            p.inb = out;
            gw.head = None;
            HeadStep::Ready
        }
        Err(e) => HeadStep::Invalid(e.to_string()),
    }
}

/// Whether `p.inb` holds the (rewritten) head, not CGI head bytes.
pub fn head_ready(p: &Proxy) -> bool {
    p.gw.as_ref().is_some_and(|g| g.decided && g.head.is_none())
}

/// `upstream: "fastcgi://127.0.0.1:9000"` in the error log.
pub fn upstream_url(p: &Proxy) -> String {
    let scheme = match p.job.proto {
        Proto::FastCgi => "fastcgi://",
        Proto::Uwsgi => "uwsgi://",
        Proto::Scgi => "scgi://",
        Proto::Http => "http://",
    };
    let sep = if p.peer_name.starts_with("unix:") {
        ":"
    } else {
        ""
    };
    format!("{scheme}{}{sep}", p.peer_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FastCGI answer split at every byte decodes to the same STDOUT,
    /// STDERR and end.
    #[test]
    fn records_split_anywhere() {
        let mut wire = Vec::new();
        for (kind, content) in [
            (fcgi::RecordType::Stderr, &b"PHP Warning: x\n"[..]),
            (fcgi::RecordType::Stdout, b"Status: 404\r\n\r\nbody"),
            (fcgi::RecordType::Stdout, b""),
        ] {
            let h = fcgi::Header::new(kind, 1, content.len() as u16);
            wire.extend_from_slice(&h.to_bytes());
            wire.extend_from_slice(content);
            wire.extend(std::iter::repeat_n(0, usize::from(h.padding_length)));
        }
        let h = fcgi::Header::new(fcgi::RecordType::EndRequest, 1, 8);
        wire.extend_from_slice(&h.to_bytes());
        wire.extend_from_slice(&[0; 8]);
        for cut in 0..=wire.len() {
            let mut gw = Gw::new(Proto::FastCgi, 4096);
            let mut inb = Vec::new();
            for part in [&wire[..cut], &wire[cut..]] {
                let mut raw = std::mem::take(&mut gw.raw);
                raw.extend_from_slice(part);
                let used = decode(&mut gw, &raw, &mut inb).expect("decode");
                raw.drain(..used);
                gw.raw = raw;
            }
            assert_eq!(inb, b"Status: 404\r\n\r\nbody", "cut {cut}");
            assert_eq!(gw.stderr.concat(), b"PHP Warning: x\n", "cut {cut}");
            assert!(gw.ended && gw.raw.is_empty(), "cut {cut}");
        }
    }
}
