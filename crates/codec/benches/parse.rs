//! Hot-path benchmarks: parsing a typical ~300-byte request head and wrk's
//! request into a reused `Request`, and the per-response `Date` lookup.
//! (Instruction counts, which do not depend on the machine's load, come
//! from `examples/count_parse.rs` under callgrind.)

use criterion::{Criterion, criterion_group, criterion_main};
use peregrine_codec::{DateCache, Limits, Request, parse_request};
use std::hint::black_box;
use std::time::SystemTime;

const HEAD: &[u8] = b"GET /static/css/site.min.css?v=20261130 HTTP/1.1\r\n\
Host: www.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n\
Accept: text/css,*/*;q=0.1\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Referer: https://www.example.com/\r\n\
Connection: keep-alive\r\n\r\n";

/// What `wrk` sends by default (the request issue 4 measures).
const WRK: &[u8] = b"GET /small.html HTTP/1.1\r\nHost: 127.0.0.1:18082\r\n\r\n";

fn bench_parse(c: &mut Criterion) {
    let limits = Limits::default();
    let mut req = Request::new();
    for (name, head) in [("parse_request_300b", HEAD), ("parse_request_wrk", WRK)] {
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
