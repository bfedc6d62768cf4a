//! The stream variables (`ngx_stream_variables.c`, the upstream's in
//! `ngx_stream_upstream.c`) of one session, and the stream access log's
//! formats: compiled once per worker into literal and variable parts,
//! rendered at the end of a session with nginx's escaping
//! (`ngx_stream_log_escape`: `"`, `\` and bytes outside 0x20-0x7e as
//! `\xHH`; `json`; `none`). A variable with no value is `-`, as nginx's
//! log writes a not-found variable.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use peregrine_conf::model::{LogEscape, is_unix};
use peregrine_conf::stream::StreamLogFormat;

/// A session's values, as the variables see them.
pub struct Values<'a> {
    pub peer: SocketAddr,
    pub local: SocketAddr,
    pub udp: bool,
    pub status: u16,
    pub id: u64,
    pub start: SystemTime,
    pub now: SystemTime,
    pub received: u64,
    pub sent: u64,
    pub proxy: Option<&'a peregrine_codec::proxy_protocol::ProxyHeader>,
    pub upstream: &'a UpstreamVars,
    pub time: &'a mut peregrine_log::TimeCache,
}

/// What the upstream variables show: one entry per attempt, as nginx's
/// `u->state` array (`, ` between attempts).
#[derive(Debug, Default, Clone)]
pub struct UpstreamVars {
    pub addrs: Vec<String>,
    /// Per attempt: connect time (None: `-`, it failed).
    pub connect: Vec<Option<Duration>>,
    pub first_byte: Vec<Option<Duration>>,
    pub session: Vec<Option<Duration>>,
    pub bytes_sent: Vec<u64>,
    pub bytes_received: Vec<u64>,
}

/// `sec.msec`, nginx's `%T.%03M`.
fn secs(d: Duration) -> String {
    format!("{}.{:03}", d.as_secs(), d.subsec_millis())
}

fn list<T>(v: &[T], f: impl Fn(&T) -> String) -> Option<String> {
    if v.is_empty() {
        return None;
    }
    Some(v.iter().map(f).collect::<Vec<_>>().join(", "))
}

fn addr_text(a: SocketAddr) -> String {
    if is_unix(a) {
        "unix:".into()
    } else {
        a.ip().to_string()
    }
}

fn port_text(a: SocketAddr) -> String {
    if is_unix(a) {
        String::new()
    } else {
        a.port().to_string()
    }
}

impl Values<'_> {
    /// The value of `$name` (lowercase), `None` when not found.
    pub fn get(&mut self, name: &str) -> Option<Vec<u8>> {
        let s = |v: String| Some(v.into_bytes());
        let up = self.upstream;
        match name {
            "remote_addr" => s(addr_text(self.peer)),
            "remote_port" => s(port_text(self.peer)),
            "binary_remote_addr" => Some(match self.peer.ip() {
                _ if is_unix(self.peer) => Vec::new(),
                std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
                std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
            }),
            "server_addr" => s(addr_text(self.local)),
            "server_port" => s(port_text(self.local)),
            "protocol" => s(if self.udp { "UDP" } else { "TCP" }.into()),
            "status" => s(format!("{:03}", self.status)),
            "bytes_sent" => s(self.sent.to_string()),
            "bytes_received" => s(self.received.to_string()),
            "session_time" => s(secs(
                self.now.duration_since(self.start).unwrap_or_default(),
            )),
            "connection" => s(self.id.to_string()),
            "nginx_version" => s(peregrine_codec::response::NGINX_VERSION.into()),
            "hostname" => s(hostname()),
            "pid" => s(std::process::id().to_string()),
            "msec" => s(secs(
                self.now.duration_since(UNIX_EPOCH).unwrap_or_default(),
            )),
            "time_local" | "time_iso8601" => {
                let t = self
                    .now
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs();
                Some(if name == "time_local" {
                    self.time.local(t).to_vec()
                } else {
                    self.time.iso8601(t).to_vec()
                })
            }
            "upstream_addr" => list(&up.addrs, String::clone).map(String::into_bytes),
            "upstream_bytes_sent" => list(&up.bytes_sent, u64::to_string).map(String::into_bytes),
            "upstream_bytes_received" => {
                list(&up.bytes_received, u64::to_string).map(String::into_bytes)
            }
            "upstream_connect_time" => list(&up.connect, opt_secs).map(String::into_bytes),
            "upstream_first_byte_time" => list(&up.first_byte, opt_secs).map(String::into_bytes),
            "upstream_session_time" => list(&up.session, opt_secs).map(String::into_bytes),
            _ => self.proxy_var(name),
        }
    }

    /// `$proxy_protocol_*`: empty-not-found without a header.
    fn proxy_var(&self, name: &str) -> Option<Vec<u8>> {
        let h = self.proxy?;
        let (src, dst) = h.inet()?;
        let v = match name {
            "proxy_protocol_addr" => src.ip()?.to_string(),
            "proxy_protocol_port" => src.port.to_string(),
            "proxy_protocol_server_addr" => dst.ip()?.to_string(),
            "proxy_protocol_server_port" => dst.port.to_string(),
            _ => return None,
        };
        Some(v.into_bytes())
    }
}

