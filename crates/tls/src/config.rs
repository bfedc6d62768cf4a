//! One server block's TLS settings, as nginx's `ssl_*` directives give
//! them, turned into a rustls `ServerConfig` (the aws-lc-rs provider).
//!
//! The parts of nginx's OpenSSL vocabulary rustls has no counterpart for
//! are said, not hidden: protocols below TLS 1.2 and curves rustls lacks
//! are dropped with a warning ([`Built::warnings`]), and a setting that
//! leaves nothing usable is an error in nginx's words.

use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::crypto::aws_lc_rs::{self as provider, cipher_suite as cs, kx_group};
use rustls::server::{ServerSessionMemoryCache, StoresServerSessions};
use rustls::{ServerConfig, SupportedCipherSuite, SupportedProtocolVersion};

use crate::certs::{CertPair, Resolver, load_pair_with};
use crate::ciphers::{self, NoCipherMatch};
use crate::error::TlsError;
use crate::tickets::{Expiring, SessionContext};

/// nginx's default `ssl_protocols` (1.23.4 and later).
pub const DEFAULT_PROTOCOLS: &[&str] = &["TLSv1.2", "TLSv1.3"];

/// nginx's default `ssl_session_timeout`.
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(300);

/// Sessions held per megabyte of `ssl_session_cache shared:NAME:SIZE`:
/// nginx's documentation says one megabyte stores about 4000 sessions.
pub const SESSIONS_PER_MEGABYTE: usize = 4000;

/// What one server block asks for.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// `ssl_certificate` / `ssl_certificate_key` pairs, in order.
    pub certificates: Vec<CertPair>,
    /// `ssl_protocols` as written.
    pub protocols: Vec<String>,
    /// `ssl_ciphers` (OpenSSL's language; TLS 1.2 suites only, as nginx).
    pub ciphers: String,
    /// `ssl_prefer_server_ciphers`.
    pub prefer_server_ciphers: bool,
    /// `ssl_ecdh_curve`: `auto` or a `:`-separated list of names.
    pub ecdh_curve: String,
    /// `ssl_session_tickets`.
    pub session_tickets: bool,
    /// `ssl_session_timeout`.
    pub session_timeout: Duration,
    /// `ssl_session_ticket_key` files, in order (the first seals).
    pub ticket_keys: Vec<std::path::PathBuf>,
    /// ALPN protocols offered, in preference order (`h2`, `http/1.1`).
    pub alpn: Vec<Vec<u8>>,
    /// `ssl_buffer_size`: the largest record's plaintext.
    pub buffer_size: usize,
    /// `ssl_stapling_file` under `ssl_stapling on`: the DER OCSP response
    /// stapled to every certificate of the block.
    pub stapling_file: Option<std::path::PathBuf>,
    /// `ssl_verify_client` other than `off`.
    pub client_auth: Option<crate::client::ClientAuthConf>,
    /// `ssl_password_file`'s passwords, tried in order on encrypted keys.
    pub passwords: Vec<String>,
    /// `ssl_stapling on` without a file: responses fetched from the
    /// responder ([`crate::ocsp`]), asked at `ssl_stapling_responder` or
    /// the certificate's URL; `ssl_stapling_verify` checks who signed.
    pub stapling_fetch: bool,
    pub stapling_responder: Option<String>,
    pub stapling_verify: bool,
    /// `ssl_trusted_certificate`: where a certificate's issuer may be
    /// found for OCSP.
    pub trusted_certificate: Option<std::path::PathBuf>,
    /// What this block's sessions resume in ([`SessionContext`]).
    pub session_context: SessionContext,
    /// The ticket keys of the `shared:NAME` cache the block uses, shared
    /// by every block using it (nginx keeps them in the shared zone when
    /// no `ssl_session_ticket_key` is given); `None`: the block's own.
    pub shared_tickets: Option<Arc<dyn rustls::server::ProducesTickets>>,
    /// The pairs name variables (nginx's `certificate_values`): none is
    /// loaded here; each handshake's are, by [`with_certificates`].
    pub dynamic: bool,
}

