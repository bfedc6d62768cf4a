//! Runs the engine on a configuration file, for manual comparison with
//! nginx: `cargo run -p peregrine-engine --example serve -- PREFIX CONF`.
//! (The real binary is the workspace's `peregrine`.)

use std::path::PathBuf;
use std::sync::Arc;

fn main() {
    let mut args = std::env::args().skip(1);
    let prefix = PathBuf::from(args.next().unwrap_or_else(|| ".".into()));
    let conf_file = PathBuf::from(args.next().unwrap_or_else(|| "conf/peregrine.conf".into()));
    let load = peregrine_conf::LoadOptions {
        prefix,
        conf_file,
        globals: None,
    };
    let conf = match peregrine_conf::load(&load) {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let elog = match peregrine_log::ErrorLog::new(&conf.main.error_log) {
        Ok(l) => Arc::new(l),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let reopen = peregrine_log::ReopenSignal::new();
    let mut opts = peregrine_engine::RunOptions::new(Box::new(move || {
        peregrine_conf::load(&load)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }));
    opts.error_log = peregrine_engine::logging::error_log_hook(elog.clone());
    opts.access_log = Some(peregrine_engine::logging::access_log_factory(
        elog.clone(),
        reopen.clone(),
    ));
    opts.reopen_logs = Box::new(move || {
        reopen.trigger();
        let _ = elog.reopen();
    });
    if let Err(e) = peregrine_engine::run(conf, opts) {
        eprintln!("peregrine: [emerg] {e}");
        std::process::exit(1);
    }
}
