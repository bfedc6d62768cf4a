//! End-to-end tests of [`HttpCore`] against real files in temporary
//! directories; expected bytes are nginx 1.22.1's answers to the same
//! requests (captured with raw requests against Debian's nginx).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use peregrine_conf::model::{
    DocRoot, ErrorPageConf, LocConf, MemoryCacheConf, OpenFileCacheConf, ServerConf,
};

use crate::HttpCore;
use crate::fixtures::{body_bytes, config, conn, etag_of, loc, loc_conf, nested, server_with};
use crate::request::{Method, RequestView};
use crate::response::{Body, Response, StatusSource, StubStatus};
use crate::testdir::TestDir;

mod fastpath;

/// A request as a test writes it.
#[derive(Default, Clone)]
struct Req {
    method: &'static str,
    path: String,
    args: Option<String>,
    host: Option<&'static str>,
    http10: bool,
    headers: Vec<(&'static str, String)>,
    content_length: Option<u64>,
}

fn get(path: &str) -> Req {
    let (p, a) = match path.split_once('?') {
        Some((p, a)) => (p.to_string(), Some(a.to_string())),
        None => (path.to_string(), None),
    };
    Req {
        method: "GET",
        path: p,
        args: a,
        host: Some("a.test"),
        ..Req::default()
    }
}

impl Req {
    fn method(mut self, m: &'static str) -> Req {
        self.method = m;
        self
    }
    fn h(mut self, name: &'static str, v: &str) -> Req {
        self.headers.push((name, v.to_string()));
        self
    }
}

/// The response as the engine would send it, minus Server/Date/Connection.
struct Out {
    status: u16,
    head: String,
    /// The header text before the Connection position.
    pre: String,
    body: Vec<u8>,
    resp: Response,
}

const T0: u64 = 1_900_000_000;

struct Fixture {
    core: HttpCore,
    now: SystemTime,
    local: &'static str,
}

impl Fixture {
    fn new(servers: Vec<ServerConf>) -> Fixture {
        Fixture {
            core: HttpCore::new(Arc::new(config(servers))),
            now: SystemTime::UNIX_EPOCH + Duration::from_secs(T0),
            local: "127.0.0.1:8080",
        }
    }

    fn one(conf: LocConf, locations: Vec<Arc<peregrine_conf::model::LocationConf>>) -> Fixture {
        Fixture::new(vec![server_with(
            &[("0.0.0.0:8080", false)],
            &[""],
            locations,
            conf,
        )])
    }

    fn run(&mut self, r: &Req) -> Out {
        let target = match &r.args {
            Some(a) => format!("{}?{a}", r.path),
            None => r.path.clone(),
        };
        let view = RequestView {
            method: Method::from_name(r.method),
            method_name: r.method,
            version: if r.http10 { (1, 0) } else { (1, 1) },
            path: &r.path,
            args: r.args.as_deref(),
            target: &target,
            host: r.host,
            content_length: r.content_length,
            headers: &r.headers,
        };
        let resp = self.core.handle_view(&conn(self.local), &view, self.now);
        let (pre, rest) = crate::fixtures::head_parts(&resp.head);
        let head = format!("{pre}{rest}");
        let body = body_bytes(&resp.body);
        Out {
            status: resp.status,
            head,
            pre,
            body,
            resp,
        }
    }
}

fn lm(path: &str) -> (i64, u64, String) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    let mut d = Vec::new();
    crate::date::push_http_date(&mut d, m.mtime());
    (m.mtime(), m.len(), String::from_utf8(d).unwrap())
}

