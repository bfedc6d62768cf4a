//! peregrine-engine: nginx's process architecture, with threads.
//!
//! Owns: listening sockets, the master (signals, reload, supervision of
//! workers, pid file, privileges), the workers (one `mio` event loop each),
//! connections (reading and parsing request heads with the codec, discarding
//! request bodies, writing responses with `writev`/`sendfile`), timeouts,
//! keep-alive, pipelining, lingering close, the stub_status counters, and
//! the I/O side of on-the-fly compression (`compress`: the head rewrite and
//! the streaming encoder for responses core marks `compressible`; the
//! decision and codecs are peregrine-compress's).
//!
//! Does not own: deciding what to answer (core produces a `Response`
//! description), HTTP syntax (codec), configuration (conf), log formatting
//! and files (log: the engine calls the hooks of [`RunOptions`]), system
//! calls (sys).
//!
//! # Threads, not processes
//!
//! nginx runs one master process and `worker_processes` worker processes.
//! Peregrine runs one master *thread* (the caller of [`run`]) and
//! `worker_processes` worker threads. Each worker still owns everything on
//! its request path: its own `SO_REUSEPORT` listening socket per address
//! (the kernel spreads connections across them), its own `HttpCore` (caches),
//! buffers, timers and counters, so nothing is locked or shared while serving.
//! What changes from nginx:
//! - a crash of a worker is a panic caught by the master (`catch_unwind`),
//!   not a dead process, and the master starts a new worker as nginx's
//!   respawns one; a panic inside core's request processing costs that
//!   request (500) and the worker's caches (`HttpCore::drop_caches`: they
//!   may be half updated), not the worker's other connections; a panic in
//!   parsing, compression or writing, which run on the connection's own
//!   state, costs the worker (replaced);
//! - `user` applies to the whole process, the master too, since threads
//!   share credentials: after dropping root a reload cannot bind new ports
//!   below 1024 (ports kept across the reload keep working);
//! - signals are read only by the master, through a signalfd;
//! - every listening socket uses `SO_REUSEPORT`, with or without the
//!   `reuseport` parameter;
//! - on graceful stop or reload, a connection accepted but still silent gets
//!   a short grace to send its request instead of being closed at once.
//!
//! # Wiring (the binary)
//!
//! ```text
//! let elog = Arc::new(peregrine_log::ErrorLog::new(&conf.main.error_log)?);
//! let reopen = peregrine_log::ReopenSignal::new();
//! let mut opts = RunOptions::new(Box::new(move || load().map(Arc::new).map_err(|e| e.to_string())));
//! opts.error_log = logging::error_log_hook(elog.clone());
//! opts.access_log = Some(logging::access_log_factory(elog.clone(), reopen.clone()));
//! opts.reopen_logs = Box::new(move || { reopen.trigger(); let _ = elog.reopen(); });
//! peregrine_engine::run(conf, opts)?;   // returns after stop/quit
//! ```
//! `run` daemonizes itself (after binding, before the pid file) when the
//! configuration says `daemon on`; see `examples/serve.rs`.

mod body;
mod compress;
mod conn;
mod ctx;
mod errlog;
mod exchange;
// http2
mod h2;
mod http1;
mod inherit;
mod keepalive;
// limits
mod limits;
mod listen;
mod loc_errlog;
pub mod logging;
mod master;
mod pool;
mod privileges;
mod proxy_protocol;
mod rate;
mod resolver;
mod stats;
// stream
mod stream;
// mail
pub mod mail;
mod timer;
pub mod tls;
mod transport;
mod upgrade;
mod upstream;
mod watch;
mod worker;
mod write;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use peregrine_codec::Request;
use peregrine_conf::model::{Config, LogLevel};
use peregrine_core::{ConnInfo, Response};

pub use errlog::format_error_line;
pub use master::run;

/// The error-log hook: a level and a message that starts at nginx's
/// `*CID ` (connection-scoped) or at the text (process-scoped), without the
/// `YYYY/MM/DD HH:MM:SS [level] PID#TID: ` prefix, which the writer adds
/// ([`format_error_line`] does it the nginx way). Called on worker threads.
pub type ErrorLog = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// Re-reads the configuration on `SIGHUP`.
pub type ReloadFn = Box<dyn Fn() -> Result<Arc<Config>, String> + Send>;

/// Everything a worker knows about one finished request, for the access
/// log. Built only when the worker has an [`AccessLog`].
pub struct AccessEntry<'a> {
    pub conn: &'a ConnInfo,
    /// `None` when the request head could not be parsed (a 400 answered
    /// before any request existed, as nginx logs it with `request: "-"`...).
    pub request: Option<&'a Request>,
    pub response: &'a Response,
    /// The status sent (after a parse error: the codec's, e.g. 400).
    pub status: u16,
    /// `$bytes_sent`: head and body bytes written to the socket.
    pub bytes_sent: u64,
    /// `$body_bytes_sent`.
    pub body_bytes_sent: u64,
    /// `$request_length`: head plus body bytes read.
    pub request_length: u64,
    /// When the first byte of the request was read (`$request_time` start).
    pub start: SystemTime,
    /// When the response was completely handed to the kernel.
    pub end: SystemTime,
    /// The request was already buffered behind the previous one (`$pipe`).
    pub pipelined: bool,
    // proxy
    /// `$upstream_*` of a proxied request.
    pub upstream: Option<&'a peregrine_core::proxy::UpstreamVars>,
    /// The connection's own address while realip replaced `conn.peer`
    /// (`$realip_remote_addr`); `None` when it was not replaced.
    pub conn_peer: Option<std::net::SocketAddr>,
    /// Core, for the variables a format asks that the log does not
    /// compute (`map`, `geo`...: `HttpCore::log_variable`).
    pub core: Option<&'a peregrine_core::HttpCore>,
}

