//! Listening sockets: which addresses to bind, one `SO_REUSEPORT` socket per
//! worker per address, kept by the master across reloads.
//!
//! nginx without `reuseport` shares one socket among workers; with threads
//! that would mean every worker polls the same socket (thundering herd or
//! `EPOLLEXCLUSIVE` imbalance). One socket per worker lets the kernel
//! spread connections by hash and keeps accept queues per worker, which is
//! what nginx's `listen ... reuseport` does; Peregrine always does it.
//!
//! The master owns the sockets; each worker gets `dup`s of its share. A
//! reload keeps every socket whose address stays configured, so no
//! connection is refused: the accept queue lives in the socket, not in the
//! worker, and the new workers accept from the same queues.

use std::net::{SocketAddr, TcpListener};

use peregrine_conf::model::{Config, ListenConf};
use socket2::{Domain, Protocol, Socket, Type};

use crate::EngineError;

/// nginx's `listen ... deferred` timeout (`ngx_configure_listening_sockets`
/// uses 1 s: there is no way to know how long a connection already waited,
/// and with SYN cookies it may bypass the deferred queue).
const DEFERRED_ACCEPT_SECS: u32 = 1;

/// Whether a `listen` that says neither `deferred` nor `deferred=off` gets
/// `TCP_DEFER_ACCEPT`: no, as in nginx. `listen ... deferred` turns it on
/// (then `accept` hands over a socket with the request already in it: no
/// `recv` that finds nothing, no `epoll_ctl` to wait for it; a connection
/// that sends nothing is accepted only after [`DEFERRED_ACCEPT_SECS`], the
/// kernel's first SYN-ACK retransmission, so `client_header_timeout`
/// starts that much later for it). `deferred=off` (Peregrine's) says the
/// default explicitly.
pub const DEFER_ACCEPT_BY_DEFAULT: bool = false;

/// One address to listen on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// As configured (port may be 0).
    pub addr: SocketAddr,
    pub backlog: i32,
    /// `TCP_DEFER_ACCEPT`: what the `listen` of the address that says
    /// `deferred` or `deferred=off` says, else [`DEFER_ACCEPT_BY_DEFAULT`].
    pub deferred: bool,
    /// `listen unix:PATH`: the socket's path (`addr` is its key).
    pub unix: Option<std::sync::Arc<str>>,
    // stream
    /// A stream `listen ... udp`: a datagram socket (held as a
    /// `TcpListener` too: see [`bind_udp`]); an address and port may have
    /// both a TCP and a UDP socket.
    pub udp: bool,
    /// `ipv6only=off` on an IPv6 address: the socket takes IPv4 too.
    pub ipv6only: bool,
}

/// The distinct addresses of every `listen`, dropping a specific address
/// whose port a wildcard of the same family already covers (nginx binds
/// only the wildcard then, and finds the server by `getsockname`).
pub fn wanted(conf: &Config) -> Vec<Spec> {
    let mut out = http_wanted(conf);
    out.extend(crate::stream::wanted(conf));
    out.extend(crate::mail::wanted(conf));
    out
}

fn http_wanted(conf: &Config) -> Vec<Spec> {
    let Some(http) = &conf.http else {
        return Vec::new();
    };
    let all: Vec<&ListenConf> = http.servers.iter().flat_map(|s| s.listen.iter()).collect();
    let mut out: Vec<Spec> = Vec::new();
    for l in &all {
        let covered = !l.addr.ip().is_unspecified()
            && all.iter().any(|w| {
                w.addr.ip().is_unspecified()
                    && w.addr.port() == l.addr.port()
                    && w.addr.is_ipv4() == l.addr.is_ipv4()
            });
        if covered {
            continue;
        }
        // nginx allows socket options on one `listen` of an address only;
        // that one decides.
        if let Some(s) = out.iter_mut().find(|s| s.addr == l.addr) {
            if let Some(d) = l.deferred {
                s.deferred = d;
            }
            if l.backlog != peregrine_conf::build::DEFAULT_BACKLOG {
                s.backlog = l.backlog;
            }
            s.ipv6only &= l.ipv6only;
            continue;
        }
        out.push(Spec {
            addr: l.addr,
            backlog: l.backlog,
            deferred: l.deferred.unwrap_or(DEFER_ACCEPT_BY_DEFAULT),
            unix: l.unix.clone(),
            udp: false,
            ipv6only: l.ipv6only,
        });
    }
    out
}

