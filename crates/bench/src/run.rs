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
use crate::worker::{Interval, Worker};

/// How often the main thread refreshes the progress bar and the log.
pub const MAIN_TICK: Duration = Duration::from_millis(100);
/// File descriptors kept free besides one per connection (stdio, epoll
/// instances, output files).
pub const SPARE_FDS: u64 = 64;

/// What one test produced.
#[derive(Debug)]
pub struct RunResult {
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
        let addr = url.resolve()?[0];
        let request = spec.build(url);
        let batch = request.repeat(pipeline);
        targets.push(Target { addr, request, batch });
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
        Some(d) if cfg.requests == u64::MAX => (d.as_millis() as u64, "{bar:40} {elapsed}/{duration} {msg}"),
        _ => (cfg.requests, "{bar:40} {pos}/{len} requests {per_sec} {msg}"),
    };
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    Some(bar)
}

/// Runs the configured test at `concurrency` connections.
pub fn execute(cfg: &Config, concurrency: u64, keepalive: bool, show_progress: bool) -> Result<RunResult, BenchError> {
    raise_nofile(concurrency);
    let plan = build_plan(cfg, keepalive)?;
    let threads = cfg.threads.min(concurrency as usize).max(1);
    let shared = Shared::new(cfg.requests);
    let (tx, rx) = mpsc::channel::<Interval>();
    let mut log = match &cfg.hdr_log {
        Some(p) => Some(HdrLog::create(p, shared.wall_start, &cfg.url_strings)?),
        None => None,
    };
    let bar = progress_bar(cfg, show_progress);
    let outcomes = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        let mut first = 0usize;
        for t in 0..threads {
            let conns = (concurrency as usize / threads) + usize::from(t < concurrency as usize % threads);
            let rate = cfg.rate.map(|r| r * conns as f64 / concurrency as f64);
            let (plan, shared) = (&plan, &shared);
            let tx = plan.intervals.then(|| tx.clone());
            let start_conn = first;
            first += conns;
            let h = std::thread::Builder::new().name(format!("bench-{t}")).spawn_scoped(scope, move || {
                match Worker::new(plan, shared, conns, start_conn, rate, tx) {
                    Ok(w) => Some(w.run()),
                    Err(e) => {
                        shared.abort(e);
                        None
                    }
                }
            });
            match h {
                Ok(h) => handles.push(h),
                Err(source) => shared.abort(BenchError::Io { context: "spawn thread", source }),
            }
        }
        drop(tx);
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(MAIN_TICK);
            if let Some(b) = &bar {
                if cfg.requests == u64::MAX {
                    b.set_position(shared.start.elapsed().as_millis() as u64);
                } else {
                    b.set_position(cfg.requests - shared.remaining());
                }
            }
            if let Some(l) = &mut log {
                l.take(&rx, shared.start.elapsed().as_secs() as usize)?;
            }
        }
        Ok::<_, BenchError>(handles.into_iter().filter_map(|h| h.join().ok().flatten()).collect::<Vec<_>>())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(l) = &mut log {
        l.take(&rx, usize::MAX)?;
        l.finish()?;
    }
    if let Some(g) = &plan.gnuplot
        && let Ok(mut g) = g.lock()
    {
        use std::io::Write as _;
        g.flush().map_err(|e| BenchError::Io { context: "gnuplot file", source: e })?;
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
    let elapsed = shared.start.elapsed();
    let taken = match (cfg.duration, last) {
        (Some(d), _) if elapsed >= d => d,
        (_, Some(l)) => l.saturating_duration_since(shared.start),
        _ => elapsed,
    };
    let first = &cfg.urls[0];
    let info = RunInfo {
        // ab copies the Server value up to its first blank.
        server_software: stats.server.as_deref().and_then(|s| s.split_whitespace().next()).unwrap_or("").to_string(),
        host: first.host.clone(),
        port: first.port,
        path: first.path.clone(),
        doclen: shared.doclen().unwrap_or(0),
        variable_length: cfg.variable_length,
        concurrency,
        time_taken: taken.as_secs_f64(),
        keepalive,
        send_body: cfg.spec.body.is_some(),
    };
    Ok(RunResult { stats, info, threads })
}
