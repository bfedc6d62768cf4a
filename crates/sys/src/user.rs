//! User and group look-up and dropping root privileges (`user USER [GROUP]`).
//!
//! Uses the re-entrant `getpwnam_r`/`getgrnam_r` because the engine may look
//! names up while other threads run.

use std::ffi::CString;
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

/// What a worker thread runs as: the `user`'s ids and its supplementary
/// groups (`initgroups`' list, as nginx's workers get).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

/// Most supplementary groups asked of `getgrouplist` (Linux's
/// NGROUPS_MAX is 65536).
const GROUPS_MAX: usize = 65_536;

/// The credentials of `user` with primary group `ids.gid`: its groups from
/// `getgrouplist`, the primary one included.
pub fn credentials(user: &str, ids: Ids) -> io::Result<Credentials> {
    let cname = c_name(user)?;
    let mut n: libc::c_int = 32;
    loop {
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let mut count = n;
        // SAFETY: `cname` is NUL-terminated; `groups` holds `count` entries
        // and getgrouplist writes at most that many, updating `count`.
        let rc =
            unsafe { libc::getgrouplist(cname.as_ptr(), ids.gid, groups.as_mut_ptr(), &mut count) };
        if rc >= 0 {
            groups.truncate(count.max(0) as usize);
            return Ok(Credentials {
                uid: ids.uid,
                gid: ids.gid,
                groups,
            });
        }
        if count <= n || count as usize > GROUPS_MAX {
            return Err(io::Error::other("getgrouplist failed"));
        }
        n = count;
    }
}

/// Switches the calling thread, and only it, to `cred`: the supplementary
/// groups, then the group, then the user, so that root is given up last.
///
/// Peregrine's workers are threads of the master's process; nginx's master
/// stays root while its workers run as `user`, and so does Peregrine's main
/// thread: it re-reads keys only root can read on reload, binds ports below
/// 1024 and reopens logs. Linux keeps credentials per thread; glibc's
/// `setuid`/`setgid`/`setgroups` wrappers broadcast the change to every
/// thread of the process (POSIX semantics), the raw system calls do not,
/// so the raw calls are used here. A thread started by a dropped thread
/// inherits its credentials.
pub fn drop_thread_privileges(cred: &Credentials) -> io::Result<()> {
    // SAFETY: `groups` is a live slice of `len` gid_t values, read only by
    // the kernel during the call.
    let rc = unsafe { libc::syscall(libc::SYS_setgroups, cred.groups.len(), cred.groups.as_ptr()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: setresgid takes three integers and has no memory preconditions.
    if unsafe { libc::syscall(libc::SYS_setresgid, cred.gid, cred.gid, cred.gid) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: setresuid takes three integers and has no memory preconditions.
    if unsafe { libc::syscall(libc::SYS_setresuid, cred.uid, cred.uid, cred.uid) } < 0 {
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

    /// The effective uid of the calling thread, from the kernel's view of
    /// it (`/proc/thread-self`), not glibc's.
    fn thread_uid() -> u32 {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    }

    #[test]
    fn a_thread_drops_alone() {
        if !is_root() {
            return;
        }
        let Some(nobody) = lookup_user("nobody").unwrap() else {
            return;
        };
        let cred = credentials("nobody", nobody).unwrap();
        assert!(cred.groups.contains(&nobody.gid), "{cred:?}");
        let seen = std::thread::spawn(move || {
            drop_thread_privileges(&cred).unwrap();
            // A thread it starts inherits the dropped credentials.
            let child = std::thread::spawn(thread_uid).join().unwrap();
            (
                thread_uid(),
                child,
                std::fs::read("/proc/1/environ").is_err(),
            )
        })
        .join()
        .unwrap();
        assert_eq!(seen, (nobody.uid, nobody.uid, true));
        assert_eq!(thread_uid(), 0, "the calling thread stays root");
    }
}
