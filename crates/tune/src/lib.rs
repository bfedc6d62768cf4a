//! `peregrine tune`: reads the live system and the configuration and says,
//! item by item, which kernel and resource-limit settings hold, which cap the
//! configured load, and which are obsolete or harmful — each with its reason
//! and source.
//!
//! Owns: the rules table ([`rules`]), reading /proc through a proc root
//! ([`procfs`], [`facts`]), the configuration-derived checks ([`checks`]),
//! the sysctl.conf auditor ([`audit`], [`sysctl_file`]), the report
//! ([`render`]) and the ready-to-install files ([`outputs`]).
//!
//! Does not own: parsing nginx.conf (peregrine-conf; [`config`] only maps
//! its model onto [`inputs::TuneInputs`]), and it never changes the system:
//! nothing is written under /proc, /sys or /etc.
//!
//! Exit status ([`EXIT_OK`], [`EXIT_ERROR`], [`EXIT_USAGE`], [`EXIT_HARMFUL`]):
//! 0 nothing harmful, 1 an error stopped the run, 2 bad arguments,
//! 3 at least one harmful setting.

pub mod audit;
pub mod checks;
pub mod config;
pub mod errlog;
pub mod error;
pub mod facts;
pub mod inputs;
pub mod live;
pub mod outputs;
pub mod procfs;
pub mod render;
pub mod rules;
pub mod sysctl_file;
pub mod verdict;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Parser;

pub use error::TuneError;
pub use inputs::TuneInputs;
pub use verdict::{Finding, Verdict};

use crate::procfs::ProcFs;
use crate::render::Report;

/// Nothing harmful found.
pub const EXIT_OK: i32 = 0;
/// The run could not complete (unreadable configuration or audited file,
/// unwritable output).
pub const EXIT_ERROR: i32 = 1;
/// Bad arguments (clap's convention).
pub const EXIT_USAGE: i32 = 2;
/// At least one setting is harmful.
pub const EXIT_HARMFUL: i32 = 3;

/// `peregrine tune` arguments.
#[derive(Debug, Parser)]
#[command(
    name = "peregrine tune",
    about = "Audit kernel and resource-limit tuning against the running system and the configuration",
    long_about = None
)]
pub struct Args {
    /// Prefix path, as for the server (`-p`).
    #[arg(short = 'p', value_name = "PREFIX")]
    pub prefix: Option<PathBuf>,
    /// Configuration file, as for the server (`-c`).
    #[arg(short = 'c', value_name = "FILE")]
    pub conf: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write a commented sysctl.d snippet of the recommended changes.
    #[arg(long, value_name = "FILE")]
    pub sysctl_out: Option<PathBuf>,
    /// Write limits.conf lines for RLIMIT_NOFILE.
    #[arg(long, value_name = "FILE")]
    pub limits_out: Option<PathBuf>,
    /// Write a systemd drop-in with LimitNOFILE=.
    #[arg(long, value_name = "FILE")]
    pub systemd_out: Option<PathBuf>,
    /// Read /proc from another root (tests, containers).
    #[arg(long, value_name = "DIR", default_value = "/proc")]
    pub proc_root: PathBuf,
    /// Audit a sysctl.conf text line by line against the running kernel.
    #[arg(long, value_name = "FILE")]
    pub audit_sysctl: Option<PathBuf>,
    /// Print the rules table (every setting checked, its default, the
    /// recommendation, why, and the source) and exit.
    #[arg(long, conflicts_with = "audit_sysctl")]
    pub rules: bool,
}

/// The binary's entry point: `args` are the words after `tune`. Writes the
/// report to stdout (coloured when stdout is a terminal and `NO_COLOR` is
/// unset); bad arguments are reported on stderr and give `Ok(EXIT_USAGE)`.
/// An `Err` stops the run: the caller prints it and exits with [`EXIT_ERROR`].
pub fn run(args: &[String]) -> Result<i32, TuneError> {
    let mut stdout = std::io::stdout().lock();
    let colours = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    match run_to(args, &mut stdout, colours) {
        Err(TuneError::Usage(msg)) => {
            eprint!("{msg}");
            Ok(EXIT_USAGE)
        }
        other => other,
    }
}

