//! The typed settings of nginx's `mail { }` block (the IMAP, POP3 and SMTP
//! proxy, `ngx_mail_*_module`): its servers, the protocol each speaks,
//! how clients authenticate (`*_auth`, `auth_http`), what is said to them
//! (`*_capabilities`, `server_name`), the backend side (`proxy_*`,
//! `xclient`) and the `ssl_*` settings of `starttls`. Read by
//! `build/mail.rs`; acted on by the engine's `mail` module.
//!
//! As in the stream block, the block's values are merged into each server
//! when the block ends (nginx's `merge_srv_conf`), so the engine reads
//! only [`MailServer`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::model::Span;

/// `mail { }`.
#[derive(Debug, Clone)]
pub struct MailConf {
    pub servers: Vec<Arc<MailServer>>,
}

/// `protocol imap | pop3 | smtp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailProtocol {
    Imap,
    Pop3,
    Smtp,
}

impl MailProtocol {
    /// The name as nginx writes it (`Auth-Protocol`, log lines).
    pub fn name(self) -> &'static str {
        match self {
            MailProtocol::Imap => "imap",
            MailProtocol::Pop3 => "pop3",
            MailProtocol::Smtp => "smtp",
        }
    }
}

/// The authentication methods of `imap_auth`, `pop3_auth` and `smtp_auth`
/// (nginx's `NGX_MAIL_AUTH_*_ENABLED` bits).
pub mod auth {
    pub const PLAIN: u8 = 1 << 0;
    pub const LOGIN: u8 = 1 << 1;
    pub const APOP: u8 = 1 << 2;
    pub const CRAM_MD5: u8 = 1 << 3;
    pub const EXTERNAL: u8 = 1 << 4;
    /// `smtp_auth none`: mail is accepted without authentication.
    pub const NONE: u8 = 1 << 5;
}

/// `starttls off | on | only` (and `ssl on`'s TLS from the first byte,
/// which is a `listen ... ssl` here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Starttls {
    Off,
    On,
    /// The client must start TLS before it authenticates.
    Only,
}

/// The `ssl_*` settings of a mail server (those the mail block has).
#[derive(Debug, Clone, PartialEq)]
pub struct MailSsl {
    /// `ssl_certificate` with the `ssl_certificate_key` of the same rank.
    pub certificates: Vec<(PathBuf, PathBuf)>,
    /// `ssl_protocols` as written (default `TLSv1.2 TLSv1.3`).
    pub protocols: Vec<String>,
    /// `ssl_ciphers` (OpenSSL's cipher-string language).
    pub ciphers: String,
    pub prefer_server_ciphers: bool,
    pub session_timeout: Duration,
    pub session_tickets: bool,
}

/// One `listen` of a mail server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailListen {
    pub addr: SocketAddr,
    /// `ssl`: TLS from the first byte (IMAPS, POP3S, SMTPS).
    pub ssl: bool,
    pub backlog: i32,
    pub span: Span,
}

/// `auth_http URL`: where credentials are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthHttp {
    /// The addresses the host resolved to at load, tried in turn.
    pub addrs: Vec<SocketAddr>,
    /// The `Host` header (the URL's host, with its port when one is given).
    pub host: String,
    /// The request target (`/` when the URL has no path).
    pub uri: String,
}

/// One `server { }` of the mail block, its settings merged.
#[derive(Debug, Clone)]
pub struct MailServer {
    pub listen: Vec<MailListen>,
    pub protocol: MailProtocol,
    /// `server_name` (default: the machine's host name), in the POP3 salt
    /// and the SMTP greeting.
    pub server_name: String,
    /// `timeout` (default 60s): the client's, before the backend is there.
    pub timeout: Duration,
    pub auth_http: AuthHttp,
    /// `auth_http_timeout` (default 60s).
    pub auth_http_timeout: Duration,
    /// `auth_http_header NAME VALUE`, sent with every request.
    pub auth_http_headers: Vec<(String, String)>,
    /// `proxy_buffer` (default 4k): the backend's reply during login.
    pub proxy_buffer: usize,
    /// `proxy_timeout` (default 24h): the idle time of a spliced session.
    pub proxy_timeout: Duration,
    /// `proxy_pass_error_message` (default off): the backend's error
    /// during login goes to the client as it was.
    pub pass_error_message: bool,
    /// `xclient` (default on): SMTP's XCLIENT command to the backend.
    pub xclient: bool,
    /// `imap_capabilities` / `pop3_capabilities` / `smtp_capabilities` of
    /// the server's protocol.
    pub capabilities: Vec<String>,
    /// `imap_auth` / `pop3_auth` / `smtp_auth` of the server's protocol,
    /// as [`auth`] bits.
    pub auth_methods: u8,
    /// `imap_client_buffer` / `smtp_client_buffer` (default 4k; POP3 has
    /// nginx's fixed 128 bytes... of arguments, here the same buffer).
    pub client_buffer: usize,
    /// `smtp_greeting_delay` (default 0).
    pub greeting_delay: Duration,
    /// `max_errors` (default 5): protocol errors before the connection is
    /// closed.
    pub max_errors: u32,
    pub starttls: Starttls,
    /// The `ssl_*` settings when the server has a certificate.
    pub ssl: Option<MailSsl>,
    pub span: Span,
}
