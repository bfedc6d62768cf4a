//! End-to-end tests: the real `peregrine` binary on 127.0.0.1, raw bytes on
//! real sockets, real files. One module per feature.
//!
//! `E2E_SERVER=nginx cargo test --test e2e` runs the server tests against
//! Debian's nginx with the same configurations: how their expectations are
//! checked against the reference.

mod support;

mod abnormal_end;
mod accept;
mod bench;
mod chunked_body;
mod chunked_response;
mod cli;
mod compress_nginx;
mod conditional;
mod gzip;
mod header_rules;
mod http_parsing;
mod keepalive;
mod keepalive_rules;
mod limit_rate;
mod lingering;
mod listen_refused;
mod log_formats;
mod logs;
mod metrics;
mod seeds;
mod servers_locations;
mod signals;
mod static_files;
mod timeouts;
mod tune;
