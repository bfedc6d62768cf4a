//! HTTP/1's feed of the body layer: the connection's read buffer decoded
//! (`Content-Length` or chunked, `peregrine_codec::BodyDecoder`), the
//! socket read when it is empty (nginx's `ngx_http_do_read_client_request_body`).

use std::io;

use peregrine_codec::BodyDecoder;

use crate::ctx::Ctx;
use crate::http1::Http1;
use crate::transport::Transport;

/// Where a pull left the body.
#[derive(Debug, PartialEq, Eq)]
pub enum Pull {
    /// The whole body was decoded.
    Done,
    /// Some bytes were handed on; the rest is to come.
    More,
    /// Nothing more until the socket is readable.
    Wait,
    /// The request fails with this status (400: a broken chunked body or
    /// the client gone; the sink's own status otherwise).
    Fail(u16),
}

/// What the client's end of the body can say (for the error log).
#[derive(Debug, PartialEq, Eq)]
pub enum Broken {
    Closed,
    Invalid,
}

impl Http1 {
    /// Decodes the buffered bytes into `sink`, reading the socket while
    /// the buffer is empty and nothing was handed on yet. A sink's `Err`
    /// stops with that status.
    pub(crate) fn pull_body(
        &mut self,
        dec: &mut BodyDecoder,
        t: &mut Transport,
        cx: &mut Ctx,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), u16>,
    ) -> (Pull, Option<Broken>) {
        let mut got = false;
        loop {
            if let Some(b) = self.rbuf.as_mut() {
                while b.start < b.end && !dec.is_done() {
                    let pr = match dec.decode(b.pending()) {
                        Ok(pr) => pr,
                        Err(_) => return (Pull::Fail(400), Some(Broken::Invalid)),
                    };
                    let base = b.start;
                    let piece = &b.data[base + pr.data.start..base + pr.data.end];
                    if !piece.is_empty() {
                        if let Err(s) = sink(piece) {
                            return (Pull::Fail(s), None);
                        }
                        got = true;
                    }
                    b.start += pr.consumed;
                    if let Some(ex) = self.ex.as_mut() {
                        ex.request_length += pr.consumed as u64;
                    }
                    if pr.consumed == 0 {
                        break;
                    }
                }
            }
            if dec.is_done() {
                return (Pull::Done, None);
            }
            if got {
                return (Pull::More, None);
            }
            if !t.readable {
                return (Pull::Wait, None);
            }
            match self.fill(t, cx, crate::pool::READ_BUF_SIZE) {
                Ok(0) => return (Pull::Fail(400), Some(Broken::Closed)),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    t.readable = false;
                    return (Pull::Wait, None);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return (Pull::Fail(400), Some(Broken::Closed)),
            }
        }
    }
}
