//! The htpasswd files of `auth_basic_user_file`, kept by each worker and
//! checked at each request with one `stat`.
//!
//! nginx opens and reads the file at every request (`ngx_http_auth_basic_handler`),
//! so that a changed file takes effect at once: four system calls (open,
//! two reads, close), which cost more than all the rest of the module. A
//! kept copy answers while the file's identity and times are unchanged
//! (device, inode, size, modification and change times, to the
//! nanosecond): any write, rename over it, `chmod` or `chown` changes one
//! of them, so a change still takes effect at the next request. The kernel
//! stamps those times from a clock that moves once a tick (a few
//! milliseconds), so two writes of the same length within one tick could
//! leave the same stamp: a file changed in the last [`RACY_SECS`] is not
//! kept (git's "racily clean" rule), and is read at each request as nginx
//! reads it. A deliberate difference, held by e2e
//! `auth_basic::a_changed_user_file_takes_effect_at_once`.

use std::os::unix::fs::MetadataExt;
use std::rc::Rc;

/// Files a worker keeps at most (when a new one would pass it, the kept
/// ones are dropped: configurations name a few).
pub(crate) const USER_FILES_MAX: usize = 64;
/// The largest file kept; a larger one is read at each request, as nginx
/// reads every one.
pub(crate) const USER_FILE_KEPT_MAX: usize = 1 << 20;
/// A file whose change time is this recent is not kept (see the module
/// doc): a later write could carry the same times.
pub(crate) const RACY_SECS: i64 = 2;
/// The first read of a file takes this much, each next one as much as was
/// read so far (nginx reads in `NGX_HTTP_AUTH_BUF_SIZE` steps of 2 KiB).
const READ_STEP: usize = 512;

/// What identifies a file's contents without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// A worker's kept user files, by path (Fx-hashed: at most
/// [`USER_FILES_MAX`] entries, so a path a request names through a
/// variable cannot flood it).
#[derive(Debug, Default)]
pub(crate) struct UserFiles {
    kept: crate::fxhash::FxHashMap<String, (Stamp, Rc<[u8]>)>,
}

impl UserFiles {
    /// The contents of `path`, or the `errno` of the call that failed.
    pub(crate) fn read(&mut self, path: &str) -> Result<Rc<[u8]>, i32> {
        let meta = std::fs::metadata(path).map_err(errno)?;
        let stamp = Stamp::of(&meta);
        if let Some((kept, text)) = self.kept.get(path)
            && *kept == stamp
        {
            return Ok(text.clone());
        }
        // Read after the stamp: a change in between leaves a stamp that
        // the next request's no longer matches, and it reads again.
        let text: Rc<[u8]> = Rc::from(read_whole(path)?);
        if text.len() <= USER_FILE_KEPT_MAX && settled(&meta) {
            if self.kept.len() >= USER_FILES_MAX && !self.kept.contains_key(path) {
                self.kept.clear();
            }
            self.kept.insert(path.to_string(), (stamp, text.clone()));
        }
        Ok(text)
    }

    /// Drops every kept file.
    pub(crate) fn clear(&mut self) {
        self.kept.clear();
    }
}

/// The file's last change is older than [`RACY_SECS`].
fn settled(m: &std::fs::Metadata) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    m.ctime().max(m.mtime()).saturating_add(RACY_SECS) < now
}

fn errno(e: std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// The whole file (any size: a cap would silently hide the users after
/// it), opened and read as nginx does: `File::read_to_end` would ask
/// `statx` and `lseek` for a size hint first.
fn read_whole(path: &str) -> Result<Vec<u8>, i32> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(errno)?;
    let mut text = Vec::new();
    loop {
        let len = text.len();
        text.resize(len + READ_STEP.max(len), 0);
        match f.read(&mut text[len..]) {
            Ok(0) => {
                text.truncate(len);
                return Ok(text);
            }
            Ok(n) => text.truncate(len + n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => text.truncate(len),
            Err(e) => return Err(errno(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file just written is read at each request; once settled it is
    /// kept, and read again after any change (contents of the same size
    /// too); gone with the file; a large file is read whole.
    #[test]
    fn a_kept_file_follows_its_changes() {
        let d = crate::testdir::TestDir::new("core-user-files");
        d.file("h", b"a:{PLAIN}1\n");
        let path = format!("{}/h", d.root());
        let mut files = UserFiles::default();
        assert_eq!(&*files.read(&path).unwrap(), b"a:{PLAIN}1\n");
        assert!(files.kept.is_empty(), "just written: not kept");
        std::thread::sleep(std::time::Duration::from_millis(
            u64::try_from(RACY_SECS).unwrap() * 1000 + 1100,
        ));
        assert_eq!(&*files.read(&path).unwrap(), b"a:{PLAIN}1\n");
        assert_eq!(files.kept.len(), 1, "settled: kept");
        d.file("h", b"a:{PLAIN}2\n");
        assert_eq!(&*files.read(&path).unwrap(), b"a:{PLAIN}2\n");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(files.read(&path).unwrap_err(), libc::ENOENT);
        let big = vec![b'x'; 3000];
        d.file("h", &big);
        assert_eq!(&*files.read(&path).unwrap(), big.as_slice());
    }
}
