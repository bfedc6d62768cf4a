//! The TLS transport: a rustls `ServerConnection` (buffered: records are
//! read into and written from rustls's own buffers) over the socket.
//!
//! A connection to a TLS address starts by reading: the first bytes tell a
//! TLS ClientHello (record type 22, or an SSLv2-style hello with the high
//! bit set, as nginx's `ngx_http_ssl_handshake` tells them) from plain
//! HTTP, which is then served as plain HTTP marked
//! [`super::Transport::plain_on_tls`] (nginx's 497). A hello goes to a
//! rustls `Acceptor` until it is whole; its SNI then chooses the server
//! block's configuration ([`crate::tls::TlsTable::config_for`]) before the
//! handshake goes on.

use std::io::{self, IoSlice, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::ServerConnection;
use rustls::server::Acceptor;

use peregrine_conf::model::SslVerifyClient;
use peregrine_core::ssl_vars::{ClientCert, SslVars};
use peregrine_tls::client::{CertInfo, Verified, escaped, tabbed};
use peregrine_tls::names;
use peregrine_tls::tickets::{SESSION_ID_LEN, new_session_id};

use super::Sink;
use crate::tls::{Choice, ServerEntry, TlsTable};

/// TLS record content type `handshake` (RFC 8446, 5.1).
const RECORD_HANDSHAKE: u8 = 0x16;

/// A fatal `unrecognized_name` alert record (RFC 8446, 6.2; RFC 6066, 3),
/// what nginx's `ssl_reject_handshake` sends (`SSL_AD_UNRECOGNIZED_NAME`).
const ALERT_UNRECOGNIZED_NAME: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x70];

enum State {
    /// Nothing read yet: TLS or plain HTTP?
    Detect,
    Accepting(Box<Acceptor>),
    Open(Box<ServerConnection>),
    /// The client spoke plain HTTP: bytes go as they are.
    Plain,
}

/// One TLS connection's session (the socket stays the transport's).
pub struct TlsStream {
    state: State,
    table: Arc<TlsTable>,
    local: SocketAddr,
    /// The client (variables of certificates named by them: `geo`...).
    peer: SocketAddr,
    /// The server block the handshake chose.
    entry: Option<Arc<ServerEntry>>,
    /// The hello's groups and suites (`$ssl_curves`, `$ssl_ciphers`).
    offered: Box<(String, String)>,
    /// [`TlsStream::take_vars`] was called.
    vars_taken: bool,
    /// `$ssl_session_id` (see [`peregrine_tls::tickets::new_session_id`]).
    session_id: [u8; SESSION_ID_LEN],
}

/// What [`TlsStream::recv`] found.
pub(super) enum Recv {
    /// Plaintext bytes (0: the peer closed).
    Data(usize),
    /// The first bytes were plain HTTP: they are in the buffer, `n` of them.
    Plain(usize),
}

/// Reads from the socket for rustls, which reads what one call gives.
struct SockIo<'a>(&'a TcpStream);

impl Read for SockIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        peregrine_sys::recv(self.0, buf)
    }
}

impl Write for SockIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        peregrine_sys::send(self.0, buf, false)
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        peregrine_sys::send_vectored(self.0, bufs, false)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// nginx's `ssl_reject_handshake` refused the hello.
#[derive(Debug, thiserror::Error)]
#[error("tlsv1 alert unrecognized name")]
pub struct HandshakeRejected;

