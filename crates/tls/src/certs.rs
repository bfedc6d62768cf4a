//! `ssl_certificate` and `ssl_certificate_key`: PEM chains and keys, and
//! the choice between several pairs (RSA and ECDSA, as nginx allows) by the
//! signature schemes the client offers.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::error::TlsError;

/// One `ssl_certificate` with its `ssl_certificate_key`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CertPair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// OpenSSL's `TRUSTED CERTIFICATE` PEM blocks (`openssl x509 -trustout`):
/// a certificate followed by OpenSSL's auxiliary trust settings, which
/// nginx reads as the certificate (`PEM_read_bio_X509_AUX`). The
/// certificates, the trust settings left out (rustls has no use for them).
pub fn trusted_pem(text: &[u8]) -> Vec<CertificateDer<'static>> {
    const BEGIN: &str = "-----BEGIN TRUSTED CERTIFICATE-----";
    const END: &str = "-----END TRUSTED CERTIFICATE-----";
    let text = String::from_utf8_lossy(text);
    let mut out = Vec::new();
    let mut rest = text.as_ref();
    while let Some(start) = rest.find(BEGIN) {
        let body = &rest[start + BEGIN.len()..];
        let Some(end) = body.find(END) else { break };
        if let Some(der) = base64_decode(&body[..end]).and_then(first_der) {
            out.push(CertificateDer::from(der));
        }
        rest = &body[end + END.len()..];
    }
    out
}

/// The first DER element of `der` (a SEQUENCE: tag, length, contents).
fn first_der(der: Vec<u8>) -> Option<Vec<u8>> {
    let first = *der.get(1)?;
    let (head, len) = if first < 0x80 {
        (2, usize::from(first))
    } else {
        let n = usize::from(first & 0x7f);
        let bytes = der.get(2..2 + n)?;
        (
            2 + n,
            bytes.iter().fold(0usize, |a, &b| (a << 8) | usize::from(b)),
        )
    };
    (der.first() == Some(&0x30)).then_some(())?;
    der.get(..head + len).map(<[u8]>::to_vec)
}

/// Standard base64 (RFC 4648, 4), whitespace skipped.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            c if c.is_ascii_whitespace() => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// The prefix of a certificate or key given inline (nginx 1.15.10's
/// `data:` values, usually built from variables): the PEM text follows.
pub const DATA_PREFIX: &str = "data:";

/// What a certificate or key value holds: the PEM text after `data:`, or
/// the file's bytes.
pub fn source_bytes(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    match path.to_str().and_then(|p| p.strip_prefix(DATA_PREFIX)) {
        Some(text) => Ok(text.as_bytes().to_vec()),
        None => std::fs::read(path),
    }
}

/// A certificate file's certificates (or a `data:` value's):
/// `CERTIFICATE` blocks, or OpenSSL's `TRUSTED CERTIFICATE` ones when
/// there are none.
pub fn read_chain(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = source_bytes(path).map_err(|e| e.to_string())?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    if !chain.is_empty() {
        return Ok(chain);
    }
    Ok(trusted_pem(&bytes))
}

/// Reads a pair and checks that the key is the certificate's.
pub fn load_pair(pair: &CertPair, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    load_pair_with(pair, &[], provider)
}

/// The first `ENCRYPTED PRIVATE KEY` block of a PEM text, as DER.
fn encrypted_pem(text: &[u8]) -> Option<Vec<u8>> {
    const BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
    const END: &str = "-----END ENCRYPTED PRIVATE KEY-----";
    let text = String::from_utf8_lossy(text);
    let body = &text[text.find(BEGIN)? + BEGIN.len()..];
    base64_decode(&body[..body.find(END)?])
}

/// [`load_pair`] with the passwords of `ssl_password_file` for a key that
/// is encrypted ([`crate::keys`]).
pub fn load_pair_with(
    pair: &CertPair,
    passwords: &[String],
    provider: &CryptoProvider,
) -> Result<CertifiedKey, TlsError> {
    let cert_err = |reason: String| TlsError::Certificate {
        path: pair.cert.clone(),
        reason,
    };
    let chain = read_chain(&pair.cert).map_err(cert_err)?;
    if chain.is_empty() {
        return Err(cert_err("no certificate in the file".into()));
    }
    let key_err = |reason: String| TlsError::Key {
        path: pair.key.clone(),
        reason,
    };
    let bytes = source_bytes(&pair.key).map_err(|e| key_err(e.to_string()))?;
    let der = match PrivateKeyDer::from_pem_slice(&bytes) {
        Ok(der) => der,
        Err(e) => {
            if let Some(sealed) = encrypted_pem(&bytes) {
                crate::keys::decrypt_pkcs8(&sealed, passwords)
                    .map_err(|k| key_err(format!("PEM_read_bio_PrivateKey() failed ({k})")))?
            } else if bytes.windows(9).any(|w| w == b"ENCRYPTED") {
                // OpenSSL's traditional form (`Proc-Type: 4,ENCRYPTED`).
                return Err(key_err(
                    "keys encrypted in OpenSSL's traditional PEM form are not supported by Peregrine: convert it to PKCS #8 (openssl pkcs8 -topk8)"
                        .into(),
                ));
            } else {
                return Err(key_err(e.to_string()));
            }
        }
    };
    let signing = provider
        .key_provider
        .load_private_key(der)
        .map_err(|e| key_err(e.to_string()))?;
    let key = CertifiedKey::new(chain, signing);
    // `Unknown`: the provider cannot derive the public key to compare
    // (aws-lc-rs with a SEC1 `EC PRIVATE KEY`, what `openssl ecparam
    // -genkey` writes): not a mismatch.
    match key.keys_match() {
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            Err(TlsError::KeyMismatch {
                path: pair.key.clone(),
            })
        }
        _ => Ok(key),
    }
}