#[test]
fn static_file_head_matches_nginx() {
    let d = TestDir::new("core-static");
    let p = d.file("r.txt", b"0123456789abcdefghij");
    let (mt, _, date) = lm(&p);
    let mut f = Fixture::one(loc_conf(d.root()), vec![]);
    let o = f.run(&get("/r.txt"));
    assert_eq!(o.status, 200);
    assert_eq!(
        o.head,
        format!(
            "Content-Type: text/plain\r\nContent-Length: 20\r\nLast-Modified: {date}\r\n\
             ETag: \"{mt:x}-14\"\r\nAccept-Ranges: bytes\r\n"
        )
    );
    assert_eq!(
        o.pre,
        format!("Content-Type: text/plain\r\nContent-Length: 20\r\nLast-Modified: {date}\r\n")
    );
    assert_eq!(o.body, b"0123456789abcdefghij");
    assert!(o.resp.keepalive && !o.resp.header_only && o.resp.content_length == Some(20));
    assert!(o.resp.compressible);
    assert!(matches!(
        o.resp.body,
        Body::File {
            offset: 0,
            len: 20,
            ..
        }
    ));

    let o = f.run(&get("/r.txt").method("HEAD"));
    assert_eq!((o.status, o.body.len()), (200, 0));
    assert!(o.resp.header_only);
    assert!(o.head.contains("Content-Length: 20\r\n"));
}

#[test]
fn missing_forbidden_and_methods() {
    let d = TestDir::new("core-errors");
    d.file("r.txt", b"x");
    d.dir("emptydir");
    let mut f = Fixture::one(loc_conf(d.root()), vec![]);
    let o = f.run(&get("/nope"));
    assert_eq!(o.status, 404);
    assert_eq!(o.body, page_on(404));
    assert!(
        o.head
            .starts_with("Content-Type: text/html\r\nContent-Length: ")
    );
    assert!(o.resp.compressible, "nginx gzips its 404 page");
    assert_eq!(f.run(&get("/emptydir/")).status, 403);
    assert_eq!(f.run(&get("/nodir/")).status, 404);
    assert_eq!(f.run(&get("/r.txt").method("POST")).status, 405);
    assert_eq!(f.run(&get("/r.txt").method("PUT")).status, 405);
    assert_eq!(f.run(&get("/").method("PUT")).status, 405);
    assert_eq!(f.run(&get("/nope").method("POST")).status, 404);
    assert_eq!(f.run(&get("/nope").method("DELETE")).status, 405);
    assert_eq!(f.run(&get("/r.txt/x")).status, 404, "ENOTDIR");
    // POST to a directory without slash redirects, as nginx.
    assert_eq!(f.run(&get("/emptydir").method("POST")).status, 301);
}

#[test]
fn directory_redirect_is_absolute() {
    let d = TestDir::new("core-dir");
    d.file("dir/a.txt", b"x");
    let mut f = Fixture::one(loc_conf(d.root()), vec![]);
    let o = f.run(&get("/dir"));
    assert_eq!(o.status, 301);
    assert_eq!(
        o.pre,
        format!(
            "Content-Type: text/html\r\nContent-Length: {}\r\nLocation: http://a.test:8080/dir/\r\n",
            page_on(301).len()
        )
    );
    let mut r = get("/dir?a=b");
    r.host = None;
    r.http10 = true;
    let o = f.run(&r);
    assert!(
        o.head
            .contains("Location: http://127.0.0.1:8080/dir/?a=b\r\n"),
        "{}",
        o.head
    );
    f.local = "127.0.0.1:80";
    let o = f.run(&get("/dir"));
    assert!(o.head.contains("Location: http://a.test/dir/\r\n"));
}

#[test]
fn index_files_first_existing_wins() {
    let d = TestDir::new("core-index");
    d.file("index.html", b"root index\n");
    d.file("sub/second.html", b"second\n");
    let mut c = loc_conf(d.root());
    c.index = vec!["first.html".into(), "second.html".into()];
    let mut f = Fixture::one(c, vec![]);
    let o = f.run(&get("/sub/"));
    assert_eq!((o.status, o.body.as_slice()), (200, &b"second\n"[..]));
    assert!(o.head.starts_with("Content-Type: text/html\r\n"));
    assert_eq!(f.run(&get("/")).status, 403, "neither index exists at /");
}

