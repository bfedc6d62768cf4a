//! The static hit fast path (`fastpath.rs`): a route answers exactly what
//! the full path answers, only for requests nothing else can change, and
//! never from an entry that was replaced or a file that changed.

use super::*;

fn cached(root: &str) -> LocConf {
    let mut c = loc_conf(root);
    c.memory_cache = Some(MemoryCacheConf {
        size: 1 << 20,
        max_file: 1 << 16,
    });
    c.open_file_cache_valid = Duration::from_secs(30);
    c
}

/// [`cached`] with gzip on for text/plain of any length: a request's
/// `Accept-Encoding` can change the answer.
fn cached_gzip(root: &str) -> LocConf {
    let mut c = cached(root);
    c.gzip.on = true;
    c.gzip.types = vec!["text/plain".into()];
    c.gzip.min_length = 1;
    c
}

#[test]
fn a_route_answers_as_the_full_path_does() {
    let d = TestDir::new("core-fast");
    d.file("r.txt", b"0123456789");
    let mut f = Fixture::one(cached(d.root()), vec![]);
    let first = f.run(&get("/r.txt"));
    let second = f.run(&get("/r.txt"));
    assert_eq!(f.core.routes.hits, 1, "the second GET took the route");
    assert_eq!((second.status, &second.head), (first.status, &first.head));
    assert_eq!(second.pre, first.pre);
    assert_eq!(second.body, b"0123456789");
    assert!(second.resp.keepalive && !second.resp.compressible);
    assert!(Arc::ptr_eq(
        second.resp.conf.as_ref().unwrap(),
        first.resp.conf.as_ref().unwrap()
    ));
    assert!(
        second.resp.server.is_some(),
        "the server block, for the logs"
    );
    let head = f.run(&get("/r.txt").method("HEAD"));
    assert_eq!(f.core.routes.hits, 2);
    assert_eq!((head.status, &head.head), (200, &first.head));
    assert!(head.resp.header_only && head.body.is_empty());
    assert_eq!(f.core.mcache.syscalls, 0, "no stat within valid");
}

#[test]
fn requests_that_could_differ_go_the_long_way() {
    let d = TestDir::new("core-fast-long");
    d.file("r.txt", b"0123456789");
    let mut f = Fixture::one(cached_gzip(d.root()), vec![]);
    let first = f.run(&get("/r.txt"));
    f.run(&get("/r.txt"));
    assert_eq!(f.core.routes.hits, 1);
    let etag = etag_of(&first.head);
    let long_way: [(Req, u16, &[u8]); 5] = [
        (get("/r.txt").h("If-None-Match", &etag), 304, b""),
        (get("/r.txt").h("Range", "bytes=2-3"), 206, b"23"),
        (get("/r.txt").h("If-Match", "\"other\""), 412, b""),
        (get("/r.txt").method("POST"), 405, b""),
        (
            Req {
                content_length: Some(3),
                ..get("/r.txt")
            },
            200,
            b"0123456789",
        ),
    ];
    for (req, status, body) in long_way {
        let o = f.run(&req);
        assert_eq!(o.status, status, "{}", o.head);
        if status != 405 && status != 412 {
            assert_eq!(o.body, body);
        }
    }
    let gz = f.run(&get("/r.txt").h("Accept-Encoding", "gzip"));
    assert!(
        gz.head.contains("Content-Encoding: gzip\r\n"),
        "{}",
        gz.head
    );
    assert_eq!(f.core.routes.hits, 1, "none of them took the route");
    f.run(&get("/r.txt"));
    assert_eq!(f.core.routes.hits, 2, "the route is still there");
}

#[test]
fn a_changed_file_or_a_reused_slot_is_never_served_from_a_route() {
    let d = TestDir::new("core-fast-change");
    let a = d.file("a.txt", b"aaaa");
    d.file("b.txt", b"bbbb");
    let mut c = cached(d.root());
    // Room for one file: caching b evicts a and takes its slot.
    c.memory_cache = Some(MemoryCacheConf {
        size: 4,
        max_file: 4,
    });
    let mut f = Fixture::one(c, vec![]);
    f.run(&get("/a.txt"));
    assert_eq!(f.run(&get("/a.txt")).body, b"aaaa");
    assert_eq!(f.core.routes.hits, 1);
    assert_eq!(f.run(&get("/b.txt")).body, b"bbbb");
    assert_eq!(
        f.run(&get("/a.txt")).body,
        b"aaaa",
        "a's route names b's slot now"
    );
    assert_eq!(f.core.routes.hits, 1);
    // A new size (as for the memory cache itself: a rewrite within the
    // same second at the same size keeps inode, size and mtime).
    std::fs::write(&a, b"AAA").unwrap();
    f.now += Duration::from_secs(31);
    assert_eq!(
        f.run(&get("/a.txt")).body,
        b"AAA",
        "revalidated after valid"
    );
    assert_eq!(f.run(&get("/a.txt")).body, b"AAA");
    assert_eq!(f.core.routes.hits, 2, "relearned");
}

