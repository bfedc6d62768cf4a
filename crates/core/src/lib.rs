//! peregrine-core: request processing, without I/O.
//!
//! Owns what nginx's http core, static, index, autoindex, range,
//! not-modified, charset and stub_status modules do: select the server block
//! (listen address + Host), select the location, run `return`, `try_files`,
//! `index`, map the URI to a file under `root`/`alias`, answer conditional
//! and range requests, render autoindex listings, error pages and
//! stub_status, and keep the per-worker open-file and memory caches and
//! the static hit fast path's routes (`fastpath`); run the rewrite
//! module's scripts ([`rewrite`]: `rewrite`, `if`, `set`, `return`).
//! The result is a [`Response`] description: status, the header fields as
//! a structured list ([`FieldList`], in nginx's order; serialized only by
//! the engine's protocol writers) and where the body bytes live; the
//! engine writes it.
//!
//! Not owned here: sockets and the event loop (engine), HTTP parsing
//! (codec), compression (compress: [`Response::compressible`] marks the
//! responses the content filter chain may compress — the hook point is
//! where the engine turns a `Response` into bytes), logging (log).

mod access;
mod auth_basic;
mod auth_request;
mod autoindex;
mod autoindex_format;
mod bad_request;
pub mod cache;
mod charset;
mod compress_variant;
mod conditional;
mod date;
mod empty_gif;
mod fastpath;
mod fcache;
pub mod filters;
pub mod fixtures;
mod fxhash;
mod gateway;
mod head;
mod health;
// limits
mod headers;
mod headmemo;
mod http;
mod limit_conn;
mod limit_rate;
mod limit_req;
pub mod limits;
mod locations;
mod log_vars;
mod map;
mod mcache;
pub mod metrics;
mod msie_refresh;
mod phases;
mod post_action;
pub mod proxy;
mod proxy_protocol;
mod random_index;
pub mod range;
mod realip;
mod referer;
pub mod request;
pub mod response;
pub mod rewrite;
mod secure_link;
mod servers;
mod slots;
mod special;
mod split_clients;
pub mod ssl_vars;
mod static_file;
mod static_variants;
mod symlinks;
#[cfg(test)]
mod testdir;
#[cfg(test)]
mod tests;
mod userid;
mod vars;
pub mod zone;
// geo
mod geo;

pub use http::{HttpCore, MAX_URI_CHANGES};
pub use peregrine_codec::fields::{Field, FieldList, SharedFields};
pub use request::{Method, RequestView};
pub use response::{Body, ConnInfo, Head, Response, StatusSource, StubStatus};
pub use vars::request_id;
// stream: `allow`/`deny` in stream servers match as http's.
pub use access::net_matches as access_net_matches;
// tls: the engine picks a TLS server block by SNI with core's lookup.
pub use servers::ServerNames;
