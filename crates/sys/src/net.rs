//! Socket options on existing descriptors and `sendfile(2)`.
//!
//! The engine's sockets are `mio` streams; these take any `AsFd` so they work
//! on those as on `std` streams without converting ownership.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Copies up to `count` bytes from `in_fd` at `*offset` to `out_fd` in the
/// kernel, advancing `*offset` by the bytes sent.
///
/// Returns the byte count, which is 0 when `*offset` is at or past the end of
/// the file (the file shrank: the caller must not send anything else in its
/// place). A non-blocking `out_fd` that is full yields `WouldBlock`.
pub fn sendfile(
    out_fd: impl AsFd,
    in_fd: impl AsFd,
    offset: &mut u64,
    count: usize,
) -> io::Result<usize> {
    let mut off = libc::off_t::try_from(*offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "sendfile offset too large"))?;
    // SAFETY: both descriptors are borrowed open descriptors for the whole
    // call, and `off` is a valid, exclusively borrowed off_t the kernel
    // updates in place.
    let n = unsafe {
        libc::sendfile(
            out_fd.as_fd().as_raw_fd(),
            in_fd.as_fd().as_raw_fd(),
            &mut off,
            count,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // `off` only grows from a non-negative start, so the conversion holds.
    *offset = u64::try_from(off).unwrap_or(*offset);
    Ok(n.unsigned_abs())
}

fn set_int_opt(
    fd: impl AsFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the descriptor is borrowed and open; the option value points to
    // a live c_int whose exact size is passed as the length.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&raw const value).cast::<libc::c_void>(),
            len,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn get_int_opt(fd: impl AsFd, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the descriptor is borrowed and open; `value` and `len` are live
    // locals and `len` holds the size of `value`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&raw mut value).cast::<libc::c_void>(),
            &mut len,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(value)
    }
}

/// `TCP_NODELAY`: disables Nagle's algorithm (nginx's `tcp_nodelay`, set when
/// a connection enters keep-alive).
pub fn set_tcp_nodelay(fd: impl AsFd, on: bool) -> io::Result<()> {
    set_int_opt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_NODELAY,
        libc::c_int::from(on),
    )
}

/// `TCP_DEFER_ACCEPT` on a listening socket (tcp(7)): `accept` reports a
/// connection only once its first data has arrived, or after `secs`
/// (rounded by the kernel to its SYN-ACK retransmission steps); 0 turns it
/// off. nginx's `listen ... deferred` uses 1 second.
pub fn set_tcp_defer_accept(fd: impl AsFd, secs: u32) -> io::Result<()> {
    let secs = libc::c_int::try_from(secs).unwrap_or(libc::c_int::MAX);
    set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT, secs)
}

/// The `TCP_DEFER_ACCEPT` value the kernel keeps (for tests: the kernel
/// reports its rounded value, non-zero when on).
pub fn tcp_defer_accept(fd: impl AsFd) -> io::Result<i32> {
    get_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_DEFER_ACCEPT)
}

/// Whether `TCP_NODELAY` is on.
pub fn tcp_nodelay(fd: impl AsFd) -> io::Result<bool> {
    get_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY).map(|v| v != 0)
}

/// Segments the socket has received so far, pure ACKs, SYN and FIN
/// included (`TCP_INFO`'s `tcpi_segs_in`, Linux 4.2+): how tests see how a
/// response was packed, e.g. whether its FIN rode on its last data segment.
pub fn tcp_segs_in(fd: impl AsFd) -> io::Result<u32> {
    // SAFETY: tcp_info is plain old data (integers only), so all zeroes is
    // a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the descriptor is borrowed and open; `info` and `len` are live
    // locals, `len` holds the size of `info`, and the kernel writes at most
    // `len` bytes (a shorter struct from an older kernel leaves the rest 0).
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast::<libc::c_void>(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info.tcpi_segs_in)
}

/// `SO_LINGER` with a zero timeout: the next `close` sends RST and frees the
/// socket at once instead of lingering in FIN_WAIT (nginx's
/// `reset_timedout_connection`).
pub fn set_linger_zero(fd: impl AsFd) -> io::Result<()> {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    let len = std::mem::size_of::<libc::linger>() as libc::socklen_t;
    // SAFETY: the descriptor is borrowed and open; `linger` is a live struct
    // whose exact size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast::<libc::c_void>(),
            len,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// A connected pair on loopback: (client, accepted server side).
    pub(crate) fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    fn temp_file(name: &str, data: &[u8]) -> std::fs::File {
        let path =
            std::env::temp_dir().join(format!("peregrine-sys-{}-{name}", std::process::id()));
        std::fs::write(&path, data).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }

    #[test]
    fn sendfile_to_socket_from_offset() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let file = temp_file("sf", &data);
        let (mut c, s) = pair();
        let mut off = 100;
        let mut sent = 0;
        while sent < 5000 {
            sent += sendfile(&s, &file, &mut off, 5000 - sent).unwrap();
        }
        assert_eq!(off, 5100);
        drop(s);
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got, &data[100..5100]);
    }

    #[test]
    fn segs_in_counts_what_arrived() {
        let (mut c, mut s) = pair();
        let before = tcp_segs_in(&s).unwrap();
        assert!(before >= 1, "the handshake's ACK arrived: {before}");
        c.write_all(b"one").unwrap();
        let mut buf = [0u8; 3];
        s.read_exact(&mut buf).unwrap();
        assert!(tcp_segs_in(&s).unwrap() > before);
    }

    #[test]
    fn sendfile_past_end_returns_zero() {
        let file = temp_file("eof", b"abc");
        let (_c, s) = pair();
        let mut off = 3;
        assert_eq!(sendfile(&s, &file, &mut off, 10).unwrap(), 0);
        assert_eq!(off, 3);
    }

    #[test]
    fn sendfile_file_to_file() {
        let file = temp_file("src", b"hello world");
        let path = std::env::temp_dir().join(format!("peregrine-sys-{}-dst", std::process::id()));
        let out = std::fs::File::create(&path).unwrap();
        let mut off = 6;
        assert_eq!(sendfile(&out, &file, &mut off, 100).unwrap(), 5);
        assert_eq!(std::fs::read(&path).unwrap(), b"world");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn nodelay_toggles() {
        let (mut c, s) = pair();
        set_tcp_nodelay(&s, true).unwrap();
        assert!(tcp_nodelay(&s).unwrap());
        set_tcp_nodelay(&s, false).unwrap();
        assert!(!tcp_nodelay(&s).unwrap());
        c.write_all(b"x").unwrap();
    }

    #[test]
    fn defer_accept_on_and_off() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        set_tcp_defer_accept(&l, 1).unwrap();
        assert!(tcp_defer_accept(&l).unwrap() > 0);
        set_tcp_defer_accept(&l, 0).unwrap();
        assert_eq!(tcp_defer_accept(&l).unwrap(), 0);
    }

    #[test]
    fn linger_zero_resets_peer() {
        let (mut c, s) = pair();
        set_linger_zero(&s).unwrap();
        drop(s);
        let mut buf = [0u8; 4];
        let err = c.read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn options_on_bad_fd_fail() {
        let file = temp_file("notsock", b"");
        assert!(set_tcp_nodelay(&file, true).is_err());
        assert!(set_linger_zero(&file).is_err());
    }
}
