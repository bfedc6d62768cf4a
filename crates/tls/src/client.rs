//! Client certificates: `ssl_verify_client`, `ssl_client_certificate`,
//! `ssl_trusted_certificate`, `ssl_crl`, `ssl_verify_depth`, and what
//! nginx's `$ssl_client_*` variables say of a certificate.
//!
//! nginx asks for a certificate but never fails the handshake over it
//! (its verify callback returns 1): the outcome is `$ssl_client_verify`,
//! and the HTTP layer answers 400 for a required certificate missing or
//! one that did not verify (`ngx_http_process_request`, statuses 496 and
//! 495). The same here: the handshake's verifier ([`AskClient`]) checks
//! only the client's proof that it holds the key, and the chain is checked
//! once after the handshake ([`ClientAuth::verify`]) with webpki.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use crate::crl::Crls;
use crate::error::TlsError;

/// A server block's client-certificate settings.
#[derive(Debug, Clone, Default)]
pub struct ClientAuthConf {
    /// Certificates sent must chain to a trusted one (`on`, `optional`);
    /// false for `optional_no_ca`.
    pub verify: bool,
    /// `ssl_client_certificate`: trusted and named to clients.
    pub client_certificate: Option<PathBuf>,
    /// `ssl_trusted_certificate`: trusted, not named.
    pub trusted_certificate: Option<PathBuf>,
    pub crl: Option<PathBuf>,
    /// `ssl_verify_depth`: intermediate certificates allowed below a
    /// trusted one, counted as OpenSSL counts them.
    pub depth: u32,
}

/// The loaded settings: the handshake's verifier and the chain check.
pub struct ClientAuth {
    pub asker: Arc<AskClient>,
    /// The trusted certificates as read (the check of X.509 v1 chains,
    /// which webpki does not take: see [`v1_verify`]).
    trusted: Vec<CertificateDer<'static>>,
    /// `None`: nothing trusted (`optional_no_ca` without a CA file).
    checker: Option<Arc<dyn ClientCertVerifier>>,
    depth: u32,
    /// `ssl_crl` (checked here, not by webpki: see [`crate::crl`]).
    crls: Crls,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClientAuth(depth {})", self.depth)
    }
}

pub(crate) fn read_certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let err = |reason: String| TlsError::Certificate {
        path: path.to_path_buf(),
        reason,
    };
    let certs = crate::certs::read_chain(path).map_err(err)?;
    if certs.is_empty() {
        return Err(err("no certificate in the file".into()));
    }
    Ok(certs)
}

impl ClientAuthConf {
    pub fn load(&self, provider: &Arc<CryptoProvider>) -> Result<ClientAuth, TlsError> {
        let mut roots = RootCertStore::empty();
        let mut hints: Vec<DistinguishedName> = Vec::new();
        let mut trusted = Vec::new();
        for (p, named) in [
            (&self.client_certificate, true),
            (&self.trusted_certificate, false),
        ] {
            let Some(p) = p else { continue };
            for c in read_certs(p)? {
                roots.add(c.clone()).map_err(|e| TlsError::Certificate {
                    path: p.clone(),
                    reason: e.to_string(),
                })?;
                trusted.push(c);
            }
            if named {
                // A CA listed twice is named once (OpenSSL's
                // SSL_load_client_CA_file skips duplicates).
                for s in roots.subjects() {
                    if !hints.iter().any(|h| h.as_ref() == s.as_ref()) {
                        hints.push(s);
                    }
                }
            }
        }
        let crls = match &self.crl {
            Some(p) => Crls::read(p)?,
            None => Crls::default(),
        };
        let checker = if roots.is_empty() {
            None
        } else {
            let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .allow_unauthenticated()
                .build()
                .map_err(|e| TlsError::Invalid(format!("ssl_client_certificate: {e}")))?;
            Some(v)
        };
        Ok(ClientAuth {
            asker: Arc::new(AskClient {
                hints,
                algorithms: provider.signature_verification_algorithms,
            }),
            checker,
            trusted,
            depth: self.depth,
            crls,
        })
    }
}

/// `$ssl_client_verify`: `SUCCESS`, `FAILED:reason` or `NONE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verified {
    None,
    Success,
    /// OpenSSL's words for why (`X509_verify_cert_error_string`).
    Failed(&'static str),
}

