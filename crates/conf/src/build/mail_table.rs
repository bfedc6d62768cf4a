//! nginx's mail directives (`src/mail/*.c`, their `ngx_command_t` arrays:
//! name, contexts, arity, module) and whether Peregrine implements each;
//! the `mail { }` reader (`build/mail.rs`) checks every directive of the
//! block against it in nginx's order (context, block, arity) and refuses
//! by name the ones Peregrine lacks. Transcribed from nginx 1.29's source;
//! keep in step with it.

use super::stream_table::{Entry, Imp};
use crate::known::arg::*;

/// `NGX_MAIL_MAIN_CONF`: directly in `mail { }`.
pub const MAIN: u16 = 1;
/// `NGX_MAIL_SRV_CONF`: in a mail `server { }`.
pub const SRV: u16 = 2;

const fn e(name: &'static str, contexts: u16, args: u16, module: &'static str, imp: Imp) -> Entry {
    Entry {
        name,
        contexts,
        args,
        module,
        imp,
    }
}

use Imp::{No, Yes};

/// The entry of `name`.
pub fn find(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Both levels.
const MS: u16 = MAIN | SRV;

#[rustfmt::skip]
pub static ENTRIES: &[Entry] = &[
    e("server", MAIN, BLOCK | NOARGS, "mail_core", Yes),
    e("listen", SRV, MORE1, "mail_core", Yes),
    e("protocol", SRV, TAKE1, "mail_core", Yes),
    e("timeout", MS, TAKE1, "mail_core", Yes),
    e("server_name", MS, TAKE1, "mail_core", Yes),
    e("error_log", MS, MORE1, "mail_core", No),
    e("resolver", MS, MORE1, "mail_core", No),
    e("resolver_timeout", MS, TAKE1, "mail_core", No),
    e("max_errors", MS, TAKE1, "mail_core", Yes),
    e("auth_http", MS, TAKE1, "mail_auth_http", Yes),
    e("auth_http_timeout", MS, TAKE1, "mail_auth_http", Yes),
    e("auth_http_header", MS, TAKE2, "mail_auth_http", Yes),
    e("auth_http_pass_client_cert", MS, FLAG, "mail_auth_http", No),
    e("proxy", MS, FLAG, "mail_proxy", Yes),
    e("proxy_buffer", MS, TAKE1, "mail_proxy", Yes),
    e("proxy_timeout", MS, TAKE1, "mail_proxy", Yes),
    e("proxy_pass_error_message", MS, FLAG, "mail_proxy", Yes),
    e("xclient", MS, FLAG, "mail_proxy", Yes),
    e("smtp_auth", MS, MORE1, "mail_smtp", Yes),
    e("proxy_smtp_auth", MS, FLAG, "mail_proxy", No),
    e("proxy_protocol", MS, FLAG, "mail_proxy", No),
    e("set_real_ip_from", MS, TAKE1, "mail_realip", No),
    e("imap_client_buffer", MS, TAKE1, "mail_imap", Yes),
    e("imap_capabilities", MS, MORE1, "mail_imap", Yes),
    e("imap_auth", MS, MORE1, "mail_imap", Yes),
    e("pop3_capabilities", MS, MORE1, "mail_pop3", Yes),
    e("pop3_auth", MS, MORE1, "mail_pop3", Yes),
    e("smtp_client_buffer", MS, TAKE1, "mail_smtp", Yes),
    e("smtp_greeting_delay", MS, TAKE1, "mail_smtp", Yes),
    e("smtp_capabilities", MS, MORE1, "mail_smtp", Yes),
    e("ssl", MS, FLAG, "mail_ssl", No),
    e("starttls", MS, TAKE1, "mail_ssl", Yes),
    e("ssl_certificate", MS, TAKE1, "mail_ssl", Yes),
    e("ssl_certificate_key", MS, TAKE1, "mail_ssl", Yes),
    e("ssl_password_file", MS, TAKE1, "mail_ssl", No),
    e("ssl_dhparam", MS, TAKE1, "mail_ssl", No),
    e("ssl_ecdh_curve", MS, TAKE1, "mail_ssl", No),
    e("ssl_protocols", MS, MORE1, "mail_ssl", Yes),
    e("ssl_ciphers", MS, TAKE1, "mail_ssl", Yes),
    e("ssl_prefer_server_ciphers", MS, FLAG, "mail_ssl", Yes),
    e("ssl_session_cache", MS, TAKE1 | TAKE2, "mail_ssl", No),
    e("ssl_session_tickets", MS, FLAG, "mail_ssl", Yes),
    e("ssl_session_ticket_key", MS, TAKE1, "mail_ssl", No),
    e("ssl_session_timeout", MS, TAKE1, "mail_ssl", Yes),
    e("ssl_verify_client", MS, TAKE1, "mail_ssl", No),
    e("ssl_verify_depth", MS, TAKE1, "mail_ssl", No),
    e("ssl_client_certificate", MS, TAKE1, "mail_ssl", No),
    e("ssl_trusted_certificate", MS, TAKE1, "mail_ssl", No),
    e("ssl_crl", MS, TAKE1, "mail_ssl", No),
    e("ssl_conf_command", MS, TAKE2, "mail_ssl", No),
];
