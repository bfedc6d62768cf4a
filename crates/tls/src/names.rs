//! rustls's names for what a handshake chose, in the words nginx's
//! variables use (OpenSSL's): `$ssl_protocol`, `$ssl_cipher`,
//! `$ssl_curve`.

use rustls::{CipherSuite, NamedGroup, ProtocolVersion};

/// OpenSSL's `SSL_get_version` names.
pub fn protocol(v: ProtocolVersion) -> &'static str {
    match v {
        ProtocolVersion::TLSv1_3 => "TLSv1.3",
        ProtocolVersion::TLSv1_2 => "TLSv1.2",
        _ => "unknown",
    }
}

/// OpenSSL's names of the suites rustls has (`SSL_CIPHER_get_name`).
pub fn cipher(s: CipherSuite) -> &'static str {
    match s {
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "ECDHE-ECDSA-CHACHA20-POLY1305"
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        _ => "unknown",
    }
}

/// OpenSSL's names of groups (`prime256v1`, not `secp256r1`).
pub fn group(g: NamedGroup) -> &'static str {
    match g {
        NamedGroup::X25519 => "X25519",
        NamedGroup::secp256r1 => "prime256v1",
        NamedGroup::secp384r1 => "secp384r1",
        NamedGroup::secp521r1 => "secp521r1",
        NamedGroup::X25519MLKEM768 => "X25519MLKEM768",
        _ => "unknown",
    }
}

/// A list as OpenSSL's `$ssl_curves`/`$ssl_ciphers` give it: names
/// joined by `:`, a code without a name as `0x` and four hex digits.
pub fn list<T: Copy + Into<u16>>(items: &[T], name: fn(T) -> &'static str) -> String {
    let mut out = String::new();
    for &i in items {
        if !out.is_empty() {
            out.push(':');
        }
        match name(i) {
            "unknown" => out.push_str(&format!("0x{:04x}", i.into())),
            n => out.push_str(n),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openssl_words() {
        assert_eq!(protocol(ProtocolVersion::TLSv1_3), "TLSv1.3");
        assert_eq!(
            cipher(CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
            "ECDHE-RSA-AES128-GCM-SHA256"
        );
        assert_eq!(group(NamedGroup::secp256r1), "prime256v1");
    }
}
