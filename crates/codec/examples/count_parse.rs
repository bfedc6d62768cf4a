//! Instruction-count harness for `parse_request`: parses one head N times
//! into one reused `Request`, so that `valgrind --tool=callgrind` (whose
//! counts are deterministic, unlike wall-clock timings on a shared machine)
//! gives the per-parse cost as `parse_request`'s inclusive count / N.
//!
//! ```sh
//! cargo build --release -p peregrine-codec --example count_parse
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/examples/count_parse wrk 100000
//! callgrind_annotate --inclusive=yes cg.out | grep parse_request
//! ```
//!
//! Heads: `wrk` (wrk's default request) and `browser` (a GET with the eight
//! headers a browser sends). A third argument `lookup` also does the header
//! lookups core makes per request, to count `header()` separately.
//!
//! 2026-11-30, Rust 1.95, release profile: `parse_request` went from 2,064
//! to 1,013 instructions a parse for `wrk` and from 5,886 to 3,440 for
//! `browser`; the eight lookups (three present) from 1,671 to 1,306.
//! 2026-12-01, same toolchain: 781 for `wrk`, 2,788 for `browser` (the
//! usual request line and known header names without the general parser's
//! branches).
//! 2026-12-01, Host by RFC 3986 (nginx 1.29.4+, the port bounded): 808
//! for `wrk` (791 before: its five-digit port is compared with 65535),
//! 2,867 for `browser` (unchanged; its Host has no port).

use peregrine_codec::{Limits, Parsed, Request, parse_request};
use std::hint::black_box;

#[path = "../benches/support/heads.rs"]
mod heads;
use heads::{BROWSER, WRK};

/// Names core asks for on a static-file request: present ones and the
/// conditional/range headers a plain GET does not carry.
const LOOKUPS: [&str; 8] = [
    "accept-encoding",
    "if-modified-since",
    "if-none-match",
    "range",
    "if-range",
    "user-agent",
    "referer",
    "if-match",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "wrk".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let lookup = args.next().is_some_and(|s| s == "lookup");
    let head = if which == "browser" { BROWSER } else { WRK };
    let limits = Limits::default();
    let mut req = Request::new();
    let mut found = 0usize;
    for _ in 0..n {
        let r = parse_request(black_box(head), &limits, &mut req);
        assert_eq!(r, Ok(Parsed::Complete(head.len())));
        if lookup {
            for name in LOOKUPS {
                found += usize::from(black_box(&req).header(name).is_some());
            }
        }
    }
    println!("{which}: {n} parses, {found} headers found");
}
