//! Certificate revocation lists (`ssl_crl`, `proxy_ssl_crl`), checked as
//! OpenSSL checks them under nginx's flags (`X509_V_FLAG_CRL_CHECK |
//! X509_V_FLAG_CRL_CHECK_ALL`, set by `ngx_ssl_crl`): every certificate of
//! the verified path, the root too, needs a current CRL from its issuer,
//! and must not be listed in it.
//!
//! Hand-written over x509-parser rather than left to webpki's CRL support:
//! webpki takes version 2 CRLs only (RFC 5280's profile), while `openssl
//! ca -gencrl` without `crl_extensions` writes version 1 ones, which
//! OpenSSL, and so nginx, takes. The chain itself is still webpki's to
//! check; this runs on the path it accepted.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer};
use x509_parser::certificate::X509Certificate;
use x509_parser::revocation_list::CertificateRevocationList;

use crate::error::TlsError;

/// The longest path walked from a leaf to its root (a loop in the
/// issuers would otherwise not end).
pub const MAX_PATH: usize = 32;

/// Why a path failed its CRL check: OpenSSL's `X509_V_ERR_*` code and
/// words (`X509_verify_cert_error_string`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrlFailure {
    /// `X509_V_ERR_UNABLE_TO_GET_CRL`: no CRL from the certificate's issuer.
    Unknown,
    /// `X509_V_ERR_CRL_NOT_YET_VALID`.
    NotYetValid,
    /// `X509_V_ERR_CRL_HAS_EXPIRED`.
    Expired,
    /// `X509_V_ERR_CERT_REVOKED`.
    Revoked,
}

impl CrlFailure {
    pub fn code(self) -> u32 {
        match self {
            CrlFailure::Unknown => 3,
            CrlFailure::NotYetValid => 11,
            CrlFailure::Expired => 12,
            CrlFailure::Revoked => 23,
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            CrlFailure::Unknown => "unable to get certificate CRL",
            CrlFailure::NotYetValid => "CRL is not yet valid",
            CrlFailure::Expired => "CRL has expired",
            CrlFailure::Revoked => "certificate revoked",
        }
    }
}

/// The CRLs of one `ssl_crl` / `proxy_ssl_crl` file, as DER (parsed when
/// a path is checked: parsing borrows, and a check is once per handshake
/// with a certificate).
#[derive(Debug, Clone, Default)]
pub struct Crls {
    list: Vec<CertificateRevocationListDer<'static>>,
}

impl Crls {
    /// Reads a PEM file, failing with OpenSSL's `X509_load_crl_file` words
    /// as nginx reports them (a block that is not a CRL fails the load).
    pub fn read(p: &std::path::Path) -> Result<Crls, TlsError> {
        let err = |reason: String| {
            TlsError::Invalid(format!(
                "X509_load_crl_file(\"{}\") failed ({reason})",
                p.display()
            ))
        };
        let list = CertificateRevocationListDer::pem_file_iter(p)
            .map_err(|e| err(e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| err(e.to_string()))?;
        for crl in &list {
            x509_parser::parse_x509_crl(crl.as_ref()).map_err(|e| err(e.to_string()))?;
        }
        Ok(Crls { list })
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Checks `path` (the leaf first, each certificate's issuer after it,
    /// ending at the self-signed root): OpenSSL's `check_revocation` with
    /// `X509_V_FLAG_CRL_CHECK_ALL`.
    pub fn check(&self, path: &[&CertificateDer<'_>]) -> Result<(), CrlFailure> {
        let parsed: Vec<X509Certificate<'_>> = path
            .iter()
            .filter_map(|c| x509_parser::parse_x509_certificate(c.as_ref()).ok())
            .map(|(_, c)| c)
            .collect();
        let crls: Vec<CertificateRevocationList<'_>> = self
            .list
            .iter()
            .filter_map(|c| x509_parser::parse_x509_crl(c.as_ref()).ok())
            .map(|(_, c)| c)
            .collect();
        let now = x509_parser::time::ASN1Time::now();
        // From the root down, as OpenSSL reports it: a revoked CA is
        // said before a missing CRL below it.
        for (i, cert) in parsed.iter().enumerate().rev() {
            // The root is its own issuer.
            let issuer = parsed.get(i + 1).unwrap_or(cert);
            let crl = crls
                .iter()
                .find(|crl| {
                    crl.issuer() == issuer.subject()
                        && crl.verify_signature(issuer.public_key()).is_ok()
                })
                .ok_or(CrlFailure::Unknown)?;
            if crl.last_update() > now {
                return Err(CrlFailure::NotYetValid);
            }
            if crl.next_update().is_some_and(|next| next < now) {
                return Err(CrlFailure::Expired);
            }
            if crl
                .iter_revoked_certificates()
                .any(|r| *r.serial() == cert.serial)
            {
                return Err(CrlFailure::Revoked);
            }
        }
        Ok(())
    }
}

/// The path from `leaf` to its self-signed root through the sent and the
/// trusted certificates, by names (after webpki has checked the
/// signatures), leaf first; as far as it goes when a link is missing.
pub fn path<'a>(
    leaf: &'a CertificateDer<'a>,
    sent: &'a [CertificateDer<'a>],
    trusted: &'a [CertificateDer<'static>],
) -> Vec<&'a CertificateDer<'a>> {
    let names = |c: &CertificateDer<'_>| {
        let (_, p) = x509_parser::parse_x509_certificate(c.as_ref()).ok()?;
        Some((p.subject().to_string(), p.issuer().to_string()))
    };
    let pool: Vec<(&CertificateDer<'_>, (String, String))> = sent
        .iter()
        .chain(trusted.iter())
        .filter_map(|c| Some((c, names(c)?)))
        .collect();
    let mut out = vec![leaf];
    let Some((mut subject, mut issuer)) = names(leaf) else {
        return out;
    };
    while subject != issuer && out.len() <= MAX_PATH {
        let Some((c, (s, i))) = pool.iter().find(|(_, (s, _))| *s == issuer) else {
            break;
        };
        out.push(c);
        (subject, issuer) = (s.clone(), i.clone());
    }
    out
}
