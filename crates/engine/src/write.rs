//! Response output: the head as nginx's header filter lays it out, then the
//! body with `writev` (memory) or `sendfile`/`pread` (files), resumable after
//! a partial write.

use std::io::{self, IoSlice, Write};
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::time::Duration;

use peregrine_codec::fields::{Field, FieldList, Wire};
use peregrine_conf::model::ServerTokens;
use peregrine_core::{Body, Head, Response};

use crate::compress::Compressing;
use crate::pool::{FILE_BUF_SIZE, Pool};
use crate::transport::Sink;

use peregrine_codec::response::CONTINUE;
/// Most slices gathered into one `writev` (head + memory body pieces).
const MAX_IOV: usize = 16;
/// A memory body up to this size is copied behind the head so the response
/// leaves in one `send` of one buffer: copying a few kilobytes costs less
/// than the kernel's per-call `iovec` import and per-segment copy setup
/// (`writev` → `import_iovec`, `tcp_sendmsg` walking the segments), and a
/// small static file from the memory cache is the most common response.
const INLINE_BODY_MAX: usize = 4096;
/// A head buffer grown past this (a huge head, or a small body behind it)
/// is freed rather than kept with its pooled exchange.
const MAX_KEPT_HEAD: usize = 16 * 1024;
/// A piece list longer than this (a multipart/byteranges answer) is freed
/// rather than kept with its pooled exchange.
const MAX_KEPT_PIECES: usize = 64;
/// Encoder output gathered before it is framed and sent as one chunk.
const MIN_CHUNK: usize = 16 * 1024;

/// How the connection header block reads.
pub struct ConnHeader {
    pub keepalive: bool,
    /// `Keep-Alive: timeout=N` (second argument of keepalive_timeout).
    pub keepalive_header: Option<Duration>,
}

/// What follows every head's status line, up to the `Date` value (one
/// text for [`SERVER_DATE`] and [`OK_START`]): `server_tokens on`, the
/// default (nginx's `Server: nginx/VERSION`; the codec's `SERVER_VERSION`,
/// which a test holds equal).
macro_rules! server_date {
    () => {
        concat!(
            "Server: nginx/",
            peregrine_codec::nginx_version!(),
            "\r\nDate: "
        )
    };
}
const SERVER_DATE: &[u8] = server_date!().as_bytes();
/// The same with `server_tokens off` (nginx's `Server: nginx`).
const SERVER_DATE_OFF: &[u8] = b"Server: nginx\r\nDate: ";
/// The same with `server_tokens build` (the codec's `SERVER_BUILD`).
const SERVER_DATE_BUILD: &[u8] = concat!(
    "Server: nginx/",
    peregrine_codec::nginx_version!(),
    " (peregrine/",
    env!("CARGO_PKG_VERSION"),
    ")\r\nDate: "
)
.as_bytes();
/// The start of a `200 OK` head up to the `Date` value: the codec's
/// status line for 200 (a test holds them equal), then [`SERVER_DATE`].
const OK_START: &[u8] = concat!("HTTP/1.1 200 OK\r\n", server_date!()).as_bytes();
/// An IMF-fixdate's length (RFC 9110, 5.6.7).
const DATE_LEN: usize = 29;
const OK_LEN: usize = OK_START.len() + DATE_LEN + 2;

/// The first lines of a `200 OK` head in the current second, ready to copy
/// at once: the event loop patches the date in when it changes (once a
/// second), so a response copies one run of bytes instead of assembling
/// the status line, `Server` and `Date` piece by piece.
pub struct HeadStart {
    ok: [u8; OK_LEN],
}

impl HeadStart {
    pub fn new(date: &[u8]) -> HeadStart {
        let mut ok = [0; OK_LEN];
        ok[..OK_START.len()].copy_from_slice(OK_START);
        ok[OK_LEN - 2..].copy_from_slice(b"\r\n");
        let mut h = HeadStart { ok };
        h.set_date(date);
        h
    }

