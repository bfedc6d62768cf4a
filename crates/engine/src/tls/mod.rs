//! The TLS configurations of a configuration's server blocks, and the
//! choice of one by SNI: one rustls `ServerConfig` per server block that
//! has `ssl_certificate` (built by peregrine-tls from its `ssl_*`
//! settings), one table per configuration, shared by every worker (the
//! session caches and ticket keys with it, so a session resumes on any
//! worker).
//!
//! Built when the configuration loads (`-t` too: a certificate that cannot
//! be read fails the test, the start and a reload, which then keeps the
//! old workers serving).

pub mod dynamic;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use peregrine_conf::model::{Config, ServerConf, SslConf, SslSessionCache, SslVerifyClient};
use peregrine_core::ServerNames;
use peregrine_tls::certs::CertPair;
use peregrine_tls::client::{ClientAuth, ClientAuthConf};
use peregrine_tls::config::{ServerTls, session_cache};
use peregrine_tls::ocsp::Stapler;
use peregrine_tls::tickets::SessionContext;
use rustls::ServerConfig;
use rustls::server::{ProducesTickets, StoresServerSessions};

/// Sessions a `builtin` cache holds when no size is given (OpenSSL's
/// `SSL_SESSION_CACHE_MAX_SIZE_DEFAULT` is 20480).
pub const BUILTIN_CACHE_SESSIONS: usize = 20480;

/// How often the stapling thread looks for a response due (and for its
/// server blocks gone).
pub const STAPLING_TICK: std::time::Duration = std::time::Duration::from_secs(1);

/// Why the table could not be built: a server block's settings, with
/// where the block is (nginx names the directive's place; the block's is
/// what is kept here).
#[derive(Debug, thiserror::Error)]
#[error("{source} in {at}")]
pub struct TlsConfError {
    pub at: String,
    #[source]
    pub source: peregrine_tls::error::TlsError,
}

/// Every TLS server block of a configuration.
pub struct TlsTable {
    index: ServerNames,
    /// By server index (`None`: the block has no TLS settings of its own).
    configs: Vec<Option<Arc<ServerEntry>>>,
    /// What was dropped on the way (old protocols, unknown curves).
    pub warnings: Vec<String>,
    /// The certificates named by variables loaded so far.
    pub(crate) loaded: crate::tls::dynamic::CertCache,
    /// The variables of a TLS connection before its first request (one
    /// shared value: an accept costs a reference count, no allocation).
    unset: Arc<peregrine_core::ssl_vars::SslVars>,
    /// `ssl_stapling on` without a file: what [`TlsTable::spawn_stapling`]
    /// keeps fresh (taken by it).
    staplers: std::sync::Mutex<Vec<Stapler>>,
}

impl std::fmt::Debug for TlsTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TlsTable({} servers)", self.configs.len())
    }
}

/// nginx's settings of one block, in peregrine-tls's terms.
fn server_tls(s: &SslConf) -> ServerTls {
    ServerTls {
        certificates: s
            .certificates
            .iter()
            .map(|(cert, key)| CertPair {
                cert: cert.clone(),
                key: key.clone(),
            })
            .collect(),
        protocols: s.protocols.clone(),
        ciphers: s.ciphers.clone(),
        prefer_server_ciphers: s.prefer_server_ciphers,
        session_tickets: s.session_tickets,
        session_timeout: s.session_timeout,
        ticket_keys: s.ticket_keys.clone(),
        ecdh_curve: s.ecdh_curve.clone(),
        buffer_size: s.buffer_size,
        stapling_file: s.stapling_file.clone().filter(|_| s.stapling),
        // nginx staples no certificate named by variables.
        stapling_fetch: s.stapling && s.stapling_file.is_none() && !s.dynamic_certificates,
        stapling_responder: s.stapling_responder.clone(),
        stapling_verify: s.stapling_verify,
        trusted_certificate: s.trusted_certificate.clone(),
        dynamic: s.dynamic_certificates,
        client_auth: s.verify_client.asks().then(|| ClientAuthConf {
            verify: s.verify_client.verifies(),
            client_certificate: s.client_certificate.clone(),
            trusted_certificate: s.trusted_certificate.clone(),
            crl: s.crl.clone(),
            depth: s.verify_depth,
        }),
        ..ServerTls::default()
    }
}

/// What a block's sessions resume in (nginx's `ngx_ssl_session_id_context`
/// over `"HTTP"`, the certificates and the client CAs): here the
/// certificates' names as written (nginx digests the certificates
/// themselves, or their names when variables name them) and the
/// `ssl_client_certificate` file's.
fn session_context(s: &SslConf) -> SessionContext {
    let mut parts: Vec<&[u8]> = vec![b"HTTP"];
    for (cert, _) in &s.certificates {
        parts.push(cert.as_os_str().as_encoded_bytes());
    }
    if s.verify_client.asks()
        && let Some(ca) = &s.client_certificate
    {
        parts.push(ca.as_os_str().as_encoded_bytes());
    }
    SessionContext::of(parts)
}

