//! A request body's temporary file (nginx's `ngx_create_temp_file` and
//! `ngx_create_hashed_filename`): a ten-digit number as the name, under
//! `levels` directories made of the name's last characters, created
//! anew (`O_EXCL`; a name taken gives the next), mode 0600, removed when
//! dropped unless `client_body_in_file_only on` keeps it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use peregrine_conf::model::TempPath;

/// The digits of a temporary file's name (nginx's `NGX_ATOMIC_T_LEN`
/// for 32 bits: `%010uA`).
const NAME_DIGITS: usize = 10;
/// Names tried before giving up (nginx tries until `open()` fails for a
/// reason other than `EEXIST`; a bound keeps a full directory finite).
const MAX_TRIES: u32 = 1000;
/// The file's and its directories' modes (nginx's defaults, 0600/0700).
const FILE_MODE: u32 = 0o600;
const DIR_MODE: u32 = 0o700;

/// The worker's next number (nginx's shared `ngx_temp_number`; workers
/// may pick the same one, `O_EXCL` then moves on).
static NEXT: AtomicU64 = AtomicU64::new(0);

/// What failed, in nginx's words: `open() "PATH" failed (...)`.
#[derive(Debug)]
pub struct TempError {
    pub op: &'static str,
    pub path: PathBuf,
    pub err: io::Error,
}

impl TempError {
    /// The error log's text (`ngx_create_temp_file`, `ngx_write_file`).
    pub fn text(&self) -> String {
        crate::errlog::with_os_error(
            &format!("{}() \"{}\" failed", self.op, self.path.display()),
            &self.err,
        )
    }
}

/// One open temporary file being written, then read back.
#[derive(Debug)]
pub struct TempFile {
    pub path: PathBuf,
    file: File,
    pub len: u64,
    /// `client_body_in_file_only on`: left on disk after the request.
    keep: bool,
}

impl TempFile {
    pub fn create(tp: &TempPath, keep: bool) -> Result<TempFile, TempError> {
        for _ in 0..MAX_TRIES {
            let n = NEXT.fetch_add(1, Ordering::Relaxed) + 1;
            let path = hashed_name(tp, n);
            let open = || {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(FILE_MODE)
                    .open(&path)
            };
            let r = match open() {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    // nginx's `ngx_create_path`: the levels' directories
                    // are made on the first file that needs them.
                    make_dirs(tp, &path).and_then(|()| open())
                }
                r => r,
            };
            match r {
                Ok(file) => {
                    return Ok(TempFile {
                        path,
                        file,
                        len: 0,
                        keep,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => {
                    return Err(TempError {
                        op: "open",
                        path,
                        err,
                    });
                }
            }
        }
        Err(TempError {
            op: "open",
            path: tp.dir.clone(),
            err: io::ErrorKind::AlreadyExists.into(),
        })
    }

    /// Appends `data` (nginx's `pwrite()`).
    pub fn write(&mut self, data: &[u8]) -> Result<(), TempError> {
        match self.file.write_all(data) {
            Ok(()) => {
                self.len += data.len() as u64;
                Ok(())
            }
            Err(err) => Err(TempError {
                op: "pwrite",
                path: self.path.clone(),
                err,
            }),
        }
    }

    /// Reads the file from `at` into `buf` (the upstream's send).
    pub fn read_at(&mut self, at: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.file.seek(SeekFrom::Start(at))?;
        let n = self.file.read(buf)?;
        self.file.seek(SeekFrom::End(0))?;
        Ok(n)
    }

    pub fn path_str(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `DIR/[levels/]NNNNNNNNNN`: each level takes its width of the name's
/// characters from the end (levels `1 2`, number 1234: `DIR/4/23/0000001234`).
pub fn hashed_name(tp: &TempPath, n: u64) -> PathBuf {
    let name = format!(
        "{:0width$}",
        n % 10u64.pow(NAME_DIGITS as u32),
        width = NAME_DIGITS
    );
    let mut path = tp.dir.clone();
    let mut end = name.len();
    for &w in &tp.levels {
        let w = usize::from(w);
        path.push(&name[end - w..end]);
        end -= w;
    }
    path.push(&name);
    path
}

fn make_dirs(tp: &TempPath, file: &std::path::Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.mode(DIR_MODE).recursive(true);
    match file.parent() {
        Some(p) => b.create(p),
        None => b.create(&tp.dir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_as_nginx() {
        let tp = TempPath {
            dir: PathBuf::from("/t"),
            levels: vec![1, 2],
        };
        assert_eq!(hashed_name(&tp, 1234), PathBuf::from("/t/4/23/0000001234"));
        let flat = TempPath {
            dir: PathBuf::from("/t"),
            levels: Vec::new(),
        };
        assert_eq!(hashed_name(&flat, 1), PathBuf::from("/t/0000000001"));
    }

    #[test]
    fn file_written_read_and_removed() {
        let dir = std::env::temp_dir().join(format!("pg-body-{}", std::process::id()));
        let tp = TempPath {
            dir: dir.clone(),
            levels: vec![2],
        };
        let mut f = TempFile::create(&tp, false).expect("create");
        f.write(b"hello ").expect("write");
        f.write(b"world").expect("write");
        let mut buf = [0u8; 32];
        let n = f.read_at(6, &mut buf).expect("read");
        assert_eq!(&buf[..n], b"world");
        let path = f.path.clone();
        assert!(path.exists());
        drop(f);
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(dir);
    }
}
