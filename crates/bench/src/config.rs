//! From parsed arguments to a checked run configuration, refusing what ab
//! refuses (`-c` above `-n`, `-c 0`, an unreadable `-p` file) with ab's
//! words where ab has them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{self, Args, SweepKeepalive};
use crate::error::BenchError;
use crate::report::ReportOpts;
use crate::target::{RequestSpec, Url};

/// Most connections (ab allows 20000): each needs a file descriptor and a
/// local port, so a million is beyond any single machine anyway.
pub const MAX_CONCURRENCY: u64 = 1_000_000;
/// Highest `--pipeline` depth: deeper batches only fill socket buffers.
pub const MAX_PIPELINE: usize = 1024;

/// A checked configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub urls: Vec<Url>,
    pub url_strings: Vec<String>,
    pub spec: RequestSpec,
    /// Requests to send (u64::MAX: until the duration ends).
    pub requests: u64,
    pub concurrency: u64,
    pub duration: Option<Duration>,
    pub timeout: Duration,
    /// Event-loop threads requested (capped at the connection count).
    pub threads: usize,
    pub rate: Option<f64>,
    pub pipeline: usize,
    pub windowsize: Option<usize>,
    pub bind: Option<SocketAddr>,
    pub verbosity: u32,
    pub variable_length: bool,
    pub recv_errors_ok: bool,
    pub report: ReportOpts,
    pub json: bool,
    pub quiet: bool,
    pub csv: Option<PathBuf>,
    pub gnuplot: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub hdr_log: Option<PathBuf>,
    pub sweep: Vec<u64>,
    pub sweep_keepalive: SweepKeepalive,
}

fn read_body(path: &PathBuf) -> Result<Vec<u8>, BenchError> {
    std::fs::read(path).map_err(|e| BenchError::file(path, e))
}

fn url_list(a: &Args) -> Result<Vec<String>, BenchError> {
    let mut urls = a.urls.clone();
    if let Some(f) = &a.url_file {
        let text = std::fs::read_to_string(f).map_err(|e| BenchError::file(f, e))?;
        urls.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    if urls.is_empty() {
        return Err(BenchError::Usage(
            "no URL given (usage: peregrine bench [options] [http://]hostname[:port]/path)".into(),
        ));
    }
    Ok(urls)
}

/// `-n`, `-t` and `--duration` together: how many requests, for how long.
fn limits(a: &Args) -> Result<(u64, Option<Duration>), BenchError> {
    let timelimit = a.timelimit.map(|t| cli::secs("-t", t)).transpose()?;
    let duration = a.duration.or(timelimit);
    if duration.is_some_and(|d| d.is_zero()) {
        return Err(BenchError::Usage("--duration must be positive".into()));
    }
    let requests = match (a.requests, timelimit, a.duration) {
        (Some(n), _, _) => n,
        (None, Some(_), None) => cli::TIMELIMIT_DEFAULT_REQUESTS,
        (None, _, Some(_)) => u64::MAX,
        (None, None, None) => 1,
    };
    if requests == 0 {
        return Err(BenchError::Usage("Invalid number of requests".into()));
    }
    Ok((requests, duration))
}

/// ab's checks on the numbers, and ours on the extensions.
fn check_numbers(a: &Args, requests: u64) -> Result<(), BenchError> {
    if a.concurrency == 0 || a.concurrency > MAX_CONCURRENCY {
        return Err(BenchError::Usage(format!(
            "Invalid Concurrency [Range 0..{MAX_CONCURRENCY}]"
        )));
    }
    if let Some(&c) = a.sweep.iter().find(|&&c| c > MAX_CONCURRENCY) {
        return Err(BenchError::Usage(format!(
            "--sweep {c}: Invalid Concurrency [Range 0..{MAX_CONCURRENCY}]"
        )));
    }
    if a.concurrency > requests && a.sweep.is_empty() {
        return Err(BenchError::Usage(
            "Cannot use concurrency level greater than total number of requests".into(),
        ));
    }
    if let Some(r) = a.rate
        && !(r.is_finite() && r > 0.0)
    {
        return Err(BenchError::Usage(format!(
            "--rate {r}: must be a positive number of requests/s"
        )));
    }
    if a.pipeline == 0 || a.pipeline > MAX_PIPELINE {
        return Err(BenchError::Usage(format!(
            "--pipeline must be 1..={MAX_PIPELINE}"
        )));
    }
    if a.sweep.contains(&0) {
        return Err(BenchError::Usage(
            "--sweep: concurrency levels must be positive".into(),
        ));
    }
    Ok(())
}

/// `-B`: an IP address (port 0) or a full socket address.
fn bind_addr(a: &Args) -> Result<Option<SocketAddr>, BenchError> {
    a.bind
        .as_deref()
        .map(|b| {
            b.parse::<std::net::IpAddr>()
                .map(|ip| SocketAddr::new(ip, 0))
                .or_else(|_| b.parse::<SocketAddr>())
                .map_err(|_| BenchError::Usage(format!("-B {b}: not an IP address")))
        })
        .transpose()
}

/// The request: method (`-m`, `-i`, `-p`, `-u`), body, and header lines.
fn request_spec(a: &Args) -> Result<RequestSpec, BenchError> {
    let (body, method) = match (&a.postfile, &a.putfile) {
        (Some(p), _) => (Some(read_body(p)?), "POST"),
        (None, Some(p)) => (Some(read_body(p)?), "PUT"),
        (None, None) if a.head => (None, "HEAD"),
        (None, None) => (None, "GET"),
    };
    let method = a.method.clone().unwrap_or_else(|| method.to_string());
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(BenchError::Usage(format!(
            "-m {method:?}: not an HTTP method"
        )));
    }
    for h in &a.header {
        if !h.contains(':') || h.contains(['\r', '\n']) {
            return Err(BenchError::Usage(format!("-H {h:?}: not a header line")));
        }
    }
    Ok(RequestSpec {
        head: method == "HEAD",
        method,
        http10: a.http10,
        keepalive: a.keepalive,
        cookie: a.cookie.last().cloned(),
        auth: a.auth.clone(),
        headers: a.header.clone(),
        body,
        content_type: a
            .content_type
            .clone()
            .unwrap_or_else(|| cli::DEFAULT_CONTENT_TYPE.into()),
    })
}

