//! peregrine-bench: `peregrine bench`, an HTTP load generator that speaks
//! ab's command line and prints ab's report, but can saturate the server
//! it tests and tells the truth about latency.
//!
//! What it owns:
//! - ab's flags and meanings (`cli`, `config`), ab's request bytes under
//!   `--http1.0` (`target`), ab's failure classes and report (`worker`,
//!   `report`), ab's `-e`/`-g` files (`files`);
//! - the engine: one mio event loop per thread (`worker`), a connection
//!   state machine (`conn`), an incremental response parser on httparse
//!   with Content-Length, chunked and read-to-close bodies (`response`,
//!   `chunked`), keep-alive and pipelining;
//! - the closed model (`-c` connections as fast as they go) and the open
//!   model (`--rate`: each request has an intended send time and its
//!   latency is measured from it, so a stalled server cannot hide behind
//!   coordinated omission, as in wrk2);
//! - HDR histograms instead of sample lists (`stats`): memory does not
//!   grow with the number of requests; `--json` (`json`), `--hdr-log`
//!   (`hdrlog`), `merge` of several machines' results (`merge`), `--plot`
//!   and `--sweep` (`plot`, `sweep`).
//!
//! What it does not own: TLS and HTTP/2 (`https://` is refused with a
//! clear error until the TLS work lands), the server, and process-level
//! matters (the binary calls [`run()`] and exits with its code).

pub mod chunked;
pub mod cli;
pub mod config;
pub mod conn;
pub mod error;
pub mod files;
pub mod hdrlog;
pub mod json;
pub mod merge;
pub mod plan;
pub mod plot;
pub mod report;
pub mod response;
pub mod run;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod worker;

pub use error::BenchError;

use cli::Command;
use config::Config;

/// `peregrine bench ARGS...` (ARGS exclude the program name and `bench`).
/// Prints the report on stdout; returns the process exit code (0, or 1
/// when every request failed, as a script would want). `--help` and
/// `--version` print and return 0.
pub fn run(args: &[String]) -> Result<i32, BenchError> {
    let parsed = match cli::parse(args) {
        Ok(a) => a,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                print!("{e}");
                return Ok(0);
            }
            return Err(BenchError::Usage(e.to_string().trim_end().to_string()));
        }
    };
    if let Some(Command::Merge { files, json }) = &parsed.command {
        return merge::run(files, *json);
    }
    let cfg = Config::from_args(&parsed)?;
    if !cfg.sweep.is_empty() {
        return sweep::run(&cfg);
    }
    single(&cfg)
}

fn single(cfg: &Config) -> Result<i32, BenchError> {
    let host = cfg.urls.first().map(|u| u.host.clone()).unwrap_or_default();
    if !cfg.json {
        println!(
            "This is peregrine bench, Version {} (ApacheBench 2.3 compatible)",
            env!("CARGO_PKG_VERSION")
        );
        println!(
            "Report layout and failure classes after ApacheBench by the Apache Software Foundation\n"
        );
        print!("Benchmarking {host} (be patient)");
    }
    let r = run::execute(cfg, cfg.concurrency, cfg.spec.keepalive, true)?;
    if let Some(p) = &cfg.csv {
        files::write_csv(p, &r.stats.total)?;
    }
    if let Some(p) = &cfg.plot {
        plot::draw_run(p, &r.stats.total, &r.stats.per_second, r.info.time_taken)?;
    }
    if cfg.json {
        let s = json::Summary::new(
            &r.stats,
            &r.info,
            cfg.url_strings.clone(),
            r.threads,
            cfg.rate,
        );
        let text =
            serde_json::to_string_pretty(&s).map_err(|e| BenchError::Usage(e.to_string()))?;
        println!("{text}");
    } else {
        println!(".....done\n\n");
        print!("{}", report::render(&r.stats, &r.info, cfg.report));
    }
    Ok(0)
}