impl Verified {
    pub fn as_var(&self) -> String {
        match self {
            Verified::None => "NONE".into(),
            Verified::Success => "SUCCESS".into(),
            Verified::Failed(why) => format!("FAILED:{why}"),
        }
    }
}

impl ClientAuth {
    /// Checks the chain a client sent (leaf first).
    pub fn verify(&self, chain: &[CertificateDer<'_>]) -> Verified {
        let Some((leaf, rest)) = chain.split_first() else {
            return Verified::None;
        };
        let Some(checker) = &self.checker else {
            return Verified::Failed(self_signed_or_unknown(leaf));
        };
        let outcome = match checker.verify_client_cert(leaf, rest, UnixTime::now()) {
            Ok(_) => Verified::Success,
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::Other(_))) => {
                v1_verify(leaf, &self.trusted)
            }
            Err(e) => Verified::Failed(openssl_reason(&e, leaf)),
        };
        // OpenSSL's depth (1.1.0 and later) counts the intermediate
        // certificates of the path it built, the trusted ones too.
        if outcome == Verified::Success
            && intermediates(leaf, rest, &self.trusted) > self.depth as usize
        {
            return Verified::Failed("certificate chain too long");
        }
        if outcome == Verified::Success
            && !self.crls.is_empty()
            && let Err(f) = self
                .crls
                .check(&crate::crl::path(leaf, rest, &self.trusted))
        {
            return Verified::Failed(f.reason());
        }
        outcome
    }
}

/// The longest path walked from a leaf to its root (defined beside the
/// CRL walk, which shares it).
pub use crate::crl::MAX_PATH;

/// A certificate's subject and issuer names. Compared as text: a CA may
/// re-encode the names it signs (`openssl ca` writes its policy's string
/// types).
fn names(c: &CertificateDer<'_>) -> Option<(String, String)> {
    let (_, c) = x509_parser::parse_x509_certificate(c.as_ref()).ok()?;
    Some((rfc2253(c.subject()), rfc2253(c.issuer())))
}

