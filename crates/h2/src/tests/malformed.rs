//! Malformed requests (RFC 9113 §8.1.1, h2spec 8.1.2.x): nginx's 400
//! response goes out, then RST_STREAM PROTOCOL_ERROR, the stream error the
//! RFC requires ("a server MAY send an HTTP response prior to closing or
//! resetting the stream"). Each input is fed whole and split at every byte,
//! then the engine's part (a response) is played, and every run must give
//! the same frames.

use super::*;

/// What the engine does with a request: a head and a short body.
#[derive(Clone, Copy)]
enum Answer {
    /// Answer every request as soon as it arrives.
    AtOnce,
    /// Answer after the whole input was read.
    AtEnd,
}

/// The events' texts and the frames sent (kind, flags, stream, payload).
type Frames = (Vec<String>, Vec<(Kind, u8, u32, Vec<u8>)>);

/// Feeds `input` in two pieces at `split`, answering requests as `answer`
/// says; returns the events and the frames after our SETTINGS.
fn play(input: &[u8], split: usize, answer: Answer) -> Frames {
    let mut conn = Connection::new(Config::default());
    let mut events = Vec::new();
    let mut requests = Vec::new();
    let mut buf = Vec::new();
    for chunk in [&input[..split], &input[split..]] {
        conn.start_read();
        buf.extend_from_slice(chunk);
        let mut pos = 0;
        while let Ok(Progress::Frame { consumed, event }) = conn.recv(&buf[pos..]) {
            if let Some(e) = event {
                if let crate::Event::Request { stream, .. } = &e {
                    requests.push(*stream);
                }
                events.push(format!("{e:?}"));
            }
            pos += consumed;
            if let Answer::AtOnce = answer {
                for id in requests.drain(..) {
                    respond(&mut conn, id);
                }
            }
        }
        buf.drain(..pos);
    }
    for id in requests.drain(..) {
        respond(&mut conn, id);
    }
    let mut out = frames(conn.output());
    out.drain(..2);
    (events, out)
}

fn respond(conn: &mut Connection, id: u32) {
    conn.send_headers(id, 400, &[], false).unwrap();
    assert_eq!(conn.send_data(id, b"bad", true), Ok(3));
}

/// Every split agrees; the frames of the whole run.
fn frames_of(input: &[u8], answer: Answer) -> Frames {
    let whole = play(input, input.len(), answer);
    for k in 0..input.len() {
        assert_eq!(play(input, k, answer), whole, "split at {k}");
    }
    whole
}

fn kinds(out: &[(Kind, u8, u32, Vec<u8>)]) -> Vec<(Kind, u32)> {
    out.iter()
        .filter(|f| f.0 != Kind::Settings)
        .map(|f| (f.0, f.2))
        .collect()
}

fn rst_code(out: &[(Kind, u8, u32, Vec<u8>)]) -> Option<ErrorCode> {
    out.iter()
        .find(|f| f.0 == Kind::RstStream)
        .map(|f| ErrorCode::from_u32(u32::from_be_bytes([f.3[0], f.3[1], f.3[2], f.3[3]])))
}

fn head(fields: &[(&str, &str)], f: u8) -> Vec<u8> {
    frame(Kind::Headers, flags::END_HEADERS | f, 1, &block(fields))
}

#[test]
fn a_malformed_head_is_answered_400_then_reset_with_protocol_error() {
    let bad: [&[(&str, &str)]; 5] = [
        &[(":method", "GET"), (":scheme", "http")],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":path", "/"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("X-Upper", "1"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("connection", "close"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":status", "200"),
        ],
    ];
    for fields in bad {
        let input = cat(&[start(), head(fields, flags::END_STREAM)]);
        let (events, out) = frames_of(&input, Answer::AtOnce);
        assert!(events[1].contains("bad: Some((400"), "{events:?}");
        assert_eq!(
            kinds(&out),
            [(Kind::Headers, 1), (Kind::Data, 1), (Kind::RstStream, 1)],
            "{fields:?}"
        );
        assert_eq!(rst_code(&out), Some(ErrorCode::ProtocolError));
    }
}

#[test]
fn a_good_request_ends_without_a_reset() {
    let (_, out) = frames_of(&cat(&[start(), get(1)]), Answer::AtOnce);
    assert_eq!(kinds(&out), [(Kind::Headers, 1), (Kind::Data, 1)]);
    // CONNECT is refused with 405 but is no malformed request.
    let connect = head(
        &[(":method", "CONNECT"), (":authority", "a:1")],
        flags::END_STREAM,
    );
    let (_, out) = frames_of(&cat(&[start(), connect]), Answer::AtOnce);
    assert_eq!(kinds(&out), [(Kind::Headers, 1), (Kind::Data, 1)]);
}

#[test]
fn a_content_length_with_no_body_is_malformed() {
    let mut fields = GET.to_vec();
    fields.push(("content-length", "3"));
    let input = cat(&[start(), head(&fields, flags::END_STREAM)]);
    let (_, out) = frames_of(&input, Answer::AtOnce);
    assert_eq!(rst_code(&out), Some(ErrorCode::ProtocolError));
}

/// h2spec 8.1.2.6: `content-length: 1` and 4 bytes of DATA, in one frame
/// or two.
#[test]
fn a_body_longer_than_its_content_length_resets_the_stream() {
    let mut fields = POST.to_vec();
    fields[4] = ("content-length", "1");
    let one = frame(Kind::Data, flags::END_STREAM, 1, b"test");
    let two = cat(&[
        frame(Kind::Data, 0, 1, b"te"),
        frame(Kind::Data, flags::END_STREAM, 1, b"st"),
    ]);
    for body in [one, two] {
        let input = cat(&[start(), head(&fields, 0), body]);
        // Answered before the body came: the reset follows the DATA.
        let (events, out) = frames_of(&input, Answer::AtOnce);
        assert!(
            events.iter().any(|e| e.starts_with("BadBody")),
            "{events:?}"
        );
        assert_eq!(kinds(&out).last(), Some(&(Kind::RstStream, 1)), "{out:?}");
        assert_eq!(rst_code(&out), Some(ErrorCode::ProtocolError));
        // Answered after: the reset follows the response.
        let (_, out) = frames_of(&input, Answer::AtEnd);
        assert_eq!(
            kinds(&out)
                .iter()
                .filter(|k| k.0 != Kind::WindowUpdate)
                .collect::<Vec<_>>(),
            [&(Kind::Headers, 1), &(Kind::Data, 1), &(Kind::RstStream, 1)]
        );
        assert_eq!(rst_code(&out), Some(ErrorCode::ProtocolError));
    }
}

#[test]
fn trailers_ending_a_short_body_reset_the_stream() {
    let body = frame(Kind::Data, 0, 1, b"abc");
    let trailers = frame(
        Kind::Headers,
        flags::END_HEADERS | flags::END_STREAM,
        1,
        &block(&[("x-sum", "1")]),
    );
    let input = cat(&[start(), head(&POST, 0), body, trailers]);
    let (events, out) = frames_of(&input, Answer::AtEnd);
    assert!(
        events.iter().any(|e| e.starts_with("BadBody")),
        "{events:?}"
    );
    assert_eq!(rst_code(&out), Some(ErrorCode::ProtocolError));
    let (_, out) = frames_of(&input, Answer::AtOnce);
    assert_eq!(rst_code(&out), Some(ErrorCode::ProtocolError));
}
