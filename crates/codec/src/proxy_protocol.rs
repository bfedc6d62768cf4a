//! The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and
//! 2) that a load balancer sends before the client's bytes, read as nginx's
//! `ngx_proxy_protocol_read` reads it: what it accepts, what it refuses,
//! and its error-log words.
//!
//! Owns: recognising v1 (`PROXY TCP4|TCP6|UNKNOWN ...\r\n`) and v2 (the
//! 12-byte signature, version/command, family/transport, the address block,
//! the TLVs), the addresses as nginx shows them in `$proxy_protocol_addr`
//! and friends, and the TLV lookup behind `$proxy_protocol_tlv_NAME`
//! ([`ProxyHeader::tlv`]). Does not own: reading the socket, the
//! `proxy_protocol_timeout`-style timers, `set_real_ip_from` trust, or
//! writing headers to upstreams.
//!
//! Hand-written: the crates that parse PROXY headers either read from a
//! stream themselves or accept what nginx refuses (and word nothing as
//! nginx does); this is a small, total function over a byte slice.
//!
//! One difference: nginx parses the header from the first read only, and a
//! header cut by that read is "broken". [`parse`] is incremental instead:
//! a prefix of a header is [`Parsed::Partial`], so the engine may read on
//! (or, to act exactly as nginx, treat `Partial` after its first read as
//! broken with [`ProxyError::broken`]). A v1 header must end within
//! [`V1_MAX_HEADER`] bytes, where nginx scans whatever its buffer holds.

use std::net::{IpAddr, Ipv4Addr};

mod tlv;

pub use tlv::{Tlv, TlvError};

/// A v1 header is at most 107 bytes, CRLF included (proxy-protocol.txt
/// §2.1: a receiver may reject a line without CRLF in its first 107
/// characters; nginx's `NGX_PROXY_PROTOCOL_V1_MAX_HEADER`).
pub const V1_MAX_HEADER: usize = 107;

/// The buffer nginx reads a header into where it peeks at it (TLS
/// listeners, stream, mail: `NGX_PROXY_PROTOCOL_MAX_HEADER`). Plain HTTP
/// reads it into `client_header_buffer_size` instead; [`parse`] takes the
/// caller's limit.
pub const MAX_HEADER: usize = 4096;

/// The v2 signature (proxy-protocol.txt §2.2).
pub const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";

/// Signature, version/command, family/transport, 2-byte length.
pub const V2_HEADER_LEN: usize = 16;

/// v2 address blocks: IPv4 (4 + 4 + 2 + 2), IPv6 (16 + 16 + 2 + 2) and
/// UNIX (108 + 108) bytes (§2.2).
const INET_BLOCK: usize = 12;
const INET6_BLOCK: usize = 36;
const UNIX_BLOCK: usize = 216;
const UNIX_PATH: usize = 108;

/// What [`parse`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A prefix of a header that may still be valid: more bytes are needed.
    Partial,
    Header(ProxyHeader),
}

/// Why a header was refused, in nginx's error-log words (level `error`);
/// nginx closes the connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// Not a v1 header nginx accepts: the input up to its first CR or LF.
    #[error("broken header: \"{}\"", String::from_utf8_lossy(.0))]
    Broken(Vec<u8>),
    #[error("unknown PROXY protocol version: {0}")]
    UnknownVersion(u8),
    /// A v2 header longer than the buffer it must fit in.
    #[error("header is too large")]
    TooLarge,
    /// A v2 address block shorter than its family needs. nginx closes the
    /// connection without a log line for this one ([`ProxyError::is_logged`]).
    #[error("PROXY protocol v2 address block too short")]
    ShortAddress,
}

impl ProxyError {
    /// nginx's error for `input` taken as broken (its first CR or LF ends
    /// the quoted line).
    pub fn broken(input: &[u8]) -> ProxyError {
        let end = input
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .unwrap_or(input.len());
        ProxyError::Broken(input[..end].to_vec())
    }

