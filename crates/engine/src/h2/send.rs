//! Sending bodies: the streams with body left take turns in rounds, one
//! DATA frame each per round, within the windows the peer gave; memory is
//! framed as it is, files are read with `pread` into one buffer of the
//! connection. Each round goes in priority order (RFC 7540 §5.3 as nginx
//! ranks streams, [`peregrine_h2::priority`]): every stream sends in every
//! round, so none starves, and when the connection window opens the
//! streams that waited for it send in nginx's order (h2_priority.t).

use std::io;
use std::os::unix::fs::FileExt;

use peregrine_conf::model::LogLevel;
use peregrine_h2::{Connection, ErrorCode};

use super::stream::{Piece, Stream};
use super::{H2Session, OUT_HIGH};
use crate::ctx::Ctx;

impl Stream {
    /// Sends one DATA frame of at most `room` bytes; true when the body
    /// is all sent (END_STREAM went with it).
    fn next_frame(
        &mut self,
        conn: &mut Connection,
        id: u32,
        room: usize,
        scratch: &mut Vec<u8>,
    ) -> io::Result<bool> {
        // With trailers to come, END_STREAM goes with them instead.
        let last = self.pieces.len() == 1 && self.trailers.is_empty();
        let Some(p) = self.pieces.front_mut() else {
            if self.trailers.is_empty() {
                conn.send_data(id, &[], true).map_err(io::Error::other)?;
            }
            self.send_trailers(conn, id);
            return Ok(true);
        };
        let done = match p {
            Piece::Mem { data, pos } => {
                let b = &data.bytes()[*pos..];
                let n = b.len().min(room);
                let sent = conn
                    .send_data(id, &b[..n], last && n == b.len())
                    .map_err(io::Error::other)?;
                *pos += sent;
                self.body_bytes += sent as u64;
                *pos == data.bytes().len()
            }
            Piece::File { file, offset, left } => {
                let n = usize::try_from(*left).unwrap_or(usize::MAX).min(room);
                scratch.resize(n, 0);
                file.read_exact_at(scratch, *offset).map_err(|e| {
                    if e.kind() == io::ErrorKind::UnexpectedEof {
                        io::Error::other("file was truncated")
                    } else {
                        e
                    }
                })?;
                let sent = conn
                    .send_data(id, scratch, last && n as u64 == *left)
                    .map_err(io::Error::other)?;
                *offset += sent as u64;
                *left -= sent as u64;
                self.body_bytes += sent as u64;
                *left == 0
            }
        };
        if done {
            self.pieces.pop_front();
        }
        if self.pieces.is_empty() {
            self.send_trailers(conn, id);
        }
        Ok(self.pieces.is_empty())
    }
}

impl H2Session {
    /// Produces DATA frames, streams in turn, until the output holds
    /// [`OUT_HIGH`] bytes or no stream can send.
    pub(super) fn fill_output(&mut self, cx: &mut Ctx) {
        while self.conn.output().len() < OUT_HIGH {
            if self.round_left == 0 {
                // A new round: the streams in priority order (stable, so
                // equals keep their turn).
                let conn = &self.conn;
                self.sending
                    .make_contiguous()
                    .sort_by(|&a, &b| conn.send_order(a, b));
                self.round_left = self.sending.len();
            }
            let Some(id) = self.sending.pop_front() else {
                break;
            };
            self.round_left -= 1;
            let Some(s) = self.streams.get_mut(&id) else {
                continue;
            };
            let room = self.conn.sendable(id);
            if room == 0 {
                self.parked.push(id);
                continue;
            }
            match s.next_frame(&mut self.conn, id, room, &mut self.scratch) {
                Ok(false) => self.sending.push_back(id),
                Ok(true) => {
                    if let Some(s) = self.streams.remove(&id) {
                        self.end_stream(id, s, cx);
                    }
                }
                Err(e) => {
                    let text = crate::errlog::with_os_error("pread() failed", &e);
                    self.log(cx, LogLevel::Crit, &text);
                    self.conn.reset(id, ErrorCode::InternalError);
                    if let Some(s) = self.streams.remove(&id) {
                        self.finish(s, cx);
                    }
                }
            }
        }
        if self.scratch.capacity() > 2 * OUT_HIGH {
            self.scratch = Vec::new();
        }
    }
}
