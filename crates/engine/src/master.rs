//! The master: binds, writes the pid file, drops privileges, starts the
//! workers, then supervises them and turns signals (or [`Control`]
//! commands) into stop, graceful quit, reload and log reopening.

use std::collections::HashMap;
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use peregrine_conf::model::{Config, LogLevel, WorkerProcesses};
use peregrine_sys::Credentials;

use crate::listen::{Listeners, wanted};
use crate::stats::Registry;
use crate::tls::TlsTable;
use crate::worker::{self, DRAIN, RUN, STOP, Setup, Shared};
use crate::{Command, Control, EngineError, ErrorLog, Ready, RunOptions};

const WAKE: Token = Token(0);
const SIGNALS: Token = Token(1);
/// The signals the master reads (nginx's: TERM/INT stop, QUIT graceful, HUP
/// reload, USR1 reopen, USR2 binary upgrade, WINCH workers off; CHLD says
/// the new binary may have exited).
const HANDLED: [i32; 8] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGCHLD,
];
/// A worker that panics again within this long after its restart is
/// restarted only after this delay, so a crash on start does not spin.
const RESTART_BACKOFF: Duration = Duration::from_secs(1);

/// How a worker thread ended.
struct Exit {
    generation: u64,
    index: usize,
    panic: Option<String>,
}

struct WorkerRef {
    generation: u64,
    index: usize,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Master {
    conf: Arc<Config>,
    generation: u64,
    workers: Vec<WorkerRef>,
    listeners: Listeners,
    registry: Arc<Registry>,
    ids: Arc<AtomicU64>,
    exits: Arc<Mutex<Vec<Exit>>>,
    waker: Arc<Waker>,
    errlog: ErrorLog,
    access: Option<crate::AccessLogFactory>,
    last_restart: HashMap<usize, Instant>,
    delayed: Vec<(usize, Instant)>,
    /// Stop or quit was asked: no reload, no restart.
    stopping: bool,
    /// Access logs opened before privileges were dropped, for the first
    /// workers.
    prebuilt_logs: Vec<Box<dyn crate::AccessLog>>,
    // tls
    /// The TLS server blocks of `conf`, shared by its workers.
    tls: Option<Arc<TlsTable>>,
    /// What the workers of `conf` run as (`user`; nobody by default when
    /// the master is root); `None` when the master is not root.
    creds: Option<Arc<Credentials>>,
    // upgrade
    /// The binary upgrade's state (see `upgrade`).
    upgrade: crate::upgrade::Upgrade,
    /// QUIT came with a `shutdown_delay`: the graceful shutdown proper
    /// starts then (until then `health_status` answers 503).
    quit_at: Option<Instant>,
    /// `config_watch`: the files' texts last seen, and the next look.
    watch: crate::watch::Watch,
}

/// Loads the certificates of `conf` (before anything is started with it:
/// a bad one fails the start or the reload), logging what was dropped.
fn load_tls(
    conf: &Config,
    errlog: &ErrorLog,
    creds: Option<&Arc<Credentials>>,
) -> Result<Option<Arc<TlsTable>>, EngineError> {
    let table = TlsTable::build(conf).map_err(|e| EngineError::Tls(e.to_string()))?;
    crate::mail::check_tls(conf).map_err(EngineError::Tls)?;
    for w in table.iter().flat_map(|t| &t.warnings) {
        errlog(LogLevel::Warn, w);
    }
    if let Some(t) = &table {
        t.spawn_stapling(errlog.clone(), creds.cloned());
    }
    Ok(table)
}

/// `worker_processes`, `auto` being the usable CPU count.
pub fn worker_count(conf: &Config) -> usize {
    match conf.main.worker_processes {
        WorkerProcesses::Auto => peregrine_sys::num_cpus(),
        WorkerProcesses::Count(n) => n.max(1),
    }
}

/// Starts the server and returns when it has stopped (`SIGTERM`/`SIGINT`,
/// `SIGQUIT` once drained, or the same [`Command`]s through [`Control`]).
pub fn run(conf: Arc<Config>, mut opts: RunOptions) -> Result<(), EngineError> {
    let errlog = opts.error_log.clone();
    for n in &conf.notices {
        errlog(LogLevel::Warn, n);
    }
    apply_rlimit(&conf, &errlog);
    // The workers' user; this thread stays root (privileges.rs).
    let creds = crate::privileges::workers(&conf)?;
    let tls = load_tls(&conf, &errlog, creds.as_ref())?;
    let inherited = crate::inherit::from_env(&errlog);
    let mut listeners = Listeners {
        inherited: inherited.sockets,
        ..Listeners::default()
    };
    listeners.reconcile(&wanted(&conf), worker_count(&conf))?;
    // An upgraded binary stays the old master's child (nginx does not
    // daemonize an inherited start): the old one sees it exit.
    if conf.main.daemon && !inherited.upgrade {
        peregrine_sys::daemonize().map_err(EngineError::Spawn)?;
    }
    let mut poll = Poll::new().map_err(EngineError::Poll)?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE).map_err(EngineError::Poll)?);
    let signals = signal_source(&poll, opts.handle_signals)?;
    let pid_path = if opts.write_pid {
        conf.main.pid.clone()
    } else {
        None
    };
    crate::privileges::create_temp_paths(&conf.temp_paths, creds.as_deref())?;
    if let Some(p) = &pid_path {
        write_pid(p)?;
    }
    let result = (|| -> Result<Option<PathBuf>, EngineError> {
        // The first workers' access logs, opened by this (root) thread.
        let mut first_logs: Vec<Box<dyn crate::AccessLog>> = match &opts.access_log {
            Some(f) => (0..worker_count(&conf)).map(|_| f(&conf)).collect(),
            None => Vec::new(),
        };
        let queue = Arc::new(Mutex::new(Vec::new()));
        let control = Control {
            queue: queue.clone(),
            waker: waker.clone(),
        };
        let mut m = Master {
            conf: conf.clone(),
            generation: 0,
            workers: Vec::new(),
            listeners,
            registry: Arc::new(Registry::default()),
            ids: Arc::new(AtomicU64::new(0)),
            exits: Arc::new(Mutex::new(Vec::new())),
            waker,
            errlog: errlog.clone(),
            access: opts.access_log.clone(),
            last_restart: HashMap::new(),
            delayed: Vec::new(),
            stopping: false,
            prebuilt_logs: std::mem::take(&mut first_logs),
            tls,
            creds,
            upgrade: crate::upgrade::Upgrade::new(pid_path.clone()),
            quit_at: None,
            watch: crate::watch::Watch::new(&conf),
        };
        m.start_generation()?;
        if let Some(ready) = opts.ready.take() {
            ready(Ready {
                addrs: m.listeners.addrs(),
                control,
            });
        }
        m.supervise(&mut poll, signals.as_ref(), &queue, &mut opts);
        Ok(m.upgrade.pid_file())
    })();
    // The pid file this master owns now (`.oldbin` after an upgrade; the
    // new master owns the plain name then).
    let owned = match &result {
        Ok(p) => p.clone(),
        Err(_) => pid_path,
    };
    if let Some(p) = &owned {
        let _ = std::fs::remove_file(p);
    }
    result.map(|_| ())
}

