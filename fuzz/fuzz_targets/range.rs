//! Fuzzes the `Range` parser: no panics, and every range lies inside the size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_codec::range::{RangeSpec, parse_range};

fuzz_target!(|data: &[u8]| {
    let Some((size_bytes, text)) = data.split_at_checked(8) else {
        return;
    };
    let mut sz = [0u8; 8];
    sz.copy_from_slice(size_bytes);
    let size = u64::from_le_bytes(sz);
    let Ok(value) = std::str::from_utf8(text) else {
        return;
    };
    if let RangeSpec::Ranges(ranges) = parse_range(value, size) {
        assert!(!ranges.is_empty());
        for (a, b) in ranges {
            assert!(a <= b && b < size);
        }
    }
});
