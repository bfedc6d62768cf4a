//! `ssl_session_ticket_key FILE`: session tickets sealed with keys that
//! every instance reading the same files shares, so a client resumes on any
//! of them (nginx's use of the directive behind a load balancer).
//!
//! The files are nginx's: 48 bytes (a 16-byte name, 16 of HMAC key, 16 of
//! AES key) or 80 bytes (16, 32, 32). The first file's key seals new
//! tickets; every file's opens them, so keys can be rotated by adding a new
//! first file. A ticket is laid out as RFC 5077 (4) recommends and OpenSSL
//! writes it for nginx: the key's name, a random 16-byte IV, the state
//! under AES-CBC (AES-128 for 48-byte files, AES-256 for 80-byte ones) and
//! an HMAC-SHA256 of all that under the file's HMAC key. The state inside
//! is rustls's, not OpenSSL's: tickets are not exchanged with nginx
//! servers, only between Peregrines.
//!
//! [`Expiring`] puts the ticket's issue time (8 bytes, Unix seconds,
//! big-endian) before the state it seals: rustls does not hold a server
//! to the lifetime it announces, and nginx's sessions end after
//! `ssl_session_timeout` (OpenSSL checks a resumed session's time against
//! its timeout), so a ticket older than the lifetime does not open.

use std::fmt;
use std::path::Path;

use aws_lc_rs::cipher::{
    AES_128, AES_256, Algorithm, DecryptionContext, EncryptionContext, PaddedBlockDecryptingKey,
    PaddedBlockEncryptingKey, UnboundCipherKey,
};
use aws_lc_rs::hmac;
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use rustls::server::ProducesTickets;

use crate::error::TlsError;

/// Length of a key's name, at the head of each ticket.
pub const NAME_LEN: usize = 16;

/// The IV after the name (AES's block).
pub const IV_LEN: usize = 16;

/// The HMAC-SHA256 at the end.
pub const MAC_LEN: usize = 32;

/// The issue time at the head of the sealed state.
pub const ISSUED_LEN: usize = 8;

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One key read from a file.
struct TicketKey {
    name: [u8; NAME_LEN],
    mac: hmac::Key,
    alg: &'static Algorithm,
    aes: Vec<u8>,
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
    let (alg, mac, aes) = match bytes.len() {
        48 => (&AES_128, &bytes[16..32], &bytes[32..48]),
        80 => (&AES_256, &bytes[16..48], &bytes[48..80]),
        _ => return None,
    };
    let mut name = [0u8; NAME_LEN];
    name.copy_from_slice(&bytes[..NAME_LEN]);
    Some(TicketKey {
        name,
        mac: hmac::Key::new(hmac::HMAC_SHA256, mac),
        alg,
        aes: aes.to_vec(),
    })
}

impl TicketKey {
    fn seal(&self, plain: &[u8], iv: [u8; IV_LEN]) -> Option<Vec<u8>> {
        let key = UnboundCipherKey::new(self.alg, &self.aes).ok()?;
        let enc = PaddedBlockEncryptingKey::cbc_pkcs7(key).ok()?;
        let mut state = plain.to_vec();
        enc.less_safe_encrypt(&mut state, EncryptionContext::Iv128(iv.into()))
            .ok()?;
        let mut out = Vec::with_capacity(NAME_LEN + IV_LEN + state.len() + MAC_LEN);
        out.extend_from_slice(&self.name);
        out.extend_from_slice(&iv);
        out.extend_from_slice(&state);
        let tag = hmac::sign(&self.mac, &out);
        out.extend_from_slice(tag.as_ref());
        Some(out)
    }

    fn open(&self, ticket: &[u8]) -> Option<Vec<u8>> {
        let body_end = ticket.len().checked_sub(MAC_LEN)?;
        if body_end < NAME_LEN + IV_LEN {
            return None;
        }
        hmac::verify(&self.mac, &ticket[..body_end], &ticket[body_end..]).ok()?;
        let iv: [u8; IV_LEN] = ticket[NAME_LEN..NAME_LEN + IV_LEN].try_into().ok()?;
        let key = UnboundCipherKey::new(self.alg, &self.aes).ok()?;
        let dec = PaddedBlockDecryptingKey::cbc_pkcs7(key).ok()?;
        let mut state = ticket[NAME_LEN + IV_LEN..body_end].to_vec();
        let plain = dec
            .decrypt(&mut state, DecryptionContext::Iv128(iv.into()))
            .ok()?;
        Some(plain.to_vec())
    }
}

impl ProducesTickets for FileTicketer {
    fn enabled(&self) -> bool {
        true
    }

    fn lifetime(&self) -> u32 {
        self.lifetime
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut iv = [0u8; IV_LEN];
        self.rng.fill(&mut iv).ok()?;
        self.keys[0].seal(plain, iv)
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        let name = cipher.get(..NAME_LEN)?;
        self.keys.iter().find(|k| k.name == name)?.open(cipher)
    }
}

/// Length of a [`SessionContext`].
pub const CONTEXT_LEN: usize = 32;

/// What a session may be resumed in (OpenSSL's session id context, which
/// nginx's `ngx_ssl_session_id_context` makes a digest of the block's
/// certificates, or of their names when variables name them, and of its
/// client CAs): a session sealed or stored in one context is not resumed
/// in another, even where the blocks share a cache and its ticket keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionContext(pub [u8; CONTEXT_LEN]);