fn opt_secs(d: &Option<Duration>) -> String {
    d.map_or_else(|| "-".into(), secs)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// One piece of a compiled format.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(Vec<u8>),
    Var(String),
}

/// A `log_format` of the stream block, compiled.
#[derive(Debug, Clone)]
pub struct Format {
    parts: Vec<Part>,
    escape: LogEscape,
}

impl Format {
    pub fn compile(f: &StreamLogFormat) -> Format {
        Format {
            parts: split(&f.format),
            escape: f.escape,
        }
    }

    /// The line, newline included.
    pub fn render(&self, v: &mut Values<'_>, out: &mut Vec<u8>) {
        for p in &self.parts {
            match p {
                Part::Text(t) => out.extend_from_slice(t),
                Part::Var(n) => match v.get(n) {
                    Some(val) => escape(&val, self.escape, out),
                    None if self.escape == LogEscape::Json => {}
                    None => out.push(b'-'),
                },
            }
        }
        out.push(b'\n');
    }
}

/// The value of a `$name` script (`if=` of `access_log`, a `return`
/// value), not escaped.
pub fn expand(text: &str, v: &mut Values<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    for p in split(text) {
        match p {
            Part::Text(t) => out.extend_from_slice(&t),
            Part::Var(n) => out.extend(v.get(&n).unwrap_or_default()),
        }
    }
    out
}

/// `text $name ${name}` into parts (names were checked at load).
fn split(s: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut lit = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            lit.push(b[i]);
            i += 1;
            continue;
        }
        let braced = b.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(braced);
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        if end == start {
            lit.push(b'$');
            i += 1;
            continue;
        }
        if !lit.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut lit)));
        }
        parts.push(Part::Var(s[start..end].to_ascii_lowercase()));
        i = end + usize::from(braced && b.get(end) == Some(&b'}'));
    }
    if !lit.is_empty() {
        parts.push(Part::Text(lit));
    }
    parts
}

fn escape(v: &[u8], how: LogEscape, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    match how {
        LogEscape::None => out.extend_from_slice(v),
        LogEscape::Default => {
            for &c in v {
                if c == b'"' || c == b'\\' || !(0x20..0x7f).contains(&c) {
                    out.extend_from_slice(&[
                        b'\\',
                        b'x',
                        HEX[usize::from(c >> 4)],
                        HEX[usize::from(c & 15)],
                    ]);
                } else {
                    out.push(c);
                }
            }
        }
        LogEscape::Json => {
            for &c in v {
                match c {
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    c if c < 0x20 => {
                        out.extend_from_slice(b"\\u00");
                        out.extend_from_slice(&[
                            HEX[usize::from(c >> 4)],
                            HEX[usize::from(c & 15)],
                        ]);
                    }
                    c => out.push(c),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_split_into_text_and_variables() {
        assert_eq!(
            split("a $status ${bytes_sent}x $"),
            vec![
                Part::Text(b"a ".to_vec()),
                Part::Var("status".into()),
                Part::Text(b" ".to_vec()),
                Part::Var("bytes_sent".into()),
                Part::Text(b"x $".to_vec()),
            ]
        );
    }

    #[test]
    fn default_escaping_is_nginx_s() {
        let mut out = Vec::new();
        escape(b"a\"b\\\x01\x7f", LogEscape::Default, &mut out);
        assert_eq!(out, b"a\\x22b\\x5C\\x01\\x7F");
    }
}
