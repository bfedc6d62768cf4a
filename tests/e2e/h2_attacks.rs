//! The known HTTP/2 attacks, each mounted with raw frames on a socket
//! against the real binary: the connection that mounts one ends (GOAWAY
//! with nginx's code, or REFUSED_STREAM for the stream that asks too
//! much), and the worker serves the next connection. The limits are the
//! h2 crate's `limits` module and nginx's directives.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::h2::{BIG, frame, get_block, open, read_frame, read_stream};
use crate::support::{Prefix, Server, conf_with, is_nginx};

const ENHANCE_YOUR_CALM: u32 = 0xb;
const NO_ERROR: u32 = 0x0;
const REFUSED_STREAM: u32 = 0x7;

fn start(tag: &str, server_extra: &str) -> Server {
    let p = Prefix::new(tag);
    p.write("html/small.html", "x".repeat(612));
    p.write("html/big.bin", vec![b'b'; BIG]);
    let conf = conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:PORT http2;\n        {server_extra}\n        location / {{ }}\n    }}\n"
    ));
    Server::start(p, &conf)
}

/// The worker still serves: a new connection gets the small file.
fn serves_on(s: &Server) {
    let mut c = open(s);
    c.write_all(&frame(1, 0x05, 1, &get_block("/small.html")))
        .unwrap();
    assert_eq!(read_stream(&mut c, 1), 612, "a new connection is served");
}

/// Writes as much of `data` as the server takes; a server that ended the
/// connection makes the write fail, which is what an attack expects.
fn write_all_lossy(c: &mut TcpStream, data: &[u8]) {
    c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    for chunk in data.chunks(64 * 1024) {
        if c.write_all(chunk).is_err() {
            return;
        }
    }
}

/// Reads frames until the connection ends; the GOAWAY's code, if one came.
fn goaway_code(c: &mut TcpStream) -> Option<u32> {
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut code = None;
    while let Some((kind, _, _, p)) = read_frame(c) {
        if kind == 7 && p.len() >= 8 {
            code = Some(u32::from_be_bytes([p[4], p[5], p[6], p[7]]));
        }
    }
    code
}

/// Asserts the connection ended with `want` (only against Peregrine: the
/// codes of nginx 1.22's answers differ per attack, or it has no bound).
fn ends_with(c: &mut TcpStream, want: u32) {
    let got = goaway_code(c);
    if !is_nginx() {
        assert_eq!(got, Some(want), "GOAWAY code");
    }
}

#[test]
fn rapid_reset_cve_2023_44487() {
    // Each stream asked for and reset at once: the server does the
    // request's work, the client pays nothing. Past the reset budget
    // (limits::RAPID_RESET_BUDGET) the connection ends.
    let s = start("h2-rapid-reset", "");
    let mut c = open(&s);
    let mut out = Vec::new();
    for i in 0..2000u32 {
        let id = 2 * i + 1;
        out.extend(frame(1, 0x05, id, &get_block("/big.bin")));
        out.extend(frame(3, 0, id, &8u32.to_be_bytes()));
    }
    write_all_lossy(&mut c, &out);
    ends_with(&mut c, ENHANCE_YOUR_CALM);
    serves_on(&s);
}

#[test]
fn made_you_reset_cve_2025_8671() {
    // The client makes the server reset its streams (WINDOW_UPDATE of 0
    // on an open stream: a stream error, RFC 9113 §6.9), so no RST_STREAM
    // of its own is counted. The same budget as rapid reset applies.
    let s = start("h2-made-you-reset", "");
    let mut c = open(&s);
    let mut out = Vec::new();
    for i in 0..2000u32 {
        let id = 2 * i + 1;
        out.extend(frame(1, 0x05, id, &get_block("/big.bin")));
        out.extend(frame(8, 0, id, &0u32.to_be_bytes()));
    }
    write_all_lossy(&mut c, &out);
    ends_with(&mut c, ENHANCE_YOUR_CALM);
    serves_on(&s);
}

#[test]
fn continuation_flood_cve_2024_27316() {
    // A header block that never ends: HEADERS without END_HEADERS, then
    // CONTINUATION after CONTINUATION (empty ones too, which never grow
    // the block). limits::MAX_CONTINUATION_FRAMES and the block's size
    // bound end it.
    let s = start("h2-continuation", "");
    for fragment in [&[][..], &[b'a'; 1024][..]] {
        let mut c = open(&s);
        let mut out = frame(1, 0x01, 1, &[0x82, 0x86]);
        for _ in 0..20_000 {
            out.extend(frame(9, 0, 1, fragment));
        }
        write_all_lossy(&mut c, &out);
        ends_with(&mut c, ENHANCE_YOUR_CALM);
    }
    serves_on(&s);
}

