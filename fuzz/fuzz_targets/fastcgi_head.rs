//! Fuzzes the CGI response-head parser (what arrives in FastCGI STDOUT):
//! no panics, the head never passes its limit, and the input fed whole or
//! split at a point chosen by its first byte gives the same outcome (same
//! status, status line, headers, bytes used, or the same error).
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_fastcgi::{HeadParser, HeadStatus};

const LIMIT: usize = 256;

fn run(pieces: &[&[u8]]) -> String {
    let mut hp = HeadParser::new(LIMIT);
    let mut used = 0;
    for piece in pieces {
        match hp.feed(piece) {
            Err(e) => return e.to_string(),
            Ok(HeadStatus::Partial) => used += piece.len(),
            Ok(HeadStatus::Complete(n)) => {
                assert!(n <= piece.len() && used + n <= LIMIT);
                let h = hp.head();
                let headers: Vec<_> = h.headers().collect();
                let warnings: Vec<_> = h.warnings().collect();
                return format!(
                    "{} {:?} {:?} {:?} {headers:?} {warnings:?}",
                    used + n,
                    h.status(),
                    h.status_line(),
                    h.location()
                );
            }
        }
    }
    "partial".to_owned()
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, input)) = data.split_first() else { return };
    let whole = run(&[input]);
    let (a, b) = input.split_at(usize::from(cut).min(input.len()));
    assert_eq!(run(&[a, b]), whole);
});
