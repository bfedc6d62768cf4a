//! The ssl module's variables (`$ssl_protocol`, `$ssl_cipher`,
//! `$ssl_client_verify`...): what the engine learnt of a connection's TLS
//! session, computed once when its first request starts, as strings
//! nginx's way (`ngx_ssl_get_*`).

/// A TLS connection's variables; a plain connection has none (each
/// expands to nothing, as nginx's are "not found" there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SslVars {
    /// `TLSv1.3`, `TLSv1.2`.
    pub protocol: String,
    /// OpenSSL's name of the suite (`TLS_AES_256_GCM_SHA384`,
    /// `ECDHE-RSA-AES128-GCM-SHA256`).
    pub cipher: String,
    pub server_name: Option<String>,
    pub alpn_protocol: String,
    /// `r` when the session was resumed, `.` otherwise.
    pub session_reused: bool,
    /// Hex; empty when the session has no id.
    pub session_id: String,
    /// `SUCCESS`, `FAILED:reason`, `NONE`.
    pub client_verify: String,
    pub client: Option<ClientCert>,
    /// The key exchange group (`X25519`, `prime256v1`).
    pub curve: String,
    /// The client's groups and suites, `:`-separated (`$ssl_curves`,
    /// `$ssl_ciphers`).
    pub curves: String,
    pub ciphers: String,
}

/// `$ssl_client_*` of the certificate a client sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientCert {
    pub s_dn: String,
    pub i_dn: String,
    pub s_dn_legacy: String,
    pub i_dn_legacy: String,
    /// `$ssl_client_v_start`, `$ssl_client_v_end` (OpenSSL's time form).
    pub v_start: String,
    pub v_end: String,
    /// `$ssl_client_v_remain`: whole days left when the handshake was
    /// made, 0 once expired (`ngx_ssl_get_client_v_remain`).
    pub v_remain: String,
    pub serial: String,
    pub fingerprint: String,
    pub raw_cert: String,
    /// The deprecated `$ssl_client_cert` (tabbed PEM).
    pub cert: String,
    /// `$ssl_client_escaped_cert`: the PEM URL-encoded.
    pub escaped_cert: String,
}

impl SslVars {
    /// The value of `$NAME` (without `ssl_`), `None` for no value.
    pub fn get(&self, name: &str) -> Option<&str> {
        let client = self.client.as_ref();
        Some(match name {
            "protocol" => &self.protocol,
            "cipher" => &self.cipher,
            "server_name" => self.server_name.as_deref()?,
            "alpn_protocol" => &self.alpn_protocol,
            "session_reused" => {
                if self.session_reused {
                    "r"
                } else {
                    "."
                }
            }
            "session_id" => &self.session_id,
            "client_verify" => &self.client_verify,
            "curve" => &self.curve,
            "curves" => &self.curves,
            "ciphers" => &self.ciphers,
            "client_s_dn" => &client?.s_dn,
            "client_i_dn" => &client?.i_dn,
            "client_s_dn_legacy" => &client?.s_dn_legacy,
            "client_i_dn_legacy" => &client?.i_dn_legacy,
            "client_v_start" => &client?.v_start,
            "client_v_end" => &client?.v_end,
            "client_v_remain" => &client?.v_remain,
            "client_serial" => &client?.serial,
            "client_fingerprint" => &client?.fingerprint,
            "client_raw_cert" => &client?.raw_cert,
            "client_cert" => &client?.cert,
            "client_escaped_cert" => &client?.escaped_cert,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_by_name() {
        let v = SslVars {
            protocol: "TLSv1.3".into(),
            session_reused: true,
            client_verify: "NONE".into(),
            ..SslVars::default()
        };
        assert_eq!(v.get("protocol"), Some("TLSv1.3"));
        assert_eq!(v.get("session_reused"), Some("r"));
        assert_eq!(v.get("client_s_dn"), None);
        assert_eq!(v.get("server_name"), None);
        assert_eq!(v.get("bogus"), None);
    }
}
