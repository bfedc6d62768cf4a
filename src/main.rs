//! The `peregrine` binary: nginx's command line in front of the library crates.
//!
//! It parses arguments, loads the configuration, and maps every error to an
//! exit status and one nginx-style line. Everything else lives in the crates:
//! `peregrine-conf` (configuration), `peregrine-engine` (serving),
//! `peregrine-tune` and `peregrine-bench` (the subcommands).

mod cli;
mod run;
mod serve;
mod version;

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match args.first().and_then(|a| a.to_str()) {
        Some("bench") => return exit_code(run::bench(&args[1..])),
        Some("tune") => return exit_code(run::tune(&args[1..])),
        _ => {}
    }
    let cli = match cli::parse(&args) {
        Ok(cli) => cli,
        Err(msg) => {
            eprintln!("peregrine: {msg}");
            return ExitCode::from(1);
        }
    };
    exit_code(run::nginx_style(cli))
}

fn exit_code(result: anyhow::Result<i32>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => {
            eprintln!("peregrine: {err:#}");
            ExitCode::from(1)
        }
    }
}
