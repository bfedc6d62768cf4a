//! `error_log`: nginx-shaped lines to one or more files, stderr, syslog
//! servers or memory buffers (`syslog`).
//!
//! Shared by every worker behind an `Arc`. Writing takes a read lock on the
//! target (one uncontended atomic; the write lock is taken only by
//! `reopen`) and issues one write(2) per line on an O_APPEND descriptor,
//! which the kernel keeps whole with respect to other writers.

use std::fmt::{self, Write as _};
use std::net::IpAddr;
use std::sync::RwLock;
use std::time::SystemTime;

use peregrine_conf::model::{ErrorLogConf, LogLevel, LogTarget};

use crate::error::{LogError, OsErr};
use crate::sink::Sink;
use crate::syslog::{MemoryOut, SyslogOut};
use crate::time::{Local, fmt_err, unix_millis};
use crate::tz::{Zone, local_zone};

/// Longest line, newline included: nginx's `NGX_MAX_ERROR_STR`; longer
/// messages are cut, as nginx cuts them.
pub const MAX_ERROR_LINE: usize = 2048;

/// nginx's spelling of each level, as printed between brackets.
pub fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Notice => "notice",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
        LogLevel::Crit => "crit",
        LogLevel::Alert => "alert",
        LogLevel::Emerg => "emerg",
    }
}

/// The connection (and request) a message is about. Appended as nginx's
/// `ngx_http_log_error` does: `*ID msg while ACTION, client: IP, server:
/// NAME, request: "LINE", host: "HOST", referrer: "REF"`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnContext<'a> {
    /// Connection serial number, printed `*N` before the message.
    pub id: u64,
    /// What the connection was doing (`reading client request line`).
    pub action: Option<&'a str>,
    pub client: Option<IpAddr>,
    /// The server's first name when a request exists, else the listening
    /// address text (`0.0.0.0:80`), as nginx.
    pub server: Option<&'a [u8]>,
    pub request_line: Option<&'a [u8]>,
    /// The Host header as received.
    pub host: Option<&'a [u8]>,
    pub referrer: Option<&'a [u8]>,
}

#[derive(Debug)]
struct Target {
    level: LogLevel,
    out: Out,
}

/// Where a target's lines go.
#[derive(Debug)]
enum Out {
    Sink(RwLock<Sink>),
    Syslog(SyslogOut),
    Memory(MemoryOut),
}

/// The error log: every `error_log` of the main context.
#[derive(Debug)]
pub struct ErrorLog {
    targets: Vec<Target>,
    /// The least severe level any target takes: below it `log` returns at once.
    min: LogLevel,
}

impl ErrorLog {
    /// Opens every target. An empty list logs nothing.
    pub fn new(confs: &[ErrorLogConf]) -> Result<ErrorLog, LogError> {
        let mut targets = Vec::with_capacity(confs.len());
        for c in confs {
            let failed = |source| LogError::Open {
                path: match &c.target {
                    LogTarget::File(p) => p.clone(),
                    LogTarget::Syslog(s) => format!("syslog:server={}", s.server_name).into(),
                    LogTarget::Memory(_) => "memory".into(),
                    LogTarget::Stderr => "stderr".into(),
                },
                source,
            };
            let out = match &c.target {
                LogTarget::Syslog(s) => Out::Syslog(SyslogOut::new(s).map_err(failed)?),
                LogTarget::Memory(size) => Out::Memory(MemoryOut::new(*size)),
                t => Out::Sink(RwLock::new(Sink::open(t).map_err(failed)?)),
            };
            targets.push(Target {
                level: c.level,
                out,
            });
        }
        let min = targets
            .iter()
            .map(|t| t.level)
            .min()
            .unwrap_or(LogLevel::Emerg);
        Ok(ErrorLog { targets, min })
    }

    /// A log to stderr only (before the configuration is read, and in tests).
    pub fn stderr(level: LogLevel) -> ErrorLog {
        ErrorLog {
            targets: vec![Target {
                level,
                out: Out::Sink(RwLock::new(Sink::Stderr)),
            }],
            min: level,
        }
    }

    /// Whether a message at `level` would be written anywhere.
    #[inline]
    pub fn enabled(&self, level: LogLevel) -> bool {
        !self.targets.is_empty() && level >= self.min
    }

    /// What the `memory:` targets hold, oldest byte first (for tests and
    /// diagnostics; a debugger reads the buffer from a core).
    pub fn memory_contents(&self) -> Vec<Vec<u8>> {
        self.targets
            .iter()
            .filter_map(|t| match &t.out {
                Out::Memory(m) => Some(m.contents()),
                _ => None,
            })
            .collect()
    }

