//! The request body's way to the upstream: read whole first through the
//! body layer (`*_request_buffering on`, [`Http1::read_client_body`]), or
//! passed on as the client sends it (`off`, nginx's
//! `r->request_body_no_buffering`), framed for the protocol spoken: as is
//! after a `Content-Length`, re-chunked to an HTTP/1.1 upstream when the
//! client's length is unknown, in FastCGI `STDIN` records. A body in a
//! temporary file is sent from the file, [`READ_CHUNK`] at a time.

use std::io::{self, Write};

use peregrine_codec::BodyKind;
use peregrine_conf::model::LogLevel;
use peregrine_core::proxy::{JobBody, Proto, ProxyJob, UpstreamVars};
use peregrine_fastcgi as fcgi;

use super::owner::Owner;
use super::{Fail, Io, Proxy, READ_CHUNK, State};
use crate::body::read::{Broken, Pull};
use crate::body::{self, ClientBody, PushError};
use crate::ctx::Ctx;
use crate::transport::Transport;

/// Where the body's bytes after those in `Proxy::out` come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// Nothing more: the body (if any) is in `out`.
    Done,
    /// The temporary file, from this offset.
    File(u64),
    /// The client, as it sends; `chunked`: re-chunked (HTTP/1.1 upstream).
    Client { chunked: bool },
}

/// Whether the body goes on unbuffered: `*_request_buffering off`, and
/// what the protocol can take without a length (nginx's handlers: the
/// proxy re-chunks only to HTTP/1.1, uwsgi and SCGI need the length).
pub fn unbuffered(job: &ProxyJob, kind: BodyKind) -> bool {
    let chunked = kind == BodyKind::Chunked;
    matches!(job.body, JobBody::Client)
        && !job.up().request_buffering
        && match job.proto {
            Proto::Http => !chunked || job.conf.proxy.http11,
            Proto::FastCgi => true,
            Proto::Uwsgi | Proto::Scgi => !chunked,
        }
}

/// The length to announce and where the body comes from, as the request
/// is built (again, for the next peer: the file is read from its start).
pub fn plan(p: &Proxy) -> (Option<u64>, Feed) {
    match &p.job.body {
        JobBody::None => (None, Feed::Done),
        JobBody::Fixed(b) if b.is_empty() => (None, Feed::Done),
        JobBody::Fixed(b) => (Some(b.len() as u64), Feed::Done),
        JobBody::Client if p.body_dec.is_some() && p.unbuffered => match p.client_len {
            Some(n) => (Some(n), Feed::Client { chunked: false }),
            None => (None, Feed::Client { chunked: true }),
        },
        JobBody::Client => match &p.body.file {
            Some(f) => (Some(f.len), Feed::File(0)),
            None => (
                Some(p.vars.request_body.as_ref().map_or(0, |b| b.len() as u64)),
                Feed::Done,
            ),
        },
    }
}

/// The body bytes that go right after the head (the rest comes from
/// the feed).
pub fn inline<'a>(body: &'a JobBody, feed: Feed, vars: &'a UpstreamVars) -> &'a [u8] {
    match body {
        JobBody::Fixed(b) => b,
        JobBody::Client if feed == Feed::Done => {
            vars.request_body.as_deref().map_or(&[], Vec::as_slice)
        }
        _ => &[],
    }
}

