//! The http2 module's directives (ngx_http_v2_module): `http2` (nginx
//! 1.25.1's server-level switch), `http2_max_concurrent_streams`,
//! `http2_chunk_size`, `http2_body_preread_size`, `http2_recv_buffer_size`,
//! and the directives nginx made obsolete in 1.19.7, accepted with its
//! warning naming their modern equivalent (`ngx_http_v2_obsolete`). The
//! older `listen ... http2` is read in listen.rs and warned about in
//! handlers.rs, as nginx 1.25.1 and later do.

use super::Env;
use super::handlers::{arg, flag, msg, number, set_with, size};
use super::raw::{RawLoc, RawSrv};
use crate::error::Result;
use crate::model::Http2Conf;
use crate::syntax::Directive;

/// nginx's `http2_max_concurrent_streams` default.
pub const DEFAULT_MAX_CONCURRENT_STREAMS: u32 = 128;
/// nginx's `http2_chunk_size` default.
pub const DEFAULT_CHUNK_SIZE: usize = 8 * 1024;
/// nginx's `http2_body_preread_size` default.
pub const DEFAULT_BODY_PREREAD_SIZE: usize = 64 * 1024;
/// nginx's `http2_recv_buffer_size` default.
pub const DEFAULT_RECV_BUFFER_SIZE: usize = 256 * 1024;
/// The largest flow-control window (RFC 9113 §6.9.1), nginx's
/// `NGX_HTTP_V2_MAX_WINDOW`: the bound of `http2_body_preread_size`.
pub const MAX_WINDOW: usize = (1 << 31) - 1;

/// The http2 settings of one level as written.
#[derive(Debug, Clone, Default)]
pub struct RawHttp2 {
    pub on: Option<bool>,
    pub max_concurrent_streams: Option<u32>,
    pub body_preread_size: Option<usize>,
    pub recv_buffer_size: Option<usize>,
}

impl RawHttp2 {
    pub fn merge(&self, http: &RawHttp2) -> RawHttp2 {
        RawHttp2 {
            on: self.on.or(http.on),
            max_concurrent_streams: self.max_concurrent_streams.or(http.max_concurrent_streams),
            body_preread_size: self.body_preread_size.or(http.body_preread_size),
            recv_buffer_size: self.recv_buffer_size.or(http.recv_buffer_size),
        }
    }

    pub fn resolve(&self) -> Http2Conf {
        Http2Conf {
            on: self.on.unwrap_or(false),
            max_concurrent_streams: self
                .max_concurrent_streams
                .unwrap_or(DEFAULT_MAX_CONCURRENT_STREAMS),
            chunk_size: DEFAULT_CHUNK_SIZE,
            body_preread_size: self.body_preread_size.unwrap_or(DEFAULT_BODY_PREREAD_SIZE),
            recv_buffer_size: self.recv_buffer_size.unwrap_or(DEFAULT_RECV_BUFFER_SIZE),
        }
    }
}

/// `http2 on | off` (nginx 1.25.1).
pub fn http2(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.http2.on, d, || flag(d))
}

pub fn http2_max_concurrent_streams(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.http2.max_concurrent_streams, d, || {
        let n = number(d)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    })
}

/// `http2_chunk_size SIZE`: checked as nginx checks it (0 refused); kept
/// per location (the engine reads it from the request's location, as
/// nginx's `ngx_http_v2_send_chain` does) and clamped by the frame size.
pub fn http2_chunk_size(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.conn.http2_chunk_size, d, || {
        let n = size(d, arg(d, 0))?;
        if n == 0 {
            return Err(msg(d, "the http2 chunk size cannot be zero"));
        }
        Ok(n)
    })
}

pub fn http2_body_preread_size(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.http2.body_preread_size, d, || {
        let n = size(d, arg(d, 0))?;
        if n > MAX_WINDOW {
            return Err(msg(
                d,
                format!("the maximum body preread buffer size is {MAX_WINDOW}"),
            ));
        }
        Ok(n)
    })
}

/// `http2_recv_buffer_size SIZE` (http level): nginx refuses 2 × the
/// state buffer (16 bytes) or less (`ngx_http_v2_recv_buffer_size`).
pub fn http2_recv_buffer_size(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.http2.recv_buffer_size, d, || {
        let n = size(d, arg(d, 0))?;
        if n <= 2 * 16 {
            return Err(msg(d, "value is too small"));
        }
        Ok(n)
    })
}

/// The obsolete directives and what replaced them (nginx 1.19.7).
const OBSOLETE: &[(&str, &str)] = &[
    ("http2_recv_timeout", "client_header_timeout"),
    ("http2_idle_timeout", "keepalive_timeout"),
    ("http2_max_field_size", "large_client_header_buffers"),
    ("http2_max_header_size", "large_client_header_buffers"),
    ("http2_max_requests", "keepalive_requests"),
];

/// `ngx_http_v2_obsolete`: the value is not read, a warning names the
/// directive to use instead.
pub fn obsolete(_: &mut RawSrv, d: &Directive, env: &Env<'_>) -> Result<()> {
    if let Some((_, instead)) = OBSOLETE.iter().find(|(n, _)| *n == d.name) {
        env.warn(
            d,
            format_args!(
                "the \"{}\" directive is obsolete, use the \"{instead}\" directive instead",
                d.name
            ),
        );
    }
    Ok(())
}