impl AccessEntry<'_> {
    /// `$request_time`.
    pub fn request_time(&self) -> Duration {
        self.end.duration_since(self.start).unwrap_or_default()
    }
}

/// A worker's access-log writer: one per worker thread, so it may buffer
/// without locks. Which `access_log` of the location applies is its
/// business (`entry.response.conf`). `Send`: it is made on the master
/// thread (so files open with the master's privileges, before `user`
/// drops them, as nginx opens logs in its master) and moved to its worker.
pub trait AccessLog: Send {
    fn log(&mut self, entry: &AccessEntry<'_>);
    /// Called about once a second and when the worker exits (buffered logs).
    fn flush(&mut self) {}
    /// True when [`AccessLog::log`] would do nothing for any request of
    /// the configuration it was made for (`access_log off` everywhere, the
    /// usual tuned setting): the worker then drops it and builds no entry
    /// per request, and stops waking up to flush.
    fn logs_nothing(&self) -> bool {
        false
    }
}

/// Makes a worker's [`AccessLog`] for the configuration it serves (called
/// on the master thread for each worker it starts, reloads included).
pub type AccessLogFactory = Arc<dyn Fn(&Arc<Config>) -> Box<dyn AccessLog> + Send + Sync>;

/// What the master can be asked to do, by a signal or through [`Control`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `SIGTERM`/`SIGINT` (`-s stop`): close everything and exit now.
    Stop,
    /// `SIGQUIT` (`-s quit`): stop accepting, finish in-flight requests.
    Quit,
    /// `SIGHUP` (`-s reload`).
    Reload,
    /// `SIGUSR1` (`-s reopen`).
    Reopen,
    /// `SIGUSR2`: start the new binary with the listening sockets
    /// (nginx's binary upgrade; see `master`).
    Upgrade,
    /// `SIGWINCH`: the workers finish and exit; the master keeps the
    /// sockets (after an upgrade, the old master's half of retiring).
    NoAccept,
}

/// Sends commands to a running master from any thread (tests, embedding).
#[derive(Clone)]
pub struct Control {
    queue: Arc<Mutex<Vec<Command>>>,
    waker: Arc<mio::Waker>,
}

impl Control {
    /// Queues `cmd` and wakes the master. Fails only if the master is gone.
    pub fn send(&self, cmd: Command) -> std::io::Result<()> {
        if let Ok(mut q) = self.queue.lock() {
            q.push(cmd);
        }
        self.waker.wake()
    }
}

/// What [`RunOptions::ready`] is told once every listener is bound and the
/// workers are starting.
pub struct Ready {
    /// The bound addresses (ports resolved when the configuration said 0).
    pub addrs: Vec<SocketAddr>,
    pub control: Control,
}

/// Hooks and switches given by the binary (or a test) to [`run`].
pub struct RunOptions {
    pub reload: ReloadFn,
    /// `SIGUSR1`: reopen log files (called on the master thread).
    pub reopen_logs: Box<dyn Fn() + Send>,
    pub error_log: ErrorLog,
    /// `None`: no access logging at all (nothing is built per request).
    pub access_log: Option<AccessLogFactory>,
    pub ready: Option<Box<dyn FnOnce(Ready) + Send>>,
    /// Read `SIGTERM`, `SIGINT`, `SIGQUIT`, `SIGHUP`, `SIGUSR1` through a
    /// signalfd (the binary). Tests leave it off and use [`Control`]: the
    /// test harness's other threads would receive process signals.
    pub handle_signals: bool,
    /// Write the pid file named by the configuration (`pid`).
    pub write_pid: bool,
}

impl RunOptions {
    /// Options with no reload source, logging to stderr, no access log.
    pub fn new(reload: ReloadFn) -> Self {
        RunOptions {
            reload,
            reopen_logs: Box::new(|| {}),
            error_log: Arc::new(|level, msg| eprintln!("{}", format_error_line(level, msg))),
            access_log: None,
            ready: None,
            handle_signals: true,
            write_pid: true,
        }
    }
}

/// Why [`run`] could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{}", crate::errlog::with_os_error(&format!("bind() to {name} failed"), source))]
    Bind {
        addr: SocketAddr,
        /// The address as nginx prints it (`unix:PATH` for a socket path).
        name: String,
        source: std::io::Error,
    },
    /// A `*_temp_path` directory could not be created (nginx's
    /// `ngx_create_paths` wording).
    #[error("mkdir() \"{path}\" failed ({source})")]
    TempPath {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("open() \"{path}\" failed ({source})")]
    PidFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("getpwnam(\"{0}\") failed")]
    NoUser(String),
    #[error("getgrnam(\"{0}\") failed")]
    NoGroup(String),
    #[error("setuid/setgid to \"{user}\" failed ({source})")]
    Privileges {
        user: String,
        source: std::io::Error,
    },
    #[error("signal setup failed ({0})")]
    Signals(std::io::Error),
    #[error("event loop setup failed ({0})")]
    Poll(std::io::Error),
    #[error("cannot start worker thread ({0})")]
    Spawn(std::io::Error),
    /// A server block's TLS settings (a certificate, a key, a cipher string).
    #[error("{0}")]
    Tls(String),
}
