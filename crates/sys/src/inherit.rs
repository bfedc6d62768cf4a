//! Listening sockets handed from one process to the next: nginx's binary
//! upgrade (the `NGINX` environment variable lists descriptors the new
//! binary inherits) and systemd's socket activation (`LISTEN_FDS`).

use std::io;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, RawFd};

/// Whether `fd` is closed on `execve` (`FD_CLOEXEC`), set or cleared: a
/// descriptor the new binary inherits is cleared around the spawn.
pub fn set_cloexec(fd: impl AsFd, on: bool) -> io::Result<()> {
    let mut flags = rustix::io::fcntl_getfd(fd.as_fd())?;
    flags.set(rustix::io::FdFlags::CLOEXEC, on);
    rustix::io::fcntl_setfd(fd.as_fd(), flags)?;
    Ok(())
}

/// Takes descriptor `fd`, inherited from the process that started this one,
/// as a listening TCP socket (close-on-exec, non-blocking). Refused unless
/// it is an open socket that listens (`SO_ACCEPTCONN`), so a stale number
/// never becomes some other file's owner.
pub fn inherited_listener(fd: RawFd) -> io::Result<TcpListener> {
    if fd < 0 {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // SAFETY: the descriptor is only borrowed for the checks below; it is
    // owned (from_raw_fd) only once it is known to be an open listening
    // socket that nothing else in this process has taken (it was inherited
    // and each number is taken once by the caller).
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    rustix::io::fcntl_getfd(borrowed)?;
    if !rustix::net::sockopt::socket_acceptconn(borrowed)? {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a listening socket",
        ));
    }
    // SAFETY: see above: an open listening socket, owned from here on.
    let l = unsafe { TcpListener::from_raw_fd(fd) };
    set_cloexec(&l, true)?;
    l.set_nonblocking(true)?;
    debug_assert_eq!(l.as_raw_fd(), fd);
    Ok(l)
}
