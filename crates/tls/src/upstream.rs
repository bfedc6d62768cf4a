//! TLS to upstreams (`proxy_pass https://`): a location's `proxy_ssl_*`
//! settings turned into a rustls `ClientConfig`, and the check of the
//! upstream's certificate as nginx makes it.
//!
//! nginx checks nothing unless `proxy_ssl_verify on` (any certificate is
//! taken: [`UpstreamVerifier`] then checks only the handshake's
//! signatures). With it, the chain must reach `proxy_ssl_trusted_certificate`
//! within `proxy_ssl_verify_depth` (`SSL_get_verify_result`, logged as
//! `upstream SSL certificate verify error: (N:reason)`), and the name must
//! be the certificate's as OpenSSL's `X509_check_host` reads it: the DNS
//! names of its subjectAltName, or its common name when it has none
//! (webpki has no such fallback, hence the name check here).

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, Resumption, WebPkiServerVerifier};
use rustls::crypto::aws_lc_rs as provider;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, OtherError, RootCertStore,
    SignatureScheme,
};

use crate::certs::{CertPair, load_pair_with};
use crate::client::{
    Verified, intermediates, read_certs, self_signed_or_unknown, v1_signature, v1_verify,
};
use crate::config::{cipher_suites, protocol_versions};
use crate::crl::Crls;
use crate::error::TlsError;

/// Sessions a location's per-worker store keeps
/// (`proxy_ssl_session_reuse`; nginx keeps one per peer).
pub const SESSIONS_PER_CONFIG: usize = 256;

/// One location's `proxy_ssl_*`, with the client certificate the request
/// chose.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UpstreamTls {
    pub server_name: bool,
    pub verify: bool,
    pub verify_depth: u32,
    pub trusted_certificate: Option<PathBuf>,
    pub crl: Option<PathBuf>,
    pub protocols: Vec<String>,
    pub ciphers: String,
    pub certificate: Option<CertPair>,
    pub session_reuse: bool,
    /// `proxy_ssl_password_file`: the passwords of an encrypted key.
    pub password_file: Option<PathBuf>,
}

/// Why the upstream's certificate was refused, in nginx's words
/// (`ngx_ssl_check_host`, `ngx_http_upstream_ssl_handshake`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamCertError {
    /// `SSL_get_verify_result`'s code and OpenSSL's reason.
    #[error("upstream SSL certificate verify error: ({code}:{reason})")]
    Verify { code: u32, reason: &'static str },
    #[error("upstream SSL certificate does not match \"{0}\"")]
    Name(String),
}

/// The error line of a failed handshake with an upstream: the certificate
/// check's own words, else OpenSSL's `SSL_do_handshake() failed` (the
/// reason is rustls's).
pub fn failure_line(e: &rustls::Error) -> String {
    if let rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(o))) = e
        && let Some(c) = o.downcast_ref::<UpstreamCertError>()
    {
        return c.to_string();
    }
    format!("SSL_do_handshake() failed (SSL: {e})")
}

impl UpstreamTls {
    /// The rustls configuration (one per location and worker: its session
    /// store is the worker's).
    pub fn build(&self) -> Result<Arc<ClientConfig>, TlsError> {
        let mut warnings = Vec::new();
        let versions = protocol_versions(&self.protocols, &mut warnings)?;
        let provider = Arc::new(CryptoProvider {
            cipher_suites: cipher_suites(&self.ciphers)?,
            ..provider::default_provider()
        });
        let verifier = Arc::new(UpstreamVerifier {
            algorithms: provider.signature_verification_algorithms,
            check: if self.verify {
                Some(self.check(&provider)?)
            } else {
                None
            },
        });
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(TlsError::Rustls)?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let passwords = match (&self.certificate, &self.password_file) {
            (Some(_), Some(p)) => crate::keys::read_passwords(p)?,
            _ => Vec::new(),
        };
        let mut config = match &self.certificate {
            Some(pair) => builder.with_client_cert_resolver(Arc::new(OneCert(Arc::new(
                load_pair_with(pair, &passwords, &provider)?,
            )))),
            None => builder.with_no_client_auth(),
        };
        config.enable_sni = self.server_name;
        config.resumption = if self.session_reuse {
            Resumption::in_memory_sessions(SESSIONS_PER_CONFIG)
        } else {
            Resumption::disabled()
        };
        Ok(Arc::new(config))
    }