    /// Writes one line to every target whose level admits it. Costs one
    /// comparison when filtered out (`msg` is formatted lazily). Write
    /// failures are ignored: there is nowhere left to report them.
    pub fn log(&self, level: LogLevel, conn: Option<&ConnContext<'_>>, msg: fmt::Arguments<'_>) {
        if !self.enabled(level) {
            return;
        }
        let mut buf = [0u8; MAX_ERROR_LINE];
        let now = SystemTime::now();
        let len = format_line(&mut buf, now, local_zone(), level, conn, msg);
        for t in &self.targets {
            if level < t.level {
                continue;
            }
            match &t.out {
                Out::Sink(sink) => {
                    let sink = sink.read().unwrap_or_else(|e| e.into_inner());
                    let _ = sink.write_all(&buf[..len]);
                }
                Out::Syslog(s) => {
                    let unix = i64::try_from(unix_millis(now) / 1000).unwrap_or(0);
                    s.send(level, unix, local_zone(), &buf[..len]);
                }
                Out::Memory(m) => m.write(&buf[..len]),
            }
        }
    }

    /// Reopens every file target by path (USR1, after logrotate). A target
    /// that cannot be reopened keeps its old descriptor; the failure is
    /// logged (as nginx logs it, at `emerg`) and the first one returned.
    pub fn reopen(&self) -> Result<(), LogError> {
        let mut first = None;
        for t in &self.targets {
            let Out::Sink(sink) = &t.out else { continue };
            let mut sink = sink.write().unwrap_or_else(|e| e.into_inner());
            if let Err(source) = sink.reopen() {
                let path = sink.name().to_path_buf();
                drop(sink);
                self.log(
                    LogLevel::Emerg,
                    None,
                    format_args!("open() \"{}\" failed ({})", path.display(), OsErr(&source)),
                );
                first.get_or_insert(LogError::Open { path, source });
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// A fixed buffer that keeps what fits and drops the rest.
struct Trunc<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Trunc<'_> {
    fn bytes(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }
}

impl fmt::Write for Trunc<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// Lays out `2026/11/30 08:14:14 [error] PID#TID: *CID msg, context\n`
/// into `buf` and returns its length.
fn format_line(
    buf: &mut [u8; MAX_ERROR_LINE],
    now: SystemTime,
    zone: &Zone,
    level: LogLevel,
    conn: Option<&ConnContext<'_>>,
    msg: fmt::Arguments<'_>,
) -> usize {
    // Keep the last byte for the newline, as nginx keeps NGX_LINEFEED_SIZE.
    let (body, _) = buf.split_at_mut(MAX_ERROR_LINE - 1);
    let mut w = Trunc { buf: body, len: 0 };
    let l = Local::in_zone(i64::try_from(unix_millis(now) / 1000).unwrap_or(0), zone);
    w.bytes(&fmt_err(&l));
    let _ = write!(
        w,
        " [{}] {}#{}: ",
        level_name(level),
        std::process::id(),
        thread_id()
    );
    if let Some(ctx) = conn {
        let _ = write!(w, "*{} ", ctx.id);
    }
    let _ = w.write_fmt(msg);
    if let Some(ctx) = conn {
        write_context(&mut w, ctx);
    }
    let len = w.len;
    buf[len] = b'\n';
    len + 1
}

fn write_context(w: &mut Trunc<'_>, ctx: &ConnContext<'_>) {
    if let Some(a) = ctx.action {
        let _ = write!(w, " while {a}");
    }
    if let Some(ip) = ctx.client {
        let _ = write!(w, ", client: {ip}");
    }
    let quoted = [
        (", server: ", ctx.server, false),
        (", request: ", ctx.request_line, true),
        (", host: ", ctx.host, true),
        (", referrer: ", ctx.referrer, true),
    ];
    for (label, value, quote) in quoted {
        if let Some(v) = value {
            w.bytes(label.as_bytes());
            if quote {
                w.bytes(b"\"");
            }
            w.bytes(v);
            if quote {
                w.bytes(b"\"");
            }
        }
    }
}

thread_local! {
    static TID: u32 = read_tid().unwrap_or_else(std::process::id);
}

/// nginx prints `PID#TID` with TID = gettid(2) (Debian builds nginx with
/// threads). gettid needs `unsafe` here, but `/proc/thread-self` is a link
/// to `PID/task/TID`; read once per thread.
fn read_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// This thread's kernel id, as printed after `#`.
pub fn thread_id() -> u32 {
    TID.with(|t| *t)
}

#[cfg(test)]
#[path = "errlog_tests.rs"]
mod tests;
