//! The known attacks, each against its named limit.

use super::*;
use crate::limits;

#[test]
fn rapid_reset_cve_2023_44487_ends_the_connection() {
    // HEADERS then RST_STREAM at once, over and over: the budget runs out.
    let mut input = start();
    let mut n = 0;
    for i in 0..limits::RAPID_RESET_BUDGET {
        let id = 2 * i + 1;
        input.extend(get(id));
        input.extend(frame(Kind::RstStream, 0, id, &[0, 0, 0, 8]));
        n += 1;
    }
    let o = run(&input);
    assert_eq!(o.error.map(|e| e.0), Some(ErrorCode::EnhanceYourCalm));
    assert_eq!(o.goaway(), Some(ErrorCode::EnhanceYourCalm));
    assert_eq!(
        o.events.iter().filter(|e| e.starts_with("Request")).count(),
        n as usize
    );
    // One fewer reset is served on.
    let mut short = start();
    for i in 0..limits::RAPID_RESET_BUDGET - 1 {
        short.extend(get(2 * i + 1));
        short.extend(frame(Kind::RstStream, 0, 2 * i + 1, &[0, 0, 0, 8]));
    }
    assert_eq!(run(&short).error, None);
}

#[test]
fn streams_ending_normally_refill_the_reset_budget() {
    let mut conn = Connection::new(Config::default());
    feed(&mut conn, &[&start()]);
    for i in 0..3 * limits::RAPID_RESET_BUDGET {
        let id = 2 * i + 1;
        // Every other stream is answered in full before the next one.
        let (_, err) = feed(&mut conn, &[&get(id)]);
        assert_eq!(err, None);
        if i % 2 == 0 {
            conn.send_headers(id, 204, &[], true).unwrap();
        } else {
            let (_, err) = feed(&mut conn, &[&frame(Kind::RstStream, 0, id, &[0, 0, 0, 8])]);
            assert_eq!(err, None, "stream {id}");
        }
        conn.advance_output(conn.output().len());
    }
}

#[test]
fn nginx_new_streams_per_read_bound() {
    // 2 × max concurrent new streams in one read; each answered at once so
    // concurrency is not what refuses the next one.
    let cfg = Config {
        max_concurrent_streams: 4,
        ..Config::default()
    };
    let mut conn = Connection::new(cfg);
    feed(&mut conn, &[&start()]);
    conn.start_read();
    let mut input = Vec::new();
    for i in 0..9 {
        input.extend(get(2 * i + 1));
    }
    let mut buf = &input[..];
    let mut refused = 0;
    while let Ok(Progress::Frame { consumed, event }) = conn.recv(buf) {
        if let Some(crate::Event::Request { stream, .. }) = event {
            conn.send_headers(stream, 204, &[], true).unwrap();
        } else if let Some(crate::Event::Reset { code, .. }) = event {
            assert_eq!(code, ErrorCode::RefusedStream);
            refused += 1;
        }
        buf = &buf[consumed..];
    }
    assert_eq!(refused, 1, "the ninth stream of the read");
}

#[test]
fn concurrency_beyond_the_setting_is_refused_stream() {
    let cfg = Config {
        max_concurrent_streams: 2,
        ..Config::default()
    };
    let open = |id| frame(Kind::Headers, flags::END_HEADERS, id, &block(&GET));
    let o = run_with(cfg, &cat(&[start(), open(1), open(3), open(5)]));
    assert_eq!(o.error, None);
    assert_eq!(o.rst(5), Some(ErrorCode::RefusedStream));
    assert_eq!(o.rst(3), None);
}

#[test]
fn continuation_flood_cve_2024_27316_is_cut_before_end_headers() {
    let mut input = cat(&[start(), frame(Kind::Headers, 0, 1, &block(&GET))]);
    let fragment = [b'a'; 4000];
    let frames_to_pass = limits::MAX_HEADER_BLOCK_SIZE / fragment.len() + 1;
    for _ in 0..frames_to_pass {
        input.extend(frame(Kind::Continuation, 0, 1, &fragment));
    }
    let o = run(&input);
    assert_eq!(o.error.map(|e| e.0), Some(ErrorCode::EnhanceYourCalm));
    // Without the last frame, the connection still waits for END_HEADERS.
    let cut = input.len() - 4009;
    assert_eq!(run(&input[..cut]).error, None);
}

#[test]
fn hpack_bomb_is_bounded_by_the_header_list_size() {
    let mut b = block(&GET);
    b.push(0x40);
    b.push(6);
    b.extend(b"x-bomb");
    b.extend([0x7f, 0xa1, 0x1e]); // value length 4000 (127 + 33 + 30 * 128)
    b.extend([b'a'; 4000]);
    b.extend(std::iter::repeat_n(0xbe, 100));
    let o = run(&cat(&[start(), frame(Kind::Headers, 5, 1, &b)]));
    assert_eq!(
        o.error.map(|e| e.0),
        Some(ErrorCode::EnhanceYourCalm),
        "{:?}",
        o.error
    );
}

/// Sends `prefix`, then `unit` until its bytes pass the flood allowance,
/// writing all output as it comes (an engine whose peer reads).
fn flood_n(prefix: &[u8], unit: &[u8], n: usize) -> Option<(ErrorCode, &'static str)> {
    let mut input = start();
    input.extend_from_slice(prefix);
    for _ in 0..n {
        input.extend_from_slice(unit);
    }
    let mut conn = Connection::new(Config::default());
    let mut buf = &input[..];
    loop {
        match conn.recv(buf) {
            Ok(Progress::Frame { consumed, .. }) => buf = &buf[consumed..],
            Ok(Progress::Partial) => return None,
            Err(e) => return Some((e.code, e.reason)),
        }
        conn.advance_output(conn.output().len());
    }
}

