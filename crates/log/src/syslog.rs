//! `error_log syslog:...`, `access_log syslog:...` and `error_log
//! memory:SIZE` targets.
//!
//! Syslog: one UDP datagram per message, as nginx's `ngx_syslog_writer`
//! sends it: `<PRI>Mmm dd hh:mm:ss HOSTNAME TAG: ` and then the error
//! line as the file would get it, without its newline (RFC 3164 4.1; PRI
//! is facility × 8 + the message's severity). Send failures are dropped,
//! the socket made again for the next message, as nginx does.
//!
//! Memory: nginx's cyclic buffer for debuggers (`ngx_log_memory_writer`):
//! the last SIZE bytes of the log, oldest overwritten first.

use std::io;
use std::net::UdpSocket;
use std::sync::Mutex;

use peregrine_conf::model::{LogLevel, SyslogConf};

use crate::time::Local;
use crate::tz::Zone;

/// A syslog header's longest form: `<191>Sep 28 12:00:00 ` (21 bytes), a
/// host name (at most 255), a tag (at most 32) and `: `.
pub const MAX_SYSLOG_HEADER: usize = 21 + 255 + 1 + 32 + 2;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

#[derive(Debug)]
pub(crate) struct SyslogOut {
    conf: SyslogConf,
    hostname: String,
    /// Connected to the server; `None` after a failed send (made again).
    sock: Mutex<Option<UdpSocket>>,
}

/// The severity nginx sends a message of `level` at (`level - 1` in its
/// numbering: emerg 0 .. debug 7).
pub(crate) fn severity(level: LogLevel) -> u8 {
    match level {
        LogLevel::Emerg => 0,
        LogLevel::Alert => 1,
        LogLevel::Crit => 2,
        LogLevel::Error => 3,
        LogLevel::Warn => 4,
        LogLevel::Notice => 5,
        LogLevel::Info => 6,
        LogLevel::Debug => 7,
    }
}

impl SyslogOut {
    pub(crate) fn new(conf: &SyslogConf) -> io::Result<SyslogOut> {
        // nginx: the cycle's host name, lowercased.
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_ascii_lowercase())
            .unwrap_or_else(|_| "localhost".into());
        let out = SyslogOut {
            conf: conf.clone(),
            hostname,
            sock: Mutex::new(None),
        };
        *out.sock.lock().unwrap_or_else(|e| e.into_inner()) = Some(out.connect()?);
        Ok(out)
    }

    fn connect(&self) -> io::Result<UdpSocket> {
        let any: std::net::SocketAddr = if self.conf.server.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let s = UdpSocket::bind(any)?;
        s.set_nonblocking(true)?;
        s.connect(self.conf.server)?;
        Ok(s)
    }

    /// The header for a message at `severity`, local time `now`.
    fn header_at(&self, severity: u8, now: &Local) -> String {
        let pri = u32::from(self.conf.facility) * 8 + u32::from(severity);
        let c = &now.civil;
        let month = MONTHS[(c.month.clamp(1, 12) - 1) as usize];
        let time = format!(
            "{month} {:2} {:02}:{:02}:{:02}",
            c.day, c.hour, c.min, c.sec
        );
        if self.conf.nohostname {
            format!("<{pri}>{time} {}: ", self.conf.tag)
        } else {
            format!("<{pri}>{time} {} {}: ", self.hostname, self.conf.tag)
        }
    }

    /// Sends `line` (an error-log line, newline included) at `level`.
    pub(crate) fn send(&self, level: LogLevel, unix: i64, zone: &Zone, line: &[u8]) {
        self.send_at(severity(level), unix, zone, line);
    }

    /// Sends an access-log line at the configured `severity=` (nginx's
    /// `ngx_http_log_handler` uses the peer's own severity).
    pub(crate) fn send_access(&self, unix: i64, zone: &Zone, line: &[u8]) {
        self.send_at(self.conf.severity, unix, zone, line);
    }

    fn send_at(&self, severity: u8, unix: i64, zone: &Zone, line: &[u8]) {
        let mut msg = Vec::with_capacity(MAX_SYSLOG_HEADER + line.len());
        msg.extend_from_slice(
            self.header_at(severity, &Local::in_zone(unix, zone))
                .as_bytes(),
        );
        msg.extend_from_slice(line.strip_suffix(b"\n").unwrap_or(line));
        let mut sock = self.sock.lock().unwrap_or_else(|e| e.into_inner());
        if sock.is_none() {
            *sock = self.connect().ok();
        }
        if let Some(s) = sock.as_ref()
            && s.send(&msg).is_err()
        {
            *sock = None;
        }
    }
}