/// How a TLS failure reads in the error log, and what was being done:
/// nginx's `SSL_do_handshake() failed (SSL: ...) while SSL handshaking`
/// during the handshake, `SSL_read() failed (SSL: ...)` after it (the
/// reason is rustls's).
#[cold]
pub fn tls_failure(t: &super::Transport, e: &io::Error) -> (String, &'static str) {
    let reason = e
        .get_ref()
        .map(|r| r.to_string())
        .unwrap_or_else(|| e.to_string());
    let handshaking = match t.tls.as_deref().map(|s| &s.state) {
        Some(State::Open(c)) => c.is_handshaking(),
        _ => true,
    };
    if handshaking {
        (
            format!("SSL_do_handshake() failed (SSL: {reason})"),
            "while SSL handshaking",
        )
    } else {
        (
            format!("SSL_read() failed (SSL: {reason})"),
            "while waiting for request",
        )
    }
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl TlsStream {
    #[cold]
    pub fn new(table: Arc<TlsTable>, local: SocketAddr, peer: SocketAddr) -> TlsStream {
        TlsStream {
            state: State::Detect,
            table,
            local,
            peer,
            entry: None,
            offered: Box::default(),
            vars_taken: false,
            session_id: [0; SESSION_ID_LEN],
        }
    }

    /// Reads plaintext into `buf`, running the handshake on the way
    /// (`vars` evaluates certificates named by variables; without it such
    /// a handshake fails). `readable` is cleared only when the socket
    /// itself is drained (a short read of plaintext says nothing of the
    /// socket here).
    pub(super) fn recv(
        &mut self,
        sock: &TcpStream,
        buf: &mut [u8],
        readable: &mut bool,
        vars: Option<&super::HandshakeVars<'_>>,
    ) -> io::Result<Recv> {
        loop {
            match &mut self.state {
                State::Detect => {
                    let n = peregrine_sys::recv(sock, buf)?;
                    if n == 0 {
                        return Ok(Recv::Data(0));
                    }
                    if buf[0] != RECORD_HANDSHAKE && buf[0] & 0x80 == 0 {
                        if n < buf.len() {
                            *readable = false;
                        }
                        self.state = State::Plain;
                        return Ok(Recv::Plain(n));
                    }
                    let mut a = Box::new(Acceptor::default());
                    a.read_tls(&mut &buf[..n])?;
                    self.state = State::Accepting(a);
                }
                State::Accepting(a) => match a.accept() {
                    Ok(Some(accepted)) => {
                        let hello = accepted.client_hello();
                        *self.offered = (
                            names::list(hello.named_groups().unwrap_or_default(), names::group),
                            names::list(hello.cipher_suites(), names::cipher),
                        );
                        let sni = hello.server_name().map(str::to_string);
                        let config = match self.table.config_for(self.local, sni.as_deref()) {
                            Choice::Serve(config, entry) if entry.dynamic.is_some() => {
                                let c = self.dynamic_config(&config, &entry, sni, vars)?;
                                self.entry = Some(entry);
                                c
                            }
                            Choice::Serve(config, entry) => {
                                self.entry = Some(entry);
                                config
                            }
                            Choice::Reject => {
                                let _ = SockIo(sock).write(&ALERT_UNRECOGNIZED_NAME);
                                return Err(io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    HandshakeRejected,
                                ));
                            }
                            Choice::None => {
                                return Err(io::Error::new(
                                    io::ErrorKind::InvalidData,
                                    "no \"ssl_certificate\" is defined for the server",
                                ));
                            }
                        };
                        match accepted.into_connection(config) {
                            Ok(mut c) => {
                                self.session_id = match c.received_resumption_data() {
                                    Some(id) if id.len() == SESSION_ID_LEN => {
                                        id.try_into().unwrap_or_default()
                                    }
                                    _ => new_session_id(),
                                };
                                c.set_resumption_data(&self.session_id);
                                self.state = State::Open(Box::new(c));
                            }
                            Err((e, mut alert)) => {
                                let _ = alert.write_all(&mut SockIo(sock));
                                return Err(tls_error(e));
                            }
                        }
                        self.write_pending(sock)?;
                    }
                    Ok(None) => match a.read_tls(&mut SockIo(sock)) {
                        Ok(0) => return Ok(Recv::Data(0)),
                        Ok(_) => {}
                        Err(e) => {
                            if e.kind() == io::ErrorKind::WouldBlock {
                                *readable = false;
                            }
                            return Err(e);
                        }
                    },
                    Err((e, mut alert)) => {
                        let _ = alert.write_all(&mut SockIo(sock));
                        return Err(tls_error(e));
                    }
                },
                State::Plain => {
                    let n = peregrine_sys::recv(sock, buf)?;
                    if n < buf.len() {
                        *readable = false;
                    }
                    return Ok(Recv::Data(n));
                }
                State::Open(c) => {
                    match c.reader().read(buf) {
                        Ok(n) => return Ok(Recv::Data(n)),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                        // The peer closed without close_notify.
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            return Ok(Recv::Data(0));
                        }
                        Err(e) => return Err(e),
                    }
                    match c.read_tls(&mut SockIo(sock)) {
                        Ok(0) => return Ok(Recv::Data(0)),
                        Ok(_) => {
                            let state = c.process_new_packets();
                            if let Err(e) = state {
                                let _ = c.write_tls(&mut SockIo(sock));
                                return Err(tls_error(e));
                            }
                            // Handshake messages (or a key update) to send.
                            self.write_pending(sock)?;
                        }
                        Err(e) => {
                            if e.kind() == io::ErrorKind::WouldBlock {
                                *readable = false;
                            }
                            return Err(e);
                        }
                    }
                }
            }
        }
    }

    /// The configuration serving the certificates `entry` names by
    /// variables, evaluated with the SNI as `$ssl_server_name`.
    #[cold]
    fn dynamic_config(
        &self,
        base: &Arc<rustls::ServerConfig>,
        entry: &ServerEntry,
        sni: Option<String>,
        vars: Option<&super::HandshakeVars<'_>>,
    ) -> io::Result<Arc<rustls::ServerConfig>> {
        let Some(vars) = vars else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "certificates named by variables are not loaded here",
            ));
        };
        let conn = peregrine_core::ConnInfo {
            local: self.local,
            peer: self.peer,
            id: 0,
            requests: 0,
            accepted: vars.now,
            ssl: Some(Arc::new(SslVars {
                server_name: sni,
                ..SslVars::default()
            })),
            proxy: None,
            http2: false,
        };
        let expand = |server: usize, t: &str| vars.core.handshake_value(server, &conn, vars.now, t);
        self.table
            .certificates_for(entry, base, expand)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Sends the records rustls holds; true when none is left. A full
    /// socket is not an error here (false).
    #[inline(never)]
    pub(super) fn write_pending(&mut self, sock: &TcpStream) -> io::Result<bool> {
        let State::Open(c) = &mut self.state else {
            return Ok(true);
        };
        while c.wants_write() {
            match c.write_tls(&mut SockIo(sock)) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// `close_notify`, sent as far as the socket takes it.
    #[inline(never)]
    pub(super) fn close_notify(&mut self, sock: &TcpStream) {
        if let State::Open(c) = &mut self.state {
            c.send_close_notify();
            let _ = self.write_pending(sock);
        }
    }

    /// The session's variables, and whether the block's
    /// `ssl_verify_client` refuses the request: `Some(495)` for a
    /// certificate that did not verify, `Some(496)` for none sent
    /// (nginx's `ngx_http_process_request`).
    /// The configuration's TLS server blocks.
    pub fn table(&self) -> &TlsTable {
        &self.table
    }

    /// The first time only (`None` after).
    #[cold]
    pub fn take_vars(&mut self) -> Option<(SslVars, Option<u16>)> {
        if std::mem::replace(&mut self.vars_taken, true) {
            return None;
        }
        Some(self.vars())
    }

    fn vars(&self) -> (SslVars, Option<u16>) {
        let State::Open(c) = &self.state else {
            return (SslVars::default(), None);
        };
        let mut v = SslVars {
            protocol: c
                .protocol_version()
                .map(names::protocol)
                .unwrap_or("")
                .into(),
            cipher: c
                .negotiated_cipher_suite()
                .map(|s| names::cipher(s.suite()))
                .unwrap_or("")
                .into(),
            server_name: c.server_name().map(str::to_string),
            alpn_protocol: c
                .alpn_protocol()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .unwrap_or_default(),
            session_reused: c.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            curve: c
                .negotiated_key_exchange_group()
                .map(|g| names::group(g.name()))
                .unwrap_or("")
                .into(),
            client_verify: "NONE".into(),
            session_id: self.session_id.iter().map(|b| format!("{b:02x}")).collect(),
            curves: self.offered.0.clone(),
            ciphers: self.offered.1.clone(),
            ..SslVars::default()
        };
        let mut refuse = None;
        if let Some(entry) = &self.entry
            && let Some(auth) = &entry.client_auth
        {
            let chain = c.peer_certificates().unwrap_or_default();
            let outcome = auth.verify(chain);
            refuse = match (&outcome, entry.verify_client) {
                (Verified::None, SslVerifyClient::On) => Some(496),
                (Verified::Failed(_), SslVerifyClient::On | SslVerifyClient::Optional) => Some(495),
                _ => None,
            };
            v.client_verify = outcome.as_var();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
            v.client = chain.first().and_then(CertInfo::parse).map(|i| ClientCert {
                cert: tabbed(&i.pem),
                escaped_cert: escaped(&i.pem),
                v_remain: ((i.not_after_secs - now).max(0) / 86_400).to_string(),
                s_dn_legacy: i.subject_dn_legacy,
                i_dn_legacy: i.issuer_dn_legacy,
                v_start: i.not_before,
                v_end: i.not_after,
                s_dn: i.subject_dn,
                i_dn: i.issuer_dn,
                serial: i.serial,
                fingerprint: i.fingerprint,
                raw_cert: i.pem,
            });
        }
        (v, refuse)
    }

    /// The handshake chose ALPN `h2`: the connection speaks HTTP/2 (nginx's
    /// `ngx_http_ssl_handshake_handler`); without it, the preface is a bad
    /// HTTP/1 request.
    pub fn alpn_is_h2(&self) -> bool {
        matches!(&self.state, State::Open(c) if c.alpn_protocol() == Some(b"h2"))
    }

    /// The client spoke plain HTTP (see [`super::Transport::plain_on_tls`]).
    pub fn is_plain(&self) -> bool {
        matches!(self.state, State::Plain)
    }

    /// Hands plaintext to rustls after what it holds has gone out: its
    /// buffer stays bounded by what one write gives, and a full socket is
    /// `WouldBlock`, as for a plain socket.
    fn encrypt(
        &mut self,
        sock: &TcpStream,
        write: impl FnOnce(&mut ServerConnection) -> io::Result<usize>,
    ) -> io::Result<usize> {
        if !self.write_pending(sock)? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let State::Open(c) = &mut self.state else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let n = write(c)?;
        if n == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        // What the socket does not take now goes out with the next write
        // or the transport's flush.
        self.write_pending(sock)?;
        Ok(n)
    }
}

/// What a response's output writes to under TLS: the session and its
/// socket.
pub struct TlsSink<'a> {
    pub sock: &'a TcpStream,
    pub tls: &'a mut TlsStream,
}

impl TlsSink<'_> {
    /// Sends the records rustls holds; true when none is left.
    pub fn flush(&mut self) -> io::Result<bool> {
        self.tls.write_pending(self.sock)
    }
}

impl Sink for TlsSink<'_> {
    fn send(&mut self, buf: &[u8], more: bool) -> io::Result<usize> {
        if let State::Plain = self.tls.state {
            return peregrine_sys::send(self.sock, buf, more);
        }
        self.tls.encrypt(self.sock, |c| c.writer().write(buf))
    }
    fn send_vectored(&mut self, iov: &[IoSlice<'_>], more: bool) -> io::Result<usize> {
        if let State::Plain = self.tls.state {
            return peregrine_sys::send_vectored(self.sock, iov, more);
        }
        self.tls
            .encrypt(self.sock, |c| c.writer().write_vectored(iov))
    }
    fn sendfile(&mut self, _: &std::fs::File, _: &mut u64, _: usize) -> io::Result<usize> {
        // A file body under TLS is read and encrypted (see
        // `Transport::can_sendfile`): kTLS would send it as is.
        Err(io::ErrorKind::Unsupported.into())
    }
}
