//! Fuzzes the PROXY protocol v1/v2 parser: no panics; a header never claims
//! more bytes than it was given or than the limit; every prefix is Partial
//! or the same outcome (for a broken v1 line, also broken); every TLV name
//! nginx knows can be looked up without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_codec::proxy_protocol::{Parsed, ProxyError, parse};

const LIMIT: usize = 1024;

const NAMES: [&str; 15] = [
    "alpn", "authority", "unique_id", "ssl", "netns", "0x01", "0xE0", "ssl_verify",
    "ssl_version", "ssl_cn", "ssl_cipher", "ssl_sig_alg", "ssl_key_alg", "ssl_0x21", "0x",
];

fuzz_target!(|data: &[u8]| {
    let whole = parse(data, LIMIT);
    if let Ok(Parsed::Header(h)) = &whole {
        assert!(h.len <= data.len() && h.len <= LIMIT);
        for name in NAMES {
            let _ = h.tlv(name);
        }
        let _ = h.tlv_list().count();
    }
    let cut = data.len() / 2;
    let half = parse(&data[..cut], LIMIT);
    let same = match (&half, &whole) {
        (Err(ProxyError::Broken(_)), Err(ProxyError::Broken(_))) => true,
        _ => half == whole,
    };
    assert!(half == Ok(Parsed::Partial) || same, "{half:?} vs {whole:?}");
});