fn bind_one(spec: &Spec, addr: SocketAddr) -> std::io::Result<TcpListener> {
    if let Some(path) = &spec.unix {
        return bind_unix(path, spec.backlog);
    }
    if spec.udp {
        return bind_udp(addr);
    }
    let backlog = spec.backlog;
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        // nginx's default `ipv6only=on`: [::]:80 does not take IPv4;
        // `ipv6only=off` makes it one socket for both families.
        sock.set_only_v6(spec.ipv6only)?;
    }
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    sock.set_nonblocking(true)?;
    sock.bind(&addr.into())?;
    sock.listen(backlog)?;
    Ok(sock.into())
}

/// A UNIX-domain listening socket at `path`, held as a `TcpListener`:
/// that type is only an owned socket descriptor to the code that uses it
/// (`accept4`, `dup`, `listen`), and every call made on it and on the
/// connections it accepts (recv, send, sendmsg, sendfile, shutdown) is the
/// same system call on an `AF_UNIX` stream socket. The TCP-only ones
/// (`TCP_NODELAY`, `TCP_DEFER_ACCEPT`) fail and are ignored, as they are
/// for nginx; addresses come from the spec, never from `getsockname`.
///
/// A file left at `path` is not removed first: nginx fails with `bind()
/// ... (98: Address already in use)` then, and so does this. The socket is
/// made writable by all (nginx's `ngx_open_listening_sockets` chmods it
/// 0666), so that clients of any user can connect.
fn bind_unix(path: &str, backlog: i32) -> std::io::Result<TcpListener> {
    use std::os::unix::fs::PermissionsExt;
    let sock = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    sock.set_nonblocking(true)?;
    sock.bind(&socket2::SockAddr::unix(path)?)?;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666));
    sock.listen(backlog)?;
    Ok(TcpListener::from(std::os::fd::OwnedFd::from(sock)))
}

/// A stream `listen ... udp` socket, held as a `TcpListener` as a UNIX
/// one is (see [`bind_unix`]): to the master and `for_worker` it is an
/// owned descriptor; the worker takes the UDP ones out by their spec
/// before accepting (`stream::Streams::new`) and reads them as
/// `UdpSocket`s. One per worker with `SO_REUSEPORT`, as TCP's: the
/// kernel keeps a client's datagrams on one socket by its hash.
fn bind_udp(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    sock.set_reuse_address(true)?;
    sock.set_reuse_port(true)?;
    sock.set_nonblocking(true)?;
    sock.bind(&addr.into())?;
    Ok(TcpListener::from(std::os::fd::OwnedFd::from(sock)))
}

/// The key of the address a listening socket is bound to: its local
/// address, or for a UNIX-domain socket the key of its path
/// (`peregrine_conf::model::unix_key`). None when unbound or unnamed.
fn bound_key(s: &TcpListener) -> Option<SocketAddr> {
    let a = socket2::SockRef::from(s).local_addr().ok()?;
    match a.as_socket() {
        Some(a) => Some(a),
        None => {
            let p = a.as_pathname()?.to_str()?;
            Some(peregrine_conf::model::unix_key(p))
        }
    }
}

/// The sockets of one address.
#[derive(Debug)]
pub struct Bound {
    pub spec: Spec,
    /// The address actually bound (port resolved).
    pub local: SocketAddr,
    pub sockets: Vec<TcpListener>,
}

/// Every address's sockets, owned by the master.
#[derive(Debug, Default)]
pub struct Listeners {
    pub bound: Vec<Bound>,
    /// Sockets inherited from the process that started this one (a binary
    /// upgrade's `NGINX`, systemd's `LISTEN_FDS`: see `inherit`), taken by
    /// the first [`Listeners::reconcile`] for the addresses they are bound
    /// to instead of binding anew; the ones no address wants are closed.
    pub inherited: Vec<TcpListener>,
}

