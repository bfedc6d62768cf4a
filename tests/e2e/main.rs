//! End-to-end tests: the real `peregrine` binary on 127.0.0.1, raw bytes on
//! real sockets, real files. One module per feature.
//!
//! `E2E_SERVER=nginx cargo test --test e2e` runs the server tests against
//! Debian's nginx with the same configurations: how their expectations are
//! checked against the reference.

mod support;

mod abnormal_end;
mod accept;
mod access;
mod auth_basic;
mod autoindex_format;
mod bad_request_pages;
mod bench;
mod binary_upgrade;
mod charset;
mod chunked_body;
mod chunked_response;
mod cli;
mod compress_nginx;
mod conditional;
mod config_watch;
mod conn_vars;
mod empty_gif;
mod error_causes;
mod expires;
mod fastcgi;
mod gzip;
mod h2;
mod header_rules;
mod headers;
mod health;
mod host_rules;
mod http_parsing;
mod index_vars;
mod internal;
mod keepalive;
mod keepalive_rules;
mod limit_rate;
mod lingering;
mod listen_refused;
mod location_error_log;
mod log_flush;
mod log_formats;
mod logs;
mod map;
mod metrics;
mod proxy;
mod proxy_protocol;
mod random_index;
mod ranges_limits;
mod redirects;
mod referer;
mod regex;
mod request_body;
mod resolver;
mod rewrite;
mod secure_link;
mod seeds;
mod server_tokens;
mod servers_locations;
mod signals;
mod socket_activation;
mod split_clients;
mod static_files;
mod symlinks;
mod syslog;
mod temp_paths;
mod timeouts;
mod tls;
mod tls_client;
mod tls_reload;
mod trailers;
mod tune;
mod upstream_blocks;
mod userid;
mod uwsgi_scgi;
mod variables;
// limits
mod geo;
mod limit_conn;
mod limit_except;
mod limit_req;
mod realip;
mod satisfy;