/// One TLS server block's loaded settings.
pub struct ServerEntry {
    pub config: Option<Arc<ServerConfig>>,
    /// `ssl_reject_handshake on`: handshakes choosing this block fail.
    pub reject: bool,
    /// The chain check of client certificates, and what the block does
    /// with its outcome.
    pub client_auth: Option<Arc<ClientAuth>>,
    pub verify_client: SslVerifyClient,
    /// Certificates named by variables: `config` has none, each
    /// handshake's are loaded ([`TlsTable::certificates_for`]).
    pub dynamic: Option<Box<crate::tls::dynamic::Dynamic>>,
}

/// What a ClientHello's SNI chose.
pub enum Choice {
    Serve(Arc<ServerConfig>, Arc<ServerEntry>),
    /// nginx's `ssl_reject_handshake`: an `unrecognized_name` alert.
    Reject,
    /// No block with a certificate for it.
    None,
}

impl TlsTable {
    /// The table of `conf`, or `None` when no `listen` has `ssl` (nothing
    /// is loaded then, as nothing would use it).
    pub fn build(conf: &Config) -> Result<Option<Arc<TlsTable>>, TlsConfError> {
        let Some(http) = conf.http.as_ref() else {
            return Ok(None);
        };
        let servers = &http.servers;
        if !servers.iter().any(|s| s.listen.iter().any(|l| l.ssl)) {
            return Ok(None);
        }
        let mut shared: HashMap<String, Arc<dyn StoresServerSessions>> = HashMap::new();
        let mut tickets: HashMap<String, Arc<dyn ProducesTickets>> = HashMap::new();
        let mut warnings = Vec::new();
        let mut passwords: HashMap<std::path::PathBuf, Vec<String>> = HashMap::new();
        let mut staplers = Vec::new();
        let mut configs = Vec::with_capacity(servers.len());
        let conf_dir = conf
            .conf_file
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        for (index, s) in servers.iter().enumerate() {
            if s.ssl.certificates.is_empty() {
                configs.push(s.ssl.reject_handshake.then(|| {
                    Arc::new(ServerEntry {
                        config: None,
                        reject: true,
                        client_auth: None,
                        verify_client: SslVerifyClient::Off,
                        dynamic: None,
                    })
                }));
                continue;
            }
            let cache = match &s.ssl.session_cache {
                SslSessionCache::Off | SslSessionCache::None => None,
                SslSessionCache::Builtin(n) => Some(session_cache(
                    n.unwrap_or(BUILTIN_CACHE_SESSIONS)
                        .div_ceil(peregrine_tls::config::SESSIONS_PER_MEGABYTE),
                )),
                SslSessionCache::Shared { name, size } => Some(
                    shared
                        .entry(name.clone())
                        .or_insert_with(|| session_cache(size.div_ceil(1 << 20)))
                        .clone(),
                ),
            };
            let mut settings = server_tls(&s.ssl);
            settings.session_context = session_context(&s.ssl);
            if let SslSessionCache::Shared { name, .. } = &s.ssl.session_cache
                && s.ssl.session_tickets
                && s.ssl.ticket_keys.is_empty()
            {
                let lifetime = u32::try_from(s.ssl.session_timeout.as_secs()).unwrap_or(u32::MAX);
                let keys = match tickets.get(name) {
                    Some(k) => Arc::clone(k),
                    None => {
                        let k: Arc<dyn ProducesTickets> =
                            Arc::new(peregrine_tls::tickets::rotating(lifetime).map_err(
                                |source| TlsConfError {
                                    at: s.span.to_string(),
                                    source,
                                },
                            )?);
                        tickets.insert(name.clone(), k.clone());
                        k
                    }
                };
                settings.shared_tickets = Some(keys);
            }
            // Each passwords file is read once (it may be a FIFO, as
            // nginx's tests make it).
            if let Some(p) = &s.ssl.password_file {
                if !passwords.contains_key(p) {
                    let read =
                        peregrine_tls::keys::read_passwords(p).map_err(|source| TlsConfError {
                            at: s.span.to_string(),
                            source,
                        })?;
                    passwords.insert(p.clone(), read);
                }
                settings.passwords = passwords[p].clone();
            }
            // http2: ALPN `h2` first for a server with HTTP/2 (nginx's
            // ngx_http_ssl_alpn_select: h2 when the server SNI chose, else
            // the default one, says `http2 on`, or its address `listen ...
            // http2`; another server's `http2 on` on the address does not).
            if s.http2.on
                || s.listen
                    .iter()
                    .any(|l| crate::ctx::http2_listen(conf, l.addr))
            {
                settings.alpn = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            }
            let built = settings.build(cache).map_err(|source| TlsConfError {
                at: s.span.to_string(),
                source,
            })?;
            warnings.extend(built.warnings);
            staplers.extend(built.staplers);
            configs.push(Some(Arc::new(ServerEntry {
                config: Some(built.config),
                reject: s.ssl.reject_handshake,
                client_auth: built.client_auth,
                verify_client: s.ssl.verify_client,
                dynamic: s.ssl.dynamic_certificates.then(|| {
                    Box::new(crate::tls::dynamic::Dynamic {
                        server: index,
                        pairs: s.ssl.certificates.clone(),
                        passwords: settings.passwords.clone(),
                        conf_dir: conf_dir.clone(),
                    })
                }),
            })));
        }
        Ok(Some(Arc::new(TlsTable {
            index: ServerNames::new(servers),
            configs,
            warnings,
            loaded: crate::tls::dynamic::CertCache::default(),
            unset: Arc::default(),
            staplers: std::sync::Mutex::new(staplers),
        })))
    }