/// The intermediates between `leaf` and the self-signed root it chains to
/// through the sent and the trusted certificates (by subject and issuer
/// names, after webpki has checked the signatures).
pub(crate) fn intermediates(
    leaf: &CertificateDer<'_>,
    sent: &[CertificateDer<'_>],
    trusted: &[CertificateDer<'static>],
) -> usize {
    let pool: Vec<(String, String)> = sent
        .iter()
        .map(names)
        .chain(trusted.iter().map(names))
        .flatten()
        .collect();
    let Some((mut subject, mut issuer)) = names(leaf) else {
        return 0;
    };
    let mut hops = 0;
    while subject != issuer && hops < MAX_PATH {
        let Some((s, i)) = pool.iter().find(|(s, _)| *s == issuer) else {
            break;
        };
        (subject, issuer) = (s.clone(), i.clone());
        hops += 1;
    }
    // The last hop is the root, not an intermediate.
    hops.saturating_sub(usize::from(subject == issuer))
}

/// A chain webpki refused as malformed, most often an X.509 v1
/// certificate (what `openssl req -x509` writes without extensions), which
/// OpenSSL takes: the leaf is good when a trusted certificate is its
/// issuer and signed it, and it is within its validity (no CRL check: such
/// a chain has no extensions to find one by).
pub(crate) fn v1_verify(
    leaf: &CertificateDer<'_>,
    trusted: &[CertificateDer<'static>],
) -> Verified {
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(leaf.as_ref()) else {
        return Verified::Failed("certificate verify error");
    };
    if !cert.validity().is_valid() {
        return Verified::Failed("certificate has expired");
    }
    let issuer = trusted.iter().find_map(|t| {
        let (_, t) = x509_parser::parse_x509_certificate(t.as_ref()).ok()?;
        (t.subject().as_raw() == cert.issuer().as_raw()
            && cert.verify_signature(Some(t.public_key())).is_ok())
        .then_some(())
    });
    match issuer {
        Some(()) => Verified::Success,
        None => Verified::Failed(self_signed_or_unknown(leaf)),
    }
}

/// The proof of key possession signed with the key of a certificate
/// webpki does not parse (X.509 v1): checked with aws-lc-rs directly.
pub(crate) fn v1_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    use aws_lc_rs::signature as sig;
    let bad = || rustls::Error::InvalidCertificate(rustls::CertificateError::BadSignature);
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).map_err(|_| bad())?;
    let key = parsed.public_key().subject_public_key.data.as_ref();
    let alg: &dyn sig::VerificationAlgorithm = match dss.scheme {
        SignatureScheme::RSA_PSS_SHA256 => &sig::RSA_PSS_2048_8192_SHA256,
        SignatureScheme::RSA_PSS_SHA384 => &sig::RSA_PSS_2048_8192_SHA384,
        SignatureScheme::RSA_PSS_SHA512 => &sig::RSA_PSS_2048_8192_SHA512,
        SignatureScheme::RSA_PKCS1_SHA256 => &sig::RSA_PKCS1_2048_8192_SHA256,
        SignatureScheme::RSA_PKCS1_SHA384 => &sig::RSA_PKCS1_2048_8192_SHA384,
        SignatureScheme::RSA_PKCS1_SHA512 => &sig::RSA_PKCS1_2048_8192_SHA512,
        SignatureScheme::ECDSA_NISTP256_SHA256 => &sig::ECDSA_P256_SHA256_ASN1,
        SignatureScheme::ECDSA_NISTP384_SHA384 => &sig::ECDSA_P384_SHA384_ASN1,
        SignatureScheme::ED25519 => &sig::ED25519,
        _ => return Err(bad()),
    };
    sig::UnparsedPublicKey::new(alg, key)
        .verify(message, dss.signature())
        .map(|_| HandshakeSignatureValid::assertion())
        .map_err(|_| bad())
}

pub(crate) fn self_signed_or_unknown(leaf: &CertificateDer<'_>) -> &'static str {
    match CertInfo::parse(leaf) {
        Some(i) if i.subject_dn == i.issuer_dn => "self-signed certificate",
        _ => "unable to get local issuer certificate",
    }
}

/// webpki's reasons in OpenSSL 3's words (what nginx's variable carries).
fn openssl_reason(e: &rustls::Error, leaf: &CertificateDer<'_>) -> &'static str {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer => self_signed_or_unknown(leaf),
            C::Revoked => "certificate revoked",
            C::Expired | C::ExpiredContext { .. } => "certificate has expired",
            C::NotValidYet | C::NotValidYetContext { .. } => "certificate is not yet valid",
            C::BadSignature => "certificate signature failure",
            C::UnknownRevocationStatus => "unable to get certificate CRL",
            C::ExpiredRevocationList | C::ExpiredRevocationListContext { .. } => "CRL has expired",
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
                "unsupported certificate purpose"
            }
            _ => "certificate verify error",
        },
        _ => "certificate verify error",
    }
}

/// The handshake's verifier: asks for a certificate (naming the
/// `ssl_client_certificate` CAs), never requires one, and checks only the
/// signature that proves the client holds the key.
#[derive(Debug)]
pub struct AskClient {
    hints: Vec<DistinguishedName>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for AskClient {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::Other(_))) => {
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
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::Other(_))) => {
                v1_signature(message, cert, dss)
            }
            r => r,
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What the `$ssl_client_*` variables say of a certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertInfo {
    /// RFC 2253 (`$ssl_client_s_dn`: the last RDN first, `,` between).
    pub subject_dn: String,
    pub issuer_dn: String,
    /// OpenSSL's one-line form (`$ssl_client_s_dn_legacy`: `/C=../CN=..`).
    pub subject_dn_legacy: String,
    pub issuer_dn_legacy: String,
    /// `notBefore` and `notAfter` as `ASN1_TIME_print` writes them
    /// (`$ssl_client_v_start`, `$ssl_client_v_end`: `Jan  2 03:04:05 2030
    /// GMT`), and `notAfter` in Unix seconds (`$ssl_client_v_remain`).
    pub not_before: String,
    pub not_after: String,
    pub not_after_secs: i64,
    /// Upper-case hex, as OpenSSL's `i2a_ASN1_INTEGER`.
    pub serial: String,
    /// SHA-1 of the DER, lower-case hex.
    pub fingerprint: String,
    /// PEM, as `PEM_write_bio_X509`.
    pub pem: String,
}

