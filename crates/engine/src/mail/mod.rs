//! nginx's mail proxy at run time (`ngx_mail_*_module`): IMAP, POP3 and
//! SMTP clients are greeted, authenticated through the `auth_http` server
//! and, once it names a backend, logged in there and spliced to it.
//!
//! A worker accepts a mail address's connections as any other and hands
//! them here ([`Mail::accept`]); each session then runs on a thread of its
//! own (see `session.rs` for why). The client's protocol is read by the
//! sans-I/O parsers of `parse.rs` and state machines of `imap.rs`,
//! `pop3.rs` and `smtp.rs`; `auth_http.rs` is the auth exchange,
//! `backend.rs` the backend's login, `splice.rs` the proxying after it.

mod auth_http;
mod backend;
mod imap;
mod parse;
mod pop3;
mod sasl;
mod session;
mod smtp;
mod splice;

use std::net::SocketAddr;
use std::sync::Arc;

use peregrine_conf::mail::{MailServer, MailSsl};
use peregrine_conf::model::Config;
use peregrine_tls::certs::CertPair;
use peregrine_tls::config::ServerTls;
use rustls::ServerConfig;

use crate::ErrorLog;
use crate::listen::Spec;

/// The addresses of the mail servers' `listen`s, after http's and stream's.
pub fn wanted(conf: &Config) -> Vec<Spec> {
    let Some(mail) = &conf.mail else {
        return Vec::new();
    };
    let mut out: Vec<Spec> = Vec::new();
    for s in &mail.servers {
        for l in &s.listen {
            if out.iter().any(|o| o.addr == l.addr) {
                continue;
            }
            out.push(Spec {
                addr: l.addr,
                backlog: l.backlog,
                deferred: false,
                unix: None,
                udp: false,
                ipv6only: true,
            });
        }
    }
    out
}

/// The rustls configuration of a server's `ssl_*` settings.
fn server_config(ssl: &MailSsl) -> Result<Arc<ServerConfig>, String> {
    let tls = ServerTls {
        certificates: ssl
            .certificates
            .iter()
            .map(|(cert, key)| CertPair {
                cert: cert.clone(),
                key: key.clone(),
            })
            .collect(),
        protocols: ssl.protocols.clone(),
        ciphers: ssl.ciphers.clone(),
        prefer_server_ciphers: ssl.prefer_server_ciphers,
        session_tickets: ssl.session_tickets,
        session_timeout: ssl.session_timeout,
        alpn: Vec::new(),
        ..ServerTls::default()
    };
    let built = tls.build(None).map_err(|e| format!("{e} in {}", "mail"))?;
    Ok(built.config)
}

/// Loads every mail server's certificates (the start, a reload and `-t`
/// fail on one that cannot be read, as nginx's do).
pub fn check_tls(conf: &Config) -> Result<(), String> {
    tls_configs(conf).map(|_| ())
}

fn tls_configs(conf: &Config) -> Result<Vec<Option<Arc<ServerConfig>>>, String> {
    let Some(mail) = &conf.mail else {
        return Ok(Vec::new());
    };
    mail.servers
        .iter()
        .map(|s| s.ssl.as_ref().map(server_config).transpose())
        .collect()
}

/// A worker's mail side.
pub struct Mail {
    /// For each listening address (the worker's address index): its
    /// server, its TLS configuration, and whether it is `listen ... ssl`.
    by_addr: Vec<Option<Route>>,
    errlog: ErrorLog,
}

#[derive(Clone)]
struct Route {
    server: Arc<MailServer>,
    tls: Option<Arc<ServerConfig>>,
    ssl: bool,
}

impl Mail {
    /// `specs` are the worker's addresses in order.
    pub fn new(conf: &Config, specs: &[Spec], errlog: ErrorLog) -> Mail {
        let configs = tls_configs(conf).unwrap_or_default();
        let by_addr = specs
            .iter()
            .map(|sp| {
                let mail = conf.mail.as_ref()?;
                if sp.udp || sp.unix.is_some() {
                    return None;
                }
                mail.servers.iter().enumerate().find_map(|(i, s)| {
                    let l = s.listen.iter().find(|l| l.addr == sp.addr)?;
                    Some(Route {
                        server: s.clone(),
                        tls: configs.get(i).cloned().flatten(),
                        ssl: l.ssl,
                    })
                })
            })
            .collect();
        Mail { by_addr, errlog }
    }

    /// Whether address `lst` is a mail server's.
    pub fn serves(&self, lst: usize) -> bool {
        self.by_addr.get(lst).is_some_and(Option::is_some)
    }

    /// Starts the session of a connection accepted on address `lst`.
    pub fn accept(&self, lst: usize, stream: mio::net::TcpStream, peer: SocketAddr, id: u64) {
        let Some(Some(route)) = self.by_addr.get(lst) else {
            return;
        };
        let stream = std::net::TcpStream::from(stream);
        if stream.set_nonblocking(false).is_err() {
            return;
        }
        let session = session::Session {
            conf: route.server.clone(),
            tls: route.tls.clone(),
            peer,
            id,
            errlog: self.errlog.clone(),
            salt: salt(&route.server.server_name),
        };
        let ssl = route.ssl;
        let spawned = std::thread::Builder::new()
            .name("mail".into())
            .spawn(move || session.run(stream, ssl));
        if let Err(e) = spawned {
            (self.errlog)(
                peregrine_conf::model::LogLevel::Alert,
                &crate::errlog::with_os_error("mail session thread failed", &e),
            );
        }
    }
}

/// nginx's `ngx_mail_salt`: `<PID.TIME@SERVER_NAME>`, unique per session
/// (the time in microseconds here, as sessions start in parallel).
fn salt(server_name: &str) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "<{}.{}{:06}@{server_name}>",
        std::process::id(),
        t.as_secs(),
        t.subsec_micros()
    )
}