/// Frames one piece of the body for the upstream.
fn frame(out: &mut Vec<u8>, proto: Proto, chunked: bool, data: &[u8]) {
    match proto {
        Proto::Http if chunked => {
            out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        Proto::FastCgi => fcgi::stdin(out, fcgi::NGINX_REQUEST_ID, data),
        _ => out.extend_from_slice(data),
    }
}

/// The body's end for the upstream (the last chunk, the empty `STDIN`).
pub fn frame_end(out: &mut Vec<u8>, proto: Proto, chunked: bool) {
    match proto {
        Proto::Http if chunked => out.extend_from_slice(b"0\r\n\r\n"),
        Proto::FastCgi => fcgi::end_stdin(out, fcgi::NGINX_REQUEST_ID),
        _ => {}
    }
}

/// The body's side of the machine, for any [`Owner`].
pub(crate) trait BodyOut: Owner + Sized {
    /// The client's body read whole through the body layer before
    /// connecting (`*_request_buffering on`).
    fn read_client_body(&mut self, p: &mut Proxy, t: &mut Transport, cx: &mut Ctx) -> Io {
        let Some(mut dec) = p.body_dec.take() else {
            p.state = State::Connect;
            return Io::Done;
        };
        let conf = p.job.conf.clone();
        loop {
            let mut spilled = None;
            let mut err = None;
            let (pull, broken) = {
                let b = &mut p.body;
                self.pull_body(&mut dec, t, cx, &mut |d| match b.push(&conf, d) {
                    Ok(s) => {
                        spilled = spilled.take().or(s);
                        Ok(())
                    }
                    Err(e) => Err(push_failed(e, &mut err)),
                })
            };
            if let Some(path) = spilled {
                self.log(
                    cx,
                    ClientBody::spill_level(&conf),
                    &body::spill_text(&path),
                    "",
                );
            }
            match pull {
                Pull::More => continue,
                Pull::Wait => {
                    p.body_dec = Some(dec);
                    return Io::Wait;
                }
                Pull::Fail(s) => {
                    self.body_failed(cx, err, broken);
                    return Io::Fail(Fail::Client(s));
                }
                Pull::Done => {}
            }
            match p.body.finish(&conf) {
                Ok(Some(path)) => {
                    self.log(
                        cx,
                        ClientBody::spill_level(&conf),
                        &body::spill_text(&path),
                        "",
                    );
                }
                Ok(None) => {}
                Err(e) => {
                    self.body_failed(cx, Some((LogLevel::Crit, e.text())), None);
                    return Io::Fail(Fail::Client(500));
                }
            }
            p.vars.request_body = p.body.take_mem();
            p.vars.request_body_file = p.body.file.as_ref().map(|f| f.path_str().into());
            p.vars.request_body_len = Some(match (&p.vars.request_body, &p.body.file) {
                (Some(b), _) => b.len() as u64,
                (None, Some(f)) => f.len,
                (None, None) => 0,
            });
            if let Err(text) = self.late_head(p, cx) {
                self.log(cx, LogLevel::Error, &text, "");
                return Io::Fail(Fail::Client(500));
            }
            p.state = State::Connect;
            return Io::Done;
        }
    }

    /// A gateway's records with the parameters that waited for the
    /// body's length (`peregrine_core::gateway::LateParams`).
    fn late_head(&mut self, p: &mut Proxy, cx: &mut Ctx) -> Result<(), String> {
        if p.job.late.is_none() {
            return Ok(());
        }
        let Some(req) = self.ex_ref().and_then(|e| e.req()) else {
            return Ok(());
        };
        cx.core
            .late_gateway_head(&mut p.job, self.info(), req, cx.wall, &p.vars)
    }

    fn body_failed(&self, cx: &Ctx, err: Option<(LogLevel, String)>, broken: Option<Broken>) {
        let doing = "while reading client request body";
        match (err, broken) {
            (Some((level, text)), _) => self.log(cx, level, &text, ""),
            (None, Some(Broken::Closed)) => {
                self.log(
                    cx,
                    LogLevel::Info,
                    "client prematurely closed connection",
                    doing,
                );
            }
            (None, Some(Broken::Invalid)) => {
                self.log(
                    cx,
                    LogLevel::Error,
                    "client sent invalid chunked body",
                    doing,
                );
            }
            (None, None) => {}
        }
    }

    /// Sends the request: `out`, then the body's feed (file or client)
    /// until it ends.
    fn send_step(&mut self, p: &mut Proxy, t: &mut Transport, cx: &mut Ctx) -> Io {
        if let Some(io) = self.preread(p, t, cx) {
            return io;
        }
        loop {
            let Some(s) = p.sock.as_mut() else {
                return Io::Fail(Fail::Error);
            };
            while p.sent < p.out.len() {
                match s.write(&p.out[p.sent..]) {
                    Ok(n) => {
                        p.sent += n;
                        if let Some(t) = p.vars.tries.last_mut() {
                            t.sent += n as u64;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Io::Wait,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Io::Fail(Fail::Error),
                }
            }
            p.out.clear();
            p.sent = 0;
            match p.feed {
                Feed::Done => {
                    p.state = State::Head;
                    return Io::Done;
                }
                Feed::File(at) => {
                    if let Some(io) = self.feed_file(p, at, cx) {
                        return io;
                    }
                }
                Feed::Client { chunked } => {
                    if let Some(io) = self.feed_client(p, chunked, t, cx) {
                        return io;
                    }
                }
            }
        }
    }

    /// Before the head's first byte goes to the peer, the body bytes that
    /// came with the request's head (already in the connection's buffer)
    /// join it, so the peer reads them in the same write: nginx sends its
    /// preread buffer in the request's first chain. Only the buffer is
    /// taken here (the socket is not read), so `out` stays bounded.
    fn preread(&mut self, p: &mut Proxy, t: &mut Transport, cx: &mut Ctx) -> Option<Io> {
        let Feed::Client { chunked } = p.feed else {
            return None;
        };
        let untouched = p.sent == 0 && p.vars.tries.last().is_none_or(|tr| tr.sent == 0);
        if !untouched || p.out.is_empty() {
            return None;
        }
        let readable = std::mem::replace(&mut t.readable, false);
        let io = self.feed_client(p, chunked, t, cx);
        t.readable = readable;
        io
    }

    /// The next piece of the temporary file into `out`.
    fn feed_file(&mut self, p: &mut Proxy, at: u64, cx: &mut Ctx) -> Option<Io> {
        let proto = p.job.proto;
        let f = p.body.file.as_mut()?;
        let mut buf = vec![0u8; READ_CHUNK];
        match f.read_at(at, &mut buf) {
            Ok(0) => {
                frame_end(&mut p.out, proto, false);
                p.feed = Feed::Done;
            }
            Ok(n) => {
                frame(&mut p.out, proto, false, &buf[..n]);
                p.feed = Feed::File(at + n as u64);
            }
            Err(e) => {
                let text = crate::errlog::with_os_error(
                    &format!("pread() \"{}\" failed", f.path.display()),
                    &e,
                );
                self.log(cx, LogLevel::Crit, &text, "");
                return Some(Io::Fail(Fail::Client(500)));
            }
        }
        None
    }

    /// What the client sent meanwhile into `out` (unbuffered); the body
    /// layer keeps a copy for `$request_body` while it fits its buffer.
    fn feed_client(
        &mut self,
        p: &mut Proxy,
        chunked: bool,
        t: &mut Transport,
        cx: &mut Ctx,
    ) -> Option<Io> {
        let Some(mut dec) = p.body_dec.take() else {
            p.feed = Feed::Done;
            return None;
        };
        let conf = p.job.conf.clone();
        let proto = p.job.proto;
        let mut err = None;
        // What one read brought goes on as one piece (nginx sends its
        // buffer: small chunks of a read are one chunk upstream).
        let mut piece = Vec::new();
        let (pull, broken) = {
            let b = &mut p.body;
            self.pull_body(&mut dec, t, cx, &mut |d| match b.tee(&conf, d) {
                Ok(()) => {
                    piece.extend_from_slice(d);
                    Ok(())
                }
                Err(e) => Err(push_failed(e, &mut err)),
            })
        };
        if !piece.is_empty() {
            frame(&mut p.out, proto, chunked, &piece);
        }
        match pull {
            Pull::More => {
                p.body_dec = Some(dec);
                None
            }
            Pull::Wait => {
                p.body_dec = Some(dec);
                if p.out.is_empty() {
                    return Some(Io::Wait);
                }
                None
            }
            Pull::Fail(s) => {
                self.body_failed(cx, err, broken);
                Some(Io::Fail(Fail::Client(s)))
            }
            Pull::Done => {
                frame_end(&mut p.out, proto, chunked);
                p.feed = Feed::Done;
                p.vars.request_body = p.body.take_small(&conf);
                None
            }
        }
    }
}

impl<T: Owner> BodyOut for T {}

/// A sink's failure: its status, and the error log's line kept for later.
fn push_failed(e: PushError, err: &mut Option<(LogLevel, String)>) -> u16 {
    match e {
        PushError::TooLarge(text) => {
            *err = Some((LogLevel::Error, text));
            413
        }
        PushError::Temp(t) => {
            *err = Some((LogLevel::Crit, t.text()));
            500
        }
    }
}