#[test]
fn autoindex_chunked_for_http11_and_closing_for_http10() {
    let d = TestDir::new("core-autoindex");
    d.file("ai/size3", b"abc");
    let mut c = loc_conf(d.root());
    c.autoindex = true;
    let mut f = Fixture::one(c, vec![]);
    let o = f.run(&get("/ai/"));
    assert_eq!(o.status, 200);
    assert_eq!(
        o.pre,
        "Content-Type: text/html\r\nTransfer-Encoding: chunked\r\n"
    );
    assert_eq!(o.resp.content_length, None);
    assert!(o.resp.chunked, "framed by the HTTP/1 writer");
    assert!(!o.resp.compressible);
    let html = String::from_utf8(o.body).unwrap();
    assert!(!html.ends_with("0\r\n\r\n"), "the payload alone");
    assert!(html.starts_with("<html>\r\n<head><title>Index of /ai/</title></head>"));
    assert!(html.contains("<a href=\"size3\">size3</a>"));
    let mut r = get("/ai/");
    r.http10 = true;
    let o = f.run(&r);
    assert!(!o.resp.keepalive && !o.resp.chunked);
    assert_eq!(o.head, "Content-Type: text/html\r\n");
    let o = f.run(&get("/ai/").method("HEAD"));
    assert!(o.resp.keepalive && o.body.is_empty() && !o.resp.chunked);
    assert_eq!(o.head, "Content-Type: text/html\r\n");
    assert_eq!(f.run(&get("/missing/")).status, 404);
}

#[test]
fn conditional_requests() {
    let d = TestDir::new("core-cond");
    let p = d.file("r.txt", b"0123456789abcdefghij");
    let (mt, _, date) = lm(&p);
    let etag = format!("\"{mt:x}-14\"");
    let mut f = Fixture::one(loc_conf(d.root()), vec![]);
    let o = f.run(&get("/r.txt").h("If-None-Match", &etag));
    assert_eq!(o.status, 304);
    assert_eq!(o.head, format!("Last-Modified: {date}\r\nETag: {etag}\r\n"));
    assert!(o.resp.header_only && o.body.is_empty());
    assert_eq!(
        f.run(&get("/r.txt").h("If-Modified-Since", &date)).status,
        304
    );
    assert_eq!(f.run(&get("/r.txt").h("If-None-Match", "*")).status, 304);
    assert_eq!(
        f.run(&get("/r.txt").h("If-None-Match", &format!("\"x\", W/{etag}")))
            .status,
        304
    );
    assert_eq!(f.run(&get("/r.txt").h("If-Match", "\"zz\"")).status, 412);
    assert_eq!(
        f.run(&get("/r.txt").h("If-Unmodified-Since", "Mon, 01 Jan 2001 00:00:00 GMT"))
            .status,
        412
    );
    assert_eq!(f.run(&get("/r.txt").h("If-Match", &etag)).status, 200);
}

#[test]
fn ranges_single_multi_unsatisfiable_if_range() {
    let d = TestDir::new("core-range");
    let p = d.file("r.txt", b"0123456789abcdefghij");
    let (mt, _, date) = lm(&p);
    let etag = format!("\"{mt:x}-14\"");
    let mut f = Fixture::one(loc_conf(d.root()), vec![]);
    let o = f.run(&get("/r.txt").h("Range", "bytes=2-4"));
    assert_eq!(o.status, 206);
    assert_eq!(
        o.head,
        format!(
            "Content-Type: text/plain\r\nContent-Length: 3\r\nLast-Modified: {date}\r\n\
             ETag: {etag}\r\nContent-Range: bytes 2-4/20\r\n"
        )
    );
    assert_eq!(o.body, b"234");
    assert!(!o.resp.compressible, "nginx does not compress 206");

    let o = f.run(&get("/r.txt").h("Range", "bytes=2-4,-3"));
    assert_eq!(o.status, 206);
    let b = "00000000000000000001";
    let want = format!(
        "\r\n--{b}\r\nContent-Type: text/plain\r\nContent-Range: bytes 2-4/20\r\n\r\n234\
         \r\n--{b}\r\nContent-Type: text/plain\r\nContent-Range: bytes 17-19/20\r\n\r\nhij\
         \r\n--{b}--\r\n"
    );
    assert_eq!(String::from_utf8(o.body).unwrap(), want);
    assert_eq!(want.len(), 202, "nginx's Content-Length for this request");
    assert!(o.head.starts_with(&format!(
        "Content-Type: multipart/byteranges; boundary={b}\r\nContent-Length: 202\r\n"
    )));
    let o = f.run(&get("/r.txt").h("Range", "bytes=0-0,5-6"));
    assert!(
        o.head.contains("boundary=00000000000000000002"),
        "boundary counts up"
    );

    let o = f.run(&get("/r.txt").h("Range", "bytes=30-"));
    assert_eq!(o.status, 416);
    assert!(o.head.ends_with("Content-Range: bytes */20\r\n"));
    assert!(o.pre.starts_with("Content-Type: text/html\r\n"));

    let o = f.run(&get("/r.txt").h("Range", "bytes=0-0").h("If-Range", &etag));
    assert_eq!((o.status, o.body.as_slice()), (206, &b"0"[..]));
    let o = f.run(
        &get("/r.txt")
            .h("Range", "bytes=0-0")
            .h("If-Range", "\"other\""),
    );
    assert_eq!(o.status, 200);
    let o = f.run(&get("/r.txt").h("Range", "bytes=0-0").h("If-Range", &date));
    assert_eq!(o.status, 206);
    let o = f.run(&get("/r.txt").h("Range", "bytes=0-30,5-6"));
    assert_eq!(o.status, 200, "sum larger than the file: ignored as nginx");
}

