//! Fuzzes `Accept-Encoding` parsing: no panics, q-values within 0..=1.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_codec::accept_encoding::{nginx_accepts, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    let ae = parse(value);
    for coding in ["gzip", "br", "zstd", "identity", "deflate"] {
        let q = ae.q_for(coding);
        assert!((0.0..=1.0).contains(&q));
        let _ = nginx_accepts(value, coding);
    }
});
