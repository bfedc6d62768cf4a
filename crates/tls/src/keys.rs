//! Encrypted private keys (`ssl_password_file`, `proxy_ssl_password_file`):
//! the passwords file read as nginx's `ngx_ssl_read_password_file` reads
//! it, and PKCS #8 `ENCRYPTED PRIVATE KEY` blocks opened with them.
//!
//! Hand-written because rustls reads unencrypted keys only and no crate
//! already in the build opens PKCS #8: the part needed is small, PBES2
//! (RFC 8018, 6.2) with PBKDF2 (5.2) and AES-CBC, what OpenSSL 3 writes
//! (`openssl genrsa -aes128`, `openssl pkey -aes256`), read with a minimal
//! DER walker ([`crate::der`]), the cryptography being aws-lc-rs's. OpenSSL's older
//! `Proc-Type: 4,ENCRYPTED` PEM form (MD5 key derivation) is refused with
//! that reason.

use std::num::NonZeroU32;
use std::path::Path;

use aws_lc_rs::cipher::{
    AES_128, AES_192, AES_256, Algorithm, DecryptionContext, PaddedBlockDecryptingKey,
    UnboundCipherKey,
};
use aws_lc_rs::pbkdf2;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::TlsError;

/// nginx's `NGX_SSL_PASSWORD_BUFFER_SIZE`: a passwords file this long or
/// longer is refused ("too long data in the password file").
pub const PASSWORD_FILE_MAX: usize = 4096;

/// The most PBKDF2 iterations a key may ask for (OpenSSL writes 2048;
/// a key asking for more than this is refused rather than spun on).
pub const MAX_ITERATIONS: u32 = 10_000_000;

/// The passwords of a file, one a line (CR LF or LF), empty lines kept
/// out, as `ngx_ssl_read_password_file`; the file may be a FIFO.
pub fn read_passwords(path: &Path) -> Result<Vec<String>, TlsError> {
    let bytes = std::fs::read(path)
        .map_err(|e| TlsError::Invalid(format!("open() \"{}\" failed ({e})", path.display())))?;
    if bytes.len() >= PASSWORD_FILE_MAX {
        return Err(TlsError::Invalid(
            "too long data in the password file".into(),
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let passwords: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if passwords.is_empty() {
        return Err(TlsError::Invalid(format!(
            "empty password file \"{}\"",
            path.display()
        )));
    }
    Ok(passwords)
}

/// Why an encrypted key did not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("no password for the encrypted key (ssl_password_file)")]
    NoPassword,
    /// OpenSSL's words for a wrong password.
    #[error("bad decrypt")]
    BadDecrypt,
    #[error("unsupported key encryption: {0}")]
    Unsupported(&'static str),
    #[error("malformed encrypted key")]
    Malformed,
}

impl From<crate::der::Malformed> for KeyError {
    fn from(_: crate::der::Malformed) -> KeyError {
        KeyError::Malformed
    }
}

/// The PKCS #8 key inside `der` (an `EncryptedPrivateKeyInfo`), with the
/// first of `passwords` that opens it.
pub fn decrypt_pkcs8(der: &[u8], passwords: &[String]) -> Result<PrivateKeyDer<'static>, KeyError> {
    let params = Pbes2::parse(der)?;
    if passwords.is_empty() {
        return Err(KeyError::NoPassword);
    }
    for p in passwords {
        if let Some(plain) = params.open(p.as_bytes()) {
            return Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(plain)));
        }
    }
    Err(KeyError::BadDecrypt)
}

const OID_PBES2: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0d];
const OID_PBKDF2: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0c];
const OID_HMAC_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x07];
const OID_HMAC_SHA256: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x09];
const OID_HMAC_SHA384: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x0a];
const OID_HMAC_SHA512: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x0b];
/// 2.16.840.1.101.3.4.1, the AES arc; the last byte names the mode.
const OID_AES: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01];

use crate::der::{Der, TAG_INTEGER, TAG_OCTETS, TAG_OID, TAG_SEQUENCE};

/// PBES2's parameters and the sealed key.
struct Pbes2<'a> {
    salt: &'a [u8],
    iterations: NonZeroU32,
    prf: pbkdf2::Algorithm,
    cipher: &'static Algorithm,
    key_len: usize,
    iv: [u8; 16],
    sealed: &'a [u8],
}

