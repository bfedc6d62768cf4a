//! Location matching and cache lookups: the per-request costs core adds.
//! Run briefly: `cargo bench -p peregrine-core --bench lookup -- --quick`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use peregrine_conf::model::{MemoryCacheConf, OpenFileCacheConf};
use peregrine_core::HttpCore;
use peregrine_core::fixtures::{config, conn, loc, loc_conf, request, server_with};

fn core_for(root: &str) -> HttpCore {
    let base = loc_conf(root);
    let mut cached = loc_conf(root);
    cached.memory_cache = Some(MemoryCacheConf {
        size: 1 << 20,
        max_file: 1 << 16,
    });
    let mut ofc = loc_conf(root);
    ofc.open_file_cache = Some(OpenFileCacheConf {
        max: 1000,
        inactive: Duration::from_secs(60),
    });
    // A realistic mix: a dozen prefixes, a few regexes, an exact match.
    let mut locations = vec![
        loc("= /", &base),
        loc("/", &base),
        loc("^~ /static/", &base),
        loc("/mem/", &cached),
        loc("/ofc/", &ofc),
    ];
    for i in 0..10 {
        locations.push(loc(&format!("/app{i}/api/v1/"), &base));
    }
    locations.push(loc("~* \\.(png|jpg|gif)$", &base));
    locations.push(loc("~ ^/users/(\\d+)$", &base));
    let l: &[(&str, bool)] = &[("0.0.0.0:8080", false)];
    let servers = vec![
        server_with(l, &["a.test"], locations.clone(), base.clone()),
        server_with(l, &["b.test", "*.b.test"], locations, base),
    ];
    HttpCore::new(Arc::new(config(servers)))
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("peregrine-core-bench-{}", std::process::id()));
    for sub in ["mem", "ofc"] {
        std::fs::create_dir_all(dir.join(sub)).expect("bench dir");
        std::fs::write(dir.join(sub).join("f.html"), vec![b'x'; 4096]).expect("bench file");
    }
    let mut core = core_for(dir.to_str().expect("utf-8 temp dir"));
    let local = "127.0.0.1:8080".parse().expect("addr");

    c.bench_function("select/prefix", |b| {
        b.iter(|| {
            core.select(local, Some("x.b.test"), black_box("/app7/api/v1/items"))
                .is_some()
        })
    });
    c.bench_function("select/regex", |b| {
        b.iter(|| {
            core.select(local, Some("a.test"), black_box("/img/photo.JPG"))
                .is_some()
        })
    });

    let headers: Vec<(&str, &str)> = vec![("Host", "a.test")];
    let conn = conn(&local.to_string());
    let now = SystemTime::now();
    for (name, path) in [
        ("handle/memory_cache_hit", "/mem/f.html"),
        ("handle/open_file_cache_hit", "/ofc/f.html"),
    ] {
        let view = request("GET", path, "a.test", &headers);
        assert_eq!(core.handle_view(&conn, &view, now).status, 200);
        c.bench_function(name, |b| {
            b.iter(|| core.handle_view(&conn, black_box(&view), now).status)
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