    /// Puts `date` (an IMF-fixdate, 29 bytes; anything else is ignored) in.
    pub fn set_date(&mut self, date: &[u8]) {
        let at = &mut self.ok[OK_START.len()..OK_LEN - 2];
        if date.len() == DATE_LEN && at != date {
            at.copy_from_slice(date);
        }
    }

    /// The current IMF-fixdate (`Date`'s value).
    pub(crate) fn date(&self) -> &[u8] {
        &self.ok[OK_START.len()..OK_LEN - 2]
    }
}

/// `Server`'s value for `server_tokens` (the HTTP/2 session's, from the
/// same constants as the HTTP/1 lines).
pub(crate) fn server_value(tokens: ServerTokens) -> &'static [u8] {
    let line = match tokens {
        ServerTokens::On => SERVER_DATE,
        ServerTokens::Off => SERVER_DATE_OFF,
        ServerTokens::Build => SERVER_DATE_BUILD,
    };
    let v = line.strip_prefix(b"Server: ").unwrap_or(line);
    v.strip_suffix(b"\r\nDate: ").unwrap_or(v)
}

/// Serializes the whole head into `out`: status line, `Server`, `Date`, the
/// fields before the list's split, `Connection` (+`Keep-Alive`), the rest,
/// blank line. This is the one place a response head becomes HTTP/1 text.
/// A list shared by a cache keeps its lines (`FieldList::wire`), so a
/// cache hit copies them instead of writing each field again.
/// Always inlined (the plain response's caller, and the proxy's): as a
/// call it cost the plain response some 40 instructions, and with the
/// proxy's second caller LLVM stopped inlining it by itself.
#[inline(always)]
pub fn serialize_head(
    out: &mut Vec<u8>,
    resp: &Response,
    start: &HeadStart,
    conn: &ConnHeader,
    expect_continue: bool,
) {
    let wire = match &resp.head {
        Head::Shared(l) => Some(l.wire().get_or_init(|| field_lines(l.list()))),
        Head::Owned(_) => None,
    };
    // One reservation for the usual head (the longest Connection line, no
    // Keep-Alive, no 100 Continue): the copies below then never reallocate.
    let fields_len = wire.map_or(OWNED_FIELDS_GUESS, |w| w.0.len());
    out.reserve(OK_LEN + fields_len + CONNECTION_KEEP_ALIVE.len() + 2);
    if expect_continue {
        out.extend_from_slice(CONTINUE);
    }
    let tokens = resp
        .conf
        .as_ref()
        .map_or(ServerTokens::On, |c| c.server_tokens);
    let (own_server, own_date) = resp.head.own_server_and_date();
    if resp.status == 200 && tokens == ServerTokens::On && own_server && own_date {
        out.extend_from_slice(&start.ok);
    } else {
        out.extend_from_slice(peregrine_codec::response::status_line(
            peregrine_codec::Version::Http11,
            resp.status,
        ));
        if own_server {
            out.extend_from_slice(b"Server: ");
            out.extend_from_slice(server_value(tokens));
            out.extend_from_slice(b"\r\n");
        }
        if own_date {
            out.extend_from_slice(b"Date: ");
            out.extend_from_slice(start.date());
            out.extend_from_slice(b"\r\n");
        }
    }
    // Where nginx's header filter puts Connection (after Content-Type,
    // Content-Length, Last-Modified, Location, Transfer-Encoding).
    match wire {
        Some((lines, split)) => out.extend_from_slice(&lines[..*split]),
        None => push_fields(out, resp.head.first()),
    }
    if conn.keepalive {
        out.extend_from_slice(CONNECTION_KEEP_ALIVE);
        if let Some(t) = conn.keepalive_header {
            let _ = write!(out, "Keep-Alive: timeout={}\r\n", t.as_secs());
        }
    } else {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    match wire {
        Some((lines, split)) => out.extend_from_slice(&lines[*split..]),
        None => push_fields(out, resp.head.rest()),
    }
    out.extend_from_slice(b"\r\n");
}

/// A guess at an uncached head's fields, for the one reservation.
const OWNED_FIELDS_GUESS: usize = 256;

/// Appends `fields` as `Name: value\r\n` lines.
#[inline]
fn push_fields(out: &mut Vec<u8>, fields: &[Field]) {
    for f in fields {
        f.name.write_to(out);
        out.extend_from_slice(b": ");
        f.value.write_to(out);
        out.extend_from_slice(b"\r\n");
    }
}

/// The fields as `Name: value\r\n` lines, and the offset of the first
/// field after the list's split.
pub fn field_lines(l: &FieldList) -> Wire {
    let size: usize = l
        .fields()
        .iter()
        .map(|f| f.name.len() + f.value.len() + 4)
        .sum();
    let mut b = Vec::with_capacity(size);
    push_fields(&mut b, l.first());
    let split = b.len();
    push_fields(&mut b, l.rest());
    (b.into_boxed_slice(), split)
}

const CONNECTION_KEEP_ALIVE: &[u8] = b"Connection: keep-alive\r\n";

/// One leaf of a body still to send.
pub(crate) enum Piece {
    Mem {
        data: MemRef,
        pos: usize,
    },
    File {
        file: Rc<std::fs::File>,
        offset: u64,
        left: u64,
    },
}

pub(crate) enum MemRef {
    Static(&'static [u8]),
    Shared(std::sync::Arc<[u8]>),
}

impl MemRef {
    fn bytes(&self) -> &[u8] {
        match self {
            MemRef::Static(b) => b,
            MemRef::Shared(b) => b,
        }
    }
}

fn flatten(body: &Body, out: &mut Vec<Piece>) {
    match body {
        Body::Empty => {}
        Body::Static(b) if !b.is_empty() => out.push(Piece::Mem {
            data: MemRef::Static(b),
            pos: 0,
        }),
        Body::Shared(b) if !b.is_empty() => out.push(Piece::Mem {
            data: MemRef::Shared(b.clone()),
            pos: 0,
        }),
        Body::Static(_) | Body::Shared(_) => {}
        Body::File { file, offset, len } if *len > 0 => out.push(Piece::File {
            file: file.clone(),
            offset: *offset,
            left: *len,
        }),
        Body::File { .. } => {}
        Body::Parts(parts) => parts.iter().for_each(|p| flatten(p, out)),
    }
}

/// What a write attempt achieved.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    Done,
    /// The socket is full: wait for writability.
    Blocked,
    /// The byte budget set by [`Output::limit`] is spent (`limit_rate`).
    Limited,
}

/// Why output stopped for good, by where it failed: the client's side
/// (a send), the disk's (reading the file) or ours (the encoder). The
/// error log says which, as nginx's does (`writev() failed`,
/// `sendfile() failed`, `pread() failed`).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A send of head or memory bytes (`send`/`sendmsg`) to the client.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// `sendfile(2)` to the client.
    #[error("sendfile: {0}")]
    Sendfile(io::Error),
    /// Reading the file for a body that is copied or encoded: the disk.
    #[error("pread: {0}")]
    Read(io::Error),
    /// The response's encoder (gzip, brotli, zstd) failed: ours.
    #[error("{0}")]
    Encode(peregrine_compress::CompressError),
    /// The file shrank while being sent: the head promised more bytes than
    /// exist, so the connection must close without sending anything else.
    #[error("file was truncated")]
    Truncated,
}