/// Picks, of a server block's pairs, the first the client can use: its key
/// signs with a scheme the client offers and, for a client that offers no
/// TLS 1.3 suite, the client offers a TLS 1.2 suite authenticated by that
/// key's algorithm (`ECDHE-RSA-*` or `ECDHE-ECDSA-*`). OpenSSL chooses
/// between nginx's RSA and ECDSA certificates the same way.
pub struct Resolver {
    /// Each behind a lock only for [`Resolver::staple`], which swaps in
    /// the same pair with a new OCSP response.
    keys: Vec<RwLock<Arc<CertifiedKey>>>,
}

impl Resolver {
    /// OpenSSL holds one certificate per key type: a later pair of the
    /// same type replaces an earlier one (in the earlier one's place).
    pub fn new(keys: Vec<Arc<CertifiedKey>>) -> Resolver {
        let mut kept: Vec<Arc<CertifiedKey>> = Vec::with_capacity(keys.len());
        for k in keys {
            let alg = k.key.algorithm();
            match kept.iter_mut().find(|e| e.key.algorithm() == alg) {
                Some(slot) => *slot = k,
                None => kept.push(k),
            }
        }
        Resolver {
            keys: kept.into_iter().map(RwLock::new).collect(),
        }
    }

    /// The pairs kept, in their places.
    pub fn keys(&self) -> Vec<Arc<CertifiedKey>> {
        (0..self.keys.len()).filter_map(|i| self.key(i)).collect()
    }

    fn key(&self, i: usize) -> Option<Arc<CertifiedKey>> {
        let slot = self.keys.get(i)?;
        Some(slot.read().unwrap_or_else(|e| e.into_inner()).clone())
    }

    /// Staples `ocsp` (or nothing) to the pair at `index` from now on.
    pub fn staple(&self, index: usize, ocsp: Option<Vec<u8>>) {
        let Some(slot) = self.keys.get(index) else {
            return;
        };
        let mut k = slot.write().unwrap_or_else(|e| e.into_inner());
        let mut stapled = CertifiedKey::clone(&k);
        stapled.ocsp = ocsp;
        *k = Arc::new(stapled);
    }
}

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Resolver({} pairs)", self.keys.len())
    }
}

impl ResolvesServerCert for Resolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let offered = hello.signature_schemes();
        let suites = hello.cipher_suites();
        let tls13 = suites
            .iter()
            .any(|s| format!("{s:?}").starts_with("TLS13_"));
        let usable = |k: &Arc<CertifiedKey>| {
            k.key.choose_scheme(offered).is_some()
                && (tls13 || suites.iter().any(|s| suite_fits(*s, k.key.algorithm())))
        };
        (0..self.keys.len())
            .filter_map(|i| self.key(i))
            .find(usable)
            .or_else(|| self.key(0))
    }
}

/// Whether a TLS 1.2 suite is authenticated by keys of `alg`.
fn suite_fits(suite: rustls::CipherSuite, alg: rustls::SignatureAlgorithm) -> bool {
    let name = format!("{suite:?}");
    match alg {
        rustls::SignatureAlgorithm::RSA => name.starts_with("TLS_ECDHE_RSA_"),
        rustls::SignatureAlgorithm::ECDSA => name.starts_with("TLS_ECDHE_ECDSA_"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_certificate_blocks() {
        let der: Vec<u8> = [0x30, 0x03, 1, 2, 3].to_vec();
        let mut with_aux = der.clone();
        with_aux.extend_from_slice(&[0x30, 0x02, 9, 9]);
        let pem = crate::client::pem(&with_aux).replace("CERTIFICATE", "TRUSTED CERTIFICATE");
        let got = trusted_pem(format!("junk\n{pem}{pem}").as_bytes());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].as_ref(), der.as_slice(), "the aux part left out");
        assert!(
            trusted_pem(
                b"-----BEGIN TRUSTED CERTIFICATE-----\n!!\n-----END TRUSTED CERTIFICATE-----"
            )
            .is_empty()
        );
    }
}
