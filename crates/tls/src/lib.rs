//! peregrine-tls: nginx's `ssl_*` settings turned into what the TLS
//! library needs.
//!
//! Owns the translation of nginx's OpenSSL-flavoured settings: the cipher
//! string language of `ssl_ciphers` ([`ciphers`], evaluated over OpenSSL
//! 3.0's suite table so that what OpenSSL accepts is accepted and `no
//! cipher match` is said when OpenSSL says it) and its mapping onto the
//! suites rustls has), protocols, curves, certificates and the choice
//! between several of them, session cache and tickets: one server block's
//! settings become one rustls `ServerConfig` ([`config::ServerTls`]).
//!
//! The client side for `proxy_pass https://` is [`upstream`].
//!
//! Not owned: reading the directives (peregrine-conf), the handshake and
//! records on sockets (the engine's TLS transport, issue 20).

#![forbid(unsafe_code)]

pub mod certs;
pub mod cipher_table;
pub mod ciphers;
pub mod client;
pub mod config;
pub mod crl;
pub mod der;
pub mod error;
pub mod keys;
pub mod names;
pub mod ocsp;
#[cfg(test)]
mod testdata;
pub mod tickets;
pub mod upstream;
