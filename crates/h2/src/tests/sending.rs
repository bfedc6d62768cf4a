//! The sending side: heads, DATA within windows and frame sizes, trailers,
//! resets and the graceful GOAWAY.

use super::*;

/// A connection with request 1 (a GET) received and its output written.
fn with_request(settings: &[(u16, u32)]) -> Connection {
    let mut s = Vec::new();
    for (id, v) in settings {
        s.extend(id.to_be_bytes());
        s.extend(v.to_be_bytes());
    }
    let mut conn = Connection::new(Config::default());
    let input = cat(&[PREFACE.to_vec(), frame(Kind::Settings, 0, 0, &s), get(1)]);
    assert_eq!(feed(&mut conn, &[&input]).1, None);
    conn.advance_output(conn.output().len());
    conn
}

#[test]
fn a_response_head_and_body_frames() {
    let mut conn = with_request(&[]);
    conn.send_headers(1, 200, &[(b"content-type", b"text/plain")], false)
        .unwrap();
    let f = conn.data_frame(1, 5, true).unwrap();
    assert_eq!((f.len, f.end_stream), (5, true));
    let out = frames(conn.output());
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].0, out[0].1, out[0].2),
        (Kind::Headers, flags::END_HEADERS, 1)
    );
    let mut fields = hpack::FieldList::default();
    hpack::Decoder::default()
        .decode(&out[0].3, 4096, 4096, &mut fields)
        .unwrap();
    let got: Vec<_> = fields.iter().collect();
    assert_eq!(
        got,
        [
            (&b":status"[..], &b"200"[..]),
            (b"content-type", b"text/plain")
        ]
    );
    let h = FrameHeader::parse(&f.header).unwrap();
    assert_eq!(
        (h.kind, h.len, h.flags, h.stream),
        (Kind::Data, 5, flags::END_STREAM, 1)
    );
    assert_eq!(conn.stream_state(1), None, "both sides ended: closed");
    assert_eq!(
        conn.send_data(1, b"x", true),
        Err(crate::SendError::StreamNotOpen)
    );
}

#[test]
fn data_honours_windows_chunk_size_and_max_frame_size() {
    // Peer window 65535 (default), chunk 8k.
    let mut conn = with_request(&[]);
    conn.send_headers(1, 200, &[], false).unwrap();
    let body = vec![7u8; 100_000];
    let mut sent = 0;
    while let Ok(n) = conn.send_data(1, &body[sent..], true) {
        if n == 0 {
            break;
        }
        assert!(n <= 8192);
        sent += n;
    }
    assert_eq!(sent, 65535);
    assert!(conn.is_stalled(1));
    // The peer raises max frame size and the windows; chunk size still rules.
    let mut conn = with_request(&[(5, 1 << 20), (4, 1 << 20)]);
    conn.send_headers(1, 200, &[], false).unwrap();
    assert_eq!(conn.sendable(1), 8192);
}

#[test]
fn the_connection_window_is_shared_by_streams() {
    let mut conn = with_request(&[(4, 1 << 20)]);
    feed(&mut conn, &[&get(3)]);
    conn.send_headers(1, 200, &[], false).unwrap();
    conn.send_headers(3, 200, &[], false).unwrap();
    let mut total = 0;
    for id in [1, 3, 1, 3, 1, 3, 1, 3, 1, 3] {
        total += conn.data_frame(id, 8192, false).unwrap().len;
    }
    assert_eq!(total, 65535, "the connection's window, not the streams'");
    assert!(conn.is_stalled(3));
    feed(
        &mut conn,
        &[&frame(Kind::WindowUpdate, 0, 0, &[0, 0, 0, 10])],
    );
    assert_eq!(conn.sendable(3), 10);
}

#[test]
fn a_smaller_initial_window_makes_windows_negative() {
    let mut conn = with_request(&[]);
    conn.send_headers(1, 200, &[], false).unwrap();
    assert_eq!(conn.data_frame(1, 1000, false).unwrap().len, 1000);
    // Initial window 65535 -> 500: the stream's window is now 500 - 1000.
    feed(
        &mut conn,
        &[&frame(Kind::Settings, 0, 0, &[0, 4, 0, 0, 0x01, 0xf4])],
    );
    assert_eq!(conn.sendable(1), 0);
    feed(
        &mut conn,
        &[&frame(Kind::WindowUpdate, 0, 1, &[0, 0, 0x01, 0xf4])],
    );
    assert_eq!(conn.sendable(1), 0);
    feed(
        &mut conn,
        &[&frame(Kind::WindowUpdate, 0, 1, &[0, 0, 0, 1])],
    );
    assert_eq!(conn.sendable(1), 1);
}

