//! Requests arriving: heads, bodies, trailers, CONTINUATION, PRIORITY,
//! PING, SETTINGS, GOAWAY from the peer.

use super::*;

#[test]
fn a_get_is_one_request_event_and_our_settings_ack() {
    let o = run(&cat(&[start(), get(1)]));
    assert_eq!(o.error, None);
    assert_eq!(o.events.len(), 2, "{:?}", o.events);
    assert_eq!(o.events[0], "Settings");
    assert!(
        o.events[1].starts_with("Request { stream: 1,"),
        "{}",
        o.events[1]
    );
    assert!(o.events[1].ends_with("end_stream: true }"));
    assert_eq!(o.out, vec![(Kind::Settings, flags::ACK, 0, vec![])]);
}

#[test]
fn a_post_body_arrives_as_data_events_padding_removed() {
    let head = frame(Kind::Headers, flags::END_HEADERS, 1, &block(&POST));
    let d1 = frame(Kind::Data, 0, 1, b"he");
    let mut padded = vec![3];
    padded.extend(b"llo\0\0\0");
    let d2 = frame(Kind::Data, flags::PADDED | flags::END_STREAM, 1, &padded);
    let o = run(&cat(&[start(), head, d1, d2]));
    assert_eq!(o.error, None);
    assert_eq!(
        o.events[2],
        r#"Data { stream: 1, data: [104, 101], end_stream: false }"#
    );
    assert_eq!(
        o.events[3],
        r#"Data { stream: 1, data: [108, 108, 111], end_stream: true }"#
    );
}

#[test]
fn headers_and_continuations_assemble_with_padding_and_priority() {
    let b = block(&GET);
    let (a, rest) = b.split_at(2);
    let (m, z) = rest.split_at(2);
    let mut first = vec![2, 0x80, 0, 0, 0, 41];
    first.extend_from_slice(a);
    first.extend([0, 0]);
    let input = cat(&[
        start(),
        frame(
            Kind::Headers,
            flags::PADDED | flags::PRIORITY | flags::END_STREAM,
            3,
            &first,
        ),
        frame(Kind::Continuation, 0, 3, m),
        frame(Kind::Continuation, flags::END_HEADERS, 3, z),
    ]);
    let o = run(&input);
    assert_eq!(o.error, None);
    assert!(
        o.events[1].starts_with("Request { stream: 3,"),
        "{:?}",
        o.events
    );
    let mut conn = Connection::new(Config::default());
    feed(&mut conn, &[&input]);
    assert_eq!(
        conn.priority(3),
        Some(crate::Priority {
            dependency: 0,
            weight: 42,
            exclusive: true
        })
    );
}

#[test]
fn trailers_end_the_request() {
    let head = frame(Kind::Headers, flags::END_HEADERS, 1, &block(&POST));
    let data = frame(Kind::Data, 0, 1, b"hello");
    let trailers = frame(
        Kind::Headers,
        flags::END_HEADERS | flags::END_STREAM,
        1,
        &block(&[("x-sum", "7")]),
    );
    let o = run(&cat(&[start(), head, data, trailers]));
    assert_eq!(o.error, None);
    assert!(
        o.events[3].starts_with("Trailers { stream: 1"),
        "{:?}",
        o.events
    );
}

#[test]
fn ping_is_answered_and_unknown_frames_ignored() {
    let o = run(&cat(&[
        start(),
        frame(Kind::Unknown(0xee), 0xff, 9, b"xyz"),
        frame(Kind::Ping, 0, 0, b"12345678"),
    ]));
    assert_eq!(o.error, None);
    assert_eq!(o.out[1], (Kind::Ping, flags::ACK, 0, b"12345678".to_vec()));
    // An answer to a PING we did not send is ignored.
    let o = run(&cat(&[
        start(),
        frame(Kind::Ping, flags::ACK, 0, b"12345678"),
    ]));
    assert_eq!((o.error, o.count(Kind::Ping)), (None, 0));
}