impl Default for ServerTls {
    fn default() -> Self {
        ServerTls {
            certificates: Vec::new(),
            protocols: DEFAULT_PROTOCOLS.iter().map(|s| s.to_string()).collect(),
            ciphers: ciphers::NGINX_DEFAULT.to_string(),
            prefer_server_ciphers: false,
            ecdh_curve: "auto".to_string(),
            session_tickets: true,
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            ticket_keys: Vec::new(),
            alpn: vec![b"http/1.1".to_vec()],
            buffer_size: MAX_FRAGMENT,
            stapling_file: None,
            client_auth: None,
            passwords: Vec::new(),
            stapling_fetch: false,
            stapling_responder: None,
            stapling_verify: false,
            trusted_certificate: None,
            session_context: SessionContext::default(),
            shared_tickets: None,
            dynamic: false,
        }
    }
}

/// The session cache servers share (`ssl_session_cache shared:NAME:SIZE`;
/// workers are threads, so one in-memory cache is shared by all of them).
pub fn session_cache(megabytes: usize) -> Arc<dyn StoresServerSessions> {
    ServerSessionMemoryCache::new(megabytes.max(1) * SESSIONS_PER_MEGABYTE)
}

/// One server block's view of a session cache: each session stored with
/// its expiry, and none handed back after it (nginx's sessions in the
/// shared cache live `ssl_session_timeout` each; rustls's memory cache has
/// no time). Blocks sharing `shared:NAME` keep their own timeouts, as in
/// nginx, where the expiry is the storing server's.
#[derive(Debug)]
struct TimedSessions {
    inner: Arc<dyn StoresServerSessions>,
    timeout: u64,
    /// Put before each key: a session stored in one context is not found
    /// from another sharing the cache.
    context: SessionContext,
}

/// The expiry at the head of a stored session (Unix seconds, big-endian).
const EXPIRY_LEN: usize = 8;

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl TimedSessions {
    fn unexpired(value: Vec<u8>) -> Option<Vec<u8>> {
        let expiry = u64::from_be_bytes(value.get(..EXPIRY_LEN)?.try_into().ok()?);
        (unix_now() <= expiry).then(|| value[EXPIRY_LEN..].to_vec())
    }
}

impl TimedSessions {
    fn key(&self, key: &[u8]) -> Vec<u8> {
        [&self.context.0[..], key].concat()
    }
}

impl StoresServerSessions for TimedSessions {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let key = self.key(&key);
        let expiry = unix_now().saturating_add(self.timeout);
        let mut stored = Vec::with_capacity(EXPIRY_LEN + value.len());
        stored.extend_from_slice(&expiry.to_be_bytes());
        stored.extend_from_slice(&value);
        self.inner.put(key, stored)
    }
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        Self::unexpired(self.inner.get(&self.key(key))?)
    }
    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        Self::unexpired(self.inner.take(&self.key(key))?)
    }
    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

/// The largest record plaintext TLS allows (RFC 8446, 5.1), nginx's
/// `ssl_buffer_size` default.
pub const MAX_FRAGMENT: usize = 16384;

/// The smallest record plaintext rustls writes.
pub const MIN_FRAGMENT: usize = 32;

/// A built configuration and what was dropped on the way.
pub struct Built {
    pub config: Arc<ServerConfig>,
    pub warnings: Vec<String>,
    /// The chain check after the handshake, when certificates are asked.
    pub client_auth: Option<Arc<crate::client::ClientAuth>>,
    /// The certificates to keep stapled from their responders.
    pub staplers: Vec<crate::ocsp::Stapler>,
}