#[test]
fn hpack_bomb_and_oversized_header_lists() {
    // One 4000-byte entry put in the dynamic table, then referenced 1000
    // times in one small block: 4 MB of fields from 5 KB. The list bound
    // (large_client_header_buffers, 4 × 8k) stops it.
    let s = start("h2-hpack-bomb", "");
    let mut c = open(&s);
    let mut block = get_block("/small.html");
    block.extend([0x40, 6]);
    block.extend_from_slice(b"x-bomb");
    block.extend([0x7f, (4000 - 127) as u8 | 0x80, ((4000 - 127) >> 7) as u8]);
    block.extend(std::iter::repeat_n(b'a', 4000));
    block.extend(std::iter::repeat_n(0xbe, 1000));
    assert!(block.len() < 16384);
    write_all_lossy(&mut c, &frame(1, 0x05, 1, &block));
    ends_with(&mut c, ENHANCE_YOUR_CALM);

    // Many distinct fields past the list bound, in one block.
    let mut c = open(&s);
    let mut block = get_block("/small.html");
    for i in 0..400 {
        let name = format!("x-field-{i:04}");
        block.extend([0x00, name.len() as u8]);
        block.extend_from_slice(name.as_bytes());
        block.extend([100]);
        block.extend(std::iter::repeat_n(b'v', 100));
    }
    let mut out = Vec::new();
    let chunks: Vec<&[u8]> = block.chunks(16384).collect();
    for (i, ch) in chunks.iter().enumerate() {
        let (kind, last) = (if i == 0 { 1 } else { 9 }, i + 1 == chunks.len());
        let flags = if i == 0 { 0x01 } else { 0 } | if last { 0x04 } else { 0 };
        out.extend(frame(kind, flags, 1, ch));
    }
    write_all_lossy(&mut c, &out);
    ends_with(&mut c, ENHANCE_YOUR_CALM);
    serves_on(&s);
}

/// Sends `n` copies of `f` without reading: the flood check
/// (limits::FLOOD_RATIO, nginx's) or the unread-output bound ends it.
fn flood(s: &Server, f: &[u8], n: usize) {
    let mut c = open(s);
    let mut out = Vec::with_capacity(f.len() * n);
    for _ in 0..n {
        out.extend_from_slice(f);
    }
    write_all_lossy(&mut c, &out);
    let t = Instant::now();
    let code = goaway_code(&mut c);
    // A client that reads nothing may never see the GOAWAY: it waits
    // behind the answers it did not read (limits::MAX_UNSENT_OUTPUT).
    // Either way the connection must end, well before the read timeout.
    assert!(
        t.elapsed() < Duration::from_secs(9),
        "the flood's connection ended"
    );
    if !is_nginx() {
        assert!(
            matches!(code, None | Some(NO_ERROR | ENHANCE_YOUR_CALM)),
            "flood ends with GOAWAY, got {code:?}"
        );
    }
}

#[test]
fn settings_ping_and_empty_frame_floods() {
    let s = start("h2-floods", "");
    // SETTINGS and PING: each one makes the server answer.
    flood(&s, &frame(4, 0, 0, &[]), 1_200_000);
    flood(&s, &frame(6, 0, 0, b"pingpong"), 700_000);
    // Empty DATA on an open stream, and unknown frame types: work for the
    // server, no content asked for.
    let mut c = open(&s);
    let mut out = frame(4, 0, 0, &[0, 4, 0, 0, 0, 0]);
    out.extend(frame(1, 0x04, 1, &get_block("/small.html")));
    for _ in 0..1_200_000 {
        out.extend(frame(0, 0, 1, &[]));
    }
    write_all_lossy(&mut c, &out);
    let _ = goaway_code(&mut c);
    flood(&s, &frame(0xfa, 0, 0, &[]), 1_200_000);
    serves_on(&s);
}

#[test]
fn zero_window_stall_is_bounded_by_send_timeout() {
    // The client opens no window (SETTINGS_INITIAL_WINDOW_SIZE 0) and
    // never reads: the response waits, send_timeout ends it.
    let s = start("h2-zero-window", "send_timeout 1s;");
    let mut c = s.connect();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(4, 0, 0, &[0, 4, 0, 0, 0, 0]));
    out.extend(frame(1, 0x05, 1, &get_block("/big.bin")));
    c.write_all(&out).unwrap();
    let t = Instant::now();
    let _ = goaway_code(&mut c);
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(8),
        "ended after {took:?}"
    );
    serves_on(&s);
}

#[test]
fn stream_count_exhaustion_is_refused() {
    // 200 streams held open (zero window: no response can end): those
    // past http2_max_concurrent_streams are refused with REFUSED_STREAM,
    // the ones within are kept, and other connections are served.
    let s = start("h2-streams", "http2_max_concurrent_streams 16;");
    let mut c = s.connect();
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(4, 0, 0, &[0, 4, 0, 0, 0, 0]));
    for i in 0..200u32 {
        out.extend(frame(1, 0x05, 2 * i + 1, &get_block("/small.html")));
    }
    out.extend(frame(6, 0, 0, b"endofrun"));
    c.write_all(&out).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (mut refused, mut heads) = (0, 0);
    loop {
        match read_frame(&mut c) {
            Some((3, _, _, p))
                if u32::from_be_bytes([p[0], p[1], p[2], p[3]]) == REFUSED_STREAM =>
            {
                refused += 1
            }
            Some((1, _, _, _)) => heads += 1,
            Some((6, 1, _, p)) if p == b"endofrun" => break,
            Some(_) => {}
            None => break,
        }
    }
    assert_eq!((heads, refused), (16, 184));
    serves_on(&s);
}
