//! The command line: ab's single-letter flags with ab's meanings, plus the
//! long options that go beyond ab. Parsed with clap, then checked the way
//! ab checks them (`-c` larger than `-n` is refused, `-t` implies
//! `-n 50000`, `-p`/`-u` need a readable file).

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Parser, Subcommand, ValueEnum};

use crate::error::BenchError;

/// ab's `MAX_REQUESTS`: what `-t` implies when `-n` is not given ("This
/// implies -n 50000" in ab's usage).
pub const TIMELIMIT_DEFAULT_REQUESTS: u64 = 50_000;
/// ab's default `-s`: "Default is 30 seconds".
pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
/// Longest time accepted for `-s`, `-t` and `--duration` (ten years):
/// beyond it an instant computed from it could overflow.
pub const MAX_TIME_SECS: f64 = 315_360_000.0;
/// ab's default `-T`.
pub const DEFAULT_CONTENT_TYPE: &str = "text/plain";

/// Which keep-alive modes a `--sweep` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SweepKeepalive {
    /// Only with keep-alive (`-k`).
    On,
    /// Only without keep-alive (one connection per request).
    Off,
    /// Both, one line per mode in the chart.
    Both,
}

/// `peregrine bench merge FILE...`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Combine the `--json` results or `--hdr-log` files of several
    /// generator machines into one report with correct percentiles.
    Merge {
        /// `--json` outputs (full report) or `--hdr-log` interval logs.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the merged result as JSON instead of ab's report.
        #[arg(long)]
        json: bool,
    },
}

/// `peregrine bench [options] [http://]hostname[:port]/path`
#[derive(Debug, Parser)]
#[command(
    name = "peregrine bench",
    version,
    about = "An ab-compatible HTTP load generator that can saturate the server it tests",
    args_conflicts_with_subcommands = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Number of requests to perform
    #[arg(short = 'n', value_name = "requests")]
    pub requests: Option<u64>,
    /// Number of multiple requests to make at a time
    #[arg(short = 'c', value_name = "concurrency", default_value_t = 1)]
    pub concurrency: u64,
    /// Seconds to max. to spend on benchmarking. This implies -n 50000
    #[arg(short = 't', value_name = "timelimit")]
    pub timelimit: Option<f64>,
    /// Seconds to max. wait for each response. Default is 30 seconds
    #[arg(short = 's', value_name = "timeout", default_value_t = DEFAULT_TIMEOUT_SECS)]
    pub timeout: f64,
    /// Size of TCP send/receive buffer, in bytes
    #[arg(short = 'b', value_name = "windowsize")]
    pub windowsize: Option<usize>,
    /// Address to bind to when making outgoing connections
    #[arg(short = 'B', value_name = "address")]
    pub bind: Option<String>,
    /// File containing data to POST. Remember also to set -T
    #[arg(short = 'p', value_name = "postfile", conflicts_with = "putfile")]
    pub postfile: Option<PathBuf>,
    /// File containing data to PUT. Remember also to set -T
    #[arg(short = 'u', value_name = "putfile")]
    pub putfile: Option<PathBuf>,
    /// Content-type header to use for POST/PUT data. Default is 'text/plain'
    #[arg(short = 'T', value_name = "content-type")]
    pub content_type: Option<String>,
    /// How much troubleshooting info to print
    #[arg(short = 'v', value_name = "verbosity", default_value_t = 0)]
    pub verbosity: u32,
    /// Use HEAD instead of GET
    #[arg(short = 'i')]
    pub head: bool,
    /// Add cookie, eg. 'Apache=1234' (ab keeps the last one given)
    #[arg(short = 'C', value_name = "attribute", action = ArgAction::Append)]
    pub cookie: Vec<String>,
    /// Add Arbitrary header line, eg. 'Accept-Encoding: gzip' (repeatable)
    #[arg(short = 'H', value_name = "attribute", action = ArgAction::Append)]
    pub header: Vec<String>,
    /// Add Basic WWW Authentication: user:password
    #[arg(short = 'A', value_name = "attribute")]
    pub auth: Option<String>,
    /// Use HTTP KeepAlive feature
    #[arg(short = 'k')]
    pub keepalive: bool,
    /// Do not show percentiles served table.
    #[arg(short = 'd')]
    pub no_percentiles: bool,
    /// Do not show confidence estimators and warnings.
    #[arg(short = 'S')]
    pub no_confidence: bool,
    /// Do not show progress
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Accept variable document length (use this for dynamic pages)
    #[arg(short = 'l')]
    pub variable_length: bool,
    /// Output collected data to gnuplot format file.
    #[arg(short = 'g', value_name = "filename")]
    pub gnuplot: Option<PathBuf>,
    /// Output CSV file with percentages served
    #[arg(short = 'e', value_name = "filename")]
    pub csv: Option<PathBuf>,
    /// Don't exit on socket receive errors.
    #[arg(short = 'r')]
    pub recv_errors_ok: bool,
    /// Method name
    #[arg(short = 'm', value_name = "method")]
    pub method: Option<String>,
    /// Send ab's exact HTTP/1.0 requests instead of HTTP/1.1
    #[arg(long = "http1.0")]
    pub http10: bool,
    /// Event-loop threads (default: the CPU count, at most -c)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Run for this long (30s, 2m, 500ms) with no request limit unless -n
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Constant request rate (requests/s, open model); latency is measured
    /// from each request's intended send time
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,
    /// Requests sent back to back on a connection before reading (needs -k)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub pipeline: usize,
    /// A file of URLs, one a line (requests go round-robin over them)
    #[arg(long, value_name = "FILE")]
    pub url_file: Option<PathBuf>,
    /// Print every figure as JSON instead of ab's report
    #[arg(long)]
    pub json: bool,
    /// Draw the latency percentile curve and requests/s over time as SVG
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Run the same test at each concurrency level (e.g. 100,1000,5000)
    #[arg(long, value_name = "C1,C2,...", value_delimiter = ',')]
    pub sweep: Vec<u64>,
    /// Keep-alive modes of a sweep
    #[arg(long, value_enum, default_value_t = SweepKeepalive::On)]
    pub sweep_keepalive: SweepKeepalive,
    /// Write HdrHistogram's standard interval log of latencies
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    /// The URL(s) to test: `[http://]hostname[:port]/path`
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
}