impl SessionContext {
    /// The SHA-256 of `parts`, each length-prefixed.
    pub fn of<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> SessionContext {
        let mut d = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
        for p in parts {
            d.update(&(p.len() as u64).to_be_bytes());
            d.update(p);
        }
        let mut out = [0u8; CONTEXT_LEN];
        out.copy_from_slice(d.finish().as_ref());
        SessionContext(out)
    }
}

/// Tickets that end after `lifetime` seconds: the issue time goes first
/// in the state the inner ticketer seals (so a client cannot change it),
/// then the [`SessionContext`] the ticket opens in.
#[derive(Debug)]
pub struct Expiring<T> {
    pub inner: T,
    pub lifetime: u32,
    pub context: SessionContext,
}

impl<T: ProducesTickets> ProducesTickets for Expiring<T> {
    fn enabled(&self) -> bool {
        self.inner.enabled()
    }

    fn lifetime(&self) -> u32 {
        self.lifetime
    }

    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        let mut state = Vec::with_capacity(ISSUED_LEN + CONTEXT_LEN + plain.len());
        state.extend_from_slice(&unix_now().to_be_bytes());
        state.extend_from_slice(&self.context.0);
        state.extend_from_slice(plain);
        self.inner.encrypt(&state)
    }

    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        let mut state = self.inner.decrypt(cipher)?;
        let issued = u64::from_be_bytes(state.get(..ISSUED_LEN)?.try_into().ok()?);
        if unix_now().saturating_sub(issued) > u64::from(self.lifetime) {
            return None;
        }
        if state.get(ISSUED_LEN..ISSUED_LEN + CONTEXT_LEN)? != self.context.0 {
            return None;
        }
        state.drain(..ISSUED_LEN + CONTEXT_LEN);
        Some(state)
    }
}

/// Ticket keys several server blocks seal with (see
/// [`crate::config::ServerTls::shared_tickets`]).
#[derive(Debug)]
pub struct Shared(pub std::sync::Arc<dyn ProducesTickets>);

impl ProducesTickets for Shared {
    fn enabled(&self) -> bool {
        self.0.enabled()
    }
    fn lifetime(&self) -> u32 {
        self.0.lifetime()
    }
    fn encrypt(&self, plain: &[u8]) -> Option<Vec<u8>> {
        self.0.encrypt(plain)
    }
    fn decrypt(&self, cipher: &[u8]) -> Option<Vec<u8>> {
        self.0.decrypt(cipher)
    }
}

/// Length of a session's id (OpenSSL's `SSL3_SSL_SESSION_ID_LENGTH`).
pub const SESSION_ID_LEN: usize = 32;

/// A session's id for `$ssl_session_id`: kept in the session (rustls's
/// resumption data, sealed into its tickets and cache entries) so that a
/// resumed session shows the id it was given, as OpenSSL's do; rustls
/// does not expose the TLS 1.2 wire id, and TLS 1.3 has none, so the id
/// is made here, as OpenSSL makes TLS 1.3's. Random, from the system.
/// Limit: rustls reads the resumption data back for TLS 1.3 only, so a
/// resumed TLS 1.2 session shows a new id.
pub fn new_session_id() -> [u8; SESSION_ID_LEN] {
    let mut id = [0u8; SESSION_ID_LEN];
    // A failing system RNG leaves the id zeros: the handshake itself
    // would have failed first.
    let _ = SystemRandom::new().fill(&mut id);
    id
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
        // RFC 5077's layout: name, IV, whole AES blocks, the MAC.
        let name: Vec<u8> = (1..=16).collect();
        assert_eq!(&t[..NAME_LEN], &name[..], "the old file's name");
        assert_eq!((t.len() - NAME_LEN - IV_LEN - MAC_LEN) % 16, 0);
        assert_eq!(after.lifetime(), 300);
        // Past its lifetime a ticket does not open (a 0-second lifetime
        // and a ticket issued two seconds ago, made by hand).
        let short = Expiring {
            inner: FileTicketer::from_files(&[&old], 0).unwrap(),
            lifetime: 0,
            context: SessionContext::default(),
        };
        let long = Expiring {
            inner: FileTicketer::from_files(&[&old], 0).unwrap(),
            lifetime: 300,
            context: SessionContext::default(),
        };
        let mut state = (unix_now() - 2).to_be_bytes().to_vec();
        state.extend_from_slice(&[0; CONTEXT_LEN]);
        state.extend_from_slice(b"old state");
        let stale = short.inner.encrypt(&state).unwrap();
        assert!(short.decrypt(&stale).is_none(), "expired");
        assert_eq!(long.decrypt(&stale).unwrap(), b"old state");
        let fresh = short.encrypt(b"new").unwrap();
        assert_eq!(long.decrypt(&fresh).unwrap(), b"new");
        // Another context (other certificates) does not open it.
        let other = Expiring {
            inner: FileTicketer::from_files(&[&old], 0).unwrap(),
            lifetime: 300,
            context: SessionContext::of([&b"other.crt"[..]]),
        };
        assert!(other.decrypt(&fresh).is_none());
        assert_eq!(other.decrypt(&other.encrypt(b"x").unwrap()).unwrap(), b"x");
        let bad = file(&dir, "bad.key", 47, 0);
        let err = FileTicketer::from_files(&[&bad], 300).unwrap_err();
        assert!(err.to_string().contains("must be 48 or 80 bytes"), "{err}");
    }
}
