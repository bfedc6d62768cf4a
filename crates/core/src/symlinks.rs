//! `disable_symlinks on | if_not_owner [from=PART]`
//! (`ngx_open_file_wrapper`): every component of the path after `from` is
//! looked at without following symlinks; with `on` a symlink is refused,
//! with `if_not_owner` one owned by another user than its target. Refused
//! opens fail as nginx's do: `ELOOP` (403), except a directory symlink
//! refused by `on`, which `openat(O_DIRECTORY | O_NOFOLLOW)` reports as
//! `ENOTDIR` (404; checked against nginx 1.22).
//!
//! nginx walks the path with `openat(O_NOFOLLOW)` one component at a time,
//! so a component cannot be swapped between the check and the open. This
//! walks it with `lstat`/`stat` before the open: the same answers, without
//! that guarantee against a concurrent writer of the tree (documented in
//! docs/directives.md).

use std::os::unix::fs::MetadataExt;

use peregrine_conf::model::SymlinkMode;

use crate::fcache::Errno;

/// Checks `path` (absolute) under `mode`; the first `skip` bytes (the
/// `from=` part, when the path starts with it) are not checked.
pub(crate) fn check(path: &str, mode: SymlinkMode, skip: usize) -> Result<(), Errno> {
    if mode == SymlinkMode::Off {
        return Ok(());
    }
    let b = path.as_bytes();
    let mut end = skip.min(b.len());
    while end < b.len() {
        // The next component: from `end` past its `/` to the next `/`.
        let start = end + usize::from(b[end] == b'/');
        end = b[start..]
            .iter()
            .position(|&c| c == b'/')
            .map_or(b.len(), |n| start + n);
        if end == start {
            continue;
        }
        let prefix = &path[..end];
        let meta = match std::fs::symlink_metadata(prefix) {
            Ok(m) => m,
            // Missing: the open reports it (404), as nginx's openat would.
            Err(_) => return Ok(()),
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let allowed = match mode {
            SymlinkMode::IfNotOwner => {
                std::fs::metadata(prefix).is_ok_and(|target| target.uid() == meta.uid())
            }
            _ => false,
        };
        if !allowed {
            let last = end == b.len();
            return Err(if mode == SymlinkMode::On && !last {
                libc::ENOTDIR
            } else {
                libc::ELOOP
            });
        }
    }
    Ok(())
}

/// How much of `path` `from` covers: its length when `path` starts with it
/// at a component boundary, else 0 (everything is checked).
pub(crate) fn from_len(path: &str, from: &str) -> usize {
    let from = from.trim_end_matches('/');
    match path.strip_prefix(from) {
        Some(rest) if !from.is_empty() && (rest.is_empty() || rest.starts_with('/')) => from.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_refused_after_from() {
        let d = crate::testdir::TestDir::new("core-symlinks");
        d.file("real/f.txt", b"x");
        let root = d.root().to_string();
        std::os::unix::fs::symlink(format!("{root}/real"), format!("{root}/link")).unwrap();
        let via_link = format!("{root}/link/f.txt");
        let direct = format!("{root}/real/f.txt");
        assert_eq!(check(&via_link, SymlinkMode::Off, 0), Ok(()));
        assert_eq!(check(&direct, SymlinkMode::On, 0), Ok(()));
        assert_eq!(check(&via_link, SymlinkMode::On, 0), Err(libc::ENOTDIR));
        let file_link = format!("{root}/real/l.txt");
        std::os::unix::fs::symlink(&direct, &file_link).unwrap();
        assert_eq!(check(&file_link, SymlinkMode::On, 0), Err(libc::ELOOP));
        // Same owner (the test made both): allowed.
        assert_eq!(check(&via_link, SymlinkMode::IfNotOwner, 0), Ok(()));
        let skip = from_len(&via_link, &format!("{root}/link"));
        assert_eq!(skip, root.len() + 5);
        assert_eq!(check(&via_link, SymlinkMode::On, skip), Ok(()));
        assert_eq!(from_len(&via_link, &format!("{root}/lin")), 0);
        assert_eq!(check(&format!("{root}/none/x"), SymlinkMode::On, 0), Ok(()));
    }
}
