//! Why a server block's TLS settings could not be used, in nginx's words
//! where nginx has words for it; the cause kept.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// nginx: `cannot load certificate "PATH": ...`.
    #[error("cannot load certificate \"{}\": {reason}", path.display())]
    Certificate { path: PathBuf, reason: String },
    /// nginx: `cannot load certificate key "PATH": ...`.
    #[error("cannot load certificate key \"{}\": {reason}", path.display())]
    Key { path: PathBuf, reason: String },
    /// The key does not belong to the certificate (nginx:
    /// `SSL_CTX_use_PrivateKey("PATH") failed (... key values mismatch)`).
    #[error("SSL_CTX_use_PrivateKey(\"{}\") failed (key values mismatch)", path.display())]
    KeyMismatch { path: PathBuf },
    /// nginx: `SSL_CTX_set_cipher_list("SPEC") failed (SSL: ... no cipher match)`.
    #[error("SSL_CTX_set_cipher_list(\"{spec}\") failed (SSL: no cipher match)")]
    NoCipherMatch { spec: String },
    /// nginx: `no "ssl_certificate" is defined for the "listen ... ssl" directive`.
    #[error("no \"ssl_certificate\" is defined")]
    NoCertificate,
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Rustls(#[source] rustls::Error),
}
