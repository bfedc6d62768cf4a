//! A memory-cache hit must not allocate: measured with an instrumented
//! global allocator, in its own test binary so that no other test's
//! allocations are counted.

use std::alloc::System;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use peregrine_conf::model::MemoryCacheConf;
use peregrine_core::fixtures::{config, conn, loc, loc_conf, request, server_with};
use peregrine_core::{Body, Head, HttpCore};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn memory_cache_hit_allocates_nothing() {
    let dir = std::env::temp_dir().join(format!("peregrine-core-noalloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("r.txt"), b"abc").unwrap();
    let root = dir.to_str().unwrap();
    let mut c = loc_conf(root);
    c.memory_cache = Some(MemoryCacheConf {
        size: 1 << 20,
        max_file: 1 << 16,
    });
    let locations = vec![loc("/", &loc_conf(root)), loc("~ \\.txt$", &c)];
    let servers = vec![
        server_with(
            &[("0.0.0.0:8080", false)],
            &["a.test"],
            locations.clone(),
            c.clone(),
        ),
        server_with(&[("0.0.0.0:8080", false)], &["b.test"], locations, c),
    ];
    let mut core = HttpCore::new(Arc::new(config(servers)));
    let headers: Vec<(&str, &str)> = vec![("Host", "b.test"), ("User-Agent", "bench")];
    let view = request("GET", "/r.txt", "b.test", &headers);
    let conn = conn("127.0.0.1:8080");
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000);
    // The first request fills the cache (and warms the regex engine's cache).
    drop(core.handle_view(&conn, &view, now));
    drop(core.handle_view(&conn, &view, now));

    let region = Region::new(GLOBAL);
    let resp = core.handle_view(&conn, &view, now);
    let stats = region.change();
    assert!(matches!(resp.body, Body::Shared(_)));
    assert!(matches!(resp.head, Head::Shared(_)));
    assert_eq!(resp.content_length, Some(3));
    drop(resp);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(stats.allocations + stats.reallocations, 0, "{stats:?}");
}
