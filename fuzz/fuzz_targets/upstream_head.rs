//! Fuzzes the upstream response-head parser: no panics; every range it
//! returns lies inside the head it measured; a head never claims more
//! bytes than it was given or than the buffer; any prefix of the input is
//! Partial or decides the same (the parser decides byte by byte as
//! nginx's does, so a cut can only leave the answer open).
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_codec::upstream::{Parsed, parse_head};

const BUFFER: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let whole = parse_head(data, BUFFER);
    if let Ok(Parsed::Head(h)) = &whole {
        assert!(h.len <= data.len() && h.len <= BUFFER);
        assert!(h.status_line.end <= h.len);
        for (n, v) in &h.headers {
            assert!(n.end <= h.len && v.end <= h.len && n.start <= n.end);
        }
        let _ = (h.framing(false), h.reusable(true));
    }
    let cut = data.len() / 2;
    let half = parse_head(&data[..cut], BUFFER);
    let same = match (&half, &whole) {
        (Ok(Parsed::Head(a)), Ok(Parsed::Head(b))) => a == b,
        _ => half == whole,
    };
    assert!(half == Ok(Parsed::Partial) || same, "{half:?} vs {whole:?}");
});
