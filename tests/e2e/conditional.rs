//! Conditional and partial requests: 304, 412, 206, multipart/byteranges,
//! 416 and If-Range, as nginx answers them.

use crate::support::{Prefix, Response, Server};

const CONF: &str = r#"
worker_processes 1;
error_log logs/error.log info;
pid logs/test.pid;
events { worker_connections 128; }
http {
    include mime.types;
    access_log off;
    server {
        listen 127.0.0.1:PORT;
        root html;
    }
}
"#;

const BODY: &str = "0123456789abcdefghijklmnopqrstuvwxyz";

fn site() -> (Server, String, String) {
    let p = Prefix::new("cond");
    p.write("html/f.txt", BODY);
    let s = Server::start(p, CONF);
    let r = s.get("/f.txt");
    let etag = r.header("ETag").unwrap().to_string();
    let lm = r.header("Last-Modified").unwrap().to_string();
    (s, etag, lm)
}

fn req(s: &Server, extra: &str) -> Response {
    let raw = format!("GET /f.txt HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n");
    Response::parse(&s.raw(raw.as_bytes())).unwrap()
}

#[test]
fn not_modified() {
    let (s, etag, lm) = site();
    let r = req(&s, &format!("If-None-Match: {etag}\r\n"));
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("ETag"), Some(etag.as_str()));
    assert_eq!(req(&s, "If-None-Match: *\r\n").status, 304);
    // `*` counts only alone (nginx 1.22): in a list it is just another tag.
    assert_eq!(req(&s, "If-None-Match: \"other\", *\r\n").status, 200);
    assert_eq!(
        req(&s, &format!("If-None-Match: \"x\", {etag}\r\n")).status,
        304
    );
    // If-None-Match compares weakly (RFC 9110 §13.1.2).
    assert_eq!(req(&s, &format!("If-None-Match: W/{etag}\r\n")).status, 304);
    assert_eq!(req(&s, "If-None-Match: \"other\"\r\n").status, 200);
    assert_eq!(req(&s, &format!("If-Modified-Since: {lm}\r\n")).status, 304);
    assert_eq!(
        req(&s, "If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n").status,
        200
    );
}

#[test]
fn precondition_failed() {
    let (s, etag, _) = site();
    assert_eq!(req(&s, "If-Match: \"nope\"\r\n").status, 412);
    assert_eq!(req(&s, &format!("If-Match: {etag}\r\n")).status, 200);
    assert_eq!(req(&s, "If-Match: *\r\n").status, 200);
    // If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches.
    assert_eq!(req(&s, &format!("If-Match: W/{etag}\r\n")).status, 412);
    assert_eq!(
        req(&s, "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n").status,
        412
    );
}

#[test]
fn single_range() {
    let (s, _, _) = site();
    let r = req(&s, "Range: bytes=2-5\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.body_str(), "2345");
    assert_eq!(r.header("Content-Range"), Some("bytes 2-5/36"));
    assert_eq!(r.header("Content-Length"), Some("4"));
    let r = req(&s, "Range: bytes=-3\r\n");
    assert_eq!((r.status, r.body_str()), (206, "xyz"));
    let r = req(&s, "Range: bytes=30-\r\n");
    assert_eq!((r.status, r.body_str()), (206, "uvwxyz"));
    let r = req(&s, "Range: bytes=30-1000\r\n");
    assert_eq!(r.header("Content-Range"), Some("bytes 30-35/36"));
}

#[test]
fn unsatisfiable_range() {
    let (s, _, _) = site();
    let r = req(&s, "Range: bytes=100-200\r\n");
    assert_eq!(r.status, 416);
    assert_eq!(r.header("Content-Range"), Some("bytes */36"));
}

#[test]
fn multiple_ranges() {
    let (s, _, _) = site();
    let r = req(&s, "Range: bytes=0-1,4-5\r\n");
    assert_eq!(r.status, 206);
    let ct = r.header("Content-Type").unwrap();
    let boundary = ct
        .strip_prefix("multipart/byteranges; boundary=")
        .expect("multipart type");
    let expected = format!(
        "\r\n--{b}\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/36\r\n\r\n01\r\n--{b}\r\nContent-Type: text/plain\r\nContent-Range: bytes 4-5/36\r\n\r\n45\r\n--{b}--\r\n",
        b = boundary
    );
    assert_eq!(r.body_str(), expected);
    assert_eq!(
        r.header("Content-Length").unwrap(),
        expected.len().to_string()
    );
}

#[test]
fn if_range() {
    let (s, etag, lm) = site();
    let r = req(&s, &format!("Range: bytes=0-1\r\nIf-Range: {etag}\r\n"));
    assert_eq!((r.status, r.body_str()), (206, "01"));
    let r = req(&s, "Range: bytes=0-1\r\nIf-Range: \"stale\"\r\n");
    assert_eq!((r.status, r.body.len()), (200, BODY.len()));
    let r = req(&s, &format!("Range: bytes=0-1\r\nIf-Range: {lm}\r\n"));
    assert_eq!(r.status, 206);
}

/// Deliberate difference: nginx 1.22 answers 412 with `Connection:
/// keep-alive` and then closes the connection anyway (its not-modified
/// filter finalizes the request as an error). Peregrine keeps the connection
/// open as its header announces; a client reusing it is answered.
#[test]
#[cfg_attr(e2e_nginx, ignore = "deliberate difference: nginx closes after 412")]
fn precondition_failed_keeps_the_connection_as_announced() {
    if crate::support::is_nginx() {
        return;
    }
    let (s, _, _) = site();
    let mut c = s.connect();
    std::io::Write::write_all(
        &mut c,
        b"GET /f.txt HTTP/1.1\r\nHost: x\r\nIf-Match: \"nope\"\r\n\r\nGET /f.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let rs = crate::support::read_responses(&mut c, 2, false);
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].status, 412);
    assert_eq!(rs[0].header("Connection"), Some("keep-alive"));
    assert_eq!((rs[1].status, rs[1].body_str()), (200, BODY));
}