#[test]
fn probing_or_variable_locations_are_not_memoised() {
    let d = TestDir::new("core-fast-vars");
    d.file("a.test/r.txt", b"from a");
    d.file("b.test/r.txt", b"from b");
    d.file("t/r.txt", b"tried");
    let by_host = cached(&format!("{}/$host", d.root()));
    let mut tried = cached(d.root());
    tried.try_files = vec!["/t$uri".into(), "=404".into()];
    let mut f = Fixture::one(by_host, vec![loc("/x/", &tried)]);
    for _ in 0..2 {
        assert_eq!(f.run(&get("/r.txt")).body, b"from a");
        let other = Req {
            host: Some("b.test"),
            ..get("/r.txt")
        };
        assert_eq!(f.run(&other).body, b"from b");
    }
    for _ in 0..2 {
        assert_eq!(f.run(&get("/x/r.txt")).status, 404);
    }
    assert_eq!(f.core.routes.hits, 0);
}

#[test]
fn the_memo_is_bounded() {
    let d = TestDir::new("core-fast-max");
    let mut f = Fixture::one(cached(d.root()), vec![]);
    let n = crate::fastpath::ROUTES_MAX + 1;
    for i in 0..n {
        let name = format!("f{i}.txt");
        d.file(&name, b"x");
        f.run(&get(&format!("/{name}")));
    }
    assert!(f.core.routes.len() <= crate::fastpath::ROUTES_MAX);
    assert!(f.core.routes.len() >= 1);
}

#[test]
fn long_uris_take_no_route() {
    let d = TestDir::new("core-fast-long-uri");
    // Nested directories: a file name alone may not be this long.
    let dir = "n".repeat(100);
    let name = format!("{dir}/{dir}/{dir}/f.txt");
    assert!(name.len() > crate::fastpath::ROUTE_URI_MAX);
    d.file(&name, b"long");
    let mut f = Fixture::one(cached(d.root()), vec![]);
    for _ in 0..2 {
        assert_eq!(f.run(&get(&format!("/{name}"))).body, b"long");
    }
    assert_eq!((f.core.routes.len(), f.core.routes.hits), (0, 0));
}

/// Runs raw requests through `handle_explained` as the engine does (the
/// parsed request, whose header mask lets a route skip lookups).
fn parsed(f: &mut Fixture, raw: &str) -> (u16, String, Vec<u8>) {
    let req = crate::fixtures::parsed_request(raw);
    let (resp, note) = f.core.handle_explained(&conn(f.local), &req, f.now, true);
    assert!(note.is_none());
    let head = crate::fixtures::head_text(&resp.head);
    (resp.status, head, body_bytes(&resp.body))
}

/// The engine's entry takes routes too, and its header mask counts every
/// header a route must see: the conditional ones, `Range`, and
/// `Accept-Encoding` where compression could apply.
#[test]
fn parsed_requests_take_routes_only_when_the_full_path_agrees() {
    let d = TestDir::new("core-fast-parsed");
    d.file("r.txt", b"0123456789");
    let mut f = Fixture::one(cached_gzip(d.root()), vec![]);
    let plain = "GET /r.txt HTTP/1.1\r\nHost: a.test\r\n\r\n";
    let first = parsed(&mut f, plain);
    assert_eq!(parsed(&mut f, plain), first);
    assert_eq!(f.core.routes.hits, 1);
    let etag = etag_of(&first.1);
    let gz = parsed(
        &mut f,
        "GET /r.txt HTTP/1.1\r\nHost: a.test\r\nAccept-Encoding: gzip\r\n\r\n",
    );
    assert!(gz.1.contains("Content-Encoding: gzip\r\n"), "{}", gz.1);
    let cond = format!("GET /r.txt HTTP/1.1\r\nHost: a.test\r\nIf-None-Match: {etag}\r\n\r\n");
    assert_eq!(parsed(&mut f, &cond).0, 304);
    let range = "GET /r.txt HTTP/1.1\r\nHost: a.test\r\nRange: bytes=1-2\r\n\r\n";
    assert_eq!(parsed(&mut f, range).2, b"12");
    assert_eq!(f.core.routes.hits, 1, "none of them took the route");
    let head = parsed(&mut f, "HEAD /r.txt HTTP/1.1\r\nHost: a.test\r\n\r\n");
    assert_eq!((head.0, &head.1, head.2.len()), (200, &first.1, 0));
    assert_eq!(f.core.routes.hits, 2);
}