    fn check(&self, provider: &Arc<CryptoProvider>) -> Result<Check, TlsError> {
        let mut roots = RootCertStore::empty();
        let mut trusted = Vec::new();
        if let Some(p) = &self.trusted_certificate {
            for c in read_certs(p)? {
                // A certificate webpki cannot take as an anchor (X.509
                // v1) is still trusted as itself (see `Check::verify`).
                let _ = roots.add(c.clone());
                trusted.push(c);
            }
        }
        let crls = match &self.crl {
            Some(p) => Crls::read(p)?,
            None => Crls::default(),
        };
        let webpki = if roots.is_empty() {
            None
        } else {
            Some(
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| {
                        TlsError::Invalid(format!("proxy_ssl_trusted_certificate: {e}"))
                    })?,
            )
        };
        Ok(Check {
            webpki,
            trusted,
            depth: self.verify_depth,
            crls,
        })
    }
}

/// The client certificate, sent whenever the upstream asks.
#[derive(Debug)]
struct OneCert(Arc<CertifiedKey>);

impl ResolvesClientCert for OneCert {
    fn resolve(&self, _: &[&[u8]], _: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
    fn has_certs(&self) -> bool {
        true
    }
}

/// `proxy_ssl_verify on`'s settings, loaded.
#[derive(Debug)]
struct Check {
    webpki: Option<Arc<WebPkiServerVerifier>>,
    trusted: Vec<CertificateDer<'static>>,
    depth: u32,
    /// `proxy_ssl_crl` (checked here, not by webpki: see [`crate::crl`]).
    crls: Crls,
}

fn refuse(e: UpstreamCertError) -> rustls::Error {
    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(e))))
}

fn verify_error(code: u32, reason: &'static str) -> rustls::Error {
    refuse(UpstreamCertError::Verify { code, reason })
}

impl Check {
    fn verify(
        &self,
        leaf: &CertificateDer<'_>,
        rest: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        let mut name_checked = false;
        if self.trusted.iter().any(|t| t.as_ref() == leaf.as_ref()) {
            // The certificate itself is trusted (a self-signed one, as
            // OpenSSL takes it from the store).
            if !valid_now(leaf) {
                return Err(verify_error(10, "certificate has expired"));
            }
        } else {
            let Some(w) = &self.webpki else {
                return Err(openssl_error(&CertificateError::UnknownIssuer, leaf));
            };
            match w.verify_server_cert(leaf, rest, name, &[], now) {
                Ok(_) => name_checked = true,
                Err(rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) => {}
                // webpki refuses what OpenSSL takes: an X.509 v1
                // certificate, a CA's as the leaf. Taken when a trusted
                // certificate issued and signed it (see `v1_verify`).
                Err(rustls::Error::InvalidCertificate(CertificateError::Other(_)))
                    if v1_verify(leaf, &self.trusted) == Verified::Success => {}
                Err(rustls::Error::InvalidCertificate(c)) => return Err(openssl_error(&c, leaf)),
                Err(e) => return Err(e),
            }
        }
        if intermediates(leaf, rest, &self.trusted) > self.depth as usize {
            return Err(verify_error(22, "certificate chain too long"));
        }
        if !self.crls.is_empty()
            && let Err(f) = self
                .crls
                .check(&crate::crl::path(leaf, rest, &self.trusted))
        {
            return Err(verify_error(f.code(), f.reason()));
        }
        let shown = name.to_str();
        if !name_checked && !name_matches(leaf, &shown) {
            return Err(refuse(UpstreamCertError::Name(shown.into_owned())));
        }
        Ok(())
    }
}

fn valid_now(leaf: &CertificateDer<'_>) -> bool {
    x509_parser::parse_x509_certificate(leaf.as_ref()).is_ok_and(|(_, c)| c.validity().is_valid())
}

