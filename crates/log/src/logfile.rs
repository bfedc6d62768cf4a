//! One access log file of one worker: its descriptor, optional buffer
//! (`buffer=`, `flush=`, `gzip=`), and the rate-limited reporting of write
//! failures.

use std::io::{self, Write as _};
use std::time::{Duration, Instant, SystemTime};

use peregrine_conf::model::LogLevel;

use crate::errlog::{ConnContext, ErrorLog};
use crate::error::OsErr;
use crate::record::{RequestLog, with_first};
use crate::sink::Sink;
use crate::time::unix_millis;

/// A failing log file is reported to the error log at most once per this
/// interval, so a full disk does not flood it (nginx: `now -
/// error_log_time > 59`).
pub const WRITE_ERROR_REPORT_INTERVAL: Duration = Duration::from_secs(60);

/// The buffer nginx gives a `gzip` log that names no `buffer=` (64k).
pub const GZIP_DEFAULT_BUFFER: usize = 64 * 1024;

/// `buffer=`/`flush=`/`gzip=` of a file, after defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BufferConf {
    pub size: usize,
    pub flush: Option<Duration>,
    pub gzip: Option<u32>,
}

#[derive(Debug)]
struct Buffer {
    conf: BufferConf,
    data: Vec<u8>,
    /// When the oldest buffered line must be written (`flush=`).
    deadline: Option<Instant>,
}

#[derive(Debug)]
pub(crate) struct LogFile {
    sink: Sink,
    buffer: Option<Buffer>,
    last_report: Option<Instant>,
    /// The second of the last ENOSPC: nginx skips the file for the rest of
    /// that second rather than retry a full disk on every request.
    disk_full_sec: Option<u64>,
}

/// Scratch space shared by a worker's files.
pub(crate) struct Shared<'a> {
    pub error_log: &'a ErrorLog,
    pub gzip_out: &'a mut Vec<u8>,
}

impl LogFile {
    pub(crate) fn new(sink: Sink, buffer: Option<BufferConf>) -> LogFile {
        LogFile {
            sink,
            buffer: buffer.map(|conf| Buffer {
                conf,
                data: Vec::with_capacity(conf.size),
                deadline: None,
            }),
            last_report: None,
            disk_full_sec: None,
        }
    }

    /// Whether the disk was found full during this second.
    pub(crate) fn skipping(&self, unix_sec: u64) -> bool {
        self.disk_full_sec == Some(unix_sec)
    }

    /// Takes one rendered line (newline included): buffered when the file
    /// has a buffer and the line fits, written at once otherwise — the
    /// buffer's order in `ngx_http_log_handler`.
    pub(crate) fn write_line(
        &mut self,
        line: &[u8],
        rec: Option<&RequestLog<'_>>,
        sh: &mut Shared<'_>,
    ) {
        let Some(buf) = &mut self.buffer else {
            self.write_out(line, None, rec, sh);
            return;
        };
        if line.len() > buf.conf.size - buf.data.len() {
            self.flush(rec, sh);
        }
        let Some(buf) = &mut self.buffer else { return };
        if line.len() <= buf.conf.size - buf.data.len() {
            if buf.data.is_empty() {
                buf.deadline = buf.conf.flush.map(|f| Instant::now() + f);
            }
            buf.data.extend_from_slice(line);
        } else {
            let gzip = buf.conf.gzip;
            self.write_out(line, gzip, rec, sh);
        }
    }

    /// Writes out what is buffered (full buffer, `flush=` timer, reopen, exit).
    pub(crate) fn flush(&mut self, rec: Option<&RequestLog<'_>>, sh: &mut Shared<'_>) {
        let Some(buf) = &mut self.buffer else { return };
        buf.deadline = None;
        if buf.data.is_empty() {
            return;
        }
        let data = std::mem::take(&mut buf.data);
        let gzip = buf.conf.gzip;
        self.write_out(&data, gzip, rec, sh);
        if let Some(buf) = &mut self.buffer {
            // Keep the allocation: the next line goes into the same Vec.
            buf.data = data;
            buf.data.clear();
        }
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.buffer.as_ref().and_then(|b| b.deadline)
    }

    /// Flushes into the old descriptor, then opens the path again; on
    /// failure the old descriptor stays.
    pub(crate) fn reopen(&mut self, sh: &mut Shared<'_>) -> io::Result<()> {
        self.flush(None, sh);
        self.sink.reopen()
    }

    pub(crate) fn sink(&self) -> &Sink {
        &self.sink
    }

    fn write_out(
        &mut self,
        data: &[u8],
        gzip: Option<u32>,
        rec: Option<&RequestLog<'_>>,
        sh: &mut Shared<'_>,
    ) {
        let result = match gzip {
            None => self.sink.write_all(data),
            Some(level) => {
                sh.gzip_out.clear();
                match gzip_member(data, level, sh.gzip_out) {
                    Ok(()) => self.sink.write_all(sh.gzip_out),
                    Err(e) => Err(e),
                }
            }
        };
        if let Err(e) = result {
            self.report(&e, rec, sh.error_log);
        }
    }

    /// One alert per [`WRITE_ERROR_REPORT_INTERVAL`]; serving goes on and
    /// the data is dropped, as nginx drops it.
    fn report(&mut self, e: &io::Error, rec: Option<&RequestLog<'_>>, error_log: &ErrorLog) {
        let now_sec = unix_millis(rec.map_or_else(SystemTime::now, |r| r.end)) / 1000;
        if e.raw_os_error() == Some(libc::ENOSPC) {
            self.disk_full_sec = Some(now_sec);
        }
        let now = Instant::now();
        if self
            .last_report
            .is_some_and(|t| now.duration_since(t) < WRITE_ERROR_REPORT_INTERVAL)
        {
            return;
        }
        self.last_report = Some(now);
        let path = self.sink.name().display();
        let msg = format_args!("write() to \"{path}\" failed ({})", OsErr(e));
        match rec {
            Some(r) => request_context(r, |ctx| error_log.log(LogLevel::Alert, Some(ctx), msg)),
            None => error_log.log(LogLevel::Alert, None, msg),
        }
    }
}

/// Calls `f` with the error-log context of a request being logged, as
/// nginx's: `*CID ... while logging request, client: ..., host: "..."`.
pub(crate) fn request_context(r: &RequestLog<'_>, f: impl FnOnce(&ConnContext<'_>)) {
    // nginx quotes the Host and Referer fields as received; copying them is
    // fine on this rate-limited path.
    let field = |name: &[u8]| with_first(r.request_headers, name, <[u8]>::to_vec);
    let (host, referrer) = (field(b"host"), field(b"referer"));
    f(&ConnContext {
        id: r.connection,
        // nginx sets this action around the log phase.
        action: Some("logging request"),
        client: Some(r.remote.ip()),
        server: Some(r.server_name),
        request_line: r.request_line,
        host: host.as_deref(),
        referrer: referrer.as_deref(),
    })
}

/// Compresses `data` as one complete gzip member (nginx writes one member
/// per flushed buffer; `zcat` reads the concatenation).
fn gzip_member(data: &[u8], level: u32, out: &mut Vec<u8>) -> io::Result<()> {
    let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::new(level.min(9)));
    enc.write_all(data)?;
    enc.finish().map(|_| ())
}
