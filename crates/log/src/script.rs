//! `access_log` paths with variables (`logs/$host.access.log`): nginx
//! renders the path per request and opens, writes and closes the file each
//! time (without `open_log_file_cache`, which Peregrine does not have).
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

use peregrine_conf::model::LogLevel;

use crate::errlog::ErrorLog;
use crate::error::OsErr;
use crate::format::LogFormat;
use crate::logfile::{WRITE_ERROR_REPORT_INTERVAL, request_context};
use crate::record::RequestLog;
use crate::sink::open_append;
use crate::time::TimeCache;

#[derive(Debug)]
pub(crate) struct ScriptLog {
    path: LogFormat,
    rendered: Vec<u8>,
    last_report: Option<Instant>,
}

impl ScriptLog {
    pub(crate) fn new(path: LogFormat) -> ScriptLog {
        ScriptLog {
            path,
            rendered: Vec::new(),
            last_report: None,
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
        let file = match open_append(path) {
            Ok(f) => f,
            Err(e) => {
                let msg = format_args!("open() \"{}\" failed ({})", path.display(), OsErr(&e));
                report(&mut self.last_report, rec, error_log, LogLevel::Crit, msg);
                return;
            }
        };
        let mut f = &file;
        if let Err(e) = f.write_all(line) {
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
