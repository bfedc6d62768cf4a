//! Serving: wire the logs into the engine and run it until stop or quit.

use std::sync::Arc;

use anyhow::{Context, Result};
use peregrine_conf::model::{ErrorLogConf, LogLevel, LogTarget};
use peregrine_conf::{Config, LoadOptions};
use peregrine_engine::{RunOptions, logging};
use peregrine_log::{ErrorLog, ReopenSignal};

/// Runs the server on `conf`; `reload` re-reads the same files on SIGHUP.
/// `early_log` is `-e`: where errors go before the configuration's own
/// error_log is open (and, as in nginx, in addition to it).
pub fn serve(conf: Arc<Config>, opts: LoadOptions, early_log: Option<String>) -> Result<i32> {
    let mut targets = conf.main.error_log.clone();
    if let Some(e) = early_log {
        let target = if e == "stderr" {
            LogTarget::Stderr
        } else {
            LogTarget::File(conf.prefix.join(e))
        };
        targets.push(ErrorLogConf {
            target,
            level: LogLevel::Error,
        });
    }
    let elog = Arc::new(ErrorLog::new(&targets).context("cannot open the error log")?);
    for notice in &conf.notices {
        elog.log(LogLevel::Notice, None, format_args!("{notice}"));
    }
    let reopen = ReopenSignal::new();
    let mut run = RunOptions::new(Box::new(move || {
        peregrine_conf::load(&opts)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }));
    run.error_log = logging::error_log_hook(elog.clone());
    run.access_log = Some(logging::access_log_factory(elog.clone(), reopen.clone()));
    let reopen_elog = elog.clone();
    run.reopen_logs = Box::new(move || {
        reopen.trigger();
        let _ = reopen_elog.reopen();
    });
    match peregrine_engine::run(conf, run) {
        Ok(()) => Ok(0),
        Err(err) => {
            elog.log(LogLevel::Emerg, None, format_args!("{err}"));
            eprintln!("peregrine: [emerg] {err}");
            Ok(1)
        }
    }
}
