//! TLS to an upstream (`proxy_pass https://`): a rustls `ClientConnection`
//! (buffered: records are read into and written from rustls's buffers)
//! over the upstream's socket, driven by the worker's loop as the plain
//! socket is (`Sock::Tls`).
//!
//! The handshake is part of connecting (nginx's
//! `ngx_http_upstream_ssl_init_connection`): `Sock::connected` is true
//! once the TCP connect is done and the handshake with it, under
//! `proxy_connect_timeout`; a failure is the attempt's error (502, or the
//! next upstream) with nginx's line, `... while SSL handshaking to
//! upstream`. Kept-alive connections keep their session.
//!
//! The rustls configurations are built per worker (one session store per
//! location's settings, nginx's `proxy_ssl_session_reuse`) and kept in a
//! bounded per-thread table: workers are threads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::Arc;

use rustls::ClientConnection;
use rustls::pki_types::ServerName;

use peregrine_core::proxy::ProxyJob;
use peregrine_tls::certs::CertPair;
use peregrine_tls::upstream::{UpstreamTls, failure_line};

use super::sock::Sock;

/// The rustls configurations a worker keeps (one per distinct
/// `proxy_ssl_*` settings and client certificate); past it the table is
/// emptied (client certificates named with variables could otherwise grow
/// it without end).
pub const MAX_CONFIGS: usize = 64;

thread_local! {
    static CONFIGS: RefCell<HashMap<UpstreamTls, Arc<rustls::ClientConfig>>> =
        RefCell::new(HashMap::new());
}

/// A TLS failure with its error-log line (nginx's words).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsFailed(pub String);

fn failed(line: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, TlsFailed(line))
}

/// The error-log line of a failed connect when TLS failed.
pub fn failure(e: &io::Error) -> Option<String> {
    e.get_ref()
        .and_then(|r| r.downcast_ref::<TlsFailed>())
        .map(|f| f.0.clone())
}

/// The location's settings with the request's client certificate.
fn settings(job: &ProxyJob) -> UpstreamTls {
    let c = &job.conf.proxy_ssl;
    UpstreamTls {
        server_name: c.server_name,
        verify: c.verify,
        verify_depth: c.verify_depth,
        trusted_certificate: c.trusted_certificate.clone(),
        crl: c.crl.clone(),
        protocols: c.protocols.clone(),
        ciphers: c.ciphers.clone(),
        certificate: job
            .tls
            .as_ref()
            .and_then(|t| t.certificate.clone())
            .map(|(cert, key)| CertPair { cert, key }),
        session_reuse: c.session_reuse,
        password_file: c.password_file.clone(),
    }
}

fn config(job: &ProxyJob) -> io::Result<Arc<rustls::ClientConfig>> {
    let s = settings(job);
    CONFIGS.with(|t| {
        let mut t = t.borrow_mut();
        if let Some(c) = t.get(&s) {
            return Ok(c.clone());
        }
        let c = s.build().map_err(|e| failed(e.to_string()))?;
        if t.len() >= MAX_CONFIGS {
            t.clear();
        }
        t.insert(s, c.clone());
        Ok(c)
    })
}

/// A new connection's socket, under TLS when the job's URL is `https://`.
pub fn wrap(tcp: Sock, job: &ProxyJob) -> io::Result<Sock> {
    let Some(tls) = &job.tls else {
        return Ok(tcp);
    };
    let config = config(job)?;
    let name = ServerName::try_from(tls.name.clone()).map_err(|_| {
        failed(format!(
            "SSL_set_tlsext_host_name(\"{}\") failed (invalid name)",
            tls.name
        ))
    })?;
    let conn = ClientConnection::new(config, name)
        .map_err(|e| failed(format!("SSL_new() failed (SSL: {e})")))?;
    Ok(Sock::Tls(Box::new(TlsSock {
        tcp,
        conn,
        tcp_up: false,
    })))
}

/// An upstream connection under TLS.
pub struct TlsSock {
    pub(super) tcp: Sock,
    conn: ClientConnection,
    /// The TCP connect is done (the handshake may not be).
    tcp_up: bool,
}

impl TlsSock {
    /// The connect's and the handshake's outcome: `Ok(true)` both done.
    pub(super) fn connected(&mut self) -> io::Result<bool> {
        if !self.tcp_up {
            if !self.tcp.connected()? {
                return Ok(false);
            }
            self.tcp_up = true;
        }
        self.handshake().map_err(|e| match failure(&e) {
            Some(_) => e,
            None => failed(crate::errlog::with_os_error(
                "peer closed connection in SSL handshake",
                &e,
            )),
        })
    }

    fn handshake(&mut self) -> io::Result<bool> {
        loop {
            if !self.flush_tls()? {
                return Ok(false);
            }
            if !self.conn.is_handshaking() {
                return Ok(true);
            }
            match self.conn.read_tls(&mut self.tcp) {
                Ok(0) => {
                    return Err(failed(
                        "peer closed connection in SSL handshake".to_string(),
                    ));
                }
                Ok(_) => {
                    if let Err(e) = self.conn.process_new_packets() {
                        // The alert rustls queued goes as far as it can.
                        let _ = self.flush_tls();
                        return Err(failed(failure_line(&e)));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    /// The TCP connect is done and the handshake is not (nginx's "while
    /// SSL handshaking to upstream").
    pub(super) fn handshaking(&self) -> bool {
        self.tcp_up && self.conn.is_handshaking()
    }

    /// Sends the records rustls holds; true when none is left.
    fn flush_tls(&mut self) -> io::Result<bool> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// An idle kept-alive connection may be used again.
    pub(super) fn idle_clean(&self) -> bool {
        !self.conn.wants_write() && self.tcp.idle_clean()
    }
}

impl Read for TlsSock {
    /// Plaintext; records still held from a write go first (the socket
    /// may have been full), and a `WouldBlock` means the socket is drained.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.flush_tls()?;
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // Closed without close_notify: an end as for plain TCP.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            let n = self.conn.read_tls(&mut self.tcp)?;
            if let Err(e) = self.conn.process_new_packets() {
                let _ = self.flush_tls();
                return Err(failed(format!("SSL_read() failed (SSL: {e})")));
            }
            if n == 0 {
                return match self.conn.reader().read(buf) {
                    Ok(n) => Ok(n),
                    Err(_) => Ok(0),
                };
            }
        }
    }
}

impl Write for TlsSock {
    /// Plaintext into records; `WouldBlock` while earlier records wait for
    /// room, so that rustls's buffer stays bounded by one write.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.flush_tls()? {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = self.conn.writer().write(buf)?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        // What the socket does not take now goes with the next write or
        // read.
        self.flush_tls()?;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.flush_tls().map(|_| ())
    }
}
