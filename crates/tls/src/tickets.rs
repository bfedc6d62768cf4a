//! `ssl_session_ticket_key FILE`: session tickets sealed with keys that
//! every instance reading the same files shares, so a client resumes on any
//! of them (nginx's use of the directive behind a load balancer).
//!
//! The files are nginx's: 48 bytes (a 16-byte name, 16 of HMAC key, 16 of
//! AES key) or 80 bytes (16, 32, 32). The first file's key seals new
//! tickets; every file's opens them, so keys can be rotated by adding a new
//! first file. The ticket itself is Peregrine's own, not OpenSSL's: the key
//! name, a random 12-byte nonce and the state sealed with AES-GCM under the
//! file's AES key (AES-128 for 48-byte files, AES-256 for 80-byte ones).
//! Tickets are not exchanged with nginx servers, only between Peregrines.

use std::fmt;
use std::path::Path;

use aws_lc_rs::aead::{AES_128_GCM, AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use rustls::server::ProducesTickets;

use crate::error::TlsError;

/// Length of a key's name, at the head of each ticket.
pub const NAME_LEN: usize = 16;

/// One key read from a file.
struct TicketKey {
    name: [u8; NAME_LEN],
    aead: LessSafeKey,
}

/// Seals with the first key, opens with any.
pub struct FileTicketer {
    keys: Vec<TicketKey>,
    lifetime: u32,
    rng: SystemRandom,
}

impl fmt::Debug for FileTicketer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileTicketer({} keys)", self.keys.len())
    }
}

impl FileTicketer {
    /// Reads nginx-format key files; `lifetime` is `ssl_session_timeout`.
    pub fn from_files(files: &[&Path], lifetime: u32) -> Result<FileTicketer, TlsError> {
        let mut keys = Vec::new();
        for file in files {
            let bytes = std::fs::read(file).map_err(|e| {
                TlsError::Invalid(format!("open() \"{}\" failed ({e})", file.display()))
            })?;
            keys.push(key_from_bytes(&bytes).ok_or_else(|| {
                TlsError::Invalid(format!("\"{}\" must be 48 or 80 bytes", file.display()))
            })?);
        }
        if keys.is_empty() {
            return Err(TlsError::Invalid("no ticket key file".into()));
        }
        Ok(FileTicketer {
            keys,
            lifetime,
            rng: SystemRandom::new(),
        })
    }
}

/// A ticketer under a random 80-byte key (nginx's key generated at start
/// when no `ssl_session_ticket_key` is given), for [`rotating`].
fn random_ticketer() -> Result<Box<dyn ProducesTickets>, rustls::crypto::GetRandomFailed> {
    let mut bytes = [0u8; 80];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| rustls::crypto::GetRandomFailed)?;
    let key = key_from_bytes(&bytes).ok_or(rustls::crypto::GetRandomFailed)?;
    Ok(Box::new(FileTicketer {
        keys: vec![key],
        lifetime: 0,
        rng: SystemRandom::new(),
    }))
}

/// Random keys replaced every `lifetime` seconds (`ssl_session_timeout`),
/// the previous one still opening tickets: nginx's rotation of the keys it
/// makes itself (1.23.2 and later, shared by all workers), so a ticket
/// names a new key once the old one has served a timeout's length.
pub fn rotating(lifetime: u32) -> Result<rustls::TicketRotator, TlsError> {
    rustls::TicketRotator::new(lifetime.max(1), random_ticketer).map_err(TlsError::Rustls)
}

fn key_from_bytes(bytes: &[u8]) -> Option<TicketKey> {
    let (alg, aes) = match bytes.len() {
        48 => (&AES_128_GCM, &bytes[32..48]),
        80 => (&AES_256_GCM, &bytes[48..80]),
        _ => return None,
    };
    let mut name = [0u8; NAME_LEN];
    name.copy_from_slice(&bytes[..NAME_LEN]);
    let aead = LessSafeKey::new(UnboundKey::new(alg, aes).ok()?);
    Some(TicketKey { name, aead })
}

impl ProducesTickets for FileTicketer {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        self.lifetime
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let key = &self.keys[0];
        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).ok()?;
        let mut out = Vec::with_capacity(NAME_LEN + NONCE_LEN + plain.len() + 16);
        out.extend_from_slice(&key.name);
        out.extend_from_slice(&nonce);
        let mut sealed = plain.to_vec();
        key.aead
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&key.name),
                &mut sealed,
            )
            .ok()?;
        out.extend_from_slice(&sealed);
        Some(out)
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        let name = cipher.get(..NAME_LEN)?;
        let nonce: [u8; NONCE_LEN] = cipher
            .get(NAME_LEN..NAME_LEN + NONCE_LEN)?
            .try_into()
            .ok()?;
        let key = self.keys.iter().find(|k| k.name == name)?;
        let mut body = cipher.get(NAME_LEN + NONCE_LEN..)?.to_vec();
        let plain = key
            .aead
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(&key.name),
                &mut body,
            )
            .ok()?;
        Some(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, len: usize, seed: u8) -> std::path::PathBuf {
        let p = dir.join(name);
        let bytes: Vec<u8> = (0..len).map(|i| seed.wrapping_add(i as u8)).collect();
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn seal_with_the_first_open_with_any() {
        let dir = std::env::temp_dir().join(format!("peregrine-tickets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = file(&dir, "old.key", 80, 1);
        let new = file(&dir, "new.key", 48, 100);
        let before = FileTicketer::from_files(&[&old], 300).unwrap();
        let after = FileTicketer::from_files(&[&new, &old], 300).unwrap();
        let t = before.encrypt(b"session state").unwrap();
        assert_eq!(after.decrypt(&t).unwrap(), b"session state");
        let t2 = after.encrypt(b"again").unwrap();
        assert!(before.decrypt(&t2).is_none(), "sealed with a key it lacks");
        let mut forged = t.clone();
        *forged.last_mut().unwrap() ^= 1;
        assert!(after.decrypt(&forged).is_none());
        assert!(after.decrypt(&t[..10]).is_none());
        assert_eq!(after.lifetime(), 300);
        let bad = file(&dir, "bad.key", 47, 0);
        let err = FileTicketer::from_files(&[&bad], 300).unwrap_err();
        assert!(err.to_string().contains("must be 48 or 80 bytes"), "{err}");
    }
}