impl ServerTls {
    /// Loads the certificates and builds the rustls configuration.
    pub fn build(&self, cache: Option<Arc<dyn StoresServerSessions>>) -> Result<Built, TlsError> {
        let mut warnings = Vec::new();
        let versions = protocol_versions(&self.protocols, &mut warnings)?;
        let suites = cipher_suites(&self.ciphers)?;
        let kx_groups = kx_groups(&self.ecdh_curve, &mut warnings)?;
        let provider = CryptoProvider {
            cipher_suites: suites,
            kx_groups,
            ..provider::default_provider()
        };
        let ocsp = match &self.stapling_file {
            Some(p) => Some(std::fs::read(p).map_err(|e| {
                TlsError::Invalid(format!("BIO_new_file(\"{}\") failed ({e})", p.display()))
            })?),
            None => None,
        };
        let mut keys = Vec::new();
        let mut names = Vec::new();
        let loaded: &[CertPair] = if self.dynamic {
            &[]
        } else {
            &self.certificates
        };
        for pair in loaded {
            let mut key = load_pair_with(pair, &self.passwords, &provider)?;
            key.ocsp = ocsp.clone();
            let key = Arc::new(key);
            names.push((key.clone(), pair.cert.display().to_string()));
            keys.push(key);
        }
        if keys.is_empty() && !self.dynamic {
            return Err(TlsError::NoCertificate);
        }
        let resolver = Arc::new(Resolver::new(keys));
        let staplers = if self.stapling_fetch {
            self.staplers(&resolver, &names, &mut warnings)?
        } else {
            Vec::new()
        };
        let provider = Arc::new(provider);
        let client_auth = match &self.client_auth {
            Some(c) => Some(Arc::new(c.load(&provider)?)),
            None => None,
        };
        let builder = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&versions)
            .map_err(TlsError::Rustls)?;
        let builder = match &client_auth {
            Some(c) => builder.with_client_cert_verifier(c.asker.clone()),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(resolver);
        if self.buffer_size < MAX_FRAGMENT {
            config.max_fragment_size = Some(self.buffer_size.max(MIN_FRAGMENT));
        }
        config.ignore_client_order = self.prefer_server_ciphers;
        config.alpn_protocols = self.alpn.clone();
        match cache {
            Some(cache) => {
                config.session_storage = Arc::new(TimedSessions {
                    inner: cache,
                    timeout: self.session_timeout.as_secs(),
                    context: self.session_context,
                })
            }
            None => config.session_storage = Arc::new(rustls::server::NoServerSessionStorage {}),
        }
        if self.session_tickets {
            let lifetime = u32::try_from(self.session_timeout.as_secs()).unwrap_or(u32::MAX);
            let context = self.session_context;
            config.ticketer = if !self.ticket_keys.is_empty() {
                let files: Vec<&std::path::Path> =
                    self.ticket_keys.iter().map(|p| p.as_path()).collect();
                Arc::new(Expiring {
                    inner: crate::tickets::FileTicketer::from_files(&files, lifetime)?,
                    lifetime,
                    context,
                })
            } else if let Some(shared) = &self.shared_tickets {
                Arc::new(Expiring {
                    inner: crate::tickets::Shared(shared.clone()),
                    lifetime,
                    context,
                })
            } else {
                Arc::new(Expiring {
                    inner: crate::tickets::rotating(lifetime)?,
                    lifetime,
                    context,
                })
            };
        }
        Ok(Built {
            config: Arc::new(config),
            warnings,
            client_auth,
            staplers,
        })
    }

    /// The OCSP questions of the pairs `resolver` kept; a pair without an
    /// issuer or a responder is left unstapled with nginx's warning.
    fn staplers(
        &self,
        resolver: &Arc<Resolver>,
        names: &[(Arc<rustls::sign::CertifiedKey>, String)],
        warnings: &mut Vec<String>,
    ) -> Result<Vec<crate::ocsp::Stapler>, TlsError> {
        let trusted = match &self.trusted_certificate {
            Some(p) => crate::client::read_certs(p)?,
            None => Vec::new(),
        };
        let mut out = Vec::new();
        for (i, key) in resolver.keys().iter().enumerate() {
            let name = names
                .iter()
                .find(|(k, _)| Arc::ptr_eq(k, key))
                .map_or("", |(_, n)| n.as_str());
            match crate::ocsp::query(
                &key.cert,
                &trusted,
                self.stapling_responder.as_deref(),
                name,
                self.stapling_verify,
            ) {
                Ok(q) => out.push(crate::ocsp::Stapler::new(q, resolver, i)),
                Err(w) => warnings.push(w),
            }
        }
        Ok(out)
    }
}