#[test]
fn return_directive_variants() {
    let d = TestDir::new("core-return");
    let c = loc_conf(d.root());
    let with_ret = |code: u16, text: Option<&str>| {
        let mut l = c.clone();
        l.default_type = "application/octet-stream".into();
        crate::fixtures::set_return(&mut l, code, text);
        l
    };
    let mut f = Fixture::one(
        c.clone(),
        vec![
            loc("/ret200", &with_ret(200, None)),
            loc("/ret200t.json", &with_ret(200, Some("hi $uri"))),
            loc("/ret301", &with_ret(301, Some("/x?y"))),
            loc("/ret301abs", &with_ret(301, Some("https://example.com/z"))),
            loc("/ret404", &with_ret(404, None)),
            loc("/ret418", &with_ret(418, None)),
            loc("/ret204", &with_ret(204, None)),
            loc("/ret444", &with_ret(444, None)),
        ],
    );
    let o = f.run(&get("/ret200"));
    assert_eq!(
        (o.status, o.head.as_str()),
        (
            200,
            "Content-Type: application/octet-stream\r\nContent-Length: 0\r\n"
        )
    );
    let o = f.run(&get("/ret200t.json"));
    assert_eq!(
        o.head,
        "Content-Type: application/json\r\nContent-Length: 16\r\n"
    );
    assert_eq!(o.body, b"hi /ret200t.json");
    let o = f.run(&get("/ret301"));
    assert_eq!(o.status, 301);
    assert!(o.pre.ends_with("Location: http://a.test:8080/x?y\r\n"));
    let o = f.run(&get("/ret301abs"));
    assert_eq!(
        &o.head[o.pre.len()..],
        "Location: https://example.com/z\r\n"
    );
    let o = f.run(&get("/ret404"));
    assert_eq!(o.status, 404);
    assert_eq!(o.body, page_on(404));
    let o = f.run(&get("/ret418"));
    if peregrine_codec::response::error_page_body(418).is_empty() {
        assert_eq!(o.head, "Content-Length: 0\r\n");
    }
    let o = f.run(&get("/ret204"));
    assert_eq!((o.status, o.head.as_str()), (204, ""));
    assert!(o.resp.header_only);
    let o = f.run(&get("/ret444"));
    assert_eq!(o.status, 444);
    assert!(!o.resp.keepalive);
}