#[test]
fn priority_frames_are_events_for_the_scheduler() {
    let o = run(&cat(&[
        start(),
        frame(Kind::Priority, 0, 5, &[0, 0, 0, 3, 7]),
    ]));
    assert_eq!(o.error, None);
    assert_eq!(
        o.events[1],
        "Priority { stream: 5, priority: Priority { dependency: 3, weight: 8, exclusive: false } }"
    );
    // PRIORITY on an idle stream does not open it: HEADERS on 5 still can.
    let o = run(&cat(&[
        start(),
        frame(Kind::Priority, 0, 5, &[0, 0, 0, 3, 7]),
        get(5),
    ]));
    assert!(o.events[2].starts_with("Request { stream: 5"));
}

#[test]
fn the_peers_goaway_is_an_event() {
    let mut p = 7u32.to_be_bytes().to_vec();
    p.extend(0u32.to_be_bytes());
    p.extend(b"bye");
    let o = run(&cat(&[start(), frame(Kind::GoAway, 0, 0, &p)]));
    assert_eq!(
        o.events[1],
        "GoAway { last_stream: 7, code: NoError, debug: [98, 121, 101] }"
    );
}

#[test]
fn settings_apply_to_later_streams_and_are_acked() {
    let mut s = 4u16.to_be_bytes().to_vec();
    s.extend(100u32.to_be_bytes());
    let mut conn = Connection::new(Config::default());
    let input = cat(&[PREFACE.to_vec(), frame(Kind::Settings, 0, 0, &s), get(1)]);
    let (_, err) = feed(&mut conn, &[&input]);
    assert_eq!(err, None);
    conn.send_headers(1, 200, &[], false).unwrap();
    assert_eq!(conn.sendable(1), 100);
}

#[test]
fn request_body_credit_comes_back_as_window_updates() {
    let mut conn = Connection::new(Config {
        initial_window: 1000,
        ..Config::default()
    });
    let head = frame(Kind::Headers, flags::END_HEADERS, 1, &block(&GET));
    let input = cat(&[start(), head, frame(Kind::Data, 0, 1, &[0; 600])]);
    let (events, err) = feed(&mut conn, &[&input]);
    assert_eq!((events.len(), err), (3, None));
    conn.advance_output(conn.output().len());
    conn.release(1, 400);
    assert!(
        conn.output().is_empty(),
        "under half the window: no update yet"
    );
    conn.release(1, 200);
    let out = frames(conn.output());
    assert_eq!(
        out,
        vec![(Kind::WindowUpdate, 0, 1, 600u32.to_be_bytes().to_vec())]
    );
    // The peer may now send 1000 again, not 1001.
    let (_, err) = feed(&mut conn, &[&frame(Kind::Data, 0, 1, &[0; 1000])]);
    assert_eq!(err, None);
    let (events, _) = feed(&mut conn, &[&frame(Kind::Data, 0, 1, &[0; 1])]);
    assert!(events[0].contains("FlowControlError"), "{events:?}");
}

#[test]
fn before_our_settings_are_acked_a_stream_with_a_body_is_refused() {
    // A preread window of 0: until the ACK the client may count on the
    // protocol's 65535 bytes; nginx refuses such a stream
    // (h2_request_body_preread.t "no SETTINGS ack - REFUSED_STREAM").
    let cfg = Config {
        initial_window: 0,
        ..Config::default()
    };
    let mut input = PREFACE.to_vec();
    input.extend(frame(Kind::Settings, 0, 0, &[]));
    input.extend(frame(Kind::Headers, flags::END_HEADERS, 1, &block(&GET)));
    input.extend(frame(Kind::Data, 0, 1, &[0; 16384]));
    assert_eq!(run_with(cfg, &input).rst(1), Some(ErrorCode::RefusedStream));
    // After the ACK, a new stream gets our window of 0.
    input.extend(frame(Kind::Settings, flags::ACK, 0, &[]));
    input.extend(frame(Kind::Headers, flags::END_HEADERS, 3, &block(&GET)));
    input.extend(frame(Kind::Data, 0, 3, &[0; 1]));
    assert_eq!(
        run_with(cfg, &input).rst(3),
        Some(ErrorCode::FlowControlError)
    );
}