/// How an HTTP/1 body is delimited. Chunked framing is made here and
/// nowhere else: core marks a response `chunked` (nginx's `r->chunked`)
/// and gives its trailers as fields; HTTP/2 sends the same body as DATA.
#[derive(Clone, Copy)]
pub enum Framing<'a> {
    /// By `Content-Length`, or by the close.
    AsIs,
    /// As chunks (RFC 9112 §7.1), then the last chunk with these trailer
    /// fields.
    Chunked(Option<&'a FieldList>),
}

impl<'a> Framing<'a> {
    /// How `resp` goes out on an HTTP/1 connection whose request was
    /// HTTP/1.1 (`http11`). As `ngx_http_chunked_header_filter`: never
    /// chunks for an HTTP/1.0 request, a header-only answer (HEAD), a
    /// 1xx, 204 or 304, whatever core marked; then the body is as is.
    #[inline]
    pub fn of(resp: &'a Response, http11: bool) -> Framing<'a> {
        let bodiless = resp.header_only || resp.status < 200 || matches!(resp.status, 204 | 304);
        if resp.chunked && http11 && !bodiless {
            Framing::Chunked(resp.trailers.as_deref())
        } else {
            Framing::AsIs
        }
    }
}

/// The last chunk without trailers after a chunk's data: its CRLF, `0`,
/// the blank line.
const DATA_END_LAST_CHUNK: &[u8] = b"\r\n0\r\n\r\n";

/// Appends the chunk-size line of a `len`-byte chunk.
pub(crate) fn push_chunk_size(out: &mut Vec<u8>, len: u64) {
    let _ = write!(out, "{len:x}\r\n");
}

/// Appends `data` as one chunk; nothing for no data (an empty chunk is
/// the last one).
pub(crate) fn push_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    push_chunk_size(out, data.len() as u64);
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends the last chunk, the trailer fields (`ngx_http_chunked_create_trailers`:
/// `name: value` lines) and the blank line that ends the body.
pub(crate) fn push_last_chunk(out: &mut Vec<u8>, trailers: Option<&FieldList>) {
    out.extend_from_slice(b"0\r\n");
    for f in trailers.map_or(&[][..], FieldList::fields) {
        out.reserve(f.name.len() + f.value.len() + 4);
        out.extend_from_slice(&f.name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(&f.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// A body going through an encoder: the source pieces are read block by
/// block, encoded, framed and staged in the output's file buffer.
struct Deflate {
    c: Box<Compressing>,
    src: Vec<Piece>,
    next: usize,
    /// Encoder output not yet framed.
    raw: Vec<u8>,
    /// File bytes read for the encoder.
    scratch: Vec<u8>,
    done: bool,
}

/// A response in flight.
#[derive(Default)]
pub struct Output {
    /// The serialized head, then a small memory body copied behind it
    /// (see [`INLINE_BODY_MAX`]).
    head: Vec<u8>,
    /// Where the head proper ends in `head`.
    head_end: usize,
    head_pos: usize,
    pieces: Vec<Piece>,
    next: usize,
    /// When `sendfile` is off: file bytes read but not yet written.
    file_buf: Option<Vec<u8>>,
    file_buf_pos: usize,
    deflate: Option<Box<Deflate>>,
    pub sendfile: bool,
    /// `tcp_nopush`: a head or memory piece followed by a file goes out
    /// with `MSG_MORE` (see [`Output::write_gathered`]).
    pub nopush: bool,
    /// The connection shuts its write side as soon as this response is in
    /// the kernel, with nothing read or waited for between:
    /// the final bytes go out with `MSG_MORE` so that the FIN rides on
    /// them (see [`Output::write_gathered`]).
    pub last: bool,
    pub head_bytes: u64,
    pub body_bytes: u64,
    /// `limit_rate`: this write may send at most `cap` more bytes.
    limited: bool,
    cap: usize,
}

/// A memory body small enough to go out in the head's buffer (see
/// [`INLINE_BODY_MAX`]).
fn small_memory_body(body: &Body) -> Option<&[u8]> {
    match body {
        Body::Empty => Some(&[]),
        Body::Static(b) if b.len() <= INLINE_BODY_MAX => Some(b),
        Body::Shared(b) if b.len() <= INLINE_BODY_MAX => Some(b),
        _ => None,
    }
}

impl Output {
    /// An output of `head` then `body` (tests; the engine reuses its
    /// outputs, see [`Output::start`]).
    #[cfg(test)]
    pub fn new(head: Vec<u8>, body: &Body, header_only: bool, sendfile: bool) -> Output {
        Output::framed(head, body, header_only, sendfile, Framing::AsIs)
    }

    /// [`Output::new`] with the body framed as `framing` says (tests).
    #[cfg(test)]
    pub fn framed(
        head: Vec<u8>,
        body: &Body,
        header_only: bool,
        sendfile: bool,
        framing: Framing<'_>,
    ) -> Output {
        let mut out = Output {
            head,
            ..Output::default()
        };
        out.start(body, header_only, sendfile, None, framing);
        out
    }

    /// The buffer to serialize the head into (empty: see [`Output::reset`]).
    pub fn head_mut(&mut self) -> &mut Vec<u8> {
        &mut self.head
    }

    /// Starts a response: the head serialized into [`Output::head_mut`],
    /// then `body`, through the encoder `comp` if any (which frames its
    /// own output), else framed as `framing` says. A small memory body
    /// is copied behind the head here (one `send` of one buffer), borrowed
    /// from the response: it is never referenced by the output, so its
    /// shared buffer's reference count is not touched.
    #[inline]
    pub fn start(
        &mut self,
        body: &Body,
        header_only: bool,
        sendfile: bool,
        comp: Option<Box<Compressing>>,
        framing: Framing<'_>,
    ) {
        self.head_end = self.head.len();
        self.sendfile = sendfile;
        if !header_only {
            match (small_memory_body(body), framing) {
                (_, Framing::Chunked(trailers)) if comp.is_none() => {
                    self.start_chunked(body, trailers);
                }
                (Some(b), _) if comp.is_none() => self.head.extend_from_slice(b),
                _ => flatten(body, &mut self.pieces),
            }
        }
        if let Some(c) = comp {
            self.compress(c);
        }
    }

    /// `body` as one chunk (its size is known: core's bodies are whole)
    /// and the last chunk with `trailers`: the framing rides in the head's
    /// buffer and a tail piece, the body's pieces are sent as they are.
    #[inline(never)]
    fn start_chunked(&mut self, body: &Body, trailers: Option<&FieldList>) {
        let len = body.len();
        if len > 0 {
            push_chunk_size(&mut self.head, len);
        }
        if let Some(b) = small_memory_body(body) {
            self.head.extend_from_slice(b);
            if len > 0 {
                self.head.extend_from_slice(b"\r\n");
            }
            push_last_chunk(&mut self.head, trailers);
            return;
        }
        flatten(body, &mut self.pieces);
        let data = match trailers {
            None => MemRef::Static(DATA_END_LAST_CHUNK),
            Some(t) => {
                let mut end = b"\r\n".to_vec();
                push_last_chunk(&mut end, Some(t));
                MemRef::Shared(end.into())
            }
        };
        self.pieces.push(Piece::Mem { data, pos: 0 });
    }

    /// Back to an empty output for the next response: the head and piece
    /// buffers are kept (a piece list longer than [`MAX_KEPT_PIECES`], or
    /// a head grown past [`MAX_KEPT_HEAD`], is freed), what the pieces
    /// referenced is released now, the file buffer goes back to `pool`.
    pub fn reset(&mut self, pool: &mut Pool) {
        if self.head.capacity() > MAX_KEPT_HEAD {
            self.head = Vec::new();
        }
        self.head.clear();
        self.head_pos = 0;
        if !self.pieces.is_empty() || self.file_buf.is_some() || self.deflate.is_some() {
            self.release_pieces(pool);
        }
        self.last = false;
        self.nopush = false;
        self.head_bytes = 0;
        self.body_bytes = 0;
        self.limited = false;
    }

    /// The rest of [`Output::reset`], for what only a large memory body, a
    /// file or an encoder leaves behind.
    #[inline(never)]
    fn release_pieces(&mut self, pool: &mut Pool) {
        if self.pieces.capacity() > MAX_KEPT_PIECES {
            self.pieces = Vec::new();
        }
        self.pieces.clear();
        self.next = 0;
        if let Some(b) = self.file_buf.take() {
            pool.put_file_buf(b);
        }
        self.file_buf_pos = 0;
        self.deflate = None;
    }

    /// Sends the body through `c` instead of as is.
    fn compress(&mut self, c: Box<Compressing>) {
        let src = std::mem::take(&mut self.pieces);
        self.next = 0;
        self.deflate = Some(Box::new(Deflate {
            c,
            src,
            next: 0,
            raw: Vec::new(),
            scratch: Vec::new(),
            done: false,
        }));
    }

    /// Bounds what the next writes send to `cap` bytes in all
    /// (`limit_rate`); [`Output::write`] then stops with
    /// [`Progress::Limited`] once they are sent.
    pub fn limit(&mut self, cap: usize) {
        self.limited = true;
        self.cap = cap;
    }

    /// Writes as much as the socket takes; a `sendfile` sends at most
    /// `sendfile_max_chunk` bytes a call (0: no limit). Always inlined: its
    /// one caller is the engine's send step, and as a call the plain
    /// response paid some 90 instructions more.
    #[inline(always)]
    pub fn write<S: Sink>(
        &mut self,
        s: &mut S,
        pool: &mut Pool,
        sendfile_max_chunk: usize,
    ) -> Result<Progress, WriteError> {
        loop {
            if self.limited && self.cap == 0 {
                return Ok(Progress::Limited);
            }
            let staged = self.file_buf_pos < self.file_buf.as_ref().map_or(0, Vec::len);
            let head_left = self.head.len() - self.head_pos;
            let encoding = self.deflate.as_ref().is_some_and(|d| !d.done);
            let step = match self.pieces.get(self.next) {
                // Without sendfile, file bytes are read first so the head and
                // the first block leave in one writev (as nginx does).
                Some(Piece::File { .. }) if !staged && !self.sendfile => self.read_file(pool),
                None if !staged && encoding => self.encode_more(pool),
                None if !staged && head_left == 0 => return Ok(Progress::Done),
                Some(Piece::File { .. }) if !staged && head_left == 0 => {
                    self.send_file(s, sendfile_max_chunk)
                }
                _ => self.write_gathered(s).map_err(WriteError::Io),
            };
            match step {
                // The usual response, its head's buffer all there is (a
                // small body rides in it), is done once that is sent: no
                // second turn of the loop to find out.
                Ok(())
                    if self.head_pos == self.head.len()
                        && self.next == self.pieces.len()
                        && self.file_buf.is_none()
                        && self.deflate.is_none() =>
                {
                    return Ok(Progress::Done);
                }
                Ok(()) => {}
                Err(WriteError::Io(e) | WriteError::Sendfile(e) | WriteError::Read(e))
                    if e.kind() == io::ErrorKind::Interrupted => {}
                Err(WriteError::Io(e) | WriteError::Sendfile(e))
                    if e.kind() == io::ErrorKind::WouldBlock =>
                {
                    return Ok(Progress::Blocked);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One `writev` of what is next in order: the rest of the head, staged
    /// file/encoder bytes, then memory pieces up to the next file piece.
    #[inline]
    fn write_gathered<S: Sink>(&mut self, s: &mut S) -> io::Result<()> {
        let staged_len = self
            .file_buf
            .as_ref()
            .map_or(0, |b| b.len().saturating_sub(self.file_buf_pos));
        let n = if staged_len == 0 && self.next == self.pieces.len() {
            self.send_head(s)?
        } else {
            self.send_gathered(s)?
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.account(n, staged_len);
        Ok(())
    }

    /// [`Output::write_gathered`] when the head's buffer is all there is to
    /// send (a small memory body rides in it): one `send`, without setting
    /// up a vector of slices.
    fn send_head<S: Sink>(&self, s: &mut S) -> io::Result<usize> {
        let mut buf = &self.head[self.head_pos..];
        if self.limited {
            buf = &buf[..buf.len().min(self.cap)];
        }
        // MSG_MORE on the last response: see the FIN's comment in
        // `send_gathered`.
        s.send(buf, self.last)
    }

    /// The general case of [`Output::write_gathered`]: the bytes sent.
    fn send_gathered<S: Sink>(&self, s: &mut S) -> io::Result<usize> {
        let mut parts: [&[u8]; MAX_IOV] = [&[]; MAX_IOV];
        let mut used = 0;
        if self.head_pos < self.head.len() {
            parts[used] = &self.head[self.head_pos..];
            used += 1;
        }
        let staged = self
            .file_buf
            .as_deref()
            .map_or(&[][..], |b| &b[self.file_buf_pos.min(b.len())..]);
        if !staged.is_empty() {
            parts[used] = staged;
            used += 1;
        }
        let mut file_next = false;
        for p in &self.pieces[self.next..] {
            match p {
                Piece::Mem { data, pos } if used < MAX_IOV => {
                    parts[used] = &data.bytes()[*pos..];
                    used += 1;
                }
                Piece::File { .. } => {
                    file_next = true;
                    break;
                }
                Piece::Mem { .. } => break,
            }
        }
        // The last response of a connection: the `shutdown` that ends it
        // (`Conn::complete`, or lingering close) follows at once, and
        // tcp_send_fin sets the FIN on a queued, unsent segment instead of
        // sending a segment of its own (net/ipv4/tcp.c). MSG_MORE keeps
        // this one queued until then, so the client gets data and FIN in
        // one segment: one segment fewer per connection, as nginx's
        // `tcp_nopush` cork, which it never lifts before close, gives it.
        // Nothing is delayed: the shutdown follows at once.
        //
        // With `tcp_nopush`, the head and the file's first bytes leave in
        // full packets: MSG_MORE holds this partial segment for the
        // sendfile that follows (which itself sends all but its last page
        // with MORE), as nginx's TCP_CORK would, without the two setsockopt
        // calls per response that cork and uncork cost (send(2): MSG_MORE
        // obtains "the same effect as the TCP_CORK socket option", per
        // call). nginx corks; the packets match.
        let hold = (file_next && self.sendfile && self.nopush) || (self.last && !file_next);
        if self.limited {
            used = cap_parts(&mut parts[..used], self.cap);
        }
        if used == 1 {
            // One buffer: `send`, not a one-element `sendmsg`.
            s.send(parts[0], hold)
        } else {
            let mut iov = [IoSlice::new(&[]); MAX_IOV];
            for (v, p) in iov.iter_mut().zip(&parts[..used]) {
                *v = IoSlice::new(p);
            }
            s.send_vectored(&iov[..used], hold)
        }
    }

    /// Moves past the `n` bytes just sent: head, then `staged_len` staged
    /// bytes, then memory pieces.
    /// The head's part is inline (the usual response is its head buffer
    /// alone); what went past it is counted out of line.
    #[inline]
    fn account(&mut self, n: usize, staged_len: usize) {
        if self.limited {
            self.cap = self.cap.saturating_sub(n);
        }
        let h = n.min(self.head.len() - self.head_pos);
        // An inlined body follows the head in the same buffer: its bytes
        // count as body (`$body_bytes_sent`).
        let of_head = h.min(self.head_end.saturating_sub(self.head_pos));
        self.head_pos += h;
        self.head_bytes += of_head as u64;
        self.body_bytes += (h - of_head) as u64;
        if n > h {
            self.account_past_head(n - h, staged_len);
        }
    }

    /// [`Output::account`] past the head: staged bytes, then memory pieces.
    #[inline(never)]
    fn account_past_head(&mut self, mut n: usize, staged_len: usize) {
        self.body_bytes += n as u64;
        let f = n.min(staged_len);
        self.file_buf_pos += f;
        n -= f;
        if f == staged_len && staged_len > 0 {
            self.file_buf_pos = 0;
            if let Some(b) = self.file_buf.as_mut() {
                b.clear();
            }
        }
        while n > 0 {
            let Some(Piece::Mem { data, pos }) = self.pieces.get_mut(self.next) else {
                break;
            };
            let take = n.min(data.bytes().len() - *pos);
            *pos += take;
            n -= take;
            if *pos == data.bytes().len() {
                self.next += 1;
            }
        }
    }

    fn send_file<S: Sink>(&mut self, s: &mut S, max_chunk: usize) -> Result<(), WriteError> {
        let Some(Piece::File { file, offset, left }) = self.pieces.get_mut(self.next) else {
            return Ok(());
        };
        let count = usize::try_from(*left)
            .unwrap_or(usize::MAX)
            .min(match max_chunk {
                0 => usize::MAX,
                n => n,
            })
            .min(if self.limited { self.cap } else { usize::MAX });
        let n = s
            .sendfile(file, offset, count)
            .map_err(WriteError::Sendfile)?;
        if n == 0 {
            return Err(WriteError::Truncated);
        }
        *left -= n as u64;
        self.body_bytes += n as u64;
        if self.limited {
            self.cap = self.cap.saturating_sub(n);
        }
        if *left == 0 {
            self.next += 1;
        }
        Ok(())
    }

    fn read_file(&mut self, pool: &mut Pool) -> Result<(), WriteError> {
        let Some(Piece::File { file, offset, left }) = self.pieces.get_mut(self.next) else {
            return Ok(());
        };
        let mut buf = self.file_buf.take().unwrap_or_else(|| pool.file_buf());
        let want = usize::try_from(*left)
            .unwrap_or(usize::MAX)
            .min(FILE_BUF_SIZE);
        buf.resize(want, 0);
        let n = file.read_at(&mut buf, *offset).map_err(WriteError::Read)?;
        if n == 0 {
            self.file_buf = Some(buf);
            return Err(WriteError::Truncated);
        }
        buf.truncate(n);
        *offset += n as u64;
        *left -= n as u64;
        if *left == 0 {
            self.next += 1;
        }
        self.file_buf = Some(buf);
        self.file_buf_pos = 0;
        Ok(())
    }

    /// Encodes the next block of the source into the file buffer (framed
    /// as one chunk for HTTP/1.1), finishing the stream after the last.
    fn encode_more(&mut self, pool: &mut Pool) -> Result<(), WriteError> {
        let Some(d) = self.deflate.as_mut() else {
            return Ok(());
        };
        let mut out = self.file_buf.take().unwrap_or_else(|| pool.file_buf());
        out.clear();
        self.file_buf_pos = 0;
        d.raw.clear();
        // Encode until a chunk's worth is ready: a small body goes out as one
        // chunk (as nginx sends it), not as a header chunk and a data chunk.
        while !d.done && d.raw.len() < MIN_CHUNK {
            if let Err(e) = encode_block(d) {
                self.file_buf = Some(out);
                return Err(e);
            }
        }
        if d.c.chunked {
            push_chunk(&mut out, &d.raw);
        } else {
            out.extend_from_slice(&d.raw);
        }
        if d.done && d.c.chunked {
            push_last_chunk(&mut out, None);
        }
        self.file_buf = Some(out);
        Ok(())
    }
}

/// Feeds one block of `d`'s source to its encoder (output in `d.raw`).
fn encode_block(d: &mut Deflate) -> Result<(), WriteError> {
    let encode_err = WriteError::Encode;
    let block = FILE_BUF_SIZE;
    match d.src.get_mut(d.next) {
        None => {
            d.c.encoder.finish(&mut d.raw).map_err(encode_err)?;
            d.done = true;
        }
        Some(Piece::Mem { data, pos }) => {
            let bytes = data.bytes();
            let end = (*pos + block).min(bytes.len());
            d.c.encoder
                .write(&bytes[*pos..end], &mut d.raw)
                .map_err(encode_err)?;
            *pos = end;
            if end == bytes.len() {
                d.next += 1;
            }
        }
        Some(Piece::File { file, offset, left }) => {
            let want = usize::try_from(*left).unwrap_or(usize::MAX).min(block);
            d.scratch.resize(want, 0);
            let n = file
                .read_at(&mut d.scratch, *offset)
                .map_err(WriteError::Read)?;
            if n == 0 {
                return Err(WriteError::Truncated);
            }
            *offset += n as u64;
            *left -= n as u64;
            if *left == 0 {
                d.next += 1;
            }
            d.c.encoder
                .write(&d.scratch[..n], &mut d.raw)
                .map_err(encode_err)?;
        }
    }
    Ok(())
}

/// `limit_rate`'s budget on a gathered send: the parts cut to `cap` bytes
/// in all; the number of parts left. Out of the unlimited path, which
/// pays nothing for it.
#[cold]
fn cap_parts(parts: &mut [&[u8]], cap: usize) -> usize {
    let mut room = cap;
    for (i, p) in parts.iter_mut().enumerate() {
        if room == 0 {
            return i.max(1);
        }
        let n = p.len().min(room);
        *p = &p[..n];
        room -= n;
    }
    parts.len()
}

#[cfg(test)]
mod tests;