impl CertInfo {
    pub fn parse(der: &CertificateDer<'_>) -> Option<CertInfo> {
        let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
        let mut serial = String::new();
        let raw = cert.raw_serial();
        let raw = match raw {
            [0, rest @ ..] if !rest.is_empty() => rest,
            r => r,
        };
        for b in raw {
            let _ = write!(serial, "{b:02X}");
        }
        let digest =
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY, der.as_ref());
        let mut fingerprint = String::new();
        for b in digest.as_ref() {
            let _ = write!(fingerprint, "{b:02x}");
        }
        let validity = cert.validity();
        Some(CertInfo {
            subject_dn: rfc2253(cert.subject()),
            issuer_dn: rfc2253(cert.issuer()),
            subject_dn_legacy: oneline(cert.subject()),
            issuer_dn_legacy: oneline(cert.issuer()),
            not_before: asn1_time(validity.not_before.timestamp()),
            not_after: asn1_time(validity.not_after.timestamp()),
            not_after_secs: validity.not_after.timestamp(),
            serial,
            fingerprint,
            pem: pem(der.as_ref()),
        })
    }
}

/// A name as OpenSSL's `X509_NAME_print_ex(..., XN_FLAG_RFC2253)` writes
/// it: RDNs in reverse, `,` between them, `+` inside one, RFC 2253's
/// escapes.
fn rfc2253(name: &x509_parser::x509::X509Name<'_>) -> String {
    let registry = x509_parser::objects::oid_registry();
    let mut out = String::new();
    let rdns: Vec<_> = name.iter().collect();
    for (i, rdn) in rdns.iter().rev().enumerate() {
        if i > 0 {
            out.push(',');
        }
        for (j, atv) in rdn.iter().enumerate() {
            if j > 0 {
                out.push('+');
            }
            let oid = atv.attr_type();
            match x509_parser::objects::oid2abbrev(oid, registry) {
                Ok(sn) => out.push_str(sn),
                Err(_) => out.push_str(&oid.to_id_string()),
            }
            out.push('=');
            let value = atv.as_str().unwrap_or("");
            for (k, c) in value.chars().enumerate() {
                let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
                    || (k == 0 && matches!(c, '#' | ' '))
                    || (k + 1 == value.chars().count() && c == ' ');
                if special {
                    out.push('\\');
                }
                out.push(c);
            }
        }
    }
    out
}

/// A name as OpenSSL's `X509_NAME_oneline` writes it: the RDNs in their
/// order, each entry `/SN=value` (`+` between the entries of one RDN),
/// bytes outside printable ASCII as `\xHH`.
fn oneline(name: &x509_parser::x509::X509Name<'_>) -> String {
    let registry = x509_parser::objects::oid_registry();
    let mut out = String::new();
    for rdn in name.iter() {
        for (j, atv) in rdn.iter().enumerate() {
            out.push(if j > 0 { '+' } else { '/' });
            let oid = atv.attr_type();
            match x509_parser::objects::oid2abbrev(oid, registry) {
                Ok(sn) => out.push_str(sn),
                Err(_) => out.push_str(&oid.to_id_string()),
            }
            out.push('=');
            for &b in atv.as_slice() {
                if (b' '..=b'~').contains(&b) {
                    out.push(char::from(b));
                } else {
                    let _ = write!(out, "\\x{b:02X}");
                }
            }
        }
    }
    out
}

