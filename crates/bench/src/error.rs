//! The typed errors of `peregrine bench`: every way a run can be refused
//! before it starts or aborted while it runs.

use std::io;
use std::path::PathBuf;

/// Why a benchmark could not run, or was cut short.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The command line was refused (clap's message, or one of ab's checks
    /// such as "concurrency level greater than total number of requests").
    #[error("{0}")]
    Usage(String),
    /// A URL that is not `http://host[:port]/path`.
    #[error("invalid URL: {0}")]
    Url(String),
    /// `https://` and HTTP/2 arrive with the TLS work.
    #[error("{0} is not supported yet (it comes with the TLS work)")]
    Unsupported(String),
    /// The host name does not resolve (ab: `apr_sockaddr_info_get()`).
    #[error("cannot resolve {host}: {source}")]
    Resolve { host: String, source: io::Error },
    /// A file named on the command line could not be read or written.
    #[error("{path}: {source}")]
    File { path: PathBuf, source: io::Error },
    /// The event loop itself failed (epoll, thread spawn).
    #[error("{context}: {source}")]
    Io {
        context: &'static str,
        source: io::Error,
    },
    /// ab's "Test aborted after 10 failures": nothing ever succeeded.
    #[error("Test aborted after {failures} failures: {last}")]
    Aborted { failures: u64, last: String },
    /// A receive error without `-r` (ab: `apr_socket_recv: ...`).
    #[error("apr_socket_recv: {0}")]
    Receive(String),
    /// A JSON or histogram-log file given to `merge` that cannot be read back.
    #[error("{path}: {reason}")]
    Merge { path: PathBuf, reason: String },
    /// The SVG chart could not be drawn.
    #[error("plot {path}: {reason}")]
    Plot { path: PathBuf, reason: String },
}

impl BenchError {
    /// Wraps an I/O error on a named file.
    pub fn file(path: impl Into<PathBuf>, source: io::Error) -> Self {
        BenchError::File {
            path: path.into(),
            source,
        }
    }
}
