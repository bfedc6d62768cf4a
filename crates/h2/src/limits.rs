//! Every limit of the protocol layer, with the attack or resource it
//! bounds. The engine fills [`crate::Config`] from nginx's directives; these
//! are nginx's defaults.

/// `http2_max_concurrent_streams` (nginx default 128): streams the peer may
/// have open at once, advertised as SETTINGS_MAX_CONCURRENT_STREAMS. One
/// more is refused with RST_STREAM(REFUSED_STREAM) (RFC 9113 §5.1.2).
pub const MAX_CONCURRENT_STREAMS: u32 = 128;

/// `http2_body_preread_size` (nginx default 64k): each stream's receive
/// window (SETTINGS_INITIAL_WINDOW_SIZE), so a client can send this much of
/// a request body before the engine reads any of it.
pub const BODY_PREREAD_SIZE: u32 = 64 * 1024;

/// `http2_chunk_size` (nginx default 8k): the most DATA payload one frame
/// of a response carries, so streams interleave fairly.
pub const CHUNK_SIZE: u32 = 8 * 1024;

/// `http2_recv_buffer_size` (nginx default 256k): nginx's per-worker read
/// buffer. Here it is the advice for the engine's read size; a frame never
/// needs more than [`MAX_RECV_FRAME_SIZE`] + 9 bytes of it at once.
pub const RECV_BUFFER_SIZE: usize = 256 * 1024;

/// The largest frame payload we accept: the protocol's initial
/// SETTINGS_MAX_FRAME_SIZE (2^14, RFC 9113 §4.2), which nginx also keeps.
/// We never advertise more, so the engine's buffer needs at most
/// 9 + 16384 bytes for a whole frame.
pub const MAX_RECV_FRAME_SIZE: u32 = 1 << 14;

/// The header list a request may decode to (advertised as
/// SETTINGS_MAX_HEADER_LIST_SIZE; counted as nginx counts its header_limit,
/// names and values). nginx's bound is `large_client_header_buffers`
/// (4 × 8k = 32k). Bounds the HPACK
/// bomb: a small block of indexed references to a large table entry.
pub const MAX_HEADER_LIST_SIZE: u32 = 32 * 1024;

/// The largest decoded field name or value: nginx's bound is the size of
/// one `large_client_header_buffers` buffer (8k); past it the connection
/// ends with ENHANCE_YOUR_CALM, as nginx's "client sent too large header".
pub const MAX_FIELD_SIZE: u32 = 8 * 1024;

/// The encoded header block (HEADERS + CONTINUATION payloads) we buffer
/// before decoding. Bounds the CONTINUATION flood (CVE-2024-27316): the
/// connection fails with ENHANCE_YOUR_CALM as soon as the sum passes this,
/// not when END_HEADERS finally comes. A block longer than the list it
/// decodes to is never needed except for padding-free HPACK bloat, so twice
/// the list bound is generous.
pub const MAX_HEADER_BLOCK_SIZE: usize = 2 * MAX_HEADER_LIST_SIZE as usize;

/// CONTINUATION frames one header block may take. Empty CONTINUATIONs
/// never grow the block, so [`MAX_HEADER_BLOCK_SIZE`] alone would not stop
/// a flood of them (the CVE-2024-27316 class; the `h2` crate's fix counts
/// frames too). A block of the largest size needs 4 frames of 16 KiB; 64
/// allows fragments of 1 KiB.
pub const MAX_CONTINUATION_FRAMES: u32 = 64;

/// Our HPACK decoder's dynamic table (SETTINGS_HEADER_TABLE_SIZE): the
/// protocol default, which nginx keeps. A peer's size update beyond it is a
/// COMPRESSION_ERROR, so the table cannot be grown to eat memory.
pub const HEADER_TABLE_SIZE: u32 = 4096;

/// nginx's flood check (`ngx_http_v2_read_handler`): the connection ends
/// when all bytes received / [`FLOOD_RATIO`] exceed the payload bytes
/// (request heads and DATA payload) + [`FLOOD_ALLOWANCE`]. It catches
/// SETTINGS, PING, empty DATA, WINDOW_UPDATE, PRIORITY and unknown-frame
/// floods alike: any traffic that makes the server work without asking for
/// content.
pub const FLOOD_RATIO: u64 = 8;
/// See [`FLOOD_RATIO`] (nginx: 1048576).
pub const FLOOD_ALLOWANCE: u64 = 1024 * 1024;

/// Rapid reset (CVE-2023-44487): RST_STREAM from the peer on a stream whose
/// response was not finished costs the server the request's work and frees
/// the concurrency slot at once. Each such reset takes one from a budget of
/// this size; each stream that ends normally gives one back. An empty
/// budget ends the connection with GOAWAY(ENHANCE_YOUR_CALM). nginx's own
/// bound is 2 × `http2_max_concurrent_streams` new streams per read event
/// (also applied, see [`Connection::start_read`](crate::Connection::start_read)).
pub const RAPID_RESET_BUDGET: u32 = 2 * MAX_CONCURRENT_STREAMS;

/// nginx's `priority_limit`: PRIORITY frames allowed, the budget starting
/// at max(concurrent streams, 100) and growing by the concurrent streams
/// with each new stream. Past it: GOAWAY(ENHANCE_YOUR_CALM).
pub const PRIORITY_LIMIT_MIN: u32 = 100;

/// Streams the peer closed that we still remember, so that a frame on one
/// of them is told apart from one on a stream that never existed (RFC 9113
/// §5.1: STREAM_CLOSED vs PROTOCOL_ERROR). Older ones count as never seen.
pub const CLOSED_STREAMS_REMEMBERED: usize = 2 * MAX_CONCURRENT_STREAMS as usize;

/// The largest flow-control window (RFC 9113 §6.9.1: 2^31 - 1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// The protocol's initial window, for streams and the connection (§6.9.2).
pub const DEFAULT_WINDOW: u32 = 65_535;

/// nginx ends a connection when 10000 frames wait to be sent
/// (`ngx_http_v2_get_frame`): a peer that sends PINGs or SETTINGS but
/// does not read our answers. Here: the output not yet written, checked as
/// each frame is received, past this many bytes ends the connection.
pub const MAX_UNSENT_OUTPUT: usize = 1 << 20;
