//! Fuzzes the SSI command parser: no panics, and a body fed in two chunks
//! split anywhere gives the same events as fed whole (text joined).
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_core::filters::ssi_parse::{Event, Parser, parse};

fn joined(events: Vec<Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    for e in events {
        match (out.last_mut(), e) {
            (Some(Event::Text(a)), Event::Text(b)) => a.extend_from_slice(&b),
            (_, e) => out.push(e),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&at, body)) = data.split_first() else {
        return;
    };
    let whole = joined(parse(body, 32));
    let at = usize::from(at).min(body.len());
    let mut p = Parser::new(32);
    let mut out = Vec::new();
    p.feed(&body[..at], &mut out);
    p.feed(&body[at..], &mut out);
    p.finish(&mut out);
    assert_eq!(joined(out), whole);
});
