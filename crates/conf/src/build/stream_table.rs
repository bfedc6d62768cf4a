//! nginx's stream directives (`src/stream/*.c`, their `ngx_command_t`
//! arrays: name, contexts, arity, module) and whether Peregrine implements
//! each; the `stream { }` reader (`build/stream.rs`) checks every directive
//! of the block against it, in nginx's order (context, block, arity), and
//! refuses by name the ones Peregrine lacks. Directives only inside a
//! stream `upstream { }` are read by the upstream reader. Transcribed from
//! nginx 1.29's source; keep in step with it.

use crate::known::arg::*;

/// `NGX_STREAM_MAIN_CONF`: directly in `stream { }`.
pub const MAIN: u16 = 1;
/// `NGX_STREAM_SRV_CONF`: in a stream `server { }`.
pub const SRV: u16 = 2;

/// Whether Peregrine does what the directive does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imp {
    Yes,
    No,
}

/// One stream directive.
#[derive(Debug)]
pub struct Entry {
    pub name: &'static str,
    pub contexts: u16,
    /// `crate::known::arg` bits.
    pub args: u16,
    pub module: &'static str,
    pub imp: Imp,
}

impl Entry {
    /// nginx's argument check (`ngx_conf_handler`).
    pub fn accepts(&self, n: usize) -> bool {
        let t = self.args;
        if t & ANY_ARGS != 0 {
            true
        } else if t & FLAG != 0 {
            n == 1
        } else if t & MORE1 != 0 {
            n >= 1
        } else if t & MORE2 != 0 {
            n >= 2
        } else {
            n < MAX_ARGS && t & (1 << n) != 0
        }
    }
}

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

/// The entry of `name` whose contexts include `here`, else its first.
pub fn find(name: &str, here: u16) -> Option<&'static Entry> {
    let mut all = ENTRIES.iter().filter(|e| e.name == name);
    let first = all.next()?;
    if first.contexts & here != 0 {
        return Some(first);
    }
    Some(all.find(|e| e.contexts & here != 0).unwrap_or(first))
}

/// Whether every directive of nginx's stream module `module` is implemented.
pub fn module_complete(module: &str) -> bool {
    ENTRIES
        .iter()
        .filter(|e| e.module == module)
        .all(|e| e.imp == Imp::Yes)
}

/// nginx's stream modules `./configure` builds by default (`auto/options`:
/// each has a `--without-X_module` switch), and whether Peregrine has
/// each: the ones it lacks are named in `-V` so that tools (nginx's test
/// suite) skip what needs them.
pub static DEFAULT_MODULES: &[(&str, bool)] = &[
    ("stream_access", true),
    ("stream_geo", false),
    ("stream_limit_conn", false),
    ("stream_map", false),
    ("stream_pass", false),
    ("stream_return", true),
    ("stream_set", false),
    ("stream_split_clients", false),
    // The balancers' directives are read by the upstream block's reader
    // (`build/upstream.rs`), shared with http.
    ("stream_upstream_hash", true),
    ("stream_upstream_least_conn", true),
    ("stream_upstream_least_time", false),
    ("stream_upstream_random", true),
    ("stream_upstream_zone", true),
];

