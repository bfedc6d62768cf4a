//! The hot path's socket reads and writes, as the system calls themselves.
//!
//! Why not `std` (or `libc`): glibc's `recv`, `send`, `writev` and
//! `sendmsg` are pthread cancellation points, and each call turns
//! asynchronous cancellation on and off around the system call
//! (nptl/cancellation.c, `__pthread_enable_asynccancel` and
//! `__pthread_disable_asynccancel`), for a feature Peregrine never uses (no
//! thread is ever cancelled): going around them took a keep-alive request
//! from 2,340 to 2,247 instructions (`bench/instructions.sh`). rustix's Linux backend issues the system
//! call directly. The calls and their flags are otherwise what `std` makes:
//! `MSG_NOSIGNAL` on sends, so a peer that has gone away is `EPIPE`, never a
//! `SIGPIPE`.

use rustix::net::{RecvFlags, SendAncillaryBuffer, SendFlags};
use std::io::{self, IoSlice};
use std::os::fd::AsFd;

/// `recv(2)` without flags: the bytes read, 0 at the end of the stream; a
/// non-blocking socket with nothing to read gives `WouldBlock`.
#[inline]
pub fn recv(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    match rustix::net::recv(fd, buf, RecvFlags::empty()) {
        Ok((n, _)) => Ok(n),
        Err(e) => Err(e.into()),
    }
}

/// `recv(2)` of one byte with `MSG_PEEK`: whether the peer has closed its
/// side (`Ok(0)`), has bytes waiting (`Ok(1)`), or nothing yet
/// (`WouldBlock`); the byte stays in the socket. nginx's
/// `ngx_http_test_reading` asks the same while a response is being sent.
pub fn peek(fd: impl AsFd) -> io::Result<usize> {
    let mut b = [0u8; 1];
    match rustix::net::recv(fd, &mut b, RecvFlags::PEEK) {
        Ok((n, _)) => Ok(n),
        Err(e) => Err(e.into()),
    }
}

fn flags(more: bool) -> SendFlags {
    if more {
        SendFlags::NOSIGNAL | SendFlags::MORE
    } else {
        SendFlags::NOSIGNAL
    }
}

/// `send(2)`: the bytes the kernel took. `more` sets `MSG_MORE` (the caller
/// holds a partial segment back for what follows: see the engine's writer).
#[inline]
pub fn send(fd: impl AsFd, buf: &[u8], more: bool) -> io::Result<usize> {
    rustix::net::send(fd, buf, flags(more)).map_err(Into::into)
}

/// `sendmsg(2)` of several buffers (a gathered write), with `MSG_MORE` when
/// `more`: the bytes the kernel took, which may end inside any buffer.
#[inline]
pub fn send_vectored(fd: impl AsFd, bufs: &[IoSlice<'_>], more: bool) -> io::Result<usize> {
    let mut control = SendAncillaryBuffer::default();
    rustix::net::sendmsg(fd, bufs, &mut control, flags(more)).map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tests::pair;
    use std::io::{ErrorKind, Read, Write};

    #[test]
    fn recv_reads_what_was_sent_and_zero_at_the_end() {
        let (mut a, b) = pair();
        a.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        a.shutdown(std::net::Shutdown::Write).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 7];
        loop {
            let n = recv(&b, &mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, b"GET / HTTP/1.1\r\n\r\n");
    }

    #[test]
    fn peek_leaves_the_byte_and_sees_the_end() {
        let (mut a, b) = pair();
        b.set_nonblocking(true).unwrap();
        assert_eq!(peek(&b).unwrap_err().kind(), ErrorKind::WouldBlock);
        a.write_all(b"x").unwrap();
        assert_eq!(peek(&b).unwrap(), 1);
        assert_eq!(peek(&b).unwrap(), 1);
        let mut buf = [0u8; 4];
        assert_eq!(recv(&b, &mut buf).unwrap(), 1);
        a.shutdown(std::net::Shutdown::Write).unwrap();
        assert_eq!(peek(&b).unwrap(), 0);
    }

    #[test]
    fn recv_on_an_empty_nonblocking_socket_would_block() {
        let (_a, b) = pair();
        b.set_nonblocking(true).unwrap();
        let e = recv(&b, &mut [0u8; 16]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WouldBlock);
    }

    #[test]
    fn sends_arrive_in_order_with_and_without_more() {
        let (a, mut b) = pair();
        assert_eq!(send(&a, b"head ", true).unwrap(), 5);
        let bufs = [
            IoSlice::new(b"body "),
            IoSlice::new(b""),
            IoSlice::new(b"tail"),
        ];
        assert_eq!(send_vectored(&a, &bufs, false).unwrap(), 9);
        assert_eq!(send_vectored(&a, &[IoSlice::new(b"!")], true).unwrap(), 1);
        drop(a);
        let mut got = String::new();
        b.read_to_string(&mut got).unwrap();
        assert_eq!(got, "head body tail!");
    }

    #[test]
    fn a_send_to_a_closed_peer_is_an_error() {
        let (a, b) = pair();
        drop(b);
        // The first send may be taken before the peer's RST arrives; the
        // ones after it fail with EPIPE or ECONNRESET. (Whether a signal
        // would have come is not visible here: Rust's runtime ignores
        // SIGPIPE in every binary, this test's too. MSG_NOSIGNAL keeps it
        // so for a host program that does not.)
        let mut failed = None;
        for _ in 0..100 {
            if let Err(e) = send(&a, b"x", false) {
                failed = Some(e.kind());
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let kind = failed.expect("sends to a closed peer kept succeeding");
        assert!(
            matches!(kind, ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
            "{kind:?}"
        );
    }
}