    /// Whether the server block `host` chooses on `local` (the default
    /// one when none matches) asks for client certificates.
    pub fn asks_client_cert(&self, local: SocketAddr, host: &str) -> bool {
        let i = self
            .index
            .find(local, Some(host))
            .or_else(|| self.index.find(local, None));
        i.and_then(|i| self.configs.get(i)?.as_ref())
            .is_some_and(|e| e.verify_client.asks())
    }

    /// Starts the thread that asks the OCSP responders and staples their
    /// answers (nginx asks from its workers' event loops; a fetch here
    /// blocks, so it has a thread of its own, never a worker's). It ends
    /// when the table's server blocks are gone (a reload or the stop).
    pub fn spawn_stapling(&self, errlog: crate::ErrorLog) {
        let mut staplers =
            std::mem::take(&mut *self.staplers.lock().unwrap_or_else(|e| e.into_inner()));
        if staplers.is_empty() {
            return;
        }
        let log = errlog.clone();
        let run = move || {
            loop {
                let now = peregrine_tls::ocsp::unix_now();
                let mut alive = false;
                for s in staplers.iter_mut() {
                    if s.resolver.strong_count() == 0 {
                        continue;
                    }
                    alive = true;
                    if s.due > now {
                        continue;
                    }
                    if let Some(Err(e)) = s.refresh() {
                        let q = &s.query;
                        log(
                            peregrine_conf::model::LogLevel::Error,
                            &format!(
                                "{e} while requesting certificate status, responder: {}, certificate: \"{}\"",
                                q.responder.host, q.cert_name
                            ),
                        );
                    }
                }
                if !alive {
                    return;
                }
                std::thread::sleep(STAPLING_TICK);
            }
        };
        if let Err(e) = std::thread::Builder::new().name("ocsp".into()).spawn(run) {
            errlog(
                peregrine_conf::model::LogLevel::Alert,
                &format!("OCSP stapling not started: thread: {e}"),
            );
        }
    }

    /// A new TLS connection's variables (see [`TlsTable::unset`]).
    pub fn unset_vars(&self) -> Arc<peregrine_core::ssl_vars::SslVars> {
        self.unset.clone()
    }

    /// Whether connections to `addr` (a listening address) speak TLS.
    pub fn listens_on(conf: &Config, addr: SocketAddr) -> bool {
        conf.http.as_ref().is_some_and(|h| {
            h.servers
                .iter()
                .flat_map(|s: &Arc<ServerConf>| &s.listen)
                .any(|l| l.ssl && l.addr == addr)
        })
    }

    /// The configuration for a handshake on `local` naming `sni` (nginx's
    /// `ngx_http_ssl_servername`: the server block chosen as for a Host,
    /// the address's default server without SNI or without a match). A
    /// block without a certificate hands over to the default server's.
    pub fn config_for(&self, local: SocketAddr, sni: Option<&str>) -> Choice {
        let by_name = sni.and_then(|n| self.index.find(local, Some(&n.to_ascii_lowercase())));
        let entry = by_name
            .and_then(|i| self.configs.get(i)?.clone())
            .or_else(|| {
                let d = self.index.find(local, None)?;
                self.configs.get(d)?.clone()
            });
        match entry {
            Some(e) if e.reject => Choice::Reject,
            Some(e) => match e.config.clone() {
                Some(c) => Choice::Serve(c, e),
                None => Choice::None,
            },
            None => Choice::None,
        }
    }
}