/// webpki's reasons as OpenSSL's `X509_V_ERR_*` codes and words.
fn openssl_error(c: &CertificateError, leaf: &CertificateDer<'_>) -> rustls::Error {
    use CertificateError as C;
    let self_signed = self_signed_or_unknown(leaf).starts_with("self");
    let (code, reason) = match c {
        // OpenSSL finds no issuer for a self-signed leaf not trusted
        // itself, whatever certificate of the same name is
        // (`X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT`).
        C::BadSignature if self_signed => (18, "self-signed certificate"),
        C::UnknownIssuer | C::Other(_) | C::BadEncoding => {
            let why = self_signed_or_unknown(leaf);
            (if why.starts_with("self") { 18 } else { 20 }, why)
        }
        C::Revoked => (23, "certificate revoked"),
        C::Expired | C::ExpiredContext { .. } => (10, "certificate has expired"),
        C::NotValidYet | C::NotValidYetContext { .. } => (9, "certificate is not yet valid"),
        C::BadSignature => (7, "certificate signature failure"),
        C::UnknownRevocationStatus => (3, "unable to get certificate CRL"),
        C::ExpiredRevocationList | C::ExpiredRevocationListContext { .. } => {
            (12, "CRL has expired")
        }
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            (26, "unsupported certificate purpose")
        }
        _ => (1, "unspecified certificate verification error"),
    };
    verify_error(code, reason)
}

/// `X509_check_host`: the subjectAltName's DNS names (a `*` as the whole
/// leftmost label matches one label), or the common name when there is
/// none; an address name matches the subjectAltName's IP addresses.
pub fn name_matches(leaf: &CertificateDer<'_>, name: &str) -> bool {
    use x509_parser::extensions::GeneralName;
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(leaf.as_ref()) else {
        return false;
    };
    let ip: Option<std::net::IpAddr> = name.parse().ok();
    let mut dns = Vec::new();
    let mut ips = Vec::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for g in &san.value.general_names {
            match g {
                GeneralName::DNSName(d) => dns.push(d.to_string()),
                GeneralName::IPAddress(b) => ips.push(b.to_vec()),
                _ => {}
            }
        }
    }
    if let Some(ip) = ip {
        let want = match ip {
            std::net::IpAddr::V4(a) => a.octets().to_vec(),
            std::net::IpAddr::V6(a) => a.octets().to_vec(),
        };
        return ips.contains(&want);
    }
    if dns.is_empty() {
        dns = cert
            .subject()
            .iter_common_name()
            .filter_map(|cn| cn.as_str().ok().map(str::to_string))
            .collect();
    }
    dns.iter().any(|pattern| host_matches(pattern, name))
}

fn host_matches(pattern: &str, name: &str) -> bool {
    let name = name.trim_end_matches('.');
    match pattern.strip_prefix("*.") {
        Some(suffix) => name
            .split_once('.')
            .is_some_and(|(first, rest)| !first.is_empty() && rest.eq_ignore_ascii_case(suffix)),
        None => pattern.eq_ignore_ascii_case(name),
    }
}

/// The handshake's check of the upstream's certificate.
#[derive(Debug)]
pub struct UpstreamVerifier {
    algorithms: WebPkiSupportedAlgorithms,
    /// `None`: `proxy_ssl_verify off`.
    check: Option<Check>,
}

impl ServerCertVerifier for UpstreamVerifier {
    fn verify_server_cert(
        &self,
        leaf: &CertificateDer<'_>,
        rest: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        _: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(c) = &self.check {
            c.verify(leaf, rest, name, now)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms) {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(_))) => {
                v1_signature(message, cert, dss)
            }
            r => r,
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms) {
            Err(rustls::Error::InvalidCertificate(CertificateError::Other(_))) => {
                v1_signature(message, cert, dss)
            }
            r => r,
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_take_one_label() {
        assert!(host_matches("*.example.com", "foo.example.com"));
        assert!(!host_matches("*.example.com", "a.b.example.com"));
        assert!(!host_matches("*.example.com", "example.com"));
        assert!(host_matches("Example.com", "example.com."));
    }

    #[test]
    fn failure_lines_are_nginx_words() {
        let e = verify_error(20, "unable to get local issuer certificate");
        assert_eq!(
            failure_line(&e),
            "upstream SSL certificate verify error: (20:unable to get local issuer certificate)"
        );
        let e = refuse(UpstreamCertError::Name("a.example".into()));
        assert_eq!(
            failure_line(&e),
            "upstream SSL certificate does not match \"a.example\""
        );
        assert!(
            failure_line(&rustls::Error::DecryptError).starts_with("SSL_do_handshake() failed")
        );
    }
}
