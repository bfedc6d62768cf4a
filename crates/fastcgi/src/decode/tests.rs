//! Decoder tests: every input is fed whole, split at every byte, and one
//! byte at a time; all must tell the same story.

use super::*;

/// What a run produced, with adjacent pieces of one stream merged (how the
/// input was split must not show).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Out {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    StdoutEnd,
    End(EndRequest),
    Ignored(RecordType),
    Error(DecodeError),
}

/// One record as an application would write it, with `pad` padding bytes of 0xEE.
fn record(kind: u8, id: u16, content: &[u8], pad: u8) -> Vec<u8> {
    let len = content.len() as u16;
    let mut v = vec![1, kind];
    v.extend_from_slice(&id.to_be_bytes());
    v.extend_from_slice(&len.to_be_bytes());
    v.extend_from_slice(&[pad, 0]);
    v.extend_from_slice(content);
    v.extend(std::iter::repeat_n(0xEE, usize::from(pad)));
    v
}

fn end(app: u32, proto: u8) -> Vec<u8> {
    let mut c = app.to_be_bytes().to_vec();
    c.extend_from_slice(&[proto, 0, 0, 0]);
    record(3, 1, &c, 0)
}

fn push(outs: &mut Vec<Out>, o: Out) {
    match (outs.last_mut(), o) {
        (Some(Out::Stdout(a)), Out::Stdout(b)) | (Some(Out::Stderr(a)), Out::Stderr(b)) => {
            a.extend_from_slice(&b)
        }
        (_, o) => outs.push(o),
    }
}

/// Feeds `pieces` in order; returns the outputs and the bytes consumed.
fn run(id: u16, pieces: &[&[u8]]) -> (Vec<Out>, usize) {
    let mut d = Decoder::new(id);
    let mut outs = Vec::new();
    let mut used = 0;
    for piece in pieces {
        let mut rest = *piece;
        loop {
            let pr = match d.decode(rest) {
                Ok(pr) => pr,
                Err(e) => {
                    assert_eq!(d.decode(b"\x01"), Err(e), "an error repeats");
                    push(&mut outs, Out::Error(e));
                    // What was consumed before an error depends on the split.
                    return (outs, 0);
                }
            };
            assert!(pr.consumed <= rest.len());
            used += pr.consumed;
            let Some(ev) = pr.event else {
                assert!(pr.consumed == rest.len() || d.is_done());
                break;
            };
            let o = match ev {
                Event::Stdout(r) | Event::Stderr(r) if r.end > pr.consumed => {
                    panic!("range {r:?} past consumed {}", pr.consumed)
                }
                Event::Stdout(r) => Out::Stdout(rest[r].to_vec()),
                Event::Stderr(r) => Out::Stderr(rest[r].to_vec()),
                Event::StdoutEnd => Out::StdoutEnd,
                Event::End(e) => {
                    assert!(d.is_done());
                    Out::End(e)
                }
                Event::Ignored(t) => Out::Ignored(t),
            };
            push(&mut outs, o);
            rest = &rest[pr.consumed..];
        }
        if d.is_done() {
            break;
        }
    }
    (outs, used)
}

/// Runs `input` whole, split at every byte and byte by byte; all agree.
fn all_splits(id: u16, input: &[u8]) -> (Vec<Out>, usize) {
    let whole = run(id, &[input]);
    for s in 0..input.len() {
        let (a, b) = input.split_at(s);
        assert_eq!(run(id, &[a, b]), whole, "split at {s}");
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(id, &bytes), whole, "byte by byte");
    whole
}

fn complete() -> EndRequest {
    EndRequest {
        app_status: 0,
        protocol_status: ProtocolStatus::RequestComplete,
    }
}