#[test]
fn error_pages() {
    let d = TestDir::new("core-errpage");
    d.file("index.html", b"hello world\n");
    let p = d.file("r.txt", b"0123456789abcdefghij");
    let (mt, _, date) = lm(&p);
    let c = loc_conf(d.root());
    let ep = |overwrite: Option<Option<u16>>, target: &str| {
        let mut l = c.clone();
        l.error_pages = vec![ErrorPageConf {
            codes: vec![404],
            overwrite,
            target: target.into(),
        }];
        l
    };
    let mut named = c.clone();
    crate::fixtures::set_return(&mut named, 200, Some("named $uri"));
    let mut f = Fixture::one(
        c.clone(),
        vec![
            loc("/ep/", &ep(None, "/index.html")),
            loc("/ep2/", &ep(Some(Some(200)), "/r.txt")),
            loc("/ep3/", &ep(Some(None), "/r.txt")),
            loc("/ep4/", &ep(None, "http://example.com/e")),
            loc("/ep5/", &ep(Some(Some(301)), "http://example.com/e")),
            loc("/ep6/", &ep(None, "@fallback")),
            loc("/ep7/", &ep(None, "/missing.html")),
            loc("@fallback", &named),
        ],
    );
    let o = f.run(&get("/ep/x"));
    assert_eq!(o.status, 404);
    let (imt, _, _) = lm(&d.path("index.html"));
    assert_eq!(
        o.head,
        format!("Content-Type: text/html\r\nContent-Length: 12\r\nETag: \"{imt:x}-c\"\r\n"),
        "nginx drops Last-Modified and Accept-Ranges for non-200"
    );
    assert_eq!(o.body, b"hello world\n");
    for uri in ["/ep2/x", "/ep3/x"] {
        let o = f.run(&get(uri));
        assert_eq!(o.status, 200);
        assert_eq!(
            o.head,
            format!(
                "Content-Type: text/plain\r\nContent-Length: 20\r\nLast-Modified: {date}\r\n\
                 ETag: \"{mt:x}-14\"\r\nAccept-Ranges: bytes\r\n"
            )
        );
    }
    let o = f.run(&get("/ep4/x"));
    assert_eq!(o.status, 302);
    assert_eq!(&o.head[o.pre.len()..], "Location: http://example.com/e\r\n");
    assert_eq!(f.run(&get("/ep5/x")).status, 301);
    let o = f.run(&get("/ep6/x"));
    assert_eq!((o.status, o.body.as_slice()), (404, &b"named /ep6/x"[..]));
    let o = f.run(&get("/ep7/x"));
    assert_eq!(
        o.status, 404,
        "a failing error page gives the built-in page"
    );
    assert_eq!(o.body, page_on(404));
    // error_page turns POST into GET for the target.
    let o = f.run(&get("/ep2/x").method("POST"));
    assert_eq!(o.status, 200);
}

#[test]
fn try_files_and_internal_redirect_cycle() {
    let d = TestDir::new("core-tryfiles");
    d.file("a.html", b"A");
    d.file("dir/index.html", b"D");
    d.file("fallback.html", b"F");
    let mut c = loc_conf(d.root());
    c.try_files = vec![
        "$uri".into(),
        "$uri.html".into(),
        "$uri/".into(),
        "/fallback.html".into(),
    ];
    let mut code = loc_conf(d.root());
    code.try_files = vec!["$uri".into(), "=418".into()];
    let mut cyc = loc_conf(d.root());
    cyc.try_files = vec!["/nothing".into(), "/loop/x".into()];
    let mut f = Fixture::one(
        loc_conf(d.root()),
        vec![loc("/", &c), loc("/code/", &code), loc("/loop/", &cyc)],
    );
    assert_eq!(f.run(&get("/a.html")).body, b"A");
    assert_eq!(f.run(&get("/a")).body, b"A");
    let o = f.run(&get("/dir"));
    assert_eq!(
        o.status, 301,
        "$uri/ found a directory: the static module redirects"
    );
    assert_eq!(f.run(&get("/dir/")).body, b"D");
    assert_eq!(f.run(&get("/zzz")).body, b"F");
    assert_eq!(f.run(&get("/code/q")).status, 418);
    assert_eq!(f.run(&get("/loop/x")).status, 500);
}

