//! A minimal, test-only server loop over blocking std I/O that drives a
//! `Connection` as the engine's session will (with mio): read, feed every
//! frame, answer requests, write the output and zero-copy DATA frames.
//! Paths: `/hello` (11 bytes), `/big` (300 kB), `/echo` (the request body
//! back, with a trailer), anything else 404.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::TcpStream;

use peregrine_h2::{Config, ConnError, Connection, Event, Progress};

/// A request being received, then its response being sent.
#[derive(Default)]
struct Exchange {
    path: String,
    body: Vec<u8>,
    /// The response body and how much of it went out.
    out: Vec<u8>,
    sent: usize,
    trailers: bool,
    responding: bool,
}

fn respond(conn: &mut Connection, id: u32, ex: &mut Exchange) {
    ex.responding = true;
    let (status, body, trailers): (u16, Vec<u8>, bool) = match ex.path.as_str() {
        "/hello" => (200, b"hello world".to_vec(), false),
        "/big" => (
            200,
            (0..300_000u32).map(|i| (i % 251) as u8).collect(),
            false,
        ),
        "/echo" => (200, std::mem::take(&mut ex.body), true),
        _ => (404, b"not found".to_vec(), false),
    };
    let len = body.len().to_string();
    let fields: [(&[u8], &[u8]); 2] = [
        (b"content-type", b"text/plain"),
        (b"content-length", len.as_bytes()),
    ];
    if conn.send_headers(id, status, &fields, false).is_err() {
        return;
    }
    ex.out = body;
    ex.trailers = trailers;
}

/// Sends what the windows allow of each response body, zero-copy: the
/// frame header from the connection, the payload from the exchange.
fn pump(
    conn: &mut Connection,
    exchanges: &mut HashMap<u32, Exchange>,
    sock: &mut TcpStream,
) -> io::Result<()> {
    sock.write_all(conn.output())?;
    conn.advance_output(conn.output().len());
    let mut done = Vec::new();
    for (&id, ex) in exchanges.iter_mut().filter(|(_, ex)| ex.responding) {
        loop {
            let rest = ex.out.len() - ex.sent;
            let Ok(f) = conn.data_frame(id, rest, !ex.trailers) else {
                break;
            };
            if f.len == 0 && !f.end_stream {
                break;
            }
            sock.write_all(&f.header)?;
            sock.write_all(&ex.out[ex.sent..ex.sent + f.len])?;
            ex.sent += f.len;
            if ex.sent == ex.out.len() {
                if ex.trailers {
                    conn.send_trailers(
                        id,
                        &[(b"x-body-length", ex.out.len().to_string().as_bytes())],
                    )
                    .unwrap();
                }
                done.push(id);
                break;
            }
        }
    }
    for id in done {
        exchanges.remove(&id);
    }
    sock.write_all(conn.output())?;
    conn.advance_output(conn.output().len());
    Ok(())
}

/// Serves one connection until it ends. `shutdown_after`: start the
/// graceful GOAWAY at that request. A connection error is returned after
/// its GOAWAY was written; a socket error (the peer went away) is `Ok`.
pub fn serve(mut sock: TcpStream, shutdown_after: Option<usize>) -> Result<(), ConnError> {
    let mut conn = Connection::new(Config::default());
    let mut exchanges: HashMap<u32, Exchange> = HashMap::new();
    let mut buf = Vec::new();
    let mut tmp = vec![0u8; 64 * 1024];
    let mut requests = 0;
    loop {
        if pump(&mut conn, &mut exchanges, &mut sock).is_err() || conn.is_finished() {
            return Ok(());
        }
        let n = sock.read(&mut tmp).unwrap_or(0);
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        conn.start_read();
        let mut pos = 0;
        loop {
            let event = match conn.recv(&buf[pos..]) {
                Ok(Progress::Partial) => break,
                Ok(Progress::Frame { consumed, event }) => {
                    pos += consumed;
                    event
                }
                Err(e) => {
                    let _ = sock.write_all(conn.output());
                    return Err(e);
                }
            };
            match event {
                Some(Event::Request {
                    stream,
                    head,
                    end_stream,
                }) => {
                    requests += 1;
                    let path =
                        String::from_utf8_lossy(head.path.as_deref().unwrap_or(b"/")).into_owned();
                    let ex = exchanges.entry(stream).or_default();
                    ex.path = path;
                    if end_stream {
                        respond(&mut conn, stream, ex);
                    }
                    if Some(requests) == shutdown_after {
                        conn.shutdown();
                    }
                }
                Some(Event::Data {
                    stream,
                    data,
                    end_stream,
                }) => {
                    conn.release(stream, data.len() as u32);
                    if let Some(ex) = exchanges.get_mut(&stream) {
                        ex.body.extend_from_slice(data);
                        if end_stream {
                            respond(&mut conn, stream, ex);
                        }
                    }
                }
                Some(Event::Reset { stream, .. }) => {
                    exchanges.remove(&stream);
                }
                Some(Event::Trailers { stream, .. }) => {
                    if let Some(ex) = exchanges.get_mut(&stream) {
                        respond(&mut conn, stream, ex);
                    }
                }
                _ => {}
            }
        }
        buf.drain(..pos);
    }
}
