//! Runs one test: resolves the targets, spreads the connections over the
//! event-loop threads, shows progress, collects `--hdr-log` intervals, and
//! merges what the threads measured.

use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error::BenchError;
use crate::hdrlog::HdrLog;
use crate::plan::{Plan, Shared, Target};
use crate::report::RunInfo;
use crate::stats::Stats;
use crate::worker::{Interval, Outcome, Worker};

/// How often the main thread refreshes the progress bar and the log.
pub const MAIN_TICK: Duration = Duration::from_millis(100);
/// File descriptors kept free besides one per connection (stdio, epoll
/// instances, output files).
pub const SPARE_FDS: u64 = 64;

/// What one test produced.
#[derive(Debug)]
pub struct RunResult {
    /// Ctrl-C stopped the run early (ab then prints what it has).
    pub interrupted: bool,
    pub stats: Stats,
    pub info: RunInfo,
    pub threads: usize,
}

/// Raises RLIMIT_NOFILE's soft limit to cover the connections, as far as
/// the hard limit allows (ab leaves this to `ulimit -n`, which is how the
/// seed articles' runs died at 1024 connections).
fn raise_nofile(concurrency: u64) {
    let want = concurrency.saturating_add(SPARE_FDS);
    if let Ok((soft, hard)) = peregrine_sys::get_nofile()
        && soft < want
    {
        let _ = peregrine_sys::set_nofile(want.min(hard), hard);
    }
}

fn build_plan(cfg: &Config, keepalive: bool) -> Result<Plan, BenchError> {
    let mut spec = cfg.spec.clone();
    spec.keepalive = keepalive;
    let pipeline = if keepalive { cfg.pipeline } else { 1 };
    let mut targets = Vec::with_capacity(cfg.urls.len());
    for url in &cfg.urls {
        let addr = url.resolve()?;
        let request = spec.build(url);
        let batch = request.repeat(pipeline);
        targets.push(Target {
            addr,
            request,
            batch,
        });
    }
    let gnuplot = match &cfg.gnuplot {
        Some(p) => Some(Mutex::new(crate::files::create_gnuplot(p)?)),
        None => None,
    };
    Ok(Plan {
        targets,
        keepalive,
        head: spec.head,
        timeout: cfg.timeout,
        pipeline,
        variable_length: cfg.variable_length,
        recv_errors_ok: cfg.recv_errors_ok,
        windowsize: cfg.windowsize,
        bind: cfg.bind,
        verbosity: cfg.verbosity,
        rate: cfg.rate,
        duration: cfg.duration,
        intervals: cfg.hdr_log.is_some(),
        gnuplot,
    })
}

fn progress_bar(cfg: &Config, show: bool) -> Option<indicatif::ProgressBar> {
    if !show || cfg.quiet || cfg.json || !std::io::stderr().is_terminal() {
        return None;
    }
    let (len, template) = match cfg.duration {
        Some(d) if cfg.requests == u64::MAX => {
            (d.as_millis() as u64, "{bar:40} {elapsed}/{duration} {msg}")
        }
        _ => (
            cfg.requests,
            "{bar:40} {pos}/{len} requests {per_sec} {msg}",
        ),
    };
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Some(bar)
}

/// What the main thread tends while the workers run.
struct Watch {
    log: Option<HdrLog>,
    bar: Option<indicatif::ProgressBar>,
    sigint: Option<peregrine_sys::SignalFd>,
}

/// Starts the worker threads and, while they run, refreshes the progress
/// bar and writes finished `--hdr-log` intervals.
fn run_threads(
    cfg: &Config,
    plan: &Plan,
    shared: &Shared,
    concurrency: u64,
    threads: usize,
    watch: &mut Watch,
) -> Result<(Vec<Outcome>, bool), BenchError> {
    let Watch { log, bar, sigint } = watch;
    let mut interrupted = false;
    let (tx, rx) = mpsc::channel::<Interval>();
    let outcomes = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        let mut first = 0usize;
        for t in 0..threads {
            let conns =
                (concurrency as usize / threads) + usize::from(t < concurrency as usize % threads);
            let rate = cfg.rate.map(|r| r * conns as f64 / concurrency as f64);
            let tx = plan.intervals.then(|| tx.clone());
            let start_conn = first;
            first += conns;
            let spawned = std::thread::Builder::new()
                .name(format!("bench-{t}"))
                .spawn_scoped(scope, move || {
                    match Worker::new(plan, shared, conns, start_conn, rate, tx) {
                        Ok(w) => Some(w.run()),
                        Err(e) => {
                            shared.abort(e);
                            None
                        }
                    }
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(source) => shared.abort(BenchError::Io {
                    context: "spawn thread",
                    source,
                }),
            }
        }
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(MAIN_TICK);
            if let Some(b) = bar.as_ref() {
                let sent = cfg.requests - shared.remaining();
                if cfg.requests == u64::MAX {
                    b.set_position(shared.start.elapsed().as_millis() as u64);
                    b.set_message(format!("{sent} requests sent"));
                } else {
                    b.set_position(sent);
                }
            }
            if let Some(l) = log.as_mut() {
                l.take(&rx, shared.start.elapsed().as_secs() as usize)?;
            }
            if let Some(fd) = sigint.as_ref()
                && let Ok(Some(_)) = fd.read()
            {
                interrupted = true;
                shared
                    .stop
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        Ok::<_, BenchError>(
            handles
                .into_iter()
                .filter_map(|h| h.join().ok().flatten())
                .collect(),
        )
    })?;
    drop(tx);
    if let Some(l) = log.as_mut() {
        l.finish(&rx, shared.start.elapsed())?;
    }
    Ok((outcomes, interrupted))
}