#[test]
fn alias_and_nested_locations_and_escape() {
    let d = TestDir::new("core-alias");
    d.file("data/x.txt", b"X");
    d.file("secret.txt", b"S");
    d.file("www/index.html", b"W");
    let mut a = loc_conf(d.root());
    a.root = DocRoot::Alias(format!("{}/data/", d.root()));
    let root = loc_conf(&d.path("www"));
    let mut f = Fixture::one(root.clone(), vec![loc("/img/", &a), loc("/im", &a)]);
    assert_eq!(f.run(&get("/img/x.txt")).body, b"X");
    // `location /im { alias /data/; }`: /im../secret.txt must not escape.
    assert_eq!(f.run(&get("/im../secret.txt")).status, 404);
    assert_eq!(f.run(&get("/index.html")).body, b"W");
}

#[test]
fn server_selection_by_host() {
    let d = TestDir::new("core-vhost");
    d.file("a/index.html", b"A");
    d.file("b/index.html", b"B");
    let l: &[(&str, bool)] = &[("0.0.0.0:8080", false)];
    let mut f = Fixture::new(vec![
        server_with(l, &["a.test"], vec![], loc_conf(&d.path("a"))),
        server_with(l, &["*.b.test"], vec![], loc_conf(&d.path("b"))),
    ]);
    let mut r = get("/");
    r.host = Some("x.b.test");
    assert_eq!(f.run(&r).body, b"B");
    r.host = Some("other");
    assert_eq!(f.run(&r).body, b"A");
    assert_eq!(f.core.last_server().unwrap().server_names.len(), 1);
}

#[test]
fn charset_applies_to_pages_and_files() {
    let d = TestDir::new("core-charset");
    d.file("r.txt", b"x");
    let mut c = loc_conf(d.root());
    c.charset = Some("koi8-r".into());
    let mut f = Fixture::one(c, vec![]);
    assert!(
        f.run(&get("/r.txt"))
            .head
            .starts_with("Content-Type: text/plain; charset=koi8-r\r\n")
    );
    assert!(
        f.run(&get("/nope"))
            .head
            .starts_with("Content-Type: text/html; charset=koi8-r\r\n")
    );
}

#[test]
fn client_max_body_size_413_closes() {
    let d = TestDir::new("core-413");
    d.file("index.html", b"x");
    let mut c = loc_conf(d.root());
    c.client_max_body_size = 10;
    let mut f = Fixture::one(c, vec![]);
    let mut r = get("/index.html").method("POST");
    r.content_length = Some(50);
    let o = f.run(&r);
    assert_eq!(o.status, 413);
    assert!(!o.resp.keepalive);
    // A custom page for 413 still closes, as nginx.
    let d = TestDir::new("core-413-page");
    d.file("big.html", b"too big");
    let mut c = loc_conf(d.root());
    c.client_max_body_size = 10;
    c.error_pages = vec![ErrorPageConf {
        codes: vec![413],
        overwrite: None,
        target: "/big.html".into(),
    }];
    let mut f = Fixture::one(c, vec![]);
    let o = f.run(&r);
    assert_eq!((o.status, o.body.as_slice()), (413, &b"too big"[..]));
    assert!(!o.resp.keepalive);
}

struct Counters;
impl StatusSource for Counters {
    fn stub_status(&self) -> StubStatus {
        StubStatus {
            active: 1,
            accepts: 2,
            handled: 2,
            requests: 2,
            reading: 0,
            writing: 1,
            waiting: 0,
        }
    }
}

/// A status source with a scrape.
struct Scraped;
impl StatusSource for Scraped {
    fn stub_status(&self) -> StubStatus {
        Counters.stub_status()
    }
    fn metrics(&self) -> Option<crate::metrics::MetricsSnapshot> {
        Some(crate::metrics::MetricsSnapshot {
            bytes_sent: 4321,
            workers: 3,
            ..Default::default()
        })
    }
}

