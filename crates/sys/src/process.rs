//! Process identity, signals to processes, and `daemon on`.

use std::io;

/// This process's id (nginx's `PID` in log lines and the pid file).
pub fn getpid() -> u32 {
    std::process::id()
}

/// The calling thread's kernel id (nginx's `TID` in `PID#TID` log prefixes;
/// with worker threads this tells workers apart).
pub fn gettid() -> u32 {
    // SAFETY: gettid cannot fail and has no preconditions.
    let tid = unsafe { libc::gettid() };
    tid.unsigned_abs()
}

/// Sends `sig` to process `pid` (`peregrine -s stop|quit|reload|reopen`).
pub fn kill(pid: u32, sig: i32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "pid out of range"))?;
    // SAFETY: kill has no memory-safety preconditions; pid is a positive id.
    if unsafe { libc::kill(pid, sig) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Sends `sig` to one thread `tid` of this process (`tgkill(2)`): a signal
/// only that thread receives, e.g. the master thread reading its signalfd
/// (tests, and waking a thread blocked in a system call).
pub fn signal_thread(tid: u32, sig: i32) -> io::Result<()> {
    let tid = libc::pid_t::try_from(tid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "tid out of range"))?;
    // SAFETY: tgkill has no memory-safety preconditions; the ids are plain
    // integers and an unknown tid is reported as ESRCH.
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Detaches from the terminal as nginx's `daemon on`: fork (the parent exits
/// 0 at once), `setsid`, and standard input/output to `/dev/null`.
///
/// Must be called before any thread is started: after `fork` only the
/// calling thread exists in the child.
pub fn daemonize() -> io::Result<()> {
    // SAFETY: called while the process is single-threaded (documented
    // precondition), so the child inherits no lock held by another thread.
    match unsafe { libc::fork() } {
        -1 => return Err(io::Error::last_os_error()),
        0 => {}
        // SAFETY: _exit ends the parent without running atexit handlers or
        // flushing buffers the child also holds.
        _ => unsafe { libc::_exit(0) },
    }
    // SAFETY: setsid has no memory-safety preconditions.
    if unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    use std::os::fd::AsRawFd;
    for target in [libc::STDIN_FILENO, libc::STDOUT_FILENO] {
        // SAFETY: both descriptors are valid; dup2 atomically replaces target.
        if unsafe { libc::dup2(null.as_raw_fd(), target) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Runs `f` in a forked child and returns its verdict (tests of
/// process-wide, irreversible calls).
#[cfg(test)]
pub(crate) fn fork_for_test(f: impl FnOnce() -> bool) -> bool {
    // SAFETY: the child only runs `f` and then _exit; the tests using this
    // call nothing in the child that takes locks held by other test threads
    // except libc's NSS calls, acceptable in a test.
    match unsafe { libc::fork() } {
        -1 => panic!("fork: {}", io::Error::last_os_error()),
        0 => {
            let ok = f();
            // SAFETY: ends the child without unwinding into the test harness.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        pid => {
            let mut status = 0;
            // SAFETY: `status` is a live c_int; pid is our child.
            let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
            rc == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(getpid() > 0);
        let main_tid = gettid();
        let other = std::thread::spawn(gettid).join().unwrap();
        assert_ne!(main_tid, other);
    }

    #[test]
    fn kill_signal_zero_probes_existence() {
        kill(getpid(), 0).unwrap();
        // Pid 0x3fff_fff0 is above pid_max on every Linux (max 2^22).
        assert_eq!(
            kill(0x3fff_fff0, 0).unwrap_err().raw_os_error(),
            Some(libc::ESRCH)
        );
        assert!(kill(u32::MAX, 0).is_err());
    }

    #[test]
    fn signal_thread_reaches_only_that_thread() {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            crate::block_signals(&[libc::SIGUSR2]).unwrap();
            let sfd = crate::SignalFd::new(&[libc::SIGUSR2]).unwrap();
            tx.send(gettid()).unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            loop {
                if let Some(sig) = sfd.read().unwrap() {
                    return sig;
                }
                assert!(std::time::Instant::now() < deadline, "no signal");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        let tid = rx.recv().unwrap();
        signal_thread(tid, libc::SIGUSR2).unwrap();
        assert_eq!(t.join().unwrap(), libc::SIGUSR2);
        assert!(signal_thread(0x3fff_fff0, 0).is_err());
    }

    #[test]
    fn daemonize_detaches() {
        use std::io::{Read, Write};
        // The intermediate child daemonizes (its parent half exits 0); the
        // daemon reports through a pipe whether it leads a new session.
        let (mut rx, mut tx) = std::io::pipe().unwrap();
        assert!(fork_for_test(|| match daemonize() {
            Ok(()) => {
                // SAFETY: getsid(0)/getpid have no preconditions.
                let leader = unsafe { libc::getsid(0) == libc::getpid() };
                let _ = tx.write_all(if leader { b"L" } else { b"N" });
                // SAFETY: ends the daemon without running the test harness.
                unsafe { libc::_exit(0) }
            }
            Err(_) => false,
        }));
        drop(tx);
        let mut got = Vec::new();
        rx.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"L");
    }
}
