//! `access_log`: the per-worker set of compiled formats, open files and
//! the lists of writers each configuration context uses.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use peregrine_conf::model::{
    AccessLogConf, HttpConf, LocConf, LocationConf, LogEscape, LogFormatConf, LogLevel, LogTarget,
};

use crate::errlog::ErrorLog;
use crate::error::{LogError, OsErr};
use crate::format::LogFormat;
use crate::logfile::{BufferConf, GZIP_DEFAULT_BUFFER, LogFile, Shared};
use crate::record::RequestLog;
use crate::request_id::RequestIds;
use crate::script::ScriptLog;
use crate::sink::Sink;
use crate::time::{TimeCache, unix_millis};
use crate::tz::local_zone;

/// Identifies one context's list of `access_log` directives (see
/// [`AccessLogs::list_id`]); cheap to copy and store per location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListId(u32);

/// Asks every worker's [`AccessLogs`] to reopen its files: USR1 arrives on
/// the master thread while each worker owns its logs. A worker notices on
/// its next [`AccessLogs::log`] or [`AccessLogs::tick`] (one atomic load).
#[derive(Debug, Clone, Default)]
pub struct ReopenSignal(Arc<AtomicU64>);

impl ReopenSignal {
    pub fn new() -> ReopenSignal {
        ReopenSignal::default()
    }

    /// Requests a reopen from every watching worker.
    pub fn trigger(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }

    fn generation(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// One `access_log` directive, compiled.
#[derive(Debug)]
struct Writer {
    dest: Dest,
    format: usize,
    /// `if=`: rendered like a format with `escape=none` (nginx evaluates a
    /// complex value: not-found variables are empty, nothing escaped).
    condition: Option<LogFormat>,
    /// The location's userid settings (`$uid_got`, `$uid_set`).
    userid: Option<Arc<peregrine_conf::model::UseridConf>>,
}

/// Where a writer's lines go.
#[derive(Debug, Clone, Copy)]
enum Dest {
    /// An index in `files`.
    File(usize),
    /// An index in `scripts`: a path with variables.
    Script(usize),
    /// An index in `syslogs`: `access_log syslog:...`.
    Syslog(usize),
}

/// What configuration yields before any file is opened (also what
/// [`AccessLogs::check`] validates).
#[derive(Debug)]
struct Plan {
    formats: Vec<LogFormat>,
    format_names: Vec<String>,
    files: Vec<(LogTarget, Option<BufferConf>)>,
    lists: Vec<Box<[Writer]>>,
    list_confs: Vec<Vec<AccessLogConf>>,
    /// Per list: some format or condition of it uses `$request_id`.
    list_needs_id: Vec<bool>,
    /// Paths with variables, opened per request (their state lives here:
    /// the plan is per worker too).
    scripts: Vec<ScriptLog>,
    /// `syslog:` peers, one UDP socket each (per worker, as the plan).
    syslogs: Vec<crate::syslog::SyslogOut>,
    /// The variables the configuration defines (see
    /// [`LogFormat::compile_declared`]).
    declared: Vec<String>,
}

/// Hashes `LocConf` addresses: a multiply folds the always-zero low bits
/// (alignment) into the ones hashbrown uses to pick a bucket.
#[derive(Default)]
struct PtrHasher(u64);

impl Hasher for PtrHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        let h = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type PtrMap = HashMap<usize, (Arc<LocConf>, ListId), BuildHasherDefault<PtrHasher>>;

/// A worker's access logs. Not shared: each worker builds its own (its own
/// descriptors and buffers, no locks); contexts naming the same file share
/// one descriptor and one buffer, as in nginx.
pub struct AccessLogs {
    plan: Plan,
    files: Vec<LogFile>,
    /// `LocConf` address → its list. The `Arc` is held so an address cannot
    /// be reused by another `LocConf` while this set lives.
    by_conf: PtrMap,
    error_log: Arc<ErrorLog>,
    /// The signal watched and the generation last acted on.
    reopen: Option<(ReopenSignal, u64)>,
    time: TimeCache,
    ids: RequestIds,
    line: Vec<u8>,
    cond: Vec<u8>,
    gzip_out: Vec<u8>,
}

impl std::fmt::Debug for AccessLogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLogs")
            .field("files", &self.files.len())
            .field("lists", &self.plan.lists.len())
            .finish_non_exhaustive()
    }
}

