//! Fuzzes the HTTP/2 connection (frames, our HPACK decoder, stream and
//! flow-control state): no panic or overflow, and the input split at a
//! point the first byte picks gives the same events, output and verdict as
//! the input whole. Requests are answered (HEADERS, DATA, trailers) so the
//! sending side runs against whatever windows and settings the input set.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_h2::frame::{Kind, PREFACE, put_header};
use peregrine_h2::{Config, Connection, Event, Progress};

fn answer(conn: &mut Connection, stream: u32, n: usize) {
    if conn.send_headers(stream, 200, &[(b"x-n", n.to_string().as_bytes())], false).is_ok() {
        let _ = conn.send_data(stream, &[b'x'; 20_000][..n % 20_000], n % 3 == 0);
        if n % 3 == 1 {
            let _ = conn.send_trailers(stream, &[(b"x-t", b"1")]);
        }
    }
}

fn drive(input: &[u8], cuts: &[usize]) -> (Vec<String>, Option<String>, Vec<u8>) {
    let cfg = Config { max_concurrent_streams: 8, initial_window: 1000, ..Config::default() };
    let mut conn = Connection::new(cfg);
    let (mut events, mut out, mut buf, mut from) = (Vec::new(), Vec::new(), Vec::new(), 0);
    // One read for the whole input: nginx's new-streams-per-read bound must
    // not make the split run differ.
    conn.start_read();
    for &cut in cuts {
        buf.extend_from_slice(&input[from..cut]);
        from = cut;
        let mut pos = 0;
        loop {
            match conn.recv(&buf[pos..]) {
                Ok(Progress::Partial) => break,
                Ok(Progress::Frame { consumed, event }) => {
                    assert!(consumed > 0 && pos + consumed <= buf.len());
                    pos += consumed;
                    let Some(e) = event else { continue };
                    events.push(format!("{e:?}"));
                    match e {
                        Event::Request { stream, end_stream: true, .. } => answer(&mut conn, stream, events.len()),
                        Event::Data { stream, data, end_stream } => {
                            conn.release(stream, data.len() as u32);
                            if end_stream {
                                answer(&mut conn, stream, events.len());
                            }
                        }
                        Event::WindowUpdate { stream } if stream != 0 => {
                            let _ = conn.send_data(stream, b"more", false);
                        }
                        _ => {}
                    }
                }
                Err(e) => {
                    out.extend_from_slice(conn.output());
                    assert!(conn.is_finished());
                    return (events, Some(e.to_string()), out);
                }
            }
            out.extend_from_slice(conn.output());
            let n = conn.output().len();
            conn.advance_output(n);
        }
        buf.drain(..pos);
    }
    (events, None, out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else { return };
    let mut input = Vec::new();
    if ctl & 1 == 0 {
        // Most inputs start past the preface, so the fuzzer works on frames.
        input.extend_from_slice(PREFACE);
        put_header(&mut input, Kind::Settings, 0, 0, 0);
    }
    input.extend_from_slice(rest);
    let split = ctl as usize * input.len() / 255;
    let whole = drive(&input, &[input.len()]);
    let parts = drive(&input, &[split, input.len()]);
    assert_eq!(whole, parts, "split at {split}");
});