/// A server block's configuration `base` (built with
/// [`ServerTls::dynamic`]) serving `pairs`, the values its certificates
/// named for one handshake (nginx's `ngx_ssl_connection_certificate`).
/// Sessions and tickets stay `base`'s.
pub fn with_certificates(
    base: &ServerConfig,
    pairs: &[CertPair],
    passwords: &[String],
) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = base.crypto_provider().clone();
    let mut keys = Vec::with_capacity(pairs.len());
    for pair in pairs {
        keys.push(Arc::new(load_pair_with(pair, passwords, &provider)?));
    }
    let mut config = base.clone();
    config.cert_resolver = Arc::new(Resolver::new(keys));
    Ok(Arc::new(config))
}

/// `ssl_protocols`: TLS 1.2 and 1.3; older ones are dropped with a warning
/// (rustls does not implement them, and neither should a server today).
pub fn protocol_versions(
    names: &[String],
    warnings: &mut Vec<String>,
) -> Result<Vec<&'static SupportedProtocolVersion>, TlsError> {
    let mut out = Vec::new();
    for name in names {
        match name.as_str() {
            "TLSv1.2" => out.push(&rustls::version::TLS12),
            "TLSv1.3" => out.push(&rustls::version::TLS13),
            "SSLv2" | "SSLv3" | "TLSv1" | "TLSv1.1" => warnings.push(format!(
                "\"ssl_protocols\" {name} is not supported by Peregrine (rustls has TLS 1.2 and 1.3 only): dropped"
            )),
            other => return Err(TlsError::Invalid(format!("invalid value \"{other}\""))),
        }
    }
    if out.is_empty() {
        return Err(TlsError::Invalid(
            "no protocol Peregrine supports in \"ssl_protocols\" (TLSv1.2, TLSv1.3)".into(),
        ));
    }
    Ok(out)
}

/// `ssl_ciphers` onto the provider's suites: the TLS 1.3 suites always (as
/// nginx, whose `ssl_ciphers` does not reach them), then the TLS 1.2 ones
/// OpenSSL would enable, in its order.
pub fn cipher_suites(spec: &str) -> Result<Vec<SupportedCipherSuite>, TlsError> {
    let chosen = ciphers::evaluate(spec).map_err(|NoCipherMatch| TlsError::NoCipherMatch {
        spec: spec.to_string(),
    })?;
    let mut out = vec![
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_AES_128_GCM_SHA256,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
    ];
    for c in chosen {
        let suite = match c.name {
            "ECDHE-ECDSA-AES256-GCM-SHA384" => cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            "ECDHE-ECDSA-AES128-GCM-SHA256" => cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            "ECDHE-ECDSA-CHACHA20-POLY1305" => cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            "ECDHE-RSA-AES256-GCM-SHA384" => cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            "ECDHE-RSA-AES128-GCM-SHA256" => cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            "ECDHE-RSA-CHACHA20-POLY1305" => cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
            _ => continue,
        };
        out.push(suite);
    }
    Ok(out)
}

