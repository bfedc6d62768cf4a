//! Fuzzes the request-head parser: no panics, and a prefix of the input
//! never disagrees with the whole (Partial or the same outcome), which is
//! what keeps a connection from being desynchronised by how bytes arrive.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_codec::{BodyDecoder, Limits, Parsed, Request, parse_request};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        header_buffer_size: 64,
        large_header_buffers: (2, 256),
        ..Limits::default()
    };
    let mut req = Request::new();
    let full = parse_request(data, &limits, &mut req);
    if let Ok(Parsed::Complete(n)) = full {
        assert!(n <= data.len());
        assert!(req.path().starts_with('/'));
        let _ = (req.target(), req.query(), req.host(), req.request_line());
        let mut body = BodyDecoder::new(req.body_kind());
        let mut rest = &data[n..];
        while let Ok(p) = body.decode(rest) {
            assert!(p.consumed <= rest.len() && p.data.end <= rest.len());
            if p.done || p.consumed == 0 {
                break;
            }
            rest = &rest[p.consumed..];
        }
    }
    let cut = data.len() / 2;
    let mut part = Request::new();
    let half = parse_request(&data[..cut], &limits, &mut part);
    assert!(half == Ok(Parsed::Partial) || half == full);
});