/// With `interactive`, Ctrl-C ends the run and the report of what was
/// done is printed, as ab does on SIGINT. SIGINT is blocked in this thread
/// (and so in the workers it spawns) and read from a signalfd.
fn sigint_fd(interactive: bool) -> Option<peregrine_sys::SignalFd> {
    if !interactive {
        return None;
    }
    peregrine_sys::block_signals(&[libc::SIGINT]).ok()?;
    peregrine_sys::SignalFd::new(&[libc::SIGINT]).ok()
}

/// Runs the configured test at `concurrency` connections. `interactive`
/// (the command line, not tests) enables the progress bar and Ctrl-C.
pub fn execute(
    cfg: &Config,
    concurrency: u64,
    keepalive: bool,
    interactive: bool,
) -> Result<RunResult, BenchError> {
    raise_nofile(concurrency);
    let plan = build_plan(cfg, keepalive)?;
    let threads = cfg.threads.min(concurrency as usize).max(1);
    let shared = Shared::new(cfg.requests);
    let log = match &cfg.hdr_log {
        Some(p) => Some(HdrLog::create(p, shared.wall_start, &cfg.url_strings)?),
        None => None,
    };
    let bar = progress_bar(cfg, interactive);
    let sigint = sigint_fd(interactive);
    let mut watch = Watch { log, bar, sigint };
    let (outcomes, interrupted) =
        run_threads(cfg, &plan, &shared, concurrency, threads, &mut watch)?;
    if let Some(b) = watch.bar {
        b.finish_and_clear();
    }
    if let Some(g) = &plan.gnuplot
        && let Ok(mut g) = g.lock()
    {
        use std::io::Write as _;
        g.flush().map_err(|e| BenchError::Io {
            context: "gnuplot file",
            source: e,
        })?;
    }
    if let Ok(mut slot) = shared.abort.lock()
        && let Some(e) = slot.take()
    {
        return Err(e);
    }
    let mut stats = Stats::default();
    let mut last: Option<Instant> = None;
    for o in &outcomes {
        stats.merge(&o.stats);
        last = last.max(o.last_done);
    }
    let info = run_info(cfg, &stats, &shared, concurrency, keepalive, last);
    Ok(RunResult {
        interrupted,
        stats,
        info,
        threads,
    })
}

/// The report's facts. "Time taken" is the duration of a timed run that
/// reached its end, otherwise the time of the last completion (ab's
/// `lasttime - start`).
fn run_info(
    cfg: &Config,
    stats: &Stats,
    shared: &Shared,
    concurrency: u64,
    keepalive: bool,
    last: Option<Instant>,
) -> RunInfo {
    let elapsed = shared.start.elapsed();
    let taken = match (cfg.duration, last) {
        (Some(d), _) if elapsed >= d => d,
        (_, Some(l)) => l.saturating_duration_since(shared.start),
        _ => elapsed,
    };
    let (host, port, path) = cfg
        .urls
        .first()
        .map(|u| (u.host.clone(), u.port, u.path.clone()))
        .unwrap_or_default();
    RunInfo {
        // ab copies the Server value up to its first blank.
        server_software: stats
            .server
            .as_deref()
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or("")
            .to_string(),
        host,
        port,
        path,
        doclen: shared.doclen().unwrap_or(0),
        variable_length: cfg.variable_length,
        concurrency,
        time_taken: taken.as_secs_f64(),
        keepalive,
        send_body: cfg.spec.body.is_some(),
    }
}
