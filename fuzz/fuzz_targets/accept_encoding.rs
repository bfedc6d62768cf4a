//! Fuzzes the `Accept-Encoding` reading the server uses (compress's copies
//! of nginx's gzip, ngx_brotli and zstd-nginx-module scanners): no panics,
//! q-values within 0..=1.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_compress::{Accepted, Coding};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    let accepted = Accepted::from_header(Some(value));
    for coding in Coding::PREFERENCE {
        let q = accepted.q(coding);
        assert!((0.0..=1.0).contains(&q), "{coding:?} {q}");
        assert_eq!(accepted.accepts(coding), q > 0.0);
    }
});