impl Config {
    /// Checks the arguments the way ab does.
    pub fn from_args(a: &Args) -> Result<Config, BenchError> {
        let url_strings = url_list(a)?;
        let urls = url_strings
            .iter()
            .map(|u| Url::parse(u))
            .collect::<Result<Vec<_>, _>>()?;
        let (requests, duration) = limits(a)?;
        check_numbers(a, requests)?;
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Ok(Config {
            urls,
            url_strings,
            spec: request_spec(a)?,
            requests,
            concurrency: a.concurrency,
            duration,
            timeout: cli::secs("-s", a.timeout)?,
            threads: a.threads.unwrap_or(cpus).max(1),
            rate: a.rate,
            // A pipelined batch needs the connection to stay open, and the
            // open model sends each request at its own time.
            pipeline: if a.keepalive && a.rate.is_none() {
                a.pipeline
            } else {
                1
            },
            windowsize: a.windowsize,
            bind: bind_addr(a)?,
            verbosity: a.verbosity,
            variable_length: a.variable_length,
            recv_errors_ok: a.recv_errors_ok,
            report: ReportOpts {
                no_percentiles: a.no_percentiles,
                no_confidence: a.no_confidence,
            },
            json: a.json,
            quiet: a.quiet,
            csv: a.csv.clone(),
            gnuplot: a.gnuplot.clone(),
            plot: a.plot.clone(),
            hdr_log: a.hdr_log.clone(),
            sweep: a.sweep.clone(),
            sweep_keepalive: a.sweep_keepalive,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(v: &[&str]) -> Result<Config, BenchError> {
        let a = cli::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("parse");
        Config::from_args(&a)
    }

    #[test]
    fn ab_checks() {
        let e = cfg(&["-n", "1", "-c", "2", "http://h/"]).expect_err("c > n");
        assert_eq!(
            e.to_string(),
            "Cannot use concurrency level greater than total number of requests"
        );
        assert!(cfg(&["http://h/"]).is_ok());
        assert!(cfg(&[]).is_err());
        assert!(cfg(&["-p", "/nonexistent/file", "http://h/"]).is_err());
        assert_eq!(cfg(&["-t", "1", "http://h/"]).expect("t").requests, 50_000);
        assert_eq!(
            cfg(&["--duration", "1s", "http://h/"]).expect("d").requests,
            u64::MAX
        );
        assert!(cfg(&["--rate", "0", "http://h/"]).is_err());
        assert!(cfg(&["-c", "0", "http://h/"]).is_err());
        assert!(cfg(&["-n", "99999999", "-c", "99999999", "http://h/"]).is_err());
        assert!(cfg(&["--sweep", "10,99999999", "http://h/"]).is_err());
        assert!(cfg(&["-H", "nocolon", "http://h/"]).is_err());
        assert_eq!(cfg(&["-i", "http://h/"]).expect("i").spec.method, "HEAD");
        assert_eq!(
            cfg(&["-m", "DELETE", "http://h/"]).expect("m").spec.method,
            "DELETE"
        );
        assert_eq!(
            cfg(&["--pipeline", "4", "http://h/"]).expect("p").pipeline,
            1
        );
        assert_eq!(
            cfg(&["-k", "--pipeline", "4", "http://h/"])
                .expect("p")
                .pipeline,
            4
        );
    }
}
