//! Rendering cost of one access-log line (the per-request work).

use std::hint::black_box;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use peregrine_log::{COMBINED, LogEscape, LogFormat, RequestLog, TimeCache};

fn bench(c: &mut Criterion) {
    let headers = vec![
        ("Host", "example.com"),
        (
            "User-Agent",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
        ),
        ("Accept", "*/*"),
        ("Referer", "https://example.com/index.html"),
    ];
    let addr: SocketAddr = SocketAddr::from(([192, 0, 2, 7], 51_000));
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_037_017);
    let rec = RequestLog {
        request_line: Some(b"GET /static/app.js?v=3 HTTP/1.1"),
        method: Some(b"GET"),
        request_uri: Some(b"/static/app.js?v=3"),
        uri: Some(b"/static/app.js"),
        args: Some(b"v=3"),
        protocol: Some(b"HTTP/1.1"),
        request_headers: &headers,
        status: 200,
        bytes_sent: 12_345,
        body_bytes_sent: 12_000,
        ..RequestLog::new(addr, addr, t, t)
    };
    let combined = LogFormat::compile(COMBINED, LogEscape::Default).expect("combined compiles");
    let mut time = TimeCache::new();
    let mut out = Vec::with_capacity(1024);
    c.bench_function("render_combined", |b| {
        b.iter(|| {
            out.clear();
            combined.render(black_box(&rec), &mut time, &mut out);
            black_box(out.len())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