/// `ssl_ecdh_curve`: `auto` is the provider's default groups; names are
/// OpenSSL's (and the TLS registry's); curves rustls lacks are dropped with
/// a warning, a list left empty is OpenSSL's error.
pub fn kx_groups(
    spec: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<&'static dyn rustls::crypto::SupportedKxGroup>, TlsError> {
    if spec == "auto" {
        return Ok(provider::DEFAULT_KX_GROUPS.to_vec());
    }
    let mut out: Vec<&'static dyn rustls::crypto::SupportedKxGroup> = Vec::new();
    for name in spec.split(':') {
        let group: &'static dyn rustls::crypto::SupportedKxGroup = match name {
            "X25519" | "x25519" => kx_group::X25519,
            "prime256v1" | "secp256r1" | "P-256" => kx_group::SECP256R1,
            "secp384r1" | "P-384" => kx_group::SECP384R1,
            "X25519MLKEM768" => kx_group::X25519MLKEM768,
            "secp521r1" | "P-521" | "X448" | "x448" | "ffdhe2048" | "ffdhe3072" | "ffdhe4096" => {
                warnings.push(format!(
                    "\"ssl_ecdh_curve\" {name} is not supported by Peregrine: dropped"
                ));
                continue;
            }
            _ => return Err(curves_failed(spec)),
        };
        out.push(group);
    }
    if out.is_empty() {
        return Err(curves_failed(spec));
    }
    Ok(out)
}

fn curves_failed(spec: &str) -> TlsError {
    TlsError::Invalid(format!("SSL_CTX_set1_curves_list(\"{spec}\") failed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_drop_the_old_ones_with_a_warning() {
        let mut w = Vec::new();
        let names = ["TLSv1", "TLSv1.1", "TLSv1.2"].map(String::from);
        let v = protocol_versions(&names, &mut w).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(protocol_versions(&["TLSv1".to_string()], &mut w).is_err());
        assert!(protocol_versions(&["TLSv9".to_string()], &mut w).is_err());
    }

    #[test]
    fn ciphers_map_in_openssl_order() {
        let s = cipher_suites("ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256").unwrap();
        let names: Vec<String> = s[3..].iter().map(|s| format!("{:?}", s.suite())).collect();
        assert_eq!(
            names,
            [
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            ]
        );
        // Accepted by OpenSSL, none in rustls: TLS 1.3 only.
        assert_eq!(cipher_suites("AES128-SHA").unwrap().len(), 3);
        assert!(matches!(
            cipher_suites("RC4"),
            Err(TlsError::NoCipherMatch { .. })
        ));
        // nginx's default selects all six TLS 1.2 suites rustls has.
        assert_eq!(cipher_suites(ciphers::NGINX_DEFAULT).unwrap().len(), 9);
    }

    #[test]
    fn sessions_expire_after_the_timeout() {
        let inner = session_cache(1);
        let live = TimedSessions {
            inner: inner.clone(),
            timeout: 300,
            context: SessionContext::default(),
        };
        assert!(live.put(b"id".to_vec(), b"state".to_vec()));
        assert_eq!(live.get(b"id").as_deref(), Some(&b"state"[..]));
        // Stored a second ago with no time to live.
        let past = (unix_now() - 1).to_be_bytes();
        inner.put(
            [&[0; 32][..], b"old"].concat(),
            [&past[..], b"state"].concat(),
        );
        // Another context sharing the cache does not find the session.
        let other = TimedSessions {
            inner: inner.clone(),
            timeout: 300,
            context: SessionContext::of([&b"other"[..]]),
        };
        assert_eq!(other.get(b"id"), None);
        assert_eq!(live.get(b"old"), None);
        assert_eq!(live.take(b"old"), None);
        assert_eq!(live.take(b"id").as_deref(), Some(&b"state"[..]));
    }

    #[test]
    fn curves() {
        let mut w = Vec::new();
        assert_eq!(
            kx_groups("X25519:secp521r1:prime256v1", &mut w)
                .unwrap()
                .len(),
            2
        );
        assert_eq!(w.len(), 1);
        assert!(kx_groups("bogus", &mut w).is_err());
        assert!(kx_groups("secp521r1", &mut w).is_err());
        assert!(!kx_groups("auto", &mut w).unwrap().is_empty());
    }
}
