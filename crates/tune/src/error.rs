//! Errors that stop `peregrine tune` (everything else is a per-item finding).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("{0}")]
    Usage(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("refusing to write {0}: generated files are written elsewhere and installed by hand")]
    Protected(PathBuf),
    #[error("configuration: {0}")]
    Config(String),
    #[error("output: {0}")]
    Output(#[from] std::io::Error),
}