#[test]
fn large_heads_go_out_in_continuations_and_trailers_end_the_stream() {
    let mut conn = with_request(&[]);
    let big = vec![b'v'; 40_000];
    conn.send_headers(1, 200, &[(b"x-big", &big)], false)
        .unwrap();
    conn.send_trailers(1, &[(b"x-checksum", b"abc")]).unwrap();
    let out = frames(conn.output());
    let kinds: Vec<_> = out.iter().map(|f| (f.0, f.1)).collect();
    assert_eq!(
        kinds,
        [
            (Kind::Headers, 0),
            (Kind::Continuation, 0),
            (Kind::Continuation, flags::END_HEADERS),
            (Kind::Headers, flags::END_HEADERS | flags::END_STREAM),
        ]
    );
    assert!(out.iter().all(|f| f.3.len() <= 16384));
    assert_eq!(
        conn.send_headers(1, 200, &[], true),
        Err(crate::SendError::StreamNotOpen)
    );
}

#[test]
fn send_calls_out_of_order_are_refused() {
    let mut conn = with_request(&[]);
    assert_eq!(
        conn.data_frame(1, 1, false),
        Err(crate::SendError::HeadersNotSent)
    );
    assert_eq!(
        conn.send_trailers(1, &[]),
        Err(crate::SendError::HeadersNotSent)
    );
    conn.send_headers(1, 200, &[], false).unwrap();
    assert_eq!(
        conn.send_headers(1, 200, &[], false),
        Err(crate::SendError::HeadersAlreadySent)
    );
    assert_eq!(
        conn.send_headers(9, 200, &[], false),
        Err(crate::SendError::StreamNotOpen)
    );
}

#[test]
fn reset_by_us_sends_rst_stream_and_forgets_the_stream() {
    let mut conn = with_request(&[]);
    conn.reset(1, ErrorCode::Cancel);
    assert_eq!(
        frames(conn.output()),
        [(Kind::RstStream, 0, 1, 8u32.to_be_bytes().to_vec())]
    );
    assert_eq!(conn.open_streams(), 0);
    // Frames the peer sent before seeing it are ignored.
    let (events, err) = feed(
        &mut conn,
        &[&frame(Kind::WindowUpdate, 0, 1, &[0, 0, 0, 1])],
    );
    assert_eq!((events.len(), err), (0, None));
}

#[test]
fn graceful_shutdown_is_one_goaway_with_the_last_stream() {
    let mut conn = with_request(&[]);
    conn.shutdown();
    let out = frames(conn.output());
    assert_eq!(
        out,
        [(Kind::GoAway, 0, 0, [0, 0, 0, 1, 0, 0, 0, 0].to_vec())]
    );
    conn.advance_output(conn.output().len());
    // Later streams are ignored; the connection ends when 1 does.
    let (events, _) = feed(&mut conn, &[&get(5)]);
    assert!(events.is_empty());
    assert!(!conn.is_finished());
    conn.send_headers(1, 204, &[], true).unwrap();
    assert!(conn.is_finished());
}

#[test]
fn go_away_now_names_the_last_stream_processed() {
    let mut conn = with_request(&[]);
    conn.go_away(ErrorCode::NoError);
    conn.go_away(ErrorCode::InternalError);
    assert_eq!(
        frames(conn.output()),
        [(Kind::GoAway, 0, 0, [0, 0, 0, 1, 0, 0, 0, 0].to_vec())]
    );
}

#[test]
fn encoded_heads_are_reusable_across_connections() {
    let mut block = Vec::new();
    crate::encode_response_head(404, &[(b"server", b"peregrine")], &mut block);
    let mut a = with_request(&[]);
    let mut b = with_request(&[]);
    a.send_encoded_headers(1, &block, true).unwrap();
    b.send_encoded_headers(1, &block, true).unwrap();
    assert_eq!(a.output(), b.output());
    assert_eq!(frames(a.output())[0].3, block);
    assert_eq!(block[0], 0x8d, ":status 404 is static entry 13");
}