/// Unix seconds as OpenSSL's `ASN1_TIME_print` writes a time:
/// `Mon DD HH:MM:SS YYYY GMT`, the day space-padded.
pub fn asn1_time(secs: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{} {d:2} {:02}:{:02}:{:02} {y} GMT",
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// PEM of a certificate: base64 in 64-column lines (RFC 7468).
pub fn pem(der: &[u8]) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b64 = String::with_capacity(der.len() * 4 / 3 + 4);
    for chunk in der.chunks(3) {
        let n = chunk.len();
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= n {
                b64.push(B64[(v >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                b64.push('=');
            }
        }
    }
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or(""));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// `$ssl_client_escaped_cert`: nginx's `ngx_escape_uri(...,
/// NGX_ESCAPE_URI_COMPONENT)` of the PEM: all but letters, digits and
/// `-._~` as `%XX` (upper-case hex).
pub fn escaped(pem: &str) -> String {
    let mut out = String::with_capacity(pem.len() + pem.len() / 8);
    for b in pem.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// nginx's deprecated `$ssl_client_cert`: the PEM with a tab after each
/// line break but the last, which is dropped (`ngx_ssl_get_certificate`).
pub fn tabbed(pem: &str) -> String {
    pem.trim_end_matches('\n').replace('\n', "\n\t")
}

#[cfg(test)]
mod tests {

    /// OpenSSL's `ASN1_TIME_print` form: the day space-padded, GMT.
    #[test]
    fn asn1_time_as_openssl_prints_it() {
        assert_eq!(asn1_time(0), "Jan  1 00:00:00 1970 GMT");
        assert_eq!(asn1_time(951_829_445), "Feb 29 13:04:05 2000 GMT");
        assert_eq!(asn1_time(1_893_456_000 - 1), "Dec 31 23:59:59 2029 GMT");
    }
    use super::*;

    #[test]
    fn pem_round_trips() {
        let der: Vec<u8> = (0..=200u8).collect();
        let p = pem(&der);
        let back =
            <CertificateDer as rustls::pki_types::pem::PemObject>::from_pem_slice(p.as_bytes())
                .unwrap();
        assert_eq!(back.as_ref(), der.as_slice());
        assert!(p.lines().all(|l| l.len() <= 64));
        assert_eq!(tabbed("a\nb\nc\n"), "a\n\tb\n\tc");
        assert_eq!(escaped("-----B+/=\n"), "-----B%2B%2F%3D%0A");
    }

    fn ca(name: &str) -> rcgen::CertificateParams {
        let mut p = rcgen::CertificateParams::new(Vec::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        p
    }

    /// root -> int -> leaf, root trusted: the path has one intermediate
    /// whether the client sends it or the trusted file has it.
    #[test]
    fn depth_counts_the_built_path() {
        let dir = std::env::temp_dir().join(format!("peregrine-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root_key = rcgen::KeyPair::generate().unwrap();
        let root = ca("root").self_signed(&root_key).unwrap();
        let root_issuer = rcgen::Issuer::new(ca("root"), root_key);
        let int_key = rcgen::KeyPair::generate().unwrap();
        let int = ca("int").signed_by(&int_key, &root_issuer).unwrap();
        let int_issuer = rcgen::Issuer::new(ca("int"), int_key);
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["client".into()])
            .unwrap()
            .signed_by(&leaf_key, &int_issuer)
            .unwrap();
        let roots = dir.join("root.crt");
        std::fs::write(&roots, root.pem()).unwrap();
        let both = dir.join("root-int.crt");
        std::fs::write(&both, format!("{}{}", root.pem(), int.pem())).unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let auth = |file: &PathBuf, depth| {
            ClientAuthConf {
                verify: true,
                client_certificate: Some(file.clone()),
                depth,
                ..ClientAuthConf::default()
            }
            .load(&provider)
            .unwrap()
        };
        let sent = [leaf.der().clone(), int.der().clone()];
        assert_eq!(auth(&roots, 1).verify(&sent), Verified::Success);
        assert_eq!(
            auth(&roots, 0).verify(&sent),
            Verified::Failed("certificate chain too long")
        );
        let alone = [leaf.der().clone()];
        assert_eq!(auth(&both, 1).verify(&alone), Verified::Success);
        assert_eq!(
            auth(&both, 0).verify(&alone),
            Verified::Failed("certificate chain too long")
        );
        assert_eq!(
            auth(&roots, 1).verify(&alone),
            Verified::Failed("unable to get local issuer certificate")
        );
        assert_eq!(auth(&roots, 1).verify(&[]), Verified::None);
        assert_eq!(Verified::Failed("x").as_var(), "FAILED:x");
    }

    #[test]
    fn info_of_a_generated_certificate() {
        let mut params = rcgen::CertificateParams::new(vec!["client".into()]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "client, one");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Org");
        params.serial_number = Some(rcgen::SerialNumber::from(vec![0x01, 0xab]));
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let info = CertInfo::parse(cert.der()).unwrap();
        assert_eq!(info.serial, "01AB");
        assert_eq!(info.fingerprint.len(), 40);
        // rcgen writes CN first: RFC 2253 puts the last RDN first.
        assert_eq!(info.subject_dn, "O=Org,CN=client\\, one");
        assert_eq!(info.issuer_dn, info.subject_dn);
    }
}