/// Colour only on a terminal, and not when `NO_COLOR` is set to anything
/// non-empty (no-color.org).
pub fn use_colours(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// Like [`run`], printing an error itself: returns the exit status.
pub fn main(args: &[String]) -> i32 {
    run(args).unwrap_or_else(|e| {
        eprintln!("peregrine tune: {e}");
        EXIT_ERROR
    })
}

/// Parses `args` (the words after `tune`) and runs, writing the report to
/// `out`. `--help`/`--version` print to `out` and return 0.
pub fn run_to(args: &[String], out: &mut dyn Write, colours: bool) -> Result<i32, TuneError> {
    let argv = std::iter::once("peregrine tune".to_string()).chain(args.iter().cloned());
    let parsed = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => {
            write!(out, "{e}")?;
            return Ok(EXIT_OK);
        }
        Err(e) => return Err(TuneError::Usage(e.to_string())),
    };
    if parsed.rules {
        let text = if parsed.json {
            render::rules_json()
        } else {
            render::rules_markdown()
        };
        writeln!(out, "{text}")?;
        return Ok(EXIT_OK);
    }
    let inputs = config::load(parsed.prefix.as_deref(), parsed.conf.as_deref())?;
    run_with(&parsed, inputs.as_ref(), out, colours)
}

/// Runs with the configuration facts already gathered (`None`: no
/// configuration, kernel checks against nginx's defaults).
pub fn run_with(
    args: &Args,
    inputs: Option<&TuneInputs>,
    out: &mut dyn Write,
    colours: bool,
) -> Result<i32, TuneError> {
    let proc = ProcFs::new(&args.proc_root);
    let (mut facts, problems) = facts::gather(&proc, inputs.and_then(TuneInputs::server_pid));
    if let Some(i) = inputs {
        facts.log = errlog::gather(&i.error_logs);
    }
    let needs = checks::needs(inputs, &facts);
    let mut report = match &args.audit_sysctl {
        Some(path) => {
            let findings = audit::audit_file(path, &proc, &facts, &needs).map_err(|source| {
                TuneError::Read {
                    path: path.clone(),
                    source,
                }
            })?;
            let mut r = Report::new(
                "audit",
                proc.root().display().to_string(),
                facts,
                needs,
                findings,
            );
            r.audited_file = Some(path.display().to_string());
            r
        }
        None => {
            let mut findings = problems;
            findings.extend(live::sysctls(&proc, &facts, &needs));
            if let Some(i) = inputs {
                findings.extend(checks::check(i, &facts, &needs, &proc));
            }
            Report::new(
                "live",
                proc.root().display().to_string(),
                facts,
                needs,
                findings,
            )
        }
    };
    report.config = inputs.map(|i| i.conf_file.display().to_string());
    write_outputs(args, &report)?;
    if args.json {
        writeln!(out, "{}", render::json(&report))?;
    } else {
        write!(out, "{}", render::text(&report, colours))?;
    }
    Ok(if report.harmful {
        EXIT_HARMFUL
    } else {
        EXIT_OK
    })
}

fn write_outputs(args: &Args, r: &Report) -> Result<(), TuneError> {
    let kernel = r.facts.kernel.map_or("?".to_string(), |k| k.to_string());
    if let Some(p) = &args.sysctl_out {
        outputs::write(p, &outputs::sysctl_snippet(&r.findings, &kernel))?;
    }
    if let Some(p) = &args.limits_out {
        outputs::write(p, &outputs::limits_snippet(&r.needs))?;
    }
    if let Some(p) = &args.systemd_out {
        outputs::write(p, &outputs::systemd_snippet(&r.needs))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_rules() {
        assert!(use_colours(true, None));
        assert!(use_colours(true, Some("".into())));
        assert!(!use_colours(true, Some("1".into())));
        assert!(!use_colours(false, None));
    }
}
