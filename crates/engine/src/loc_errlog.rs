//! `error_log` below the main level: the lines logged while a request is
//! processed in a location go to the error logs in effect there (nginx's
//! `r->connection->log` is switched to `clcf->error_log` by
//! `ngx_http_update_location_config`), with their own level filters.
//!
//! Each worker opens a set of targets the first time a request needs it and
//! keeps it for the configuration's life: few distinct sets exist (one per
//! level that writes `error_log`), found by pointer.

use std::cell::RefCell;
use std::sync::Arc;

use peregrine_conf::model::{Config, ErrorLogConf, LocConf, LocationConf, LogLevel};
use peregrine_log::ErrorLog;

/// One level's targets and their opened log.
type Opened = (Arc<[ErrorLogConf]>, Option<ErrorLog>);

/// The location error logs a worker has opened (`None`: opening failed;
/// the line then goes nowhere, as nginx would have refused to start).
#[derive(Default)]
pub struct LocErrLogs {
    opened: RefCell<Vec<Opened>>,
}

impl LocErrLogs {
    /// Opens every level's error logs of `conf` now, as nginx creates them
    /// at start (a log that never gets a line still exists).
    pub fn open_all(conf: &Config) -> LocErrLogs {
        let logs = LocErrLogs::default();
        let Some(http) = conf.http.as_ref() else {
            return logs;
        };
        let mut stack: Vec<&LocConf> = Vec::new();
        for srv in &http.servers {
            stack.push(&srv.conf);
            let mut locs: Vec<&LocationConf> = srv.locations.iter().map(|l| &**l).collect();
            while let Some(l) = locs.pop() {
                stack.push(&l.conf);
                locs.extend(l.locations.iter().map(|l| &**l));
            }
        }
        for c in stack {
            if let Some(confs) = &c.error_log {
                logs.index(confs);
            }
        }
        logs
    }

    /// The position of `confs`' opened logs, opening them on first use.
    fn index(&self, confs: &Arc<[ErrorLogConf]>) -> usize {
        let mut opened = self.opened.borrow_mut();
        match opened.iter().position(|(c, _)| Arc::ptr_eq(c, confs)) {
            Some(i) => i,
            None => {
                opened.push((Arc::clone(confs), ErrorLog::new(confs).ok()));
                opened.len() - 1
            }
        }
    }

    /// Writes `line` (already carrying the connection context) to the
    /// targets of `confs` whose level admits `level`.
    pub fn write(&self, confs: &Arc<[ErrorLogConf]>, level: LogLevel, line: &str) {
        if !confs.iter().any(|c| level >= c.level) {
            return;
        }
        let i = self.index(confs);
        if let Some(log) = &self.opened.borrow()[i].1 {
            log.log(level, None, format_args!("{line}"));
        }
    }
}