    /// Whether nginx writes this error to its log.
    pub fn is_logged(&self) -> bool {
        *self != ProxyError::ShortAddress
    }
}

/// v2's command (v1 has none: TCP4/TCP6 read as `Proxy`, UNKNOWN as `Local`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Local,
    Proxy,
    /// Any other value: nginx skips the header as it skips LOCAL.
    Other(u8),
}

/// An address and port as nginx keeps them: v1's text verbatim (nginx checks
/// only its characters), v2's formatted as `ngx_sock_ntop` formats it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: String,
    pub port: u16,
}

impl Endpoint {
    /// The address as an IP, if it is one (v1 text may not be).
    pub fn ip(&self) -> Option<IpAddr> {
        self.addr.parse().ok()
    }
}

/// The addresses a header carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addresses {
    /// v1 UNKNOWN, v2 LOCAL or another command, a transport other than
    /// STREAM, family UNSPEC or unknown: the connection's own addresses
    /// stand (nginx keeps no PROXY protocol data at all).
    None,
    Inet {
        source: Endpoint,
        destination: Endpoint,
    },
    /// v2 AF_UNIX paths (NUL padding cut). nginx keeps nothing for these
    /// either (no `$proxy_protocol_*` values, TLVs unread).
    Unix {
        source: Vec<u8>,
        destination: Vec<u8>,
    },
}

/// A header that was read whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyHeader {
    /// Bytes of the input the header took; the client's bytes follow.
    pub len: usize,
    /// 1 or 2.
    pub version: u8,
    pub command: Command,
    pub addresses: Addresses,
    /// The raw TLV block after a v2 address block (nginx checks it only when
    /// a variable reads it: see [`ProxyHeader::tlv`]).
    pub tlvs: Vec<u8>,
}

impl ProxyHeader {
    fn no_addresses(len: usize, version: u8, command: Command) -> ProxyHeader {
        ProxyHeader {
            len,
            version,
            command,
            addresses: Addresses::None,
            tlvs: Vec::new(),
        }
    }

    /// The source and destination nginx uses (`$proxy_protocol_addr`,
    /// `$proxy_protocol_port`, `..._server_addr`, `..._server_port`, realip).
    pub fn inet(&self) -> Option<(&Endpoint, &Endpoint)> {
        match &self.addresses {
            Addresses::Inet {
                source,
                destination,
            } => Some((source, destination)),
            _ => None,
        }
    }
}

/// Reads a PROXY protocol header at the start of `input`. `limit` is the
/// buffer the header must fit in (nginx: `client_header_buffer_size` for
/// plain HTTP, [`MAX_HEADER`] elsewhere). A prefix of the input is always
/// `Partial` or the same outcome (a `Broken` line may be shorter).
pub fn parse(input: &[u8], limit: usize) -> Result<Parsed, ProxyError> {
    let sig = input.len().min(V2_SIGNATURE.len());
    if input[..sig] == V2_SIGNATURE[..sig] && !input.is_empty() {
        if input.len() < V2_HEADER_LEN {
            return Ok(Parsed::Partial);
        }
        return v2(input, limit);
    }
    let window = &input[..input.len().min(V1_MAX_HEADER).min(limit)];
    match v1(window) {
        Ok(Some(h)) => Ok(Parsed::Header(h)),
        Ok(None) if window.len() < V1_MAX_HEADER.min(limit) => Ok(Parsed::Partial),
        Ok(None) | Err(()) => Err(ProxyError::broken(&input[..input.len().min(limit)])),
    }
}

