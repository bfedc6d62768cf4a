//! User and group look-up and dropping root privileges (`user USER [GROUP]`).
//!
//! Uses the re-entrant `getpwnam_r`/`getgrnam_r` because the engine may look
//! names up while other threads run.

use std::ffi::{CStr, CString};
use std::io;

/// Start size of the buffer for passwd/group strings; doubled on ERANGE.
const NSS_BUF_START: usize = 1024;
/// Give up past this buffer size (a group with huge member lists).
const NSS_BUF_MAX: usize = 1 << 20;

/// Numeric identities of a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    pub uid: u32,
    pub gid: u32,
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in name"))
}

/// Looks a user up by name: `Ok(None)` when there is no such user.
pub fn lookup_user(name: &str) -> io::Result<Option<Ids>> {
    let cname = c_name(name)?;
    let mut size = NSS_BUF_START;
    loop {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: passwd is plain data; all-zero is a valid (empty) value.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer refers to a live local; `buf` is `size` bytes
        // long and the kernel/libc writes only within it.
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                size,
                &mut result,
            )
        };
        if rc == libc::ERANGE && size < NSS_BUF_MAX {
            size *= 2;
            continue;
        }
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        return Ok((!result.is_null()).then_some(Ids {
            uid: pwd.pw_uid,
            gid: pwd.pw_gid,
        }));
    }
}

/// Looks a group up by name: `Ok(None)` when there is no such group.
pub fn lookup_group(name: &str) -> io::Result<Option<u32>> {
    let cname = c_name(name)?;
    let mut size = NSS_BUF_START;
    loop {
        let mut buf = vec![0 as libc::c_char; size];
        // SAFETY: group is plain data; all-zero is a valid (empty) value.
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::group = std::ptr::null_mut();
        // SAFETY: as in lookup_user: live locals, `buf` is `size` bytes.
        let rc = unsafe {
            libc::getgrnam_r(
                cname.as_ptr(),
                &mut grp,
                buf.as_mut_ptr(),
                size,
                &mut result,
            )
        };
        if rc == libc::ERANGE && size < NSS_BUF_MAX {
            size *= 2;
            continue;
        }
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        return Ok((!result.is_null()).then_some(grp.gr_gid));
    }
}

/// Whether the effective user is root (only then does `user` apply, as in
/// nginx).
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail and has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Switches the whole process to `user`/`ids`: group first, then the
/// supplementary groups of `user` (`initgroups`, as nginx), then the user, so
/// that root is given up last.
///
/// Linux applies `setuid` to the calling thread only at the system-call
/// level; glibc broadcasts it to every thread of the process, which is what
/// this relies on. Call it before starting workers anyway.
pub fn drop_privileges(user: &str, ids: Ids) -> io::Result<()> {
    let cname = c_name(user)?;
    // SAFETY: setgid has no memory-safety preconditions.
    if unsafe { libc::setgid(ids.gid) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let name: &CStr = &cname;
    // SAFETY: `name` is a valid NUL-terminated string for the call.
    if unsafe { libc::initgroups(name.as_ptr(), ids.gid) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: setuid has no memory-safety preconditions.
    if unsafe { libc::setuid(ids.uid) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_exists_with_id_zero() {
        assert_eq!(lookup_user("root").unwrap(), Some(Ids { uid: 0, gid: 0 }));
        assert_eq!(lookup_group("root").unwrap(), Some(0));
    }

    #[test]
    fn unknown_names_are_none() {
        assert_eq!(lookup_user("no-such-user-peregrine").unwrap(), None);
        assert_eq!(lookup_group("no-such-group-peregrine").unwrap(), None);
    }

    #[test]
    fn nul_in_name_is_invalid() {
        assert_eq!(
            lookup_user("a\0b").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }

    #[test]
    fn drop_privileges_in_a_child() {
        // Dropping is irreversible and process-wide: do it in a forked child
        // (a fresh single-threaded process) and report through the exit code.
        if !is_root() {
            return;
        }
        let Some(nobody) = lookup_user("nobody").unwrap() else {
            return;
        };
        let child = crate::process::fork_for_test(|| {
            drop_privileges("nobody", nobody).is_ok()
                // SAFETY: getuid/getgid have no preconditions.
                && unsafe { libc::getuid() == nobody.uid && libc::getgid() == nobody.gid }
        });
        assert!(child, "child could not become nobody");
    }
}