/// Initial capacity of the per-worker line buffer; it grows if a line is
/// longer and then stays grown.
const LINE_CAPACITY: usize = 4096;

impl AccessLogs {
    /// Validates every `log_format` and `access_log` without opening files
    /// (for `-t` and before forking workers).
    pub fn check(http: &HttpConf) -> Result<(), LogError> {
        let mut plan = Plan::new(&http.log_formats, &http.variables.names)?;
        for_each_conf(http, &mut |conf| {
            plan.list_for(&conf.access_log).map(|_| ())
        })
    }

    /// The files every context of `http` logs to (paths with variables
    /// aside: those open per request). The master creates them before a
    /// reopen so that workers running as `user` can open them.
    pub fn file_paths(http: &HttpConf) -> Result<Vec<std::path::PathBuf>, LogError> {
        let mut plan = Plan::new(&http.log_formats, &http.variables.names)?;
        for_each_conf(http, &mut |conf| {
            plan.list_for(&conf.access_log).map(|_| ())
        })?;
        Ok(plan
            .files
            .iter()
            .filter_map(|(t, _)| match t {
                LogTarget::File(p) => Some(p.clone()),
                _ => None,
            })
            .collect())
    }

    /// Compiles formats and conditions, opens every file of every context
    /// of `http` (`O_APPEND|O_CREAT`, 0644). Call once per worker.
    pub fn new(http: &HttpConf, error_log: Arc<ErrorLog>) -> Result<AccessLogs, LogError> {
        let mut plan = Plan::new(&http.log_formats, &http.variables.names)?;
        let mut by_conf = PtrMap::default();
        for_each_conf(http, &mut |conf| {
            let id = plan.list_for(&conf.access_log)?;
            by_conf.insert(Arc::as_ptr(conf) as usize, (Arc::clone(conf), id));
            Ok(())
        })?;
        Self::open(plan, by_conf, error_log)
    }

    /// As [`AccessLogs::new`] from bare lists of directives rather than a
    /// configuration tree; returns one id per list, in order.
    pub fn from_lists(
        log_formats: &[LogFormatConf],
        lists: &[Vec<AccessLogConf>],
        error_log: Arc<ErrorLog>,
    ) -> Result<(AccessLogs, Vec<ListId>), LogError> {
        let mut plan = Plan::new(log_formats, &[])?;
        let ids = lists
            .iter()
            .map(|l| plan.list_for(l))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((Self::open(plan, PtrMap::default(), error_log)?, ids))
    }

    fn open(plan: Plan, by_conf: PtrMap, error_log: Arc<ErrorLog>) -> Result<AccessLogs, LogError> {
        let mut files = Vec::with_capacity(plan.files.len());
        for (target, buffer) in &plan.files {
            let sink = Sink::open(target).map_err(|source| LogError::Open {
                path: target_path(target),
                source,
            })?;
            files.push(LogFile::new(sink, *buffer));
        }
        Ok(AccessLogs {
            plan,
            files,
            by_conf,
            error_log,
            reopen: None,
            time: TimeCache::new(),
            ids: RequestIds::new(),
            line: Vec::with_capacity(LINE_CAPACITY),
            cond: Vec::new(),
            gzip_out: Vec::new(),
        })
    }