/// v1, as `ngx_proxy_protocol_read`: `Ok(None)` when `b` ends first.
fn v1(b: &[u8]) -> Result<Option<ProxyHeader>, ()> {
    let mut c = Cursor { b, p: 0 };
    if !c.literal(b"PROXY ")? {
        return Ok(None);
    }
    if b.len() > 6 && b[6] == b'U' {
        if !c.literal(b"UNKNOWN")? {
            return Ok(None);
        }
        // Anything up to the first CRLF is skipped (§2.1; nginx the same).
        let rest = &b[c.p..];
        return Ok(rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|i| ProxyHeader::no_addresses(c.p + i + 2, 1, Command::Local)));
    }
    if !c.literal(b"TCP")? {
        return Ok(None);
    }
    match (b.get(c.p), b.get(c.p + 1)) {
        (Some(b'4' | b'6'), Some(b' ')) => c.p += 2,
        (Some(b'4' | b'6'), None) | (None, _) => return Ok(None),
        _ => return Err(()),
    }
    let Some(src) = c.addr()? else {
        return Ok(None);
    };
    let Some(dst) = c.addr()? else {
        return Ok(None);
    };
    let Some(src_port) = c.port(b' ')? else {
        return Ok(None);
    };
    let Some(dst_port) = c.port(b'\r')? else {
        return Ok(None);
    };
    match b.get(c.p) {
        None => return Ok(None),
        Some(b'\n') => c.p += 1,
        Some(_) => return Err(()),
    }
    let endpoint = |addr: &[u8], port| Endpoint {
        addr: String::from_utf8_lossy(addr).into_owned(),
        port,
    };
    Ok(Some(ProxyHeader {
        len: c.p,
        version: 1,
        command: Command::Proxy,
        addresses: Addresses::Inet {
            source: endpoint(src, src_port),
            destination: endpoint(dst, dst_port),
        },
        tlvs: Vec::new(),
    }))
}

/// A position in a v1 line. `Err(())` is broken; `Ok(None)`/`Ok(false)` is
/// "the input ended first".
struct Cursor<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Cursor<'a> {
    /// `lit` next (or a prefix of it at the end of the input).
    fn literal(&mut self, lit: &[u8]) -> Result<bool, ()> {
        let have = &self.b[self.p..];
        let n = have.len().min(lit.len());
        if have[..n] != lit[..n] {
            return Err(());
        }
        self.p += n;
        Ok(n == lit.len())
    }

    /// `ngx_proxy_protocol_read_addr`: hex digits, `:` and `.` up to a space
    /// (an empty address included).
    fn addr(&mut self) -> Result<Option<&'a [u8]>, ()> {
        let start = self.p;
        for (i, &ch) in self.b[start..].iter().enumerate() {
            if ch == b' ' {
                self.p = start + i + 1;
                return Ok(Some(&self.b[start..start + i]));
            }
            if !(ch.is_ascii_hexdigit() || ch == b':' || ch == b'.') {
                return Err(());
            }
        }
        Ok(None)
    }

    /// `ngx_proxy_protocol_read_port`: anything up to `sep`, then `ngx_atoi`
    /// (digits only, at least one) and at most 65535.
    fn port(&mut self, sep: u8) -> Result<Option<u16>, ()> {
        let start = self.p;
        let Some(i) = self.b[start..].iter().position(|&ch| ch == sep) else {
            // A byte that is not a digit already dooms the port.
            let bad = self.b[start..].iter().any(|ch| !ch.is_ascii_digit());
            return if bad { Err(()) } else { Ok(None) };
        };
        self.p = start + i + 1;
        let digits = &self.b[start..start + i];
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(());
        }
        let n = digits
            .iter()
            .try_fold(0u32, |n, &d| {
                let n = n * 10 + u32::from(d - b'0');
                (n <= 65535).then_some(n)
            })
            .ok_or(())?;
        Ok(Some(n as u16))
    }
}

