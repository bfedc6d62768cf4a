//! Fuzzes the FastCGI record decoder: no panics; event ranges lie inside
//! what was consumed; and the input fed whole or split at a point chosen by
//! its first byte tells the same story (the stdout and stderr bytes, the
//! markers, the error), which is what keeps an upstream connection in step
//! however the bytes arrive. The request encoder round-trips its params.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_fastcgi::params::pairs;
use peregrine_fastcgi::{Decoder, Event, NGINX_REQUEST_ID, ParamsEncoder};

#[derive(Debug, PartialEq)]
enum Out {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
    Mark(String),
}

fn run(pieces: &[&[u8]]) -> Vec<Out> {
    let mut d = Decoder::new(NGINX_REQUEST_ID);
    let mut outs: Vec<Out> = Vec::new();
    for piece in pieces {
        let mut rest = *piece;
        loop {
            let pr = match d.decode(rest) {
                Ok(pr) => pr,
                Err(e) => {
                    outs.push(Out::Mark(e.to_string()));
                    return outs;
                }
            };
            assert!(pr.consumed <= rest.len());
            let Some(ev) = pr.event else { break };
            let o = match ev {
                Event::Stdout(r) | Event::Stderr(r) if r.end > pr.consumed => panic!("range"),
                Event::Stdout(r) => Out::Stdout(rest[r].to_vec()),
                Event::Stderr(r) => Out::Stderr(rest[r].to_vec()),
                other => Out::Mark(format!("{other:?}")),
            };
            match (outs.last_mut(), o) {
                (Some(Out::Stdout(a)), Out::Stdout(b)) | (Some(Out::Stderr(a)), Out::Stderr(b)) => {
                    a.extend_from_slice(&b)
                }
                (_, o) => outs.push(o),
            }
            rest = &rest[pr.consumed..];
        }
    }
    outs
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, input)) = data.split_first() else { return };
    let whole = run(&[input]);
    let (a, b) = input.split_at(usize::from(cut).min(input.len()));
    assert_eq!(run(&[a, b]), whole);
    // Params: the input's halves as one pair, read back from the records.
    let mut out = Vec::new();
    let mut p = ParamsEncoder::new(&mut out, NGINX_REQUEST_ID);
    if p.push(a, b).is_err() {
        assert!(a.len() + b.len() > 65_535 - 10);
        return;
    }
    p.finish();
    let got: Vec<_> = pairs(&out[8..8 + usize::from(u16::from_be_bytes([out[4], out[5]]))])
        .map(Result::unwrap)
        .collect();
    assert_eq!(got, [(a, b)]);
});