/// `worker_rlimit_nofile`: nginx sets it in each worker process (soft and
/// hard, `ngx_worker_process_init`). Peregrine's workers are threads that
/// share one descriptor table, so the process gets the value once per
/// worker: each worker can then hold as many descriptors as an nginx
/// worker. A failure (above the hard limit without CAP_SYS_RESOURCE) is
/// nginx's alert, and the server runs on with the limit it has.
fn apply_rlimit(conf: &Config, errlog: &ErrorLog) {
    if let Some(n) = conf.main.worker_rlimit_nofile {
        let total = n.saturating_mul(worker_count(conf) as u64);
        if let Err(e) = peregrine_sys::set_nofile(total, total) {
            errlog(
                LogLevel::Alert,
                &crate::errlog::with_os_error(
                    &format!("setrlimit(RLIMIT_NOFILE, {total}) failed"),
                    &e,
                ),
            );
        }
    }
}

/// The signalfd the master reads, with the signals blocked in this thread
/// and so in every worker started from it.
fn signal_source(poll: &Poll, on: bool) -> Result<Option<peregrine_sys::SignalFd>, EngineError> {
    if !on {
        return Ok(None);
    }
    peregrine_sys::block_signals(&HANDLED).map_err(EngineError::Signals)?;
    let sfd = peregrine_sys::SignalFd::new(&HANDLED).map_err(EngineError::Signals)?;
    poll.registry()
        .register(&mut SourceFd(&sfd.as_raw_fd()), SIGNALS, Interest::READABLE)
        .map_err(EngineError::Signals)?;
    Ok(Some(sfd))
}