/// `metrics on` is its location's content handler, as stub_status: the
/// URI is not looked up as a file (no such file here), the numbers come
/// from the status source (zeros without one), other methods get 405
/// (through `error_page`), and `return` runs before it.
#[test]
fn metrics_is_a_content_handler() {
    let d = TestDir::new("core-metrics");
    d.file("err405.html", b"not allowed here");
    let mut m = loc_conf(d.root());
    m.metrics = true;
    m.error_pages = vec![ErrorPageConf {
        codes: vec![405],
        overwrite: None,
        target: "/err405.html".into(),
    }];
    let mut ret = m.clone();
    crate::fixtures::set_return(&mut ret, 204, None);
    let mut f = Fixture::one(
        loc_conf(d.root()),
        vec![loc("= /metrics", &m), loc("= /m204", &ret)],
    );
    let o = f.run(&get("/metrics"));
    assert_eq!(o.status, 200);
    assert!(
        o.head
            .starts_with("Content-Type: text/plain; version=0.0.4\r\n"),
        "{}",
        o.head
    );
    let text = String::from_utf8(o.body).unwrap();
    assert!(text.contains("peregrine_bytes_sent_total 0\n"), "{text}");
    f.core.set_status_source(Box::new(Scraped));
    let text = String::from_utf8(f.run(&get("/metrics")).body).unwrap();
    assert!(text.contains("peregrine_bytes_sent_total 4321\n"), "{text}");
    assert!(text.contains("peregrine_workers 3\n"), "{text}");
    let o = f.run(&get("/metrics").method("HEAD"));
    assert_eq!((o.status, o.body.len()), (200, 0));
    let o = f.run(&get("/metrics").method("POST"));
    assert_eq!(
        (o.status, o.body.as_slice()),
        (405, &b"not allowed here"[..])
    );
    assert_eq!(f.run(&get("/m204")).status, 204);
}

#[test]
fn stub_status_text_matches_nginx() {
    let d = TestDir::new("core-stub");
    let mut s = loc_conf(d.root());
    s.stub_status = true;
    let mut f = Fixture::one(loc_conf(d.root()), vec![loc("= /status", &s)]);
    f.core.set_status_source(Box::new(Counters));
    let o = f.run(&get("/status"));
    assert_eq!(o.head, "Content-Type: text/plain\r\nContent-Length: 97\r\n");
    assert_eq!(
        o.body,
        b"Active connections: 1 \nserver accepts handled requests\n 2 2 2 \nReading: 0 Writing: 1 Waiting: 0 \n"
    );
    let o = f.run(&get("/status").method("HEAD"));
    assert_eq!(
        (o.head.as_str(), o.body.len()),
        ("Content-Type: text/plain\r\nContent-Length: 97\r\n", 0)
    );
    assert_eq!(f.run(&get("/status").method("POST")).status, 405);
}

#[test]
fn open_file_cache_hit_makes_no_syscall() {
    let d = TestDir::new("core-ofc");
    let p = d.file("r.txt", b"abc");
    let mut c = loc_conf(d.root());
    c.open_file_cache = Some(OpenFileCacheConf {
        max: 100,
        inactive: Duration::from_secs(60),
    });
    let mut f = Fixture::one(c, vec![]);
    assert_eq!(f.run(&get("/r.txt")).body, b"abc");
    let calls = f.core.fcache.syscalls;
    assert_eq!(f.run(&get("/r.txt")).body, b"abc");
    assert_eq!(f.core.fcache.syscalls, calls);
    std::fs::write(&p, b"abcdef").unwrap();
    f.now += Duration::from_secs(61);
    assert_eq!(
        f.run(&get("/r.txt")).body,
        b"abcdef",
        "changed file served after valid"
    );
}

