//! peregrine-log: nginx's `log_format`, `access_log` and `error_log`.
//!
//! # What this crate owns
//! - Compiling `log_format` strings once ([`LogFormat`]) and rendering a
//!   line per request from a [`RequestLog`] of borrowed fields, into a
//!   reused buffer (no allocation once warm). Variables, escaping
//!   (`escape=default|json|none`), "not found" as `-`, and the error
//!   messages are nginx 1.22's, checked against Debian's nginx.
//! - [`AccessLogs`]: one per worker. Opens every `access_log` file of the
//!   configuration (one descriptor per path per worker, `O_APPEND|O_CREAT`,
//!   0644), `buffer=`/`flush=`/`gzip[=level]` (gzip via flate2, one gzip
//!   member per flushed buffer, as nginx), `if=`, `off`, `reopen` (USR1),
//!   `flush` (reload/exit, and on drop). Write failures are reported to the
//!   error log at most once per [`WRITE_ERROR_REPORT_INTERVAL`]; serving
//!   goes on.
//! - `syslog:` targets of both logs (one UDP datagram per line in nginx's
//!   RFC 3164 form) and `error_log memory:SIZE` (see `syslog`).
//! - [`ErrorLog`]: shared (`Arc`) by all workers; nginx-shaped lines
//!   (`2026/11/30 08:14:14 [error] PID#TID: *CID msg, client: ...`), one
//!   write(2) per line, several targets with their own levels, `reopen`.
//! - [`TimeCache`]: `$time_local`/`$time_iso8601` recomputed once a second.
//!
//! Variables: the brief's list (`$remote_addr` ... `$pid`, `$http_*`,
//! `$sent_http_*`), plus `$arg_*`, `$cookie_*`, `$is_args`, `$https`,
//! `$document_uri`, `$content_type`, `$content_length`, `$hostname`,
//! `$binary_remote_addr`, `$request_id` (made per request when the engine
//! gives none), `$uid_got`/`$uid_set` (read back from the cookies by the
//! location's `userid_name`, see `uid`); `$upstream_*` and `$gzip_ratio` are accepted and log `-`.
//! Any other name fails at configuration time (`unknown "x" variable`).
//!
//! # What it does not own
//! Parsing the directives (peregrine-conf: [`peregrine_conf::model`]),
//! deciding when a request is finished or which location handled it
//! (core/engine), timers and signals (engine). Paths with variables
//! are opened and closed per line, as nginx does, or kept open by
//! `open_log_file_cache` (`logcache`).
//!
//! # Time zone
//! Times are local, as nginx prints them: the zone comes from `TZ` or
//! `/etc/localtime` (TZif, read once; see the `tz` module for its limits).
//!
//! # Use from the engine
//! ```text
//! // master, after loading the configuration (also for `-t`):
//! AccessLogs::check(&http)?;                              // Result<(), LogError>
//! let elog = Arc::new(ErrorLog::new(&cfg.main.error_log)?); // shared by all threads
//! let reopen = ReopenSignal::new();                       // USR1: reopen.trigger(); elog.reopen()
//! // each worker thread (before dropping privileges if files are root-only):
//! let mut logs = AccessLogs::new(&http, elog.clone())?;
//! logs.watch(&reopen);
//! // per finished request (last byte handed to the kernel):
//! let resp: &FieldList = &response.head;                 // the response's fields
//! let rec = RequestLog {
//!     status, bytes_sent, body_bytes_sent, request_length,
//!     connection: conn.id, connection_requests: conn.requests,
//!     server_name, response_headers: resp, uri: Some(final_uri),
//!     ..RequestLog::new(conn.peer, conn.local, start, now).with_request(&req)
//! };
//! logs.log(&loc_conf /* &Arc<LocConf> that produced the response */, &rec);
//! // timers: arm logs.next_flush(); call logs.tick(Instant::now()) when due
//! //         (calling it once a second is fine too).
//! // reload/exit: logs.flush(), or just drop it.
//! // errors, from any thread (`msg` is formatted only if the level passes):
//! elog.log(LogLevel::Error, Some(&ConnContext { id, client: Some(ip),
//!          server: Some(name), request_line, host, ..Default::default() }),
//!          format_args!("open() \"{}\" failed ({})", path.display(), OsErr(&e)));
//! ```

mod access;
mod auth;
mod errlog;
mod error;
mod escape;
mod format;
mod logcache;
mod logfile;
mod record;
mod request_id;
mod script;
mod sink;
mod syslog;
mod time;
mod tz;
mod tz_rule;
mod uid;
mod var;

#[cfg(test)]
mod testutil;

pub use access::{AccessLogs, ListId, ReopenSignal};
pub use errlog::{ConnContext, ErrorLog, MAX_ERROR_LINE, level_name, thread_id};
pub use error::{FormatError, LogError, OsErr};
pub use format::{COMBINED, LogFormat};
pub use logfile::{GZIP_DEFAULT_BUFFER, WRITE_ERROR_REPORT_INTERVAL};
pub use peregrine_conf::model::{LogEscape, LogLevel};
pub use record::{
    HeaderPairs, Headers, ModuleVars, NoHeaders, RequestLog, SslValues, UpstreamValues,
};
pub use sink::LOG_FILE_MODE;
pub use time::TimeCache;