fn write_pid(path: &PathBuf) -> Result<(), EngineError> {
    let err = |source| EngineError::PidFile {
        path: path.clone(),
        source,
    };
    let mut f = std::fs::File::create(path).map_err(err)?;
    writeln!(f, "{}", peregrine_sys::getpid()).map_err(err)
}

/// Commands queued through [`Control`] and signals pending on the signalfd.
fn commands(
    queue: &Mutex<Vec<Command>>,
    signals: Option<&peregrine_sys::SignalFd>,
) -> Vec<Command> {
    let mut cmds: Vec<Command> = queue
        .lock()
        .map(|mut q| std::mem::take(&mut *q))
        .unwrap_or_default();
    while let Some(Ok(Some(sig))) = signals.map(|s| s.read()) {
        cmds.push(match sig {
            libc::SIGTERM | libc::SIGINT => Command::Stop,
            libc::SIGQUIT => Command::Quit,
            libc::SIGHUP => Command::Reload,
            libc::SIGUSR2 => Command::Upgrade,
            libc::SIGWINCH => Command::NoAccept,
            // The loop looks at the new binary after every wake-up.
            libc::SIGCHLD => continue,
            _ => Command::Reopen,
        });
    }
    cmds
}

impl Master {
    fn start_generation(&mut self) -> Result<(), EngineError> {
        self.generation += 1;
        let n = worker_count(&self.conf);
        for index in 0..n {
            self.spawn(index, n)?;
        }
        Ok(())
    }

