//! peregrine-conf: nginx.conf in, a typed, validated, merged [`Config`] out.
//!
//! Owns: the lexer ([`lexer`], nginx's tokenizer transcribed), the syntax tree
//! ([`syntax`]), the directive table ([`table`]: names, contexts, arity,
//! handlers, hint directives), nginx's own directive list
//! ([`nginx_directives`], generated) and what Peregrine does with each
//! ([`known`]: implemented, hint or refused by name), nginx's value syntaxes
//! ([`values`]), `include` resolution, nginx's inheritance and defaults, and
//! error messages worded and positioned as `nginx -t` words them. Also the
//! typed model every other crate reads ([`model`]).
//!
//! Does not own: acting on the configuration (sockets, files, logs, workers),
//! expanding `$variables` (kept verbatim), or looking up users and groups.
//!
//! Entry points: [`load`] for the binary (`-p`, `-c`, `-g`), [`parse_str`] for
//! tests and fuzzing (no file system access).

pub mod build;
pub mod cache;
pub mod cgi;
pub mod error;
pub mod fast;
pub mod filters;
pub mod known;
pub mod lexer;
pub mod model;
#[rustfmt::skip]
pub mod nginx_directives;
pub mod regex;
mod request_model;
// stream
pub mod stream;
// mail
pub mod mail;
pub mod syntax;
pub mod table;
pub mod table_cache;
pub mod table_cgi;
pub mod table_filters;
pub mod values;
pub mod variables;

pub use error::ConfError;
pub use model::*;
pub use values::{parse_size, parse_time, parse_time_sec};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use build::raw::{RawMain, full_name};
use build::{Builder, Frame};
use lexer::Source;

/// The default `-c`, relative to the prefix.
pub const DEFAULT_CONF_FILE: &str = "conf/peregrine.conf";

/// nginx's default `worker_connections`.
pub const DEFAULT_WORKER_CONNECTIONS: usize = 512;

/// What the command line says about where the configuration is.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// `-p`; relative to the current directory. Default: the current directory.
    pub prefix: PathBuf,
    /// `-c`; relative to the prefix. Default: [`DEFAULT_CONF_FILE`].
    pub conf_file: PathBuf,
    /// `-g "directives"`: main-context directives, read before the file.
    pub globals: Option<String>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            prefix: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            conf_file: PathBuf::from(DEFAULT_CONF_FILE),
            globals: None,
        }
    }
}

/// Reads, checks and merges the configuration named by `opts`.
pub fn load(opts: &LoadOptions) -> Result<Config, ConfError> {
    let prefix = if opts.prefix.is_absolute() {
        opts.prefix.clone()
    } else {
        std::env::current_dir()
            .map_err(|e| ConfError::bare(format!("getcwd() failed ({e})")))?
            .join(&opts.prefix)
    };
    let conf_file = prefix.join(&opts.conf_file);
    let conf_dir = conf_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| prefix.clone());
    let bytes = build::read_conf_file(&conf_file)
        .map_err(|e| ConfError::bare(build::include_open_failed(&conf_file, &e)))?;
    let mut b = Builder::new(prefix, conf_dir, true);
    build_config(&mut b, &conf_file, &bytes, opts.globals.as_deref())
}

/// Parses a configuration from a string, reading no file: `include` reads
/// nothing. `name` is the file name used in messages; the prefix is its
/// directory. For tests and fuzzing.
pub fn parse_str(text: &str, name: &str) -> Result<Config, ConfError> {
    let path = PathBuf::from(name);
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut b = Builder::new(dir.clone(), dir, false);
    build_config(&mut b, &path, text.as_bytes(), None)
}

fn build_config(
    b: &mut Builder,
    conf_file: &Path,
    bytes: &[u8],
    globals: Option<&str>,
) -> Result<Config, ConfError> {
    let mut main = RawMain::default();
    // nginx reads -g before the file (a directive in both is "duplicate" at the file's line).
    if let Some(g) = globals {
        let parsed = syntax::parse(
            g.as_bytes(),
            Arc::new(PathBuf::from(error::COMMAND_LINE)),
            Source::Param,
        );
        let parsed = syntax::Parsed {
            items: parsed
                .items
                .into_iter()
                .map(|mut d| {
                    d.span = model::Span::command_line();
                    d
                })
                .collect(),
            error: parsed.error.map(|mut e| {
                e.span = Some(model::Span::command_line());
                e
            }),
        };
        b.walk(
            &parsed.items,
            parsed.error.as_ref(),
            &mut Frame::Main(&mut main),
        )?;
    }
    let parsed = b.parse_file(conf_file, bytes);
    b.walk(
        &parsed.items,
        parsed.error.as_ref(),
        &mut Frame::Main(&mut main),
    )?;
    let Some(events) = main.events.take() else {
        return Err(ConfError::bare("no \"events\" section in configuration"));
    };
    let prefix = b.prefix.clone();
    let error_log = if main.error_log.is_empty() {
        vec![ErrorLogConf {
            target: LogTarget::File(PathBuf::from(full_name(&prefix, "logs/error.log"))),
            level: LogLevel::Error,
        }]
    } else {
        std::mem::take(&mut main.error_log)
    };
    Ok(Config {
        conf_file: conf_file.to_path_buf(),
        main: MainConf {
            worker_processes: main.worker_processes.unwrap_or(WorkerProcesses::Count(1)),
            worker_cpu_affinity: main.worker_cpu_affinity.take(),
            worker_rlimit_nofile: main.worker_rlimit_nofile,
            error_log,
            pid: Some(
                main.pid
                    .take()
                    .unwrap_or_else(|| PathBuf::from(full_name(&prefix, "logs/peregrine.pid"))),
            ),
            daemon: main.daemon.unwrap_or(false),
            user: main.user.take(),
            worker_shutdown_timeout: main.worker_shutdown_timeout,
            shutdown_delay: main.shutdown_delay.unwrap_or_default(),
            config_watch: main.config_watch.flatten(),
        },
        events: EventsConf {
            worker_connections: events
                .worker_connections
                .unwrap_or(DEFAULT_WORKER_CONNECTIONS),
            multi_accept: events.multi_accept.unwrap_or(false),
            use_method: events.use_method,
        },
        http: main.http.take(),
        stream: main.stream.take(),
        mail: main.mail.take(),
        files: std::mem::take(&mut b.files),
        temp_paths: std::mem::take(&mut b.temp_paths),
        notices: b.take_notices(),
        prefix,
    })
}

#[cfg(test)]
mod tests;