#[rustfmt::skip]
pub static ENTRIES: &[Entry] = &[
    e("allow", MAIN | SRV, TAKE1, "stream_access", Yes),
    e("deny", MAIN | SRV, TAKE1, "stream_access", Yes),
    e("variables_hash_max_size", MAIN, TAKE1, "stream_core", Yes),
    e("variables_hash_bucket_size", MAIN, TAKE1, "stream_core", Yes),
    e("server_names_hash_max_size", MAIN, TAKE1, "stream_core", No),
    e("server_names_hash_bucket_size", MAIN, TAKE1, "stream_core", No),
    e("server", MAIN, BLOCK | NOARGS, "stream_core", Yes),
    e("listen", SRV, MORE1, "stream_core", Yes),
    e("server_name", SRV, MORE1, "stream_core", No),
    e("error_log", MAIN | SRV, MORE1, "stream_core", No),
    e("resolver", MAIN | SRV, MORE1, "stream_core", No),
    e("resolver_timeout", MAIN | SRV, TAKE1, "stream_core", No),
    e("proxy_protocol_timeout", MAIN | SRV, TAKE1, "stream_core", Yes),
    e("tcp_nodelay", MAIN | SRV, FLAG, "stream_core", Yes),
    e("preread_buffer_size", MAIN | SRV, TAKE1, "stream_core", No),
    e("preread_timeout", MAIN | SRV, TAKE1, "stream_core", No),
    e("geo", MAIN, BLOCK | TAKE1 | TAKE2, "stream_geo", No),
    e("geoip_country", MAIN, TAKE1 | TAKE2, "stream_geoip", No),
    e("geoip_org", MAIN, TAKE1 | TAKE2, "stream_geoip", No),
    e("geoip_city", MAIN, TAKE1 | TAKE2, "stream_geoip", No),
    e("limit_conn_zone", MAIN, TAKE2, "stream_limit_conn", No),
    e("limit_conn", MAIN | SRV, TAKE2, "stream_limit_conn", No),
    e("limit_conn_log_level", MAIN | SRV, TAKE1, "stream_limit_conn", No),
    e("limit_conn_dry_run", MAIN | SRV, FLAG, "stream_limit_conn", No),
    e("log_format", MAIN, MORE2, "stream_log", Yes),
    e("access_log", MAIN | SRV, MORE1, "stream_log", Yes),
    e("open_log_file_cache", MAIN | SRV, TAKE1 | TAKE2 | TAKE3 | TAKE4, "stream_log", No),
    e("map", MAIN, BLOCK | TAKE2, "stream_map", No),
    e("map_hash_max_size", MAIN, TAKE1, "stream_map", No),
    e("map_hash_bucket_size", MAIN, TAKE1, "stream_map", No),
    e("pass", SRV, TAKE1, "stream_pass", No),
    e("proxy_pass", SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_bind", MAIN | SRV, TAKE1 | TAKE2, "stream_proxy", No),
    e("proxy_socket_keepalive", MAIN | SRV, FLAG, "stream_proxy", No),
    e("proxy_socket_rcvbuf", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_socket_sndbuf", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_connect_timeout", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_timeout", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_buffer_size", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_downstream_buffer", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_upstream_buffer", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_upload_rate", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_download_rate", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_requests", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_responses", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_next_upstream", MAIN | SRV, FLAG, "stream_proxy", Yes),
    e("proxy_next_upstream_tries", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_next_upstream_timeout", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_protocol", MAIN | SRV, TAKE1, "stream_proxy", Yes),
    e("proxy_half_close", MAIN | SRV, FLAG, "stream_proxy", Yes),
    e("proxy_ssl", MAIN | SRV, FLAG, "stream_proxy", No),
    e("proxy_ssl_session_reuse", MAIN | SRV, FLAG, "stream_proxy", No),
    e("proxy_ssl_protocols", MAIN | SRV, MORE1, "stream_proxy", No),
    e("proxy_ssl_ciphers", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_name", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_server_name", MAIN | SRV, FLAG, "stream_proxy", No),
    e("proxy_ssl_alpn", MAIN | SRV, MORE1, "stream_proxy", No),
    e("proxy_ssl_verify", MAIN | SRV, FLAG, "stream_proxy", No),
    e("proxy_ssl_verify_depth", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_trusted_certificate", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_crl", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_certificate", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_certificate_key", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_certificate_cache", MAIN | SRV, TAKE1 | TAKE2 | TAKE3, "stream_proxy", No),
    e("proxy_ssl_password_file", MAIN | SRV, TAKE1, "stream_proxy", No),
    e("proxy_ssl_conf_command", MAIN | SRV, TAKE2, "stream_proxy", No),
    e("set_real_ip_from", MAIN | SRV, TAKE1, "stream_realip", No),
    e("return", SRV, TAKE1, "stream_return", Yes),
    e("set", SRV, TAKE2, "stream_set", No),
    e("split_clients", MAIN, BLOCK | TAKE2, "stream_split_clients", No),
    e("ssl_handshake_timeout", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_certificate", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_certificate_key", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_certificate_cache", MAIN | SRV, TAKE1 | TAKE2 | TAKE3, "stream_ssl", No),
    e("ssl_ech_file", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_password_file", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_certificate_compression", MAIN | SRV, FLAG, "stream_ssl", No),
    e("ssl_dhparam", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_ecdh_curve", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_protocols", MAIN | SRV, MORE1, "stream_ssl", No),
    e("ssl_ciphers", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_verify_client", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_verify_depth", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_client_certificate", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_trusted_certificate", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_prefer_server_ciphers", MAIN | SRV, FLAG, "stream_ssl", No),
    e("ssl_session_cache", MAIN | SRV, TAKE1 | TAKE2, "stream_ssl", No),
    e("ssl_session_tickets", MAIN | SRV, FLAG, "stream_ssl", No),
    e("ssl_session_ticket_key", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_session_timeout", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_crl", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_ocsp", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_ocsp_responder", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_ocsp_cache", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_stapling", MAIN | SRV, FLAG, "stream_ssl", No),
    e("ssl_stapling_file", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_stapling_responder", MAIN | SRV, TAKE1, "stream_ssl", No),
    e("ssl_stapling_verify", MAIN | SRV, FLAG, "stream_ssl", No),
    e("ssl_conf_command", MAIN | SRV, TAKE2, "stream_ssl", No),
    e("ssl_reject_handshake", MAIN | SRV, FLAG, "stream_ssl", No),
    e("ssl_alpn", MAIN | SRV, MORE1, "stream_ssl", No),
    e("ssl_preread", MAIN | SRV, FLAG, "stream_ssl_preread", No),
    e("upstream", MAIN, BLOCK | TAKE1, "stream_upstream", Yes),
];