    fn spawn(&mut self, index: usize, count: usize) -> Result<(), EngineError> {
        let poll = Poll::new().map_err(EngineError::Poll)?;
        let waker = Waker::new(poll.registry(), Token(0)).map_err(EngineError::Poll)?;
        let shared = Arc::new(Shared {
            state: AtomicU8::new(RUN),
            waker,
        });
        let listeners = self
            .listeners
            .for_worker(index, count)
            .map_err(EngineError::Spawn)?;
        let slot = self.registry.acquire();
        let setup = Setup {
            index,
            conf: self.conf.clone(),
            listeners,
            poll,
            shared: shared.clone(),
            counters: slot.counters.clone(),
            registry: self.registry.clone(),
            errlog: self.errlog.clone(),
            access: self
                .prebuilt_logs
                .pop()
                .or_else(|| self.access.as_ref().map(|f| f(&self.conf))),
            ids: self.ids.clone(),
            tls: self.tls.clone(),
        };
        let generation = self.generation;
        let exits = self.exits.clone();
        let master_waker = self.waker.clone();
        let registry = self.registry.clone();
        let creds = self.creds.clone();
        let thread = std::thread::Builder::new()
            .name(format!("worker-{index}"))
            .spawn(move || {
                // Checked at start and reload: a failure here is rare, and
                // the worker must not serve as root.
                let r = match crate::privileges::enter(creds.as_deref()) {
                    Ok(()) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker::run(setup)
                    }))
                    .map_err(|p| crate::errlog::panic_text(&*p)),
                    Err(e) => Err(e),
                };
                registry.release(slot);
                let panic = r.err();
                if let Ok(mut e) = exits.lock() {
                    e.push(Exit {
                        generation,
                        index,
                        panic,
                    });
                }
                let _ = master_waker.wake();
            })
            .map_err(EngineError::Spawn)?;
        self.workers.push(WorkerRef {
            generation,
            index,
            shared,
            thread: Some(thread),
        });
        Ok(())
    }

    fn tell(&self, generation: Option<u64>, state: u8) {
        for w in &self.workers {
            if generation.is_none_or(|g| g == w.generation) {
                w.shared.state.store(state, Ordering::Release);
                let _ = w.shared.waker.wake();
            }
        }
    }

    fn supervise(
        &mut self,
        poll: &mut Poll,
        signals: Option<&peregrine_sys::SignalFd>,
        queue: &Mutex<Vec<Command>>,
        opts: &mut RunOptions,
    ) {
        let mut events = Events::with_capacity(16);
        loop {
            let timeout = self
                .delayed
                .iter()
                .map(|(_, at)| *at)
                .chain(self.quit_at)
                .chain(self.watch.next)
                .map(|at| at.saturating_duration_since(Instant::now()))
                .min();
            if let Err(e) = poll.poll(&mut events, timeout)
                && e.kind() != std::io::ErrorKind::Interrupted
            {
                let msg = crate::errlog::with_os_error("epoll_wait() failed", &e);
                (self.errlog)(LogLevel::Alert, &msg);
                self.apply(Command::Stop, opts);
            }
            for cmd in commands(queue, signals) {
                self.apply(cmd, opts);
            }
            if !self.stopping && self.watch.changed(&self.conf) {
                (self.errlog)(LogLevel::Notice, "configuration file changed, reloading");
                self.apply(Command::Reload, opts);
            }
            if self.quit_at.is_some_and(|t| t <= Instant::now()) {
                self.quit_at = None;
                self.apply(Command::Quit, opts);
            }
            self.new_binary_exited();
            self.reap();
            if self.stopping && self.workers.is_empty() {
                (self.errlog)(LogLevel::Notice, "exit");
                return;
            }
        }
    }

    /// Closes the listening sockets (stop, quit): nginx's
    /// `ngx_close_listening_sockets`, which also removes a socket path's
    /// file unless another binary shares it (see `Upgrade::owns_sockets`).
    fn close_listeners(&mut self) {
        if self.upgrade.owns_sockets() {
            self.listeners.remove_unix_files();
        }
        self.listeners = Listeners::default();
    }

    fn apply(&mut self, cmd: Command, opts: &RunOptions) {
        match cmd {
            Command::Stop => {
                self.registry.draining.store(true, Ordering::Relaxed);
                (self.errlog)(LogLevel::Notice, "exiting");
                self.tell(None, STOP);
                self.close_listeners();
                self.stopping = true;
            }
            // `shutdown_delay`: first only `health_status` says so, while
            // everything is still accepted (a second QUIT, or the delay's
            // end, finds `draining` set and goes on).
            Command::Quit
                if !self.stopping
                    && !self.registry.draining.load(Ordering::Relaxed)
                    && !self.conf.main.shutdown_delay.is_zero() =>
            {
                self.registry.draining.store(true, Ordering::Relaxed);
                let d = self.conf.main.shutdown_delay;
                let msg = format!("shutting down in {} ms", d.as_millis());
                (self.errlog)(LogLevel::Notice, &msg);
                self.quit_at = Some(Instant::now() + d);
            }
            Command::Quit => {
                self.quit_at = None;
                self.registry.draining.store(true, Ordering::Relaxed);
                (self.errlog)(LogLevel::Notice, "gracefully shutting down");
                self.tell(None, DRAIN);
                // nginx closes the listening sockets at once on quit.
                self.close_listeners();
                self.stopping = true;
            }
            // After WINCH, HUP starts workers again with the configuration
            // they had (nginx's `ngx_restart`: the way back when the new
            // binary is not wanted).
            Command::Reload if !self.stopping && self.upgrade.noaccepting => {
                self.upgrade.noaccepting = false;
                self.restart_workers();
            }
            Command::Reload if !self.stopping => self.reload(opts),
            Command::Reload => {}
            Command::Upgrade if !self.stopping => {
                let sockets: Vec<_> = self.listeners.all().collect();
                self.upgrade.start(&sockets, &self.errlog);
            }
            Command::Upgrade => {}
            Command::NoAccept if !self.stopping && !self.upgrade.noaccepting => {
                (self.errlog)(LogLevel::Notice, "gracefully shutting down worker threads");
                self.registry.draining.store(true, Ordering::Relaxed);
                self.upgrade.noaccepting = true;
                self.tell(None, DRAIN);
            }
            Command::NoAccept => {}
            Command::Reopen => {
                (self.errlog)(LogLevel::Notice, "reopening logs");
                crate::privileges::prepare_reopen(&self.conf, self.creds.as_deref());
                (opts.reopen_logs)();
            }
        }
    }

    fn reload(&mut self, opts: &RunOptions) {
        (self.errlog)(LogLevel::Notice, "reconfiguring");
        let ok = self.try_reload(opts);
        self.registry.reloaded(ok);
        self.watch.remember(&self.conf);
    }

    /// Loads the new configuration and starts its workers; `false` when the
    /// old configuration stays in service (for `peregrine_reloads_total`).
    fn try_reload(&mut self, opts: &RunOptions) -> bool {
        let conf = match (opts.reload)() {
            Ok(c) => c,
            Err(msg) => {
                (self.errlog)(LogLevel::Emerg, &msg);
                return false;
            }
        };
        let creds = match crate::privileges::workers(&conf).and_then(|c| {
            crate::privileges::create_temp_paths(&conf.temp_paths, c.as_deref())?;
            Ok(c)
        }) {
            Ok(c) => c,
            Err(e) => {
                (self.errlog)(LogLevel::Emerg, &e.to_string());
                return false;
            }
        };
        let tls = match load_tls(&conf, &self.errlog, creds.as_ref()) {
            Ok(t) => t,
            Err(e) => {
                (self.errlog)(LogLevel::Emerg, &e.to_string());
                return false;
            }
        };
        if let Err(e) = self
            .listeners
            .reconcile(&wanted(&conf), worker_count(&conf))
        {
            (self.errlog)(LogLevel::Emerg, &e.to_string());
            return false;
        }
        let old = self.generation;
        self.conf = conf;
        self.tls = tls;
        self.creds = creds;
        self.delayed.clear();
        match self.start_generation() {
            Ok(()) => {
                self.tell(Some(old), DRAIN);
                true
            }
            Err(e) => {
                (self.errlog)(LogLevel::Alert, &e.to_string());
                false
            }
        }
    }

    /// The new binary ended (it failed to start, or was stopped): this
    /// master is the one serving again (its pid file back), with workers.
    fn new_binary_exited(&mut self) {
        if self.upgrade.reap(&self.errlog) && self.upgrade.noaccepting && !self.stopping {
            self.upgrade.noaccepting = false;
            self.restart_workers();
        }
    }

    /// A new generation with the current configuration (after WINCH).
    fn restart_workers(&mut self) {
        self.registry.draining.store(false, Ordering::Relaxed);
        let old = self.generation;
        self.delayed.clear();
        if let Err(e) = self.start_generation() {
            (self.errlog)(LogLevel::Alert, &e.to_string());
        }
        self.tell(Some(old), DRAIN);
    }

    /// Joins ended workers; restarts those of the current generation that
    /// panicked (nginx respawns a worker that died abnormally).
    fn reap(&mut self) {
        let stopping = self.stopping;
        let exits: Vec<Exit> = self
            .exits
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default();
        for exit in exits {
            let mut asked = true;
            if let Some(pos) = self
                .workers
                .iter()
                .position(|w| w.generation == exit.generation && w.index == exit.index)
            {
                let mut w = self.workers.swap_remove(pos);
                asked = w.shared.state.load(Ordering::Acquire) != RUN;
                if let Some(t) = w.thread.take() {
                    let _ = t.join();
                }
            }
            match &exit.panic {
                Some(why) => (self.errlog)(
                    LogLevel::Alert,
                    &format!("worker thread {} panicked: {why}", exit.index),
                ),
                // Ended on its own (its event loop failed): as abnormal as a panic.
                None if !asked => (self.errlog)(
                    LogLevel::Alert,
                    &format!("worker thread {} exited unexpectedly", exit.index),
                ),
                None => continue,
            }
            if stopping || exit.generation != self.generation {
                continue;
            }
            self.schedule_restart(exit.index);
        }
        if stopping {
            self.delayed.clear();
        } else {
            self.restart_due();
        }
    }

    /// Queues a restart of worker `index`, delayed if it restarted recently.
    fn schedule_restart(&mut self, index: usize) {
        let now = Instant::now();
        let recent = self
            .last_restart
            .get(&index)
            .is_some_and(|t| now.duration_since(*t) < RESTART_BACKOFF);
        let at = if recent { now + RESTART_BACKOFF } else { now };
        self.delayed.push((index, at));
    }

    /// Starts the queued restarts whose time has come.
    fn restart_due(&mut self) {
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = self.delayed.drain(..).partition(|(_, at)| *at <= now);
        self.delayed = later;
        let count = worker_count(&self.conf);
        for (index, _) in due {
            self.last_restart.insert(index, now);
            let msg = format!("restarting worker thread {index}");
            (self.errlog)(LogLevel::Notice, &msg);
            if let Err(e) = self.spawn(index, count) {
                (self.errlog)(LogLevel::Alert, &e.to_string());
            }
        }
    }
}
