//! An upstream connection's socket: TCP or a UNIX-domain stream, both
//! non-blocking mio sockets registered in the worker's own poll, or TLS
//! over one of them (`proxy_pass https://`, [`super::tls_client`]).

use std::io::{self, Read, Write};

use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};

use peregrine_conf::model::PeerAddr;

pub enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<super::tls_client::TlsSock>),
}

impl Sock {
    /// Starts a non-blocking connect (`ngx_event_connect_peer`).
    pub fn connect(addr: &PeerAddr) -> io::Result<Sock> {
        match addr {
            PeerAddr::Inet(a) => {
                let s = TcpStream::connect(*a)?;
                let _ = s.set_nodelay(true);
                Ok(Sock::Tcp(s))
            }
            PeerAddr::Unix(p) => UnixStream::connect(p).map(Sock::Unix),
        }
    }

    pub fn register(&mut self, r: &Registry, t: Token) -> io::Result<()> {
        let i = Interest::READABLE | Interest::WRITABLE;
        match self {
            Sock::Tcp(s) => r.register(s, t, i),
            Sock::Unix(s) => r.register(s, t, i),
            Sock::Tls(s) => s.tcp.register(r, t),
        }
    }

    pub fn deregister(&mut self, r: &Registry) {
        let _ = match self {
            Sock::Tcp(s) => r.deregister(s),
            Sock::Unix(s) => r.deregister(s),
            Sock::Tls(s) => {
                s.tcp.deregister(r);
                Ok(())
            }
        };
    }

    /// The connect's outcome once the socket is writable: `Ok(true)`
    /// connected, `Ok(false)` still in progress, `Err` refused and the like.
    pub fn connected(&mut self) -> io::Result<bool> {
        if let Sock::Tls(s) = self {
            return s.connected();
        }
        if let Some(e) = self.take_error()? {
            return Err(e);
        }
        let r = match self {
            Sock::Tcp(s) => s.peer_addr().map(|_| ()),
            Sock::Unix(s) => s.peer_addr().map(|_| ()),
            Sock::Tls(s) => return s.connected(),
        };
        match r {
            Ok(()) => Ok(true),
            Err(e)
                if e.kind() == io::ErrorKind::NotConnected
                    || e.raw_os_error() == Some(libc::EINPROGRESS) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            Sock::Tcp(s) => s.take_error(),
            Sock::Unix(s) => s.take_error(),
            Sock::Tls(s) => s.tcp.take_error(),
        }
    }

    /// The descriptor, which names the socket's token
    /// ([`super::token_of`]): it is unique while the socket is open.
    pub fn fd(&self) -> usize {
        use std::os::fd::AsRawFd;
        let fd = match self {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Unix(s) => s.as_raw_fd(),
            Sock::Tls(s) => return s.tcp.fd(),
        };
        usize::try_from(fd).unwrap_or(0)
    }

    /// A pooled connection is taken without a look at it: plain TCP, whose
    /// close or bytes while idle come as an event that drops it
    /// ([`super::Upstreams::idle_event`]). TLS may hold records already
    /// read, and a UNIX stream is not reused (see `idle_clean`).
    pub fn watched_idle(&self) -> bool {
        matches!(self, Sock::Tcp(_))
    }

    /// Under TLS, connected and still handshaking.
    pub fn handshaking(&self) -> bool {
        matches!(self, Sock::Tls(s) if s.handshaking())
    }

    pub fn is_tls(&self) -> bool {
        matches!(self, Sock::Tls(_))
    }

    /// An idle pooled connection may be used again: nothing to read, not
    /// closed (a byte or an EOF while idle makes it unusable).
    pub fn idle_clean(&self) -> bool {
        let mut b = [0u8; 1];
        let r = match self {
            Sock::Tcp(s) => s.peek(&mut b),
            // mio's UNIX stream has no peek: such connections are not
            // reused (nginx's pool takes them; rare behind a proxy).
            Sock::Unix(_) => return false,
            Sock::Tls(s) => return s.idle_clean(),
        };
        matches!(r, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(buf),
            Sock::Unix(s) => s.read(buf),
            Sock::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(buf),
            Sock::Unix(s) => s.write(buf),
            Sock::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
