//! The configuration facts `peregrine tune` checks, independent of how the
//! configuration was read: [`TuneInputs::from_config`] fills them from
//! peregrine-conf's typed model, tests fill them directly.

use std::path::PathBuf;

/// `worker_cpu_affinity` as written, masks as CPU bit sets (bit N = CPU N).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub enum Affinity {
    #[default]
    None,
    /// One mask per worker; the last repeats when workers outnumber masks.
    Masks(Vec<Vec<u64>>),
    /// `auto [mask]`.
    Auto(Option<Vec<u64>>),
}

/// One `listen`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ListenInput {
    pub addr: String,
    pub backlog: u64,
}

/// What the checks need from the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct TuneInputs {
    pub conf_file: PathBuf,
    /// `None` for `worker_processes auto`.
    pub worker_processes: Option<usize>,
    pub worker_cpu_affinity: Affinity,
    pub worker_rlimit_nofile: Option<u64>,
    pub worker_connections: u64,
    pub listens: Vec<ListenInput>,
    /// Some location proxies: each client may then hold an upstream connection.
    pub proxying: bool,
    /// The largest `open_file_cache max=`: descriptors a worker keeps open.
    pub open_file_cache_max: u64,
    pub pid_file: Option<PathBuf>,
    /// The main `error_log` files: their evidence (a full upstream backlog,
    /// descriptors running out) is read by [`crate::errlog`].
    pub error_logs: Vec<PathBuf>,
}

impl TuneInputs {
    /// The running server's pid, from the pid file, if it names a number.
    pub fn server_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.pid_file.as_ref()?).ok()?;
        text.trim().parse().ok()
    }
}
