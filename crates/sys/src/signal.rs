//! Signals for the master: blocked in every thread and read synchronously
//! from a `signalfd(2)` registered in the master's event loop.
//!
//! Why not handlers: a handler may only set a flag or write to a pipe, and
//! workers would have to tolerate EINTR; with the signals blocked in all
//! threads (workers inherit the mask of the thread that spawns them) no
//! system call is interrupted and the master reads each signal as data.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

fn sigset(signals: &[i32]) -> io::Result<libc::sigset_t> {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it below.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a live sigset_t.
    unsafe { libc::sigemptyset(&mut set) };
    for &sig in signals {
        // SAFETY: `set` is a live, initialised sigset_t.
        if unsafe { libc::sigaddset(&mut set, sig) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(set)
}

/// Blocks `signals` in the calling thread (and so in the threads it spawns
/// afterwards). Process-directed signals then stay pending for a signalfd.
pub fn block_signals(signals: &[i32]) -> io::Result<()> {
    let set = sigset(signals)?;
    // SAFETY: `set` is initialised; the old mask is not requested (null).
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        Err(io::Error::from_raw_os_error(rc))
    } else {
        Ok(())
    }
}

/// A non-blocking signalfd for a set of (blocked) signals.
#[derive(Debug)]
pub struct SignalFd {
    fd: OwnedFd,
}

impl SignalFd {
    /// Creates the descriptor. The signals must also be blocked (see
    /// [`block_signals`]) or their default action happens first.
    pub fn new(signals: &[i32]) -> io::Result<SignalFd> {
        let set = sigset(signals)?;
        // SAFETY: -1 asks for a new descriptor; `set` is initialised.
        let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by signalfd and is owned by no one else.
        Ok(SignalFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The next pending signal number, or `None` when none is pending.
    pub fn read(&self) -> io::Result<Option<i32>> {
        // SAFETY: signalfd_siginfo is plain data; all-zero is valid.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: `info` is a live buffer of exactly `size` bytes.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&raw mut info).cast::<libc::c_void>(),
                size,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            return if err.kind() == io::ErrorKind::WouldBlock {
                Ok(None)
            } else {
                Err(err)
            };
        }
        if n.unsigned_abs() != size {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "short signalfd read",
            ));
        }
        Ok(i32::try_from(info.ssi_signo).ok())
    }
}

impl AsRawFd for SignalFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl AsFd for SignalFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_thread_directed_signal() {
        // SIGUSR2 sent to this very thread with tgkill: process-directed
        // signals could land on another test thread that does not block it.
        std::thread::spawn(|| {
            block_signals(&[libc::SIGUSR2]).unwrap();
            let sfd = SignalFd::new(&[libc::SIGUSR2]).unwrap();
            assert_eq!(sfd.read().unwrap(), None);
            crate::signal_thread(crate::gettid(), libc::SIGUSR2).unwrap();
            assert_eq!(sfd.read().unwrap(), Some(libc::SIGUSR2));
            assert_eq!(sfd.read().unwrap(), None);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn bad_signal_number_fails() {
        assert!(block_signals(&[10_000]).is_err());
        assert!(SignalFd::new(&[-1]).is_err());
    }
}