impl Listeners {
    /// Makes the set match `specs` with at least `per_addr` sockets each:
    /// keeps existing sockets of unchanged addresses, binds new ones, drops
    /// removed ones. On error nothing already serving is closed.
    pub fn reconcile(&mut self, specs: &[Spec], per_addr: usize) -> Result<(), EngineError> {
        let mut next: Vec<(Bound, bool)> = Vec::with_capacity(specs.len());
        let mut old = std::mem::take(&mut self.bound);
        let mut failure = None;
        for spec in specs {
            let same = |b: &Bound| b.spec.addr == spec.addr && b.spec.udp == spec.udp;
            let (mut b, existed) = match old.iter().position(same) {
                Some(i) => (old.swap_remove(i), true),
                None => (
                    Bound {
                        spec: spec.clone(),
                        local: spec.addr,
                        sockets: if spec.udp {
                            Vec::new()
                        } else {
                            self.take_inherited(spec.addr)
                        },
                    },
                    false,
                ),
            };
            // A socket systemd made has no SO_REUSEPORT: no other can bind
            // beside it, so its workers share it (see `for_worker`).
            // A socket path takes one socket (a second bind of the path
            // fails): its workers share it too.
            let shared = spec.unix.is_some()
                || b.sockets
                    .first()
                    .is_some_and(|s| !socket2::SockRef::from(s).reuse_port().unwrap_or(false));
            let want = if shared { 1 } else { per_addr.max(1) };
            while failure.is_none() && b.sockets.len() < want {
                let addr = b.local;
                match bind_one(spec, addr) {
                    Ok(s) => {
                        if b.sockets.is_empty() && spec.unix.is_none() {
                            b.local = s.local_addr().unwrap_or(addr);
                        }
                        b.sockets.push(s);
                    }
                    Err(source) => {
                        let name = match &spec.unix {
                            Some(p) => format!("unix:{p}"),
                            None => addr.to_string(),
                        };
                        failure = Some(EngineError::Bind { addr, name, source });
                    }
                }
            }
            next.push((b, existed));
        }
        // Inherited sockets no `listen` asks for close (nginx closes them too).
        self.inherited.clear();
        match failure {
            None => {
                // Addresses a reload dropped close; a socket path's file
                // goes with it (nginx's `ngx_init_cycle` deletes it).
                for b in &old {
                    if let Some(p) = &b.spec.unix {
                        let _ = std::fs::remove_file(&**p);
                    }
                }
                // One entry per spec, in order: the new settings apply only
                // once the whole reload has bound.
                self.bound = next
                    .into_iter()
                    .zip(specs)
                    .map(|((mut b, _), spec)| {
                        if b.spec.backlog != spec.backlog && !spec.udp {
                            // nginx calls listen() again on kept sockets
                            // (`ngx_configure_listening_sockets`): Linux
                            // applies a new backlog to a listening socket.
                            // A failure leaves the old one, as nginx logs
                            // and goes on.
                            for s in &b.sockets {
                                let _ = socket2::SockRef::from(s).listen(spec.backlog);
                            }
                        }
                        b.spec = spec.clone();
                        b
                    })
                    .collect();
                for b in &self.bound {
                    if b.spec.udp {
                        continue;
                    }
                    let secs = if b.spec.deferred {
                        DEFERRED_ACCEPT_SECS
                    } else {
                        0
                    };
                    for s in &b.sockets {
                        // Set on kept sockets too, so that a reload adds or
                        // removes it. A failure leaves a working socket
                        // that accepts before the first data arrives, as
                        // nginx goes on after logging it.
                        let _ = peregrine_sys::set_tcp_defer_accept(s, secs);
                    }
                }
                Ok(())
            }
            Some(e) => {
                // Keep what was serving; sockets bound for new addresses drop.
                old.extend(
                    next.into_iter()
                        .filter(|(_, existed)| *existed)
                        .map(|(b, _)| b),
                );
                self.bound = old;
                Err(e)
            }
        }
    }

    /// `dup`s of worker `w`'s share: socket `i` of each address goes to
    /// worker `i % workers` (more sockets than workers after a reload that
    /// lowered `worker_processes`: none is closed, so none drops its queue).
    pub fn for_worker(
        &self,
        w: usize,
        workers: usize,
    ) -> std::io::Result<Vec<(usize, SocketAddr, TcpListener)>> {
        let mut out = Vec::new();
        for (ai, b) in self.bound.iter().enumerate() {
            for (i, s) in b.sockets.iter().enumerate() {
                // Fewer sockets than workers (an inherited one without
                // SO_REUSEPORT): workers share them round the list.
                let mine = if b.sockets.len() < workers {
                    i == w % b.sockets.len()
                } else {
                    i % workers.max(1) == w
                };
                if mine {
                    out.push((ai, b.local, s.try_clone()?));
                }
            }
        }
        Ok(out)
    }

    /// The inherited sockets bound to `addr`.
    fn take_inherited(&mut self, addr: SocketAddr) -> Vec<TcpListener> {
        let (mine, rest) = std::mem::take(&mut self.inherited)
            .into_iter()
            .partition(|s| bound_key(s) == Some(addr));
        self.inherited = rest;
        mine
    }

    /// Every socket, for a new binary to inherit.
    pub fn all(&self) -> impl Iterator<Item = &TcpListener> {
        self.bound.iter().flat_map(|b| b.sockets.iter())
    }

    /// Removes the files of the UNIX-domain sockets (nginx's
    /// `ngx_close_listening_sockets` deletes them when the master exits,
    /// unless a new binary took them over).
    pub fn remove_unix_files(&self) {
        for b in &self.bound {
            if let Some(p) = &b.spec.unix {
                let _ = std::fs::remove_file(&**p);
            }
        }
    }

    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.bound.iter().map(|b| b.local).collect()
    }
}

#[cfg(test)]
mod tests;
