//! Where log bytes go: a file opened for appending, or the inherited stderr.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use peregrine_conf::model::LogTarget;

/// Mode of created log files: nginx's `NGX_FILE_DEFAULT_ACCESS` (0644).
pub const LOG_FILE_MODE: u32 = 0o644;

#[derive(Debug)]
pub(crate) enum Sink {
    Stderr,
    File { file: File, path: PathBuf },
}

/// `O_WRONLY|O_APPEND|O_CREAT` as nginx's `ngx_conf_open_file`: with
/// O_APPEND every write(2) lands at the current end even when several
/// processes (workers, logrotate's copytruncate) share the file. std adds
/// O_CLOEXEC.
pub(crate) fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(LOG_FILE_MODE)
        .open(path)
}

impl Sink {
    pub(crate) fn open(target: &LogTarget) -> io::Result<Sink> {
        match target {
            LogTarget::Stderr => Ok(Sink::Stderr),
            LogTarget::File(path) => Ok(Sink::File {
                file: open_append(path)?,
                path: path.clone(),
            }),
            // The configuration allows these on error_log only.
            LogTarget::Syslog(_) | LogTarget::Memory(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "not a file or stderr",
            )),
        }
    }

    /// What messages call it: the path, or `stderr`.
    pub(crate) fn name(&self) -> &Path {
        match self {
            Sink::Stderr => Path::new("stderr"),
            Sink::File { path, .. } => path,
        }
    }

    /// Writes all of `data`; on a regular O_APPEND file that is one
    /// write(2) unless the disk fills mid-way.
    pub(crate) fn write_all(&self, data: &[u8]) -> io::Result<()> {
        match self {
            Sink::Stderr => io::stderr().write_all(data),
            Sink::File { file, .. } => {
                let mut f: &File = file;
                f.write_all(data)
            }
        }
    }

    /// Opens the path again (after logrotate renamed the file) and swaps the
    /// descriptor in; on failure the old one stays in use. stderr is kept.
    pub(crate) fn reopen(&mut self) -> io::Result<()> {
        if let Sink::File { file, path } = self {
            *file = open_append(path)?;
        }
        Ok(())
    }
}
