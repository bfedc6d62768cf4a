//! peregrine-compress: response compression as nginx does it.
//!
//! Owns: the decision whether and how to compress a response
//! (ngx_http_gzip_filter_module with ngx_http_gzip_ok, ngx_brotli's filter,
//! zstd-nginx-module's filter: [`decide`], [`choose`]); the nginx-exact
//! reading of `Accept-Encoding` ([`Accepted::from_header`]); the
//! precompressed-file rules of `gzip_static`, `brotli_static` and
//! `zstd_static` ([`static_plan`]); the header side effects of compressing
//! ([`weaken_etag`], [`header_edits`], [`range_handling`], and
//! [`rewrite_head`] for a response's field list); and streaming
//! encoders with bounded memory whose gzip output frames and sizes its
//! deflate stream as nginx does ([`Encoder`], [`compress_all`]).
//!
//! Does not own: parsing configuration (peregrine-conf gives the typed
//! [`peregrine_conf::model::GzipConf`] and
//! [`peregrine_conf::model::CompressConf`]), HTTP parsing or writing, file
//! access (core stats the `.gz`/`.br`/`.zst` siblings and edits headers),
//! chunked framing, or caching compressed bodies.

mod accept;
mod brotli_enc;
mod coding;
mod decide;
mod effects;
mod encoder;
mod error;
mod gzip;
mod head;
mod static_files;
mod user_agent;
mod zstd_enc;

#[cfg(test)]
mod testdata;

pub use coding::{Accepted, Coding};
pub use decide::{
    Decision, Policy, RequestFacts, ResponseFacts, choose, decide, gzip_ok, type_matches,
};
pub use effects::{
    HeaderEdits, RangeHandling, VARY_ACCEPT_ENCODING, header_edits, range_handling, weaken_etag,
};
pub use encoder::{Encoder, compress_all};
pub use error::CompressError;
pub use gzip::{GZIP_HEADER, nginx_memory};
pub use head::{Encoded, rewrite_head};
pub use static_files::{StaticPlan, StaticProbe, static_candidate, static_plan};
pub use user_agent::is_msie6;
