//! `add_header` (ngx_http_headers_filter_module), `etag` and
//! `if_modified_since`, as nginx answers them; a memory-cache hit (the
//! second and third identical GET) carries the headers too.

use crate::support::{Prefix, Response, Server, conf_with, is_nginx};

const SERVERS: &str = r#"
    add_header X-Http http;
    server {
        listen 127.0.0.1:PORT;
        server_name localhost;
        root html;
        add_header X-Srv "srv $host";

        location /inherit/ { }
        location /own/ {
            add_header X-Uri "u $uri a $args r $request_uri";
            add_header X-Empty "";
            add_header X-Always yes always;
            add_header Cache-Control private;
            add_header Link "</s.css>; rel=preload";
        }
        location = /own/missing { add_header X-Never no; return 404; }
        location = /redirect { add_header X-R r; return 302 /own/a.txt; }
        location = /made { add_header X-Made made; return 201 "made"; }
        location /etag/ {
            add_header ETag '"replaced"';
        }
        location /noetag/ {
            add_header ETag "";
            add_header Last-Modified "";
        }
        location /lm/ {
            add_header Last-Modified "Mon, 28 Sep 1970 06:00:00 GMT";
        }
        location /etagoff/ { etag off; }
        location /before/ { if_modified_since before; }
        location /imsoff/ { if_modified_since off; }
    }
"#;

fn site() -> Server {
    let p = Prefix::new("headers");
    for d in [
        "inherit", "own", "etag", "noetag", "lm", "etagoff", "before", "imsoff",
    ] {
        p.write(&format!("html/{d}/a.txt"), "hello\n");
    }
    Server::start(p, &conf_with(SERVERS))
}

fn get(s: &Server, path: &str, extra: &str) -> Response {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: h.test\r\n{extra}Connection: close\r\n\r\n");
    Response::parse(&s.raw(raw.as_bytes())).expect("a response")
}

/// The header names of `r` after the Connection line, in order.
fn names_after_connection(r: &Response) -> Vec<&str> {
    let at = r
        .headers
        .iter()
        .position(|(n, _)| n == "Connection")
        .unwrap();
    r.headers[at + 1..]
        .iter()
        .map(|(n, _)| n.as_str())
        .collect()
}

#[test]
fn variables_order_and_the_memory_cache() {
    let s = site();
    // The third GET is the one a route (the static fast path) would answer.
    for _ in 0..3 {
        let r = get(&s, "/own/a.txt?x=1", "");
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("X-Uri"),
            Some("u /own/a.txt a x=1 r /own/a.txt?x=1")
        );
        assert_eq!(r.header("X-Empty"), None, "an empty value adds nothing");
        assert_eq!(r.header("X-Srv"), None, "the location's own list wins");
        assert_eq!(r.header("Cache-Control"), Some("private"));
        assert_eq!(r.header("Link"), Some("</s.css>; rel=preload"));
        // After ETag (the static module's), before Accept-Ranges (the
        // range filter's, which runs after the headers filter).
        assert_eq!(
            names_after_connection(&r),
            [
                "ETag",
                "X-Uri",
                "X-Always",
                "Cache-Control",
                "Link",
                "Accept-Ranges"
            ]
        );
        assert_eq!(r.body, b"hello\n");
    }
}

#[test]
fn inherited_only_where_a_level_sets_none() {
    let s = site();
    for _ in 0..3 {
        let r = get(&s, "/inherit/a.txt", "");
        assert_eq!(r.header("X-Srv"), Some("srv h.test"));
        assert_eq!(r.header("X-Http"), None, "the server's list replaces it");
    }
}

#[test]
fn statuses_and_always() {
    let s = site();
    let r = get(&s, "/own/missing", "");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("X-Never"), None);
    let r = get(&s, "/own/nothing.txt", "");
    assert_eq!(r.status, 404);
    assert_eq!(r.header("X-Always"), Some("yes"));
    assert_eq!(r.header("Cache-Control"), None);
    let r = get(&s, "/redirect", "");
    assert_eq!((r.status, r.header("X-R")), (302, Some("r")));
    let r = get(&s, "/made", "");
    assert_eq!((r.status, r.header("X-Made")), (201, Some("made")));
    // 304 is one of the statuses: the not-modified filter runs first.
    let etag = get(&s, "/own/a.txt", "")
        .header("ETag")
        .unwrap()
        .to_string();
    let r = get(&s, "/own/a.txt", &format!("If-None-Match: {etag}\r\n"));
    assert_eq!(r.status, 304);
    assert_eq!(r.header("Cache-Control"), Some("private"));
    // So is 206.
    let r = get(&s, "/own/a.txt", "Range: bytes=0-1\r\n");
    assert_eq!(
        (r.status, r.header("Link")),
        (206, Some("</s.css>; rel=preload"))
    );
    assert_eq!(r.body, b"he");
}

