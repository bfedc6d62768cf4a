//! Sans-I/O HTTP/2 for Peregrine, server side (RFC 9113, HPACK RFC 7541).
//!
//! Owns: the protocol of one connection as a state machine over bytes.
//! [`Connection::recv`] takes what the socket gave and returns, one frame
//! at a time, [`Progress::Partial`] (more bytes needed, as the HTTP/1
//! codec's `Partial`) or the bytes consumed with an [`Event`] for the
//! engine (a request, body bytes, trailers, a reset, a window that opened,
//! the peer's GOAWAY). Everything the protocol answers by itself (SETTINGS
//! ACK, PING ACK, WINDOW_UPDATE, RST_STREAM for stream errors, GOAWAY for
//! connection errors) goes into [`Connection::output`], with the frames
//! the engine asks for: response heads ([`Connection::send_headers`]),
//! DATA within the peer's windows ([`Connection::data_frame`] grants a
//! frame header for a payload the caller owns, so bodies are never
//! copied), trailers, resets, GOAWAY (immediate, or the graceful two steps
//! of [`Connection::shutdown`]). The connection preface, SETTINGS, every
//! frame's validation with the error the RFC gives it, stream states, flow
//! control in both directions, request pseudo-header rules, and the limits
//! that close the known attacks (see [`limits`]) are all here.
//!
//! Does not own: sockets, TLS and ALPN, the h2c preface sniffing, timers
//! (idle, send and the shutdown PING's answer: the engine's, with
//! [`Connection::is_stalled`] and [`Connection::open_streams`] to see
//! state), scheduling between streams (the session decides which stream
//! sends next, in the order [`Connection::send_order`] gives from the
//! RFC 7540 dependency tree of [`priority`]; [`Connection::sendable`]
//! tells how much each may send), what a request means (core), logging.
//!
//! Why hand-written: the `h2` crate is bound to tokio's I/O traits, keeps
//! stream state behind a mutex and copies every body into its own buffers;
//! the engine runs its own mio loop and writes bodies from the memory cache
//! and files. Here no I/O, no runtime, no allocation per frame (the
//! header block and field buffers are reused), and the input can be split
//! anywhere (the tests feed every split, the fuzz target random frames).
//!
//! Conformance: h2spec 2.0.0 passed all 146 cases over h2c against
//! `examples/h2c_server.rs` (2026-12-01; nginx 1.22 passes 119). Since
//! then nginx's answers win where nginx and RFC 9113 differ, as nginx's
//! own test suite checks them: a malformed request head is a 400 response
//! (RFC: stream error), HEADERS on a closed stream and a self-dependency
//! are connection errors PROTOCOL_ERROR (RFC: STREAM_CLOSED, stream
//! error), graceful shutdown is one GOAWAY with the last stream (RFC §6.8
//! suggests two around a PING), and a Huffman string may end with up to
//! 15 bits of padding (RFC: 7). The `h2` crate talks to the same loop in
//! `tests/interop.rs`.

#![forbid(unsafe_code)]

mod connection;
pub mod error;
pub mod flow;
pub mod frame;
pub mod hpack;
mod huffman;
pub mod limits;
pub mod priority;
mod recv;
pub mod request;
mod send;
pub mod settings;
pub mod stream;

#[cfg(test)]
mod tests;

pub use connection::{Config, Connection, Event, Incomplete, Progress};
pub use error::{ConnError, ErrorCode, SendError};
pub use hpack::FieldList;
pub use request::RequestHead;
pub use send::{DataFrame, encode_response_head};
pub use stream::{Priority, StreamState};