/// v2, as `ngx_proxy_protocol_v2_read`.
fn v2(input: &[u8], limit: usize) -> Result<Parsed, ProxyError> {
    let version = input[12] >> 4;
    if version != 2 {
        return Err(ProxyError::UnknownVersion(version));
    }
    let len = usize::from(u16::from_be_bytes([input[14], input[15]]));
    let total = V2_HEADER_LEN + len;
    if total > limit {
        return Err(ProxyError::TooLarge);
    }
    if input.len() < total {
        return Ok(Parsed::Partial);
    }
    let body = &input[V2_HEADER_LEN..total];
    let command = match input[12] & 0x0f {
        0 => Command::Local,
        1 => Command::Proxy,
        n => Command::Other(n),
    };
    let (family, transport) = (input[13] >> 4, input[13] & 0x0f);
    let none = ProxyHeader::no_addresses(total, 2, command);
    // Only PROXY over STREAM is read (nginx skips the rest without a word).
    if command != Command::Proxy || transport != 1 {
        return Ok(Parsed::Header(none));
    }
    let (addresses, block) = match family {
        1 => (inet(body, INET_BLOCK)?, INET_BLOCK),
        2 => (inet(body, INET6_BLOCK)?, INET6_BLOCK),
        3 if body.len() >= UNIX_BLOCK => {
            let path = |b: &[u8]| b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())].to_vec();
            let addrs = Addresses::Unix {
                source: path(&body[..UNIX_PATH]),
                destination: path(&body[UNIX_PATH..UNIX_BLOCK]),
            };
            (addrs, UNIX_BLOCK)
        }
        _ => return Ok(Parsed::Header(none)),
    };
    Ok(Parsed::Header(ProxyHeader {
        addresses,
        tlvs: body[block..].to_vec(),
        ..none
    }))
}

/// An IPv4 or IPv6 address block (`block` bytes: addresses, then ports).
fn inet(body: &[u8], block: usize) -> Result<Addresses, ProxyError> {
    let b = body.get(..block).ok_or(ProxyError::ShortAddress)?;
    let n = (block - 4) / 2;
    let text = |a: &[u8]| match <[u8; 4]>::try_from(a) {
        Ok(v4) => Ipv4Addr::from(v4).to_string(),
        Err(_) => inet6_ntop(a.try_into().expect("16 bytes")),
    };
    let port = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    Ok(Addresses::Inet {
        source: Endpoint {
            addr: text(&b[..n]),
            port: port(2 * n),
        },
        destination: Endpoint {
            addr: text(&b[n..2 * n]),
            port: port(2 * n + 2),
        },
    })
}

/// `ngx_inet6_ntop`: the longest run (first of equals, at least two groups)
/// of zero groups as `::`, an IPv4 tail for `::ffff:a.b.c.d`, `::a.b.c.d`
/// and nginx's own `::0.0.x.y` case (not quite RFC 5952's choices).
fn inet6_ntop(p: &[u8; 16]) -> String {
    let (mut zero, mut max, mut run, mut last) = (usize::MAX, 1, 0, usize::MAX);
    for i in (0..16).step_by(2) {
        if p[i] != 0 || p[i + 1] != 0 {
            if max < run {
                (zero, max) = (last, run);
            }
            run = 0;
            continue;
        }
        if run == 0 {
            last = i;
        }
        run += 1;
    }
    if max < run {
        (zero, max) = (last, run);
    }
    let mut s = String::new();
    let mut n = 16;
    if zero == 0 {
        if (max == 5 && p[10] == 0xff && p[11] == 0xff)
            || max == 6
            || (max == 7 && p[14] != 0 && p[15] != 1)
        {
            n = 12;
        }
        s.push(':');
    }
    let mut i = 0;
    while i < n {
        if i == zero {
            s.push(':');
            i += max * 2;
            continue;
        }
        s.push_str(&format!("{:x}", u16::from_be_bytes([p[i], p[i + 1]])));
        if i < 14 {
            s.push(':');
        }
        i += 2;
    }
    if n == 12 {
        s.push_str(&Ipv4Addr::new(p[12], p[13], p[14], p[15]).to_string());
    }
    s
}

#[cfg(test)]
mod tests;