impl<'a> Pbes2<'a> {
    fn parse(der: &'a [u8]) -> Result<Pbes2<'a>, KeyError> {
        let mut info = Der(Der(der).next(TAG_SEQUENCE)?);
        let mut alg = Der(info.next(TAG_SEQUENCE)?);
        let sealed = info.next(TAG_OCTETS)?;
        if alg.next(TAG_OID)? != OID_PBES2 {
            return Err(KeyError::Unsupported("not PBES2"));
        }
        let mut params = Der(alg.next(TAG_SEQUENCE)?);
        let mut kdf = Der(params.next(TAG_SEQUENCE)?);
        let mut scheme = Der(params.next(TAG_SEQUENCE)?);
        if kdf.next(TAG_OID)? != OID_PBKDF2 {
            return Err(KeyError::Unsupported("not PBKDF2 (scrypt?)"));
        }
        let mut kdf = Der(kdf.next(TAG_SEQUENCE)?);
        let salt = kdf.next(TAG_OCTETS)?;
        let iterations = integer(kdf.next(TAG_INTEGER)?)?;
        if kdf.peek() == Some(TAG_INTEGER) {
            kdf.next(TAG_INTEGER)?; // keyLength: the cipher's says it.
        }
        let prf = if kdf.peek() == Some(TAG_SEQUENCE) {
            let mut prf = Der(kdf.next(TAG_SEQUENCE)?);
            match prf.next(TAG_OID)? {
                OID_HMAC_SHA1 => pbkdf2::PBKDF2_HMAC_SHA1,
                OID_HMAC_SHA256 => pbkdf2::PBKDF2_HMAC_SHA256,
                OID_HMAC_SHA384 => pbkdf2::PBKDF2_HMAC_SHA384,
                OID_HMAC_SHA512 => pbkdf2::PBKDF2_HMAC_SHA512,
                _ => return Err(KeyError::Unsupported("PBKDF2 PRF")),
            }
        } else {
            pbkdf2::PBKDF2_HMAC_SHA1
        };
        let oid = scheme.next(TAG_OID)?;
        let (cipher, key_len) = match oid.strip_prefix(OID_AES) {
            Some([0x02]) => (&AES_128, 16),
            Some([0x16]) => (&AES_192, 24),
            Some([0x2a]) => (&AES_256, 32),
            _ => return Err(KeyError::Unsupported("cipher other than AES-CBC")),
        };
        let iv = scheme
            .next(TAG_OCTETS)?
            .try_into()
            .map_err(|_| KeyError::Malformed)?;
        if iterations > MAX_ITERATIONS {
            return Err(KeyError::Unsupported("too many PBKDF2 iterations"));
        }
        Ok(Pbes2 {
            salt,
            iterations: NonZeroU32::new(iterations).ok_or(KeyError::Malformed)?,
            prf,
            cipher,
            key_len,
            iv,
            sealed,
        })
    }

    /// The key under `password`, `None` when the padding or the content
    /// says the password is wrong.
    fn open(&self, password: &[u8]) -> Option<Vec<u8>> {
        let mut key = vec![0u8; self.key_len];
        pbkdf2::derive(self.prf, self.iterations, self.salt, password, &mut key);
        let key = UnboundCipherKey::new(self.cipher, &key).ok()?;
        let dec = PaddedBlockDecryptingKey::cbc_pkcs7(key).ok()?;
        let mut buf = self.sealed.to_vec();
        let plain = dec
            .decrypt(&mut buf, DecryptionContext::Iv128(self.iv.into()))
            .ok()?;
        // A wrong password passes the padding one time in 256: the
        // content must still be a DER SEQUENCE filling the whole.
        let mut whole = Der(plain);
        whole.next(TAG_SEQUENCE).ok()?;
        whole.0.is_empty().then(|| plain.to_vec())
    }
}

/// A DER INTEGER that fits a u32 (an iteration count).
fn integer(bytes: &[u8]) -> Result<u32, KeyError> {
    if bytes.is_empty() || bytes.len() > 5 || bytes[0] & 0x80 != 0 {
        return Err(KeyError::Malformed);
    }
    let v = bytes.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
    u32::try_from(v).map_err(|_| KeyError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_one_a_line() {
        let dir = std::env::temp_dir().join(format!("peregrine-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("pw");
        std::fs::write(&p, "wrong\r\n\nright\n").unwrap();
        assert_eq!(read_passwords(&p).unwrap(), ["wrong", "right"]);
        std::fs::write(&p, "x".repeat(PASSWORD_FILE_MAX)).unwrap();
        assert!(read_passwords(&p).is_err());
        std::fs::write(&p, "\n").unwrap();
        assert!(read_passwords(&p).is_err());
    }

    #[test]
    fn malformed_keys_are_errors_not_panics() {
        for der in [
            &[][..],
            &[0x30, 0x05, 0x30],
            &[0x30, 0x84, 0xff, 0xff, 0xff, 0xff],
        ] {
            assert_eq!(
                decrypt_pkcs8(der, &["p".into()]).unwrap_err(),
                KeyError::Malformed
            );
        }
    }
}
