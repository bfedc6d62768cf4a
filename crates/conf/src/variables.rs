//! The one list of the `$variables` Peregrine knows. A configuration that
//! uses any other name is refused at load with nginx's `unknown "NAME"
//! variable` (nginx's `ngx_http_variables_init_vars`, after the whole
//! `http { }` block is read, so the message has no file and line).
//!
//! **To add a variable**: add its name (lowercase, without `$`) to
//! [`KNOWN`], or a name family (`$arg_NAME`...) to [`PREFIXES`], in one
//! line; then give it a value where values are made: `crates/core/src/vars.rs`
//! (`return`, `try_files`, `root`, `error_page`, `index`...) and
//! `crates/log/src/var.rs` (`log_format`; a known name the log cannot
//! render is logged as `-`). A name a directive defines (`set`, `map`) is
//! declared with [`crate::build::Builder::declare_variable`].

/// Variables known by name (nginx's core variables Peregrine has, and the
/// ones of the modules it has or accepts).
pub const KNOWN: &[&str] = &[
    // ngx_http_core_module
    "args",
    "binary_remote_addr",
    "body_bytes_sent",
    "bytes_sent",
    "connection",
    "connection_requests",
    "connection_time",
    "content_length",
    "content_type",
    "document_root",
    "document_uri",
    "host",
    "hostname",
    "https",
    // ngx_http_v2_module
    "http2",
    "is_args",
    "limit_rate",
    "msec",
    "pid",
    "pipe",
    "query_string",
    "realpath_root",
    "remote_addr",
    "remote_port",
    "remote_user",
    "request",
    "request_body",
    "request_body_file",
    "request_filename",
    "request_id",
    "request_length",
    "request_method",
    "request_time",
    "request_uri",
    "scheme",
    "server_addr",
    "server_name",
    "server_port",
    "server_protocol",
    "status",
    "time_iso8601",
    "time_local",
    "uri",
    // ngx_http_stub_status_module
    "connections_active",
    "connections_reading",
    "connections_waiting",
    "connections_writing",
    // ngx_http_ssi_filter_module
    "date_gmt",
    "date_local",
    // ngx_http_gzip_filter_module
    "gzip_ratio",
    // ngx_http_proxy_module
    "proxy_add_x_forwarded_for",
    "proxy_host",
    "proxy_port",
    // ngx_http_fastcgi_module (`fastcgi_split_path_info`, `fastcgi_index`)
    "fastcgi_path_info",
    "fastcgi_script_name",
    // ngx_http_core_module's version (Debian's fastcgi.conf: SERVER_SOFTWARE)
    "nginx_version",
    // ngx_http_realip_module: the address before realip replaces it; with
    // no realip yet, the connection's own (what nginx gives without a
    // trusted `set_real_ip_from`)
    "realip_remote_addr",
    "realip_remote_port",
    // ngx_http_referer_module
    "invalid_referer",
    // ngx_http_secure_link_module
    "secure_link",
    "secure_link_expires",
    // ngx_http_userid_filter_module
    "uid_got",
    "uid_reset",
    "uid_set",
    // ngx_http_upstream
    "upstream_addr",
    "upstream_bytes_received",
    "upstream_bytes_sent",
    "upstream_cache_status",
    "upstream_connect_time",
    "upstream_header_time",
    "upstream_queue_time",
    "upstream_response_length",
    "upstream_response_time",
    "upstream_status",
    // ngx_http_ssl_module (values on TLS connections only)
    "ssl_alpn_protocol",
    "ssl_cipher",
    "ssl_ciphers",
    "ssl_client_cert",
    "ssl_client_escaped_cert",
    "ssl_client_fingerprint",
    "ssl_client_i_dn",
    "ssl_client_raw_cert",
    "ssl_client_s_dn",
    "ssl_client_s_dn_legacy",
    "ssl_client_i_dn_legacy",
    "ssl_client_v_start",
    "ssl_client_v_end",
    "ssl_client_v_remain",
    "ssl_client_serial",
    "ssl_client_verify",
    "ssl_curve",
    "ssl_curves",
    // `$ssl_early_data`: "1" while 0-RTT data is accepted and the handshake
    // is not complete; Peregrine answers after the handshake: empty.
    "ssl_early_data",
    "ssl_protocol",
    "ssl_server_name",
    "ssl_session_id",
    "ssl_session_reused",
    // proxy_protocol: ngx_http_variables.c (the header of a
    // `listen ... proxy_protocol` connection; `$proxy_protocol_tlv_NAME`
    // is a family below)
    "proxy_protocol_addr",
    "proxy_protocol_port",
    "proxy_protocol_server_addr",
    "proxy_protocol_server_port",
    // limits: ngx_http_limit_req_module, ngx_http_limit_conn_module
    "limit_req_status",
    "limit_conn_status",
];

/// Name families: any name starting with one of these.
pub const PREFIXES: &[&str] = &[
    "arg_",
    "cookie_",
    "http_",
    "proxy_protocol_tlv_",
    "sent_http_",
    "sent_trailer_",
    "upstream_cookie_",
    "upstream_http_",
    "upstream_trailer_",
];

/// Whether `name` (as written after `$`, any case) is a variable Peregrine
/// knows: in [`KNOWN`], of a [`PREFIXES`] family (nginx takes the bare
/// prefix too: `$http_` is the empty header name), or a
/// regex capture `$0`..`$9`... (digits).
pub fn is_known(name: &str) -> bool {
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    KNOWN.contains(&lower.as_str()) || PREFIXES.iter().any(|p| lower.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_families_and_captures() {
        for ok in [
            "uri",
            "URI",
            "http_user_agent",
            "arg_x",
            "cookie_a",
            "1",
            "sent_http_etag",
            "http_",
        ] {
            assert!(is_known(ok), "{ok}");
        }
        for bad in ["foo", "http", "urix", "", "upstream", "1x"] {
            assert!(!is_known(bad), "{bad}");
        }
    }

    #[test]
    fn list_is_lowercase_and_without_duplicates() {
        let mut seen = std::collections::HashSet::new();
        for n in KNOWN.iter().chain(PREFIXES) {
            assert_eq!(n.to_ascii_lowercase(), *n);
            assert!(seen.insert(n), "{n}");
        }
    }
}
