//! `access_log` paths with variables (`logs/$host.access.log`): nginx
//! renders the path per request and opens, writes and closes the file each
//! time, unless the location has an `open_log_file_cache` (`logcache`).
//!
//! Differences from nginx, on purpose: a rendered path with a `..`
//! component is refused (a header value must not steer writes outside the
//! log directory); nginx's check that the request's `root` exists is not
//! made (the record has no root); failures are rate-limited like other
//! write failures instead of logged on every request.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::time::Instant;

use std::fs::File;

use peregrine_conf::model::{LogLevel, OpenLogFileCacheConf};

use crate::errlog::ErrorLog;
use crate::error::OsErr;
use crate::format::LogFormat;
use crate::logcache::LogFileCache;
use crate::logfile::{WRITE_ERROR_REPORT_INTERVAL, request_context};
use crate::record::RequestLog;
use crate::sink::open_append;
use crate::time::TimeCache;

#[derive(Debug)]
pub(crate) struct ScriptLog {
    path: LogFormat,
    rendered: Vec<u8>,
    last_report: Option<Instant>,
    cache: Option<LogFileCache>,
}

impl ScriptLog {
    pub(crate) fn new(path: LogFormat, cache: Option<OpenLogFileCacheConf>) -> ScriptLog {
        ScriptLog {
            path,
            rendered: Vec::new(),
            last_report: None,
            cache: cache.map(LogFileCache::new),
        }
    }

    /// Appends `line` to the file this request's values name.
    pub(crate) fn write(
        &mut self,
        line: &[u8],
        rec: &RequestLog<'_>,
        time: &mut TimeCache,
        error_log: &ErrorLog,
    ) {
        self.rendered.clear();
        self.path.render(rec, time, &mut self.rendered);
        let path = Path::new(OsStr::from_bytes(&self.rendered));
        if self.rendered.is_empty() || path.components().any(|c| c == Component::ParentDir) {
            report(
                &mut self.last_report,
                rec,
                error_log,
                LogLevel::Error,
                format_args!(
                    "refusing access_log path \"{}\" rendered from variables",
                    path.display()
                ),
            );
            return;
        }
        let write = |mut f: &File| f.write_all(line);
        let written = match &mut self.cache {
            Some(cache) => cache.with_file(path, Instant::now(), write),
            None => open_append(path).map(|f| write(&f)),
        };
        let written = match written {
            Ok(w) => w,
            Err(e) => {
                let msg = format_args!("open() \"{}\" failed ({})", path.display(), OsErr(&e));
                report(&mut self.last_report, rec, error_log, LogLevel::Crit, msg);
                return;
            }
        };
        if let Err(e) = written {
            let msg = format_args!("write() to \"{}\" failed ({})", path.display(), OsErr(&e));
            report(&mut self.last_report, rec, error_log, LogLevel::Alert, msg);
        }
    }
}

/// Logs `msg` unless one was logged within [`WRITE_ERROR_REPORT_INTERVAL`].
fn report(
    last_report: &mut Option<Instant>,
    rec: &RequestLog<'_>,
    error_log: &ErrorLog,
    level: LogLevel,
    msg: std::fmt::Arguments<'_>,
) {
    let now = Instant::now();
    if last_report.is_some_and(|t| now.duration_since(t) < WRITE_ERROR_REPORT_INTERVAL) {
        return;
    }
    *last_report = Some(now);
    request_context(rec, |ctx| error_log.log(level, Some(ctx), msg));
}