#[test]
fn a_php_fpm_answer() {
    let input = [
        record(6, 1, b"Content-type: text/html\r\n\r\nhel", 5),
        record(7, 1, b"PHP Warning: x\n", 1),
        record(6, 1, b"lo", 6),
        record(6, 1, b"", 0),
        end(0, 0),
        b"NEXT".to_vec(),
    ]
    .concat();
    let (outs, used) = all_splits(1, &input);
    assert_eq!(
        outs,
        [
            Out::Stdout(b"Content-type: text/html\r\n\r\nhel".to_vec()),
            Out::Stderr(b"PHP Warning: x\n".to_vec()),
            Out::Stdout(b"lo".to_vec()),
            Out::StdoutEnd,
            Out::End(complete()),
        ]
    );
    assert_eq!(used, input.len() - 4, "the bytes after END_REQUEST stay");
}

#[test]
fn done_decoder_takes_nothing() {
    let mut d = Decoder::new(1);
    assert!(d.at_record_boundary());
    let e = end(0, 0);
    assert_eq!(d.decode(&e[..3]).unwrap(), Progress::none(3));
    assert!(!d.at_record_boundary());
    let pr = d.decode(&e[3..]).unwrap();
    assert_eq!(pr, Progress::event(13, Event::End(complete())));
    assert!(d.is_done() && d.at_record_boundary());
    assert_eq!(d.decode(b"more").unwrap(), Progress::none(0));
}

#[test]
fn end_request_statuses() {
    let cases = [
        (0x0102_0304, 0, ProtocolStatus::RequestComplete),
        (255, 1, ProtocolStatus::CantMpxConn),
        (0, 2, ProtocolStatus::Overloaded),
        (0, 3, ProtocolStatus::UnknownRole),
        (7, 9, ProtocolStatus::Other(9)),
    ];
    for (app, proto, want) in cases {
        let (outs, _) = all_splits(1, &end(app, proto));
        let e = EndRequest {
            app_status: app,
            protocol_status: want,
        };
        assert_eq!(outs, [Out::End(e)]);
    }
    // Off-specification lengths: short content reads zero-filled (not from
    // the padding), long content is skipped, empty content is complete.
    let (outs, used) = all_splits(1, &record(3, 1, &[0, 0, 1, 0], 4));
    let e = EndRequest {
        app_status: 256,
        protocol_status: ProtocolStatus::RequestComplete,
    };
    assert_eq!((outs, used), (vec![Out::End(e)], 16));
    let mut long = vec![0, 0, 0, 1, 2, 0, 0, 0];
    long.extend_from_slice(&[9; 100]);
    let (outs, used) = all_splits(1, &record(3, 1, &long, 4));
    let e = EndRequest {
        app_status: 1,
        protocol_status: ProtocolStatus::Overloaded,
    };
    assert_eq!((outs, used), (vec![Out::End(e)], 120));
    let (outs, used) = all_splits(1, &[record(3, 1, b"", 0), b"x".to_vec()].concat());
    assert_eq!((outs, used), (vec![Out::End(complete())], 8));
}

#[test]
fn errors_in_nginx_words() {
    let ok = record(6, 1, b"abc", 5);
    let cases: [(&[u8], DecodeError, &str); 6] = [
        (
            &[2],
            DecodeError::UnsupportedVersion(2),
            "upstream sent unsupported FastCGI protocol version: 2",
        ),
        (
            &[1, 4],
            DecodeError::InvalidType(4),
            "upstream sent invalid FastCGI record type: 4",
        ),
        (
            &[1, 0],
            DecodeError::InvalidType(0),
            "upstream sent invalid FastCGI record type: 0",
        ),
        (
            &[1, 1],
            DecodeError::InvalidType(1),
            "upstream sent invalid FastCGI record type: 1",
        ),
        (
            &[1, 6, 1],
            DecodeError::RequestIdHigh(1),
            "upstream sent unexpected FastCGI request id high byte: 1",
        ),
        (
            &[1, 7, 0, 2],
            DecodeError::RequestIdLow(2),
            "upstream sent unexpected FastCGI request id low byte: 2",
        ),
    ];
    for (bad, err, words) in cases {
        assert_eq!(err.to_string(), words);
        // Refused at the bad byte, whatever follows, after a good record.
        let input = [&ok[..], bad, &[0; 12]].concat();
        let (outs, _) = all_splits(1, &input);
        assert_eq!(outs, [Out::Stdout(b"abc".to_vec()), Out::Error(err)]);
        let before = ok.len() + bad.len() - 1;
        assert_eq!(
            run(1, &[&input[..before]]),
            (vec![Out::Stdout(b"abc".to_vec())], before)
        );
    }
    // Every type nginx does not accept.
    for t in (0..=255u8).filter(|t| ![3, 6, 7, 10, 11].contains(t)) {
        assert_eq!(
            run(1, &[&[1, t]]).0,
            [Out::Error(DecodeError::InvalidType(t))]
        );
    }
}

