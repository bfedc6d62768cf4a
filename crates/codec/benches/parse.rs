//! Hot-path benchmarks: parsing a browser's ~400-byte request head and wrk's
//! request into a reused `Request`, and the per-response `Date` lookup.
//! (Instruction counts, which do not depend on the machine's load, come
//! from `examples/count_parse.rs` under callgrind.)

use criterion::{Criterion, criterion_group, criterion_main};
use peregrine_codec::{DateCache, Limits, Request, parse_request};
use std::hint::black_box;
use std::time::SystemTime;

#[path = "support/heads.rs"]
mod heads;
use heads::{BROWSER, WRK};

fn bench_parse(c: &mut Criterion) {
    let limits = Limits::default();
    let mut req = Request::new();
    for (name, head) in [
        ("parse_request_browser", BROWSER),
        ("parse_request_wrk", WRK),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| {
                let r = parse_request(black_box(head), &limits, &mut req);
                black_box(&r);
            })
        });
    }
}

fn bench_date(c: &mut Criterion) {
    let mut cache = DateCache::new();
    c.bench_function("date_cache_get", |b| {
        b.iter(|| black_box(cache.get(black_box(SystemTime::now())).len()))
    });
}

criterion_group!(benches, bench_parse, bench_date);
criterion_main!(benches);
