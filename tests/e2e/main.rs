//! End-to-end tests: the real `peregrine` binary on 127.0.0.1, raw bytes on
//! real sockets, real files. One module per feature.
//!
//! `E2E_SERVER=nginx cargo test --test e2e` runs the server tests against
//! Debian's nginx with the same configurations: how their expectations are
//! checked against the reference.

mod support;

mod accept;
mod bench;
mod cli;
mod compress_nginx;
mod conditional;
mod expires;
mod gzip;
mod headers;
mod http_parsing;
mod index_vars;
mod keepalive;
mod log_formats;
mod logs;
mod metrics;
mod seeds;
mod server_tokens;
mod servers_locations;
mod signals;
mod static_files;
mod timeouts;
mod trailers;
mod tune;