#[test]
fn another_request_id() {
    let input = [record(6, 0x0102, b"x", 7), record(3, 0x0102, &[0; 8], 0)].concat();
    let (outs, _) = all_splits(0x0102, &input);
    assert_eq!(outs, [Out::Stdout(b"x".to_vec()), Out::End(complete())]);
    let (outs, _) = all_splits(1, &input);
    assert_eq!(outs, [Out::Error(DecodeError::RequestIdHigh(1))]);
}

#[test]
fn management_records_are_skipped() {
    let mut values = Vec::new();
    let mut p = crate::ParamsEncoder::new(&mut values, 0);
    p.push(b"FCGI_MPXS_CONNS", b"0").unwrap();
    p.finish();
    let result = record(10, 0, &values[8..8 + 17], 7);
    let input = [
        result,
        record(11, 0, &[200, 0, 0, 0, 0, 0, 0, 0], 0),
        end(0, 0),
    ]
    .concat();
    let (outs, _) = all_splits(1, &input);
    assert_eq!(
        outs,
        [
            Out::Ignored(RecordType::GetValuesResult),
            Out::Ignored(RecordType::UnknownType),
            Out::End(complete())
        ]
    );
}

#[test]
fn empty_stderr_and_largest_record() {
    let big: Vec<u8> = (0..crate::MAX_CONTENT).map(|i| (i % 251) as u8).collect();
    let input = [record(7, 1, b"", 3), record(6, 1, &big, 255), end(0, 0)].concat();
    let (outs, used) = run(1, &[&input]);
    assert_eq!(outs, [Out::Stdout(big.clone()), Out::End(complete())]);
    assert_eq!(used, input.len());
    // A few splits inside the big record, in the header, the padding.
    for s in [
        1,
        9,
        12,
        100,
        8 + 8 + 65_535,
        8 + 8 + 65_535 + 254,
        input.len() - 1,
    ] {
        let (a, b) = input.split_at(s);
        assert_eq!(run(1, &[a, b]), (outs.clone(), used), "split at {s}");
    }
}

#[test]
fn stdout_content_comes_in_place() {
    let input = record(6, 1, b"hello", 3);
    let mut d = Decoder::new(1);
    let pr = d.decode(&input).unwrap();
    assert_eq!(pr, Progress::event(13, Event::Stdout(8..13)));
    assert_eq!(d.decode(&input[13..]).unwrap(), Progress::none(3));
    assert!(d.at_record_boundary());
}

proptest::proptest! {
    #[test]
    fn prefixes_never_disagree(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120),
        cut in 0usize..120,
    ) {
        let mut input = record(6, 1, b"ok", 6);
        input.extend_from_slice(&bytes);
        let whole = run(1, &[&input]);
        let (a, b) = input.split_at(cut.min(input.len()));
        proptest::prop_assert_eq!(run(1, &[a, b]), whole);
    }
}

#[test]
fn stderr_text_as_nginx_logs_it() {
    assert_eq!(
        stderr_text(b"PHP Warning: x in /a.php on line 3.\r\n"),
        b"PHP Warning: x in /a.php on line 3"
    );
    assert_eq!(stderr_text(b"a . \n"), b"a");
    assert_eq!(stderr_text(b"...\n"), b".");
    assert_eq!(stderr_text(b"x"), b"x");
    assert_eq!(stderr_text(b""), b"");
}
