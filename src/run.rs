//! What each command line asks for: test, dump, signal, serve, or a subcommand.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use peregrine_conf::{Config, LoadOptions};

use crate::cli::{Cli, Signal, USAGE};

/// The default configuration file, relative to the prefix (nginx's is
/// `conf/nginx.conf`; ours names the product, and `-c` takes either).
const DEFAULT_CONF: &str = "conf/peregrine.conf";

pub fn nginx_style(cli: Cli) -> Result<i32> {
    if cli.help || cli.version {
        print_version_and_help(&cli);
        if !cli.test && cli.signal.is_none() {
            return Ok(0);
        }
    }
    let opts = load_options(&cli)?;
    let conf_path = opts.prefix.join(&opts.conf_file);
    let loaded = peregrine_conf::load(&opts).map_err(|e| e.to_string());
    // Log formats and access_log parameters are checked here too, so `-t`
    // refuses what the workers would refuse.
    let loaded = loaded.and_then(|conf| match &conf.http {
        Some(http) => peregrine_log::AccessLogs::check(http)
            .map(|()| conf)
            .map_err(|e| e.to_string()),
        None => Ok(conf),
    });
    // `-t` reads the certificates and keys as nginx's does.
    let loaded = loaded.and_then(|conf| match cli.test {
        true => peregrine_engine::tls::TlsTable::build(&conf)
            .map_err(|e| e.to_string())
            .and_then(|_| peregrine_engine::mail::check_tls(&conf))
            .map(|_| conf),
        false => Ok(conf),
    });
    let conf = match loaded {
        Ok(conf) => conf,
        Err(err) => {
            eprintln!("peregrine: [emerg] {err}");
            if cli.test {
                eprintln!(
                    "peregrine: configuration file {} test failed",
                    conf_path.display()
                );
            }
            return Ok(1);
        }
    };
    if cli.test {
        return Ok(test_and_dump(&cli, &conf));
    }
    if let Some(signal) = cli.signal {
        return send_signal(&conf, signal);
    }
    serve(conf, opts, cli.error_log)
}

fn print_version_and_help(cli: &Cli) {
    if cli.version_full {
        eprint!("{}", crate::version::full());
    } else if cli.version {
        eprintln!("peregrine version: peregrine/{}", env!("CARGO_PKG_VERSION"));
    }
    if cli.help {
        eprint!("{USAGE}");
    }
}

fn load_options(cli: &Cli) -> Result<LoadOptions> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let prefix = match &cli.prefix {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => cwd.join(p),
        None => cwd,
    };
    let conf_file = cli
        .conf
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CONF));
    Ok(LoadOptions {
        prefix,
        conf_file,
        globals: cli.globals.clone(),
    })
}

/// `-t` and `-T`: nginx prints the two success lines to stderr (not with
/// `-q`), and `-T` then writes every file read to stdout.
fn test_and_dump(cli: &Cli, conf: &Config) -> i32 {
    let file = conf.conf_file.display();
    if !cli.quiet {
        for notice in &conf.notices {
            eprintln!("peregrine: [notice] {notice}");
        }
        eprintln!("peregrine: the configuration file {file} syntax is ok");
        eprintln!("peregrine: configuration file {file} test is successful");
    }
    if cli.dump {
        let mut out = String::new();
        // nginx dumps a file included twice once (`ngx_conf_add_dump`
        // keeps a tree of the names dumped).
        let mut seen = std::collections::HashSet::new();
        for source in conf.files.iter().filter(|s| seen.insert(&s.path)) {
            out.push_str(&format!(
                "# configuration file {}:\n{}\n",
                source.path.display(),
                source.text
            ));
        }
        print!("{out}");
    }
    0
}

/// `-s`: find the master through the pid file, as nginx does.
fn send_signal(conf: &Config, signal: Signal) -> Result<i32> {
    let Some(pid_path) = conf.main.pid.as_deref() else {
        eprintln!("peregrine: [error] no \"pid\" file is configured");
        return Ok(1);
    };
    let pid = match read_pid(pid_path) {
        Ok(pid) => pid,
        Err(msg) => {
            eprintln!("peregrine: [error] {msg}");
            return Ok(1);
        }
    };
    if let Err(err) = peregrine_sys::kill(pid, signal.number()) {
        eprintln!(
            "peregrine: [alert] kill({pid}, {}) failed ({err})",
            signal.number()
        );
        return Ok(1);
    }
    let _ = signal.name();
    Ok(0)
}

fn read_pid(path: &Path) -> Result<u32, String> {
    let text = std::fs::read_to_string(path).map_err(|err| {
        format!(
            "open() \"{}\" failed ({}: {})",
            path.display(),
            err.raw_os_error().unwrap_or(0),
            strip_os_suffix(&err)
        )
    })?;
    let trimmed = text.trim_end_matches('\n');
    trimmed
        .parse::<u32>()
        .ok()
        .filter(|pid| *pid > 0)
        .ok_or_else(|| format!("invalid PID number \"{trimmed}\" in \"{}\"", path.display()))
}

/// std's io::Error Display appends " (os error N)"; nginx prints the bare
/// strerror text.
pub fn strip_os_suffix(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

fn serve(conf: Config, opts: LoadOptions, error_log: Option<String>) -> Result<i32> {
    let conf = Arc::new(conf);
    crate::serve::serve(conf, opts, error_log)
}

pub fn bench(args: &[OsString]) -> Result<i32> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Ok(peregrine_bench::run(&args)?)
}

pub fn tune(args: &[OsString]) -> Result<i32> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Ok(peregrine_tune::run(&args)?)
}