/// Floods just past the allowance, after checking that 90% of it passes.
fn flood(prefix: &[u8], unit: &[u8]) -> Option<(ErrorCode, &'static str)> {
    let n = (limits::FLOOD_ALLOWANCE * limits::FLOOD_RATIO) as usize / unit.len();
    assert_eq!(flood_n(prefix, unit, n * 9 / 10), None);
    flood_n(prefix, unit, n + 64)
}

#[test]
fn ping_settings_empty_data_and_window_update_floods() {
    let flooded = Some((ErrorCode::NoError, "http2 flood detected"));
    assert_eq!(flood(&[], &frame(Kind::Ping, 0, 0, &[0; 8])), flooded);
    assert_eq!(
        flood(&[], &frame(Kind::Settings, 0, 0, &[0, 4, 0, 0, 0xff, 0xff])),
        flooded
    );
    assert_eq!(
        flood(&[], &frame(Kind::WindowUpdate, 0, 0, &[0, 0, 0, 1])),
        flooded
    );
    let open = frame(Kind::Headers, flags::END_HEADERS, 1, &block(&GET));
    assert_eq!(flood(&open, &frame(Kind::Data, 0, 1, &[])), flooded);
    assert_eq!(flood(&[], &frame(Kind::Unknown(0x42), 0, 0, &[])), flooded);
}

#[test]
fn a_body_is_not_a_flood() {
    let mut input = start();
    input.extend(frame(Kind::Headers, flags::END_HEADERS, 1, &block(&GET)));
    let mut conn = Connection::new(Config::default());
    feed(&mut conn, &[&input]);
    for _ in 0..2000 {
        let (_, err) = feed(&mut conn, &[&frame(Kind::Data, 0, 1, &[0; 16384])]);
        assert_eq!(err, None);
        conn.release(1, 16384);
        conn.advance_output(conn.output().len());
    }
}

#[test]
fn unread_answers_end_the_connection() {
    // PINGs whose answers the peer never reads pile up in our output.
    let mut input = start();
    let n = limits::MAX_UNSENT_OUTPUT / 17 + 2;
    for _ in 0..n {
        input.extend(frame(Kind::Ping, 0, 0, &[0; 8]));
    }
    let o = run(&input);
    assert_eq!(o.error.map(|e| e.0), Some(ErrorCode::EnhanceYourCalm));
}

#[test]
fn priority_flood_is_bounded() {
    let mut input = start();
    for _ in 0..limits::PRIORITY_LIMIT_MIN.max(limits::MAX_CONCURRENT_STREAMS) {
        input.extend(frame(Kind::Priority, 0, 1, &[0, 0, 0, 0, 0]));
    }
    let o = run(&input);
    assert_eq!(o.error.map(|e| e.0), Some(ErrorCode::EnhanceYourCalm));
}

#[test]
fn zero_window_stall_is_visible_to_the_engine() {
    let mut s = 4u16.to_be_bytes().to_vec();
    s.extend(0u32.to_be_bytes());
    let mut conn = Connection::new(Config::default());
    let input = cat(&[PREFACE.to_vec(), frame(Kind::Settings, 0, 0, &s), get(1)]);
    assert_eq!(feed(&mut conn, &[&input]).1, None);
    conn.send_headers(1, 200, &[], false).unwrap();
    assert!(conn.is_stalled(1));
    assert_eq!(conn.sendable(1), 0);
    assert_eq!(conn.send_data(1, b"body", true), Ok(0));
    let (events, _) = feed(
        &mut conn,
        &[&frame(Kind::WindowUpdate, 0, 1, &[0, 0, 0, 2])],
    );
    assert_eq!(events, ["WindowUpdate { stream: 1 }"]);
    assert!(!conn.is_stalled(1));
    assert_eq!(conn.send_data(1, b"body", true), Ok(2));
    assert!(conn.is_stalled(1));
}

#[test]
fn empty_continuation_flood_is_counted() {
    let mut input = cat(&[start(), frame(Kind::Headers, 0, 1, &block(&GET))]);
    for _ in 0..limits::MAX_CONTINUATION_FRAMES {
        input.extend(frame(Kind::Continuation, 0, 1, &[]));
    }
    assert_eq!(run(&input).error, None, "the limit itself is allowed");
    input.extend(frame(Kind::Continuation, 0, 1, &[]));
    let o = run(&input);
    assert_eq!(
        o.error,
        Some((
            ErrorCode::EnhanceYourCalm,
            "client sent too many CONTINUATION frames"
        ))
    );
}

#[test]
fn made_you_reset_cve_2025_8671_spends_the_reset_budget() {
    // Each stream is opened, then provoked into a stream error (a zero
    // WINDOW_UPDATE increment): our RST_STREAMs are counted like the peer's.
    let mut input = start();
    for i in 0..limits::RAPID_RESET_BUDGET {
        let id = 2 * i + 1;
        input.extend(get(id));
        input.extend(frame(Kind::WindowUpdate, 0, id, &[0, 0, 0, 0]));
    }
    let o = run(&input);
    let why = "client made the server reset too many streams";
    assert_eq!(o.error, Some((ErrorCode::EnhanceYourCalm, why)));
    assert_eq!(
        o.count(Kind::RstStream),
        limits::RAPID_RESET_BUDGET as usize - 1
    );
}