/// Parses `30s`, `2m`, `1h`, `500ms`, `1.5s` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let value: f64 = num.parse().map_err(|_| format!("bad duration {s:?}"))?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("bad duration unit in {s:?} (ms, s, m, h)")),
    };
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| d.as_secs_f64() <= MAX_TIME_SECS)
        .ok_or_else(|| format!("bad duration {s:?}"))
}

/// Parses the arguments after `bench`.
pub fn parse(args: &[String]) -> Result<Args, clap::Error> {
    let argv = std::iter::once("peregrine bench".to_string()).chain(args.iter().cloned());
    Args::try_parse_from(argv)
}

/// Turns a positive number of seconds into a Duration, refusing nonsense.
pub fn secs(flag: &str, value: f64) -> Result<Duration, BenchError> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero() && d.as_secs_f64() <= MAX_TIME_SECS)
        .ok_or_else(|| BenchError::Usage(format!("{flag}: invalid number of seconds {value}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Args {
        parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("parse")
    }

    #[test]
    fn ab_flags() {
        let a = p(&[
            "-n",
            "10",
            "-c",
            "2",
            "-k",
            "-H",
            "A: 1",
            "-H",
            "B: 2",
            "http://x/",
        ]);
        assert_eq!(a.requests, Some(10));
        assert_eq!(a.concurrency, 2);
        assert!(a.keepalive);
        assert_eq!(a.header, vec!["A: 1", "B: 2"]);
        assert_eq!(a.urls, vec!["http://x/"]);
    }

    #[test]
    fn merge_subcommand() {
        let a = p(&["merge", "a.json", "b.json"]);
        assert!(matches!(a.command, Some(Command::Merge { ref files, .. }) if files.len() == 2));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("3x").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("1e30s").is_err());
        assert!(secs("-s", 1e30).is_err());
        assert!(secs("-s", 0.0).is_err());
    }

    #[test]
    fn sweep_list() {
        let a = p(&[
            "--sweep",
            "100,1000",
            "--sweep-keepalive",
            "both",
            "http://x/",
        ]);
        assert_eq!(a.sweep, vec![100, 1000]);
        assert_eq!(a.sweep_keepalive, SweepKeepalive::Both);
    }
}