#[test]
fn memory_cache_serves_shared_and_revalidates() {
    let d = TestDir::new("core-mcache");
    let p = d.file("r.txt", b"abc");
    let mut c = loc_conf(d.root());
    c.memory_cache = Some(MemoryCacheConf {
        size: 1 << 20,
        max_file: 1 << 16,
    });
    c.open_file_cache_valid = Duration::from_secs(30);
    let mut f = Fixture::one(c, vec![]);
    let first = f.run(&get("/r.txt"));
    let second = f.run(&get("/r.txt"));
    assert_eq!(first.head, second.head);
    assert_eq!(second.body, b"abc");
    assert!(matches!(second.resp.head, crate::Head::Shared(_)));
    assert!(matches!(second.resp.body, Body::Shared(_)));
    assert_eq!(f.core.mcache.syscalls, 0);
    // Conditional and range requests still work on cached files.
    assert_eq!(f.run(&get("/r.txt").h("Range", "bytes=1-1")).body, b"b");
    std::fs::write(&p, b"abcdefgh").unwrap();
    f.now += Duration::from_secs(31);
    let o = f.run(&get("/r.txt"));
    assert_eq!(o.body, b"abcdefgh");
    assert!(o.head.contains("Content-Length: 8\r\n"));
    assert_eq!(f.core.mcache.syscalls, 1);
}

#[test]
fn nested_location_settings_apply() {
    let d = TestDir::new("core-nested");
    d.file("a/x.txt", b"x");
    let mut inner = loc_conf(d.root());
    crate::fixtures::set_return(&mut inner, 200, Some("inner"));
    let outer = loc_conf(d.root());
    let mut f = Fixture::one(
        loc_conf(d.root()),
        vec![nested("/a/", &outer, vec![loc("~ \\.php$", &inner)])],
    );
    assert_eq!(f.run(&get("/a/x.txt")).body, b"x");
    assert_eq!(f.run(&get("/a/y.php")).body, b"inner");
}

#[test]
fn error_response_for_parse_errors_closes() {
    let mut f = Fixture::one(loc_conf("/nonexistent"), vec![]);
    let r = f.core.error_response(400);
    assert_eq!(r.status, 400);
    assert!(!r.keepalive);
    assert_eq!(body_bytes(&r.body), page_on(400));
}

/// A file above `max_file` is answered from its descriptor with head lines
/// kept in the head memo: the same lines for a second request, and new
/// lines (length, ETag) once the open file cache sees the file changed
/// (headmemo's own tests cover the location and extension checks).
#[test]
fn large_file_head_is_remembered_per_file_and_extension() {
    let d = TestDir::new("core-headmemo");
    let p = d.file("big.html", &[b'x'; 300]);
    let mut c = loc_conf(d.root());
    c.memory_cache = Some(MemoryCacheConf {
        size: 1 << 20,
        max_file: 100,
    });
    c.open_file_cache = Some(OpenFileCacheConf {
        max: 100,
        inactive: Duration::from_secs(60),
    });
    c.open_file_cache_valid = Duration::from_secs(30);
    let mut f = Fixture::one(c, vec![]);
    let first = f.run(&get("/big.html"));
    let second = f.run(&get("/big.html"));
    assert_eq!(first.head, second.head);
    assert!(matches!(second.resp.head, crate::Head::Shared(_)));
    assert!(matches!(second.resp.body, Body::File { .. }));
    assert_eq!(f.core.heads.len(), 1);
    assert!(
        first
            .head
            .contains("Content-Type: text/html\r\nContent-Length: 300\r\n")
    );
    // Only whole-file 200s use the memo: a range is built per request.
    let range = f.run(&get("/big.html").h("Range", "bytes=0-9"));
    assert_eq!((range.status, range.body.len()), (206, 10));
    std::fs::write(&p, [b'y'; 400]).unwrap();
    f.now += Duration::from_secs(31);
    let changed = f.run(&get("/big.html"));
    assert!(
        changed.head.contains("Content-Length: 400\r\n"),
        "{}",
        changed.head
    );
    assert_ne!(changed.head, first.head);
    assert_eq!(changed.body, [b'y'; 400]);
}

/// The built-in page of `status` as `server_tokens on` (the default) sends
/// it: the codec's page with the versioned footer.
fn page_on(status: u16) -> Vec<u8> {
    use peregrine_codec::response::{ERROR_PAGE_TAIL, ERROR_PAGE_TAIL_VERSION, error_page_body};
    let page = error_page_body(status);
    let mut v = page[..page.len() - ERROR_PAGE_TAIL.len()].to_vec();
    v.extend_from_slice(ERROR_PAGE_TAIL_VERSION);
    v
}
