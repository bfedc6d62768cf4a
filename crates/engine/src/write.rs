//! Response output: the head as nginx's header filter lays it out, then the
//! body with `writev` (memory) or `sendfile`/`pread` (files), resumable after
//! a partial write.

use std::io::{self, IoSlice, Write};
use std::os::unix::fs::FileExt;
use std::rc::Rc;
use std::time::Duration;

use mio::net::TcpStream;
use peregrine_core::{Body, Response};

use peregrine_codec::response::CONTINUE;
/// Most slices gathered into one `writev` (head + memory body pieces).
const MAX_IOV: usize = 16;
/// Largest `sendfile` count per call: nginx's `sendfile_max_chunk` default
/// (2m) keeps one fast client from monopolising the worker.
const SENDFILE_MAX_CHUNK: usize = 2 * 1024 * 1024;

/// How the connection header block reads.
pub struct ConnHeader {
    pub keepalive: bool,
    /// `Keep-Alive: timeout=N` (second argument of keepalive_timeout).
    pub keepalive_header: Option<Duration>,
}

/// Serializes the whole head into `out`: status line, `Server`, `Date`, the
/// core's lines up to `head_split`, `Connection` (+`Keep-Alive`), the rest, blank line.
pub fn serialize_head(
    out: &mut Vec<u8>,
    resp: &Response,
    date: &[u8],
    conn: &ConnHeader,
    expect_continue: bool,
) {
    if expect_continue {
        out.extend_from_slice(CONTINUE);
    }
    out.extend_from_slice(peregrine_codec::response::status_line(
        peregrine_codec::Version::Http11,
        resp.status,
    ));
    out.extend_from_slice(b"Server: peregrine\r\nDate: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n");
    let head = resp.head.as_bytes();
    // Core says where nginx's header filter puts Connection (after
    // Content-Type, Content-Length, Last-Modified, Location).
    let split = resp.head_split.min(head.len());
    out.extend_from_slice(&head[..split]);
    if conn.keepalive {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
        if let Some(t) = conn.keepalive_header {
            let _ = write!(out, "Keep-Alive: timeout={}\r\n", t.as_secs());
        }
    } else {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(&head[split..]);
    out.extend_from_slice(b"\r\n");
}

/// One leaf of a body still to send.
enum Piece {
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

enum MemRef {
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
}

/// Why output stopped for good.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The file shrank while being sent: the head promised more bytes than
    /// exist, so the connection must close without sending anything else.
    #[error("file was truncated")]
    Truncated,
}

/// A response in flight.
pub struct Output {
    head: Vec<u8>,
    head_pos: usize,
    pieces: Vec<Piece>,
    next: usize,
    /// When `sendfile` is off: file bytes read but not yet written.
    file_buf: Option<Vec<u8>>,
    file_buf_pos: usize,
    pub sendfile: bool,
    pub head_bytes: u64,
    pub body_bytes: u64,
}

impl Output {
    pub fn new(head: Vec<u8>, body: &Body, header_only: bool, sendfile: bool) -> Output {
        let mut pieces = Vec::new();
        if !header_only {
            flatten(body, &mut pieces);
        }
        Output {
            head,
            head_pos: 0,
            pieces,
            next: 0,
            file_buf: None,
            file_buf_pos: 0,
            sendfile,
            head_bytes: 0,
            body_bytes: 0,
        }
    }

    /// Whether a file piece will go out with sendfile (for `tcp_nopush`).
    pub fn sends_file(&self) -> bool {
        self.sendfile && self.pieces.iter().any(|p| matches!(p, Piece::File { .. }))
    }

    /// Gives back the pooled buffers.
    pub fn into_buffers(self) -> (Vec<u8>, Option<Vec<u8>>) {
        (self.head, self.file_buf)
    }

    /// Writes as much as the socket takes.
    pub fn write(
        &mut self,
        s: &mut TcpStream,
        pool: &mut crate::pool::Pool,
    ) -> Result<Progress, WriteError> {
        loop {
            let step = if self.file_buf_pos < self.file_buf.as_ref().map_or(0, Vec::len) {
                self.flush_file_buf(s).map_err(WriteError::Io)
            } else {
                let head_left = self.head.len() - self.head_pos;
                match self.pieces.get(self.next) {
                    None if head_left == 0 => return Ok(Progress::Done),
                    Some(Piece::File { .. }) if head_left == 0 && self.sendfile => {
                        self.send_file(s)
                    }
                    Some(Piece::File { .. }) if head_left == 0 => self.read_file(pool),
                    _ => self.write_vectored(s).map_err(WriteError::Io),
                }
            };
            match step {
                Ok(()) => {}
                Err(WriteError::Io(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(WriteError::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(Progress::Blocked);
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn write_vectored(&mut self, s: &mut TcpStream) -> io::Result<()> {
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        let mut used = 0;
        if self.head_pos < self.head.len() {
            iov[0] = IoSlice::new(&self.head[self.head_pos..]);
            used = 1;
        }
        for p in &self.pieces[self.next..] {
            match p {
                Piece::Mem { data, pos } if used < MAX_IOV => {
                    iov[used] = IoSlice::new(&data.bytes()[*pos..]);
                    used += 1;
                }
                _ => break,
            }
        }
        let mut n = s.write_vectored(&iov[..used])?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let h = n.min(self.head.len() - self.head_pos);
        self.head_pos += h;
        self.head_bytes += h as u64;
        n -= h;
        self.body_bytes += n as u64;
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
        Ok(())
    }

    fn send_file(&mut self, s: &mut TcpStream) -> Result<(), WriteError> {
        let Some(Piece::File { file, offset, left }) = self.pieces.get_mut(self.next) else {
            return Ok(());
        };
        let count = usize::try_from(*left)
            .unwrap_or(usize::MAX)
            .min(SENDFILE_MAX_CHUNK);
        let n = peregrine_sys::sendfile(&*s, &**file, offset, count)?;
        if n == 0 {
            return Err(WriteError::Truncated);
        }
        *left -= n as u64;
        self.body_bytes += n as u64;
        if *left == 0 {
            self.next += 1;
        }
        Ok(())
    }

    fn read_file(&mut self, pool: &mut crate::pool::Pool) -> Result<(), WriteError> {
        let Some(Piece::File { file, offset, left }) = self.pieces.get_mut(self.next) else {
            return Ok(());
        };
        let mut buf = self.file_buf.take().unwrap_or_else(|| pool.file_buf());
        let want = usize::try_from(*left)
            .unwrap_or(usize::MAX)
            .min(crate::pool::FILE_BUF_SIZE);
        buf.resize(want, 0);
        let n = file.read_at(&mut buf, *offset)?;
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

    fn flush_file_buf(&mut self, s: &mut TcpStream) -> io::Result<()> {
        let Some(buf) = &self.file_buf else {
            return Ok(());
        };
        let n = s.write(&buf[self.file_buf_pos..])?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.file_buf_pos += n;
        self.body_bytes += n as u64;
        if self.file_buf_pos == buf.len() {
            self.file_buf_pos = 0;
            if let Some(b) = self.file_buf.as_mut() {
                b.clear();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