#[test]
fn etag_and_last_modified_are_replaced() {
    let s = site();
    for _ in 0..3 {
        let r = get(&s, "/etag/a.txt", "");
        assert_eq!(r.header("ETag"), Some("\"replaced\""));
        assert_eq!(r.headers.iter().filter(|(n, _)| n == "ETag").count(), 1);
        let r = get(&s, "/noetag/a.txt", "");
        assert_eq!((r.header("ETag"), r.header("Last-Modified")), (None, None));
        let r = get(&s, "/lm/a.txt", "");
        assert_eq!(
            r.header("Last-Modified"),
            Some("Mon, 28 Sep 1970 06:00:00 GMT")
        );
        assert_eq!(
            r.headers
                .iter()
                .filter(|(n, _)| n == "Last-Modified")
                .count(),
            1
        );
    }
    // If-Range is judged by the replaced values (the range filter runs
    // after the headers filter).
    let range = "Range: bytes=0-1\r\nIf-Range: ";
    let r = get(&s, "/etag/a.txt", &format!("{range}\"replaced\"\r\n"));
    assert_eq!(r.status, 206);
    let r = get(
        &s,
        "/lm/a.txt",
        &format!("{range}Mon, 28 Sep 1970 06:00:00 GMT\r\n"),
    );
    assert_eq!(r.status, 206);
    let lm = get(&s, "/inherit/a.txt", "")
        .header("Last-Modified")
        .unwrap()
        .to_string();
    let r = get(&s, "/noetag/a.txt", &format!("{range}{lm}\r\n"));
    assert_eq!(r.status, 200, "no Last-Modified: If-Range fails");
}

#[test]
fn etag_off() {
    let s = site();
    for _ in 0..3 {
        let r = get(&s, "/etagoff/a.txt", "");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("ETag"), None);
        assert!(r.header("Last-Modified").is_some());
    }
    let etag = get(&s, "/inherit/a.txt", "")
        .header("ETag")
        .unwrap()
        .to_string();
    // No ETag to match: If-None-Match never holds back, If-Match fails
    // but for `*`.
    let r = get(&s, "/etagoff/a.txt", &format!("If-None-Match: {etag}\r\n"));
    assert_eq!(r.status, 200);
    let r = get(&s, "/etagoff/a.txt", &format!("If-Match: {etag}\r\n"));
    assert_eq!(r.status, 412);
    assert_eq!(get(&s, "/etagoff/a.txt", "If-Match: *\r\n").status, 200);
    assert_eq!(
        get(&s, "/etagoff/a.txt", "If-None-Match: *\r\n").status,
        304
    );
}

#[test]
fn if_modified_since_modes() {
    let s = site();
    let lm = get(&s, "/inherit/a.txt", "")
        .header("Last-Modified")
        .unwrap()
        .to_string();
    let later = "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n";
    let same = format!("If-Modified-Since: {lm}\r\n");
    assert_eq!(get(&s, "/inherit/a.txt", later).status, 200, "exact");
    assert_eq!(get(&s, "/inherit/a.txt", &same).status, 304);
    assert_eq!(get(&s, "/before/a.txt", later).status, 304, "before");
    assert_eq!(get(&s, "/before/a.txt", &same).status, 304);
    let earlier = "If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n";
    assert_eq!(get(&s, "/before/a.txt", earlier).status, 200);
    assert_eq!(get(&s, "/imsoff/a.txt", &same).status, 200, "off");
}

/// `add_header_inherit` is nginx 1.29.3's: not in the reference nginx 1.22.
#[test]
fn add_header_inherit_merge_and_off() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("headers-inherit");
    p.write("html/m/a.txt", "m");
    p.write("html/o/a.txt", "o");
    let conf = conf_with(
        r#"
    add_header X-Http http;
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /m/ { add_header_inherit merge; add_header X-Own own; }
        location /o/ { add_header_inherit off; }
    }
"#,
    );
    let s = Server::start(p, &conf);
    let r = s.get("/m/a.txt");
    assert_eq!(
        (r.header("X-Own"), r.header("X-Http")),
        (Some("own"), Some("http"))
    );
    assert_eq!(names_after_connection(&r)[1..3], ["X-Own", "X-Http"]);
    let r = s.get("/o/a.txt");
    assert_eq!((r.status, r.header("X-Http")), (200, None));
}

#[test]
fn bad_parameters_are_refused() {
    let p = Prefix::new("headers-bad");
    p.conf(&conf_with(
        "    server { listen 127.0.0.1:1; add_header X-A b sometimes; }",
    ));
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[emerg] invalid parameter \"sometimes\" in "),
        "{err}"
    );
}