/// Without compression `Accept-Encoding` changes nothing: the route
/// answers it.
#[test]
fn accept_encoding_takes_the_route_where_nothing_compresses() {
    let d = TestDir::new("core-fast-ae");
    d.file("r.txt", b"0123456789");
    let mut f = Fixture::one(cached(d.root()), vec![]);
    let ae = "GET /r.txt HTTP/1.1\r\nHost: a.test\r\nAccept-Encoding: gzip\r\n\r\n";
    let first = parsed(&mut f, ae);
    assert_eq!(parsed(&mut f, ae), first);
    assert_eq!(f.core.routes.hits, 1);
}

/// The request directives that change a static answer hold on the second
/// and third identical GET (the memory cache and the route): `max_ranges 0`
/// sends no Accept-Ranges; an `internal` location stays 404 and no route
/// is taken.
#[test]
fn request_directives_hold_on_repeated_gets() {
    let d = TestDir::new("core-fast-request");
    d.file("r.txt", b"0123456789");
    let mut c = cached(d.root());
    c.request.max_ranges = Some(0);
    let mut f = Fixture::one(c, vec![]);
    for _ in 0..3 {
        let r = f.run(&get("/r.txt"));
        assert_eq!(r.status, 200);
        assert!(!r.head.contains("Accept-Ranges"), "{}", r.head);
    }
    assert_eq!(
        f.core.routes.hits, 2,
        "the second and third GET took the route"
    );
    let mut c = cached(d.root());
    c.request.internal = true;
    let mut f = Fixture::one(c, vec![]);
    for _ in 0..3 {
        assert_eq!(f.run(&get("/r.txt")).status, 404);
    }
    assert_eq!(f.core.routes.hits, 0);
}

/// `add_header`, `expires` and `add_trailer` run the headers filter on
/// each answer: their locations take no route, and every memory-cache hit
/// carries the headers.
#[test]
fn header_directives_keep_a_location_off_the_routes() {
    let d = TestDir::new("core-fast-headers");
    d.file("r.txt", b"0123456789");
    let mut with_header = cached(d.root());
    with_header.add_headers = Arc::from([peregrine_conf::model::AddHeader {
        name: "X-A".into(),
        value: crate::fixtures::template("$uri"),
        always: false,
    }]);
    let mut with_expires = cached(d.root());
    with_expires.expires = peregrine_conf::model::Expires::Max;
    for (conf, want) in [
        (with_header, "X-A: /r.txt\r\n"),
        (with_expires, "Cache-Control: max-age=315360000\r\n"),
    ] {
        let mut f = Fixture::one(conf, vec![]);
        for _ in 0..3 {
            let o = f.run(&get("/r.txt"));
            assert_eq!(o.status, 200);
            assert!(o.head.contains(want), "{}", o.head);
            assert_eq!(o.body, b"0123456789");
        }
        assert_eq!(f.core.routes.hits, 0);
        assert_eq!(f.core.routes.len(), 0);
        assert!(f.core.mcache.hits >= 2, "answered from the memory cache");
    }
}

/// After `drop_caches` (a panic in request processing) nothing answers
/// from what the caches held: the next request takes the full path, reads
/// the file again, and the caches fill anew.
#[test]
fn dropped_caches_answer_from_the_file() {
    let d = TestDir::new("core-fast-drop");
    d.file("r.txt", b"0123456789");
    let mut f = Fixture::one(cached(d.root()), vec![]);
    f.run(&get("/r.txt"));
    f.run(&get("/r.txt"));
    assert_eq!(f.core.routes.hits, 1);
    f.core.drop_caches();
    let counts = f.core.take_cache_counts();
    d.file("r.txt", b"abcdefghij");
    let after = f.run(&get("/r.txt"));
    assert_eq!(after.body, b"abcdefghij", "read from the file, not a cache");
    assert_eq!(f.core.routes.hits, 0, "no route survived");
    let counts2 = f.core.take_cache_counts();
    assert!(counts2.memory_misses >= 1, "{counts:?} then {counts2:?}");
    let again = f.run(&get("/r.txt"));
    assert_eq!(again.body, b"abcdefghij");
    assert_eq!(f.core.routes.hits, 1, "the caches fill again");
}