    /// True when no context of the configuration logs anywhere (`access_log
    /// off` everywhere, the usual tuned setting): no file was opened, no
    /// path has variables, no syslog peer is set, and [`AccessLogs::log`]
    /// would write nothing for any of its requests.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.plan.scripts.is_empty() && self.plan.syslogs.is_empty()
    }

    /// The list of `conf`'s `access_log`s. Every `LocConf` of the
    /// configuration given to [`AccessLogs::new`] is known; an unknown one
    /// is matched by value (and compiled if new, opening its files).
    /// Returns `None` for `access_log off` or if it cannot be set up (then
    /// reported to the error log).
    pub fn list_id(&mut self, conf: &Arc<LocConf>) -> Option<ListId> {
        let key = Arc::as_ptr(conf) as usize;
        let id = match self.by_conf.get(&key) {
            Some((_, id)) => *id,
            None => {
                let id = self.add_list(&conf.access_log)?;
                self.by_conf.insert(key, (Arc::clone(conf), id));
                id
            }
        };
        (!self.plan.lists[id.0 as usize].is_empty()).then_some(id)
    }

    /// Reopens the files whenever `signal` is triggered from now on.
    pub fn watch(&mut self, signal: &ReopenSignal) {
        self.reopen = Some((signal.clone(), signal.generation()));
    }

    fn poll_reopen(&mut self) {
        if let Some((sig, seen)) = &mut self.reopen {
            let now = sig.generation();
            if now != *seen {
                *seen = now;
                // Failures are already in the error log.
                let _ = self.reopen();
            }
        }
    }

    /// Logs one finished request to every `access_log` of `conf` (the
    /// location that handled it; after internal redirects, the last one).
    pub fn log(&mut self, conf: &Arc<LocConf>, rec: &RequestLog<'_>) {
        if let Some(id) = self.list_id(conf) {
            self.log_list(id, rec);
        }
    }

    /// As [`AccessLogs::log`] with a list looked up before.
    /// Whether a format or condition of list `id` uses `$request_id`
    /// (the engine then gives the request's own, as the one its
    /// variables showed).
    pub fn needs_request_id(&self, id: ListId) -> bool {
        self.plan
            .list_needs_id
            .get(id.0 as usize)
            .copied()
            .unwrap_or(false)
    }

    pub fn log_list(&mut self, id: ListId, rec: &RequestLog<'_>) {
        self.poll_reopen();
        let AccessLogs {
            plan,
            files,
            error_log,
            time,
            ids,
            line,
            cond,
            gzip_out,
            ..
        } = self;
        let Some(writers) = plan.lists.get(id.0 as usize) else {
            return;
        };
        // One `$request_id` for all of this request's logs, made only when
        // a format uses it and the engine gave none.
        let mut id_hex = [0u8; 32];
        let with_id;
        let rec = if rec.request_id.is_none() && plan.list_needs_id[id.0 as usize] {
            ids.next_hex(&mut id_hex);
            with_id = RequestLog {
                request_id: Some(&id_hex),
                ..*rec
            };
            &with_id
        } else {
            rec
        };
        let now_sec = unix_millis(rec.end) / 1000;
        let mut sh = Shared {
            error_log,
            gzip_out,
        };
        for w in writers.iter() {
            if let Dest::File(f) = w.dest
                && files[f].skipping(now_sec)
            {
                continue;
            }
            let with_uid;
            let rec = match &w.userid {
                Some(u) => {
                    with_uid = RequestLog {
                        userid: Some(u),
                        ..*rec
                    };
                    &with_uid
                }
                None => rec,
            };
            if let Some(c) = &w.condition {
                cond.clear();
                c.render(rec, time, cond);
                if cond.is_empty() || cond.as_slice() == b"0" {
                    continue;
                }
            }
            line.clear();
            plan.formats[w.format].render(rec, time, line);
            line.push(b'\n');
            match w.dest {
                Dest::File(f) => files[f].write_line(line, Some(rec), &mut sh),
                Dest::Script(s) => plan.scripts[s].write(line, rec, time, sh.error_log),
                Dest::Syslog(s) => {
                    // One datagram, without the newline.
                    let unix = i64::try_from(now_sec).unwrap_or(0);
                    plan.syslogs[s].send_access(unix, local_zone(), &line[..line.len() - 1]);
                }
            }
        }
    }

    /// The earliest `flush=` deadline of any buffered file, for the
    /// worker's timer; `None` when nothing waits.
    pub fn next_flush(&self) -> Option<Instant> {
        self.files.iter().filter_map(LogFile::deadline).min()
    }

    /// Writes out every buffer whose `flush=` time has come. Call when the
    /// deadline from [`AccessLogs::next_flush`] passes (early calls are harmless).
    pub fn tick(&mut self, now: Instant) {
        self.poll_reopen();
        let mut sh = Shared {
            error_log: &self.error_log,
            gzip_out: &mut self.gzip_out,
        };
        for f in &mut self.files {
            if f.deadline().is_some_and(|d| d <= now) {
                f.flush(None, &mut sh);
            }
        }
    }

    /// Writes out every buffer (reload, graceful exit). Also done on drop.
    pub fn flush(&mut self) {
        let mut sh = Shared {
            error_log: &self.error_log,
            gzip_out: &mut self.gzip_out,
        };
        for f in &mut self.files {
            f.flush(None, &mut sh);
        }
    }

    /// USR1: flushes each file, then reopens it by path (after logrotate
    /// renamed it). A file that cannot be reopened keeps its descriptor;
    /// the failure is logged at `emerg` (as nginx) and the first returned.
    pub fn reopen(&mut self) -> Result<(), LogError> {
        let mut first = None;
        let mut sh = Shared {
            error_log: &self.error_log,
            gzip_out: &mut self.gzip_out,
        };
        for f in &mut self.files {
            if let Err(source) = f.reopen(&mut sh) {
                let path = f.sink().name().to_path_buf();
                sh.error_log.log(
                    LogLevel::Emerg,
                    None,
                    format_args!("open() \"{}\" failed ({})", path.display(), OsErr(&source)),
                );
                first.get_or_insert(LogError::Open { path, source });
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Compiles a list met only at run time, opening its new files.
    fn add_list(&mut self, confs: &[AccessLogConf]) -> Option<ListId> {
        let known_files = self.plan.files.len();
        let known_lists = self.plan.lists.len();
        let result = self.plan.list_for(confs).and_then(|id| {
            for (target, buffer) in &self.plan.files[known_files..] {
                let sink = Sink::open(target).map_err(|source| LogError::Open {
                    path: target_path(target),
                    source,
                })?;
                self.files.push(LogFile::new(sink, *buffer));
            }
            Ok(id)
        });
        match result {
            Ok(id) => Some(id),
            Err(e) => {
                // Undo the partial plan so lists only name open files.
                self.plan.files.truncate(self.files.len());
                self.plan.lists.truncate(known_lists);
                self.plan.list_confs.truncate(known_lists);
                self.plan.list_needs_id.truncate(known_lists);
                self.error_log
                    .log(LogLevel::Alert, None, format_args!("{e}"));
                None
            }
        }
    }
}

impl Drop for AccessLogs {
    fn drop(&mut self) {
        self.flush();
    }
}

fn target_path(t: &LogTarget) -> std::path::PathBuf {
    match t {
        LogTarget::File(p) => p.clone(),
        LogTarget::Stderr => "stderr".into(),
        LogTarget::Syslog(s) => format!("syslog:server={}", s.server_name).into(),
        LogTarget::Memory(_) => "memory".into(),
    }
}

/// Calls `f` with the settings of every server and (nested) location.
fn for_each_conf(
    http: &HttpConf,
    f: &mut dyn FnMut(&Arc<LocConf>) -> Result<(), LogError>,
) -> Result<(), LogError> {
    fn walk(
        locs: &[Arc<LocationConf>],
        f: &mut dyn FnMut(&Arc<LocConf>) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        for l in locs {
            f(&l.conf)?;
            walk(&l.locations, f)?;
        }
        Ok(())
    }
    for s in &http.servers {
        f(&s.conf)?;
        walk(&s.locations, f)?;
    }
    Ok(())
}

impl Plan {
    fn new(log_formats: &[LogFormatConf], declared: &[String]) -> Result<Plan, LogError> {
        let mut formats = Vec::with_capacity(log_formats.len() + 1);
        let mut format_names = Vec::with_capacity(log_formats.len() + 1);
        for f in log_formats {
            let compiled = LogFormat::compile_declared(
                &f.parts.iter().map(String::as_str).collect::<Vec<_>>(),
                f.escape,
                declared,
            )
            .map_err(|error| LogError::Format {
                error,
                span: f.span.clone(),
            })?;
            formats.push(compiled);
            format_names.push(f.name.clone());
        }
        if !format_names.iter().any(|n| n == "combined") {
            formats.push(LogFormat::combined());
            format_names.push("combined".to_owned());
        }
        Ok(Plan {
            formats,
            format_names,
            files: Vec::new(),
            lists: Vec::new(),
            list_confs: Vec::new(),
            list_needs_id: Vec::new(),
            scripts: Vec::new(),
            syslogs: Vec::new(),
            declared: declared.to_vec(),
        })
    }

    /// The list for these directives: an equal one already compiled, or a
    /// new one. New files are appended to `files`.
    fn list_for(&mut self, confs: &[AccessLogConf]) -> Result<ListId, LogError> {
        if let Some(i) = self.list_confs.iter().position(|c| c.as_slice() == confs) {
            return Ok(ListId(i as u32));
        }
        let mut writers = Vec::with_capacity(confs.len());
        for c in confs {
            writers.push(self.writer(c)?);
        }
        let needs_id = writers.iter().any(|w: &Writer| {
            self.formats[w.format].uses_request_id()
                || w.condition.as_ref().is_some_and(LogFormat::uses_request_id)
        });
        self.lists.push(writers.into());
        self.list_confs.push(confs.to_vec());
        self.list_needs_id.push(needs_id);
        Ok(ListId((self.lists.len() - 1) as u32))
    }

    fn writer(&mut self, c: &AccessLogConf) -> Result<Writer, LogError> {
        let format = self
            .format_names
            .iter()
            .position(|n| *n == c.format)
            .ok_or_else(|| LogError::UnknownFormat {
                name: c.format.clone(),
                span: c.span.clone(),
            })?;
        let condition = match &c.condition {
            Some(text) => Some(
                LogFormat::compile_declared(&[text], LogEscape::None, &self.declared).map_err(
                    |error| LogError::Format {
                        error,
                        span: c.span.clone(),
                    },
                )?,
            ),
            None => None,
        };
        let dest = self.dest(c)?;
        Ok(Writer {
            dest,
            format,
            condition,
            userid: c.userid.clone(),
        })
    }

    /// The file index for `c.target`, merging buffer settings as nginx:
    /// one buffer per file; two differing settings are an error.
    fn dest(&mut self, c: &AccessLogConf) -> Result<Dest, LogError> {
        if let LogTarget::Syslog(peer) = &c.target {
            let out = crate::syslog::SyslogOut::new(peer).map_err(|source| LogError::Open {
                path: target_path(&c.target),
                source,
            })?;
            self.syslogs.push(out);
            return Ok(Dest::Syslog(self.syslogs.len() - 1));
        }
        if let LogTarget::File(p) = &c.target
            && p.as_os_str().as_encoded_bytes().contains(&b'$')
        {
            return self.script(p, c).map(Dest::Script);
        }
        let buffer = buffer_conf(c)?;
        if let Some(i) = self.files.iter().position(|(t, _)| *t == c.target) {
            let slot = &mut self.files[i].1;
            match (*slot, buffer) {
                (Some(old), Some(new)) if old != new => {
                    return Err(LogError::ConflictingParameters {
                        path: target_path(&c.target),
                        span: c.span.clone(),
                    });
                }
                (None, Some(new)) => *slot = Some(new),
                _ => {}
            }
            return Ok(Dest::File(i));
        }
        self.files.push((c.target.clone(), buffer));
        Ok(Dest::File(self.files.len() - 1))
    }

    /// A path with variables, compiled like a format (nothing escaped).
    fn script(&mut self, p: &std::path::Path, c: &AccessLogConf) -> Result<usize, LogError> {
        let span = || c.span.clone();
        if c.buffer.is_some() || c.gzip.is_some() || c.flush.is_some() {
            return Err(LogError::BufferedScript { span: span() });
        }
        // The configuration resolves relative paths against the prefix;
        // one still relative here would depend on the working directory.
        if !p.is_absolute() {
            return Err(LogError::VariablePath {
                path: p.to_path_buf(),
                span: span(),
            });
        }
        let text = p.to_string_lossy();
        let path = LogFormat::compile_declared(&[&text], LogEscape::None, &self.declared).map_err(
            |error| LogError::Format {
                error,
                span: span(),
            },
        )?;
        self.scripts.push(ScriptLog::new(path, c.cache));
        Ok(self.scripts.len() - 1)
    }
}

/// nginx's defaults: `gzip` without `buffer=` gets 64k; `flush=` without
/// a buffer is an error.
fn buffer_conf(c: &AccessLogConf) -> Result<Option<BufferConf>, LogError> {
    let size = match (c.buffer, c.gzip) {
        (Some(size), _) => size,
        (None, Some(_)) => GZIP_DEFAULT_BUFFER,
        (None, None) if c.flush.is_some() => {
            return Err(LogError::NoBuffer {
                path: target_path(&c.target),
                span: c.span.clone(),
            });
        }
        (None, None) => return Ok(None),
    };
    Ok(Some(BufferConf {
        size,
        flush: c.flush,
        gzip: c.gzip,
    }))
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