/// The cyclic buffer of `memory:SIZE`.
#[derive(Debug)]
pub(crate) struct MemoryOut {
    ring: Mutex<Ring>,
}

#[derive(Debug)]
struct Ring {
    buf: Vec<u8>,
    /// Where the next byte goes.
    pos: usize,
    /// The buffer went round at least once.
    wrapped: bool,
}

impl MemoryOut {
    pub(crate) fn new(size: usize) -> MemoryOut {
        MemoryOut {
            ring: Mutex::new(Ring {
                buf: vec![0; size.max(1)],
                pos: 0,
                wrapped: false,
            }),
        }
    }

    pub(crate) fn write(&self, data: &[u8]) {
        let mut r = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let size = r.buf.len();
        // Only the last `size` bytes can stay.
        let data = &data[data.len().saturating_sub(size)..];
        let pos = r.pos;
        let first = data.len().min(size - pos);
        r.buf[pos..pos + first].copy_from_slice(&data[..first]);
        let rest = &data[first..];
        r.buf[..rest.len()].copy_from_slice(rest);
        r.wrapped |= pos + data.len() >= size;
        r.pos = (pos + data.len()) % size;
    }

    /// What the buffer holds, oldest byte first.
    pub(crate) fn contents(&self) -> Vec<u8> {
        let r = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        if !r.wrapped {
            return r.buf[..r.pos].to_vec();
        }
        let mut out = r.buf[r.pos..].to_vec();
        out.extend_from_slice(&r.buf[..r.pos]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_keeps_the_last_bytes() {
        let m = MemoryOut::new(8);
        m.write(b"abc");
        assert_eq!(m.contents(), b"abc");
        m.write(b"defgh");
        assert_eq!(m.contents(), b"abcdefgh");
        m.write(b"ij");
        assert_eq!(m.contents(), b"cdefghij");
        m.write(b"0123456789");
        assert_eq!(m.contents(), b"23456789");
    }

    #[test]
    fn an_error_log_keeps_its_tail_in_memory() {
        use peregrine_conf::model::{ErrorLogConf, LogTarget};
        let log = crate::ErrorLog::new(&[ErrorLogConf {
            target: LogTarget::Memory(64),
            level: LogLevel::Info,
        }])
        .unwrap();
        log.log(LogLevel::Info, None, format_args!("first message"));
        log.log(LogLevel::Debug, None, format_args!("filtered out"));
        log.log(LogLevel::Error, None, format_args!("second message"));
        let mem = log.memory_contents();
        let text = String::from_utf8_lossy(&mem[0]);
        assert_eq!(mem[0].len(), 64, "full: the last 64 bytes");
        assert!(text.ends_with("second message\n"), "{text}");
        assert!(
            !text.contains("first message") && !text.contains("filtered"),
            "{text}"
        );
    }

    #[test]
    fn header_as_nginx() {
        let conf = SyslogConf {
            server: "127.0.0.1:514".parse().unwrap(),
            server_name: "127.0.0.1".into(),
            facility: 23,
            severity: 6,
            tag: "nginx".into(),
            nohostname: false,
        };
        let out = SyslogOut::new(&conf).unwrap();
        let t = Local::with_offset(1_000_000_000, 0);
        assert_eq!(
            out.header_at(severity(LogLevel::Error), &t),
            format!("<187>Sep  9 01:46:40 {} nginx: ", out.hostname)
        );
        let quiet = SyslogOut::new(&SyslogConf {
            nohostname: true,
            facility: 16,
            ..conf
        })
        .unwrap();
        assert_eq!(
            quiet.header_at(severity(LogLevel::Emerg), &t),
            "<128>Sep  9 01:46:40 nginx: "
        );
    }
}
