//! Fuzzes the `Range` parser the server uses (core's port of nginx's): no
//! panics, and satisfiable ranges are non-empty, inside the size and, as
//! nginx requires, together no longer than it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_core::range::{Ranges, parse};

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
    if let Ranges::Satisfiable(ranges) = parse(value, size) {
        assert!(!ranges.is_empty());
        let mut total: u64 = 0;
        for (start, end) in ranges {
            assert!(start < end && end <= size);
            total = total.checked_add(end - start).expect("total overflows");
        }
        assert!(total <= size);
    }
});
