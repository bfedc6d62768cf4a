//! The `Location` of nginx's own redirects (the directory redirect and
//! `return 3xx /path`) under `absolute_redirect`, `port_in_redirect` and
//! `server_name_in_redirect`.

use crate::support::{Prefix, Response, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("redirects");
    for d in ["a", "b", "c", "d", "e"] {
        p.write(&format!("html/{d}/dir/index.html"), "x");
    }
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        server_name example.test;
        root html;
        location /a/ { }
        location /b/ { absolute_redirect off; }
        location /c/ { port_in_redirect off; }
        location /d/ { server_name_in_redirect on; }
        location /e/ { msie_refresh on; }
        location = /ep { msie_refresh on; return 301; error_page 301 text; }
        location "/a<b|c/" { absolute_redirect off; proxy_pass http://127.0.0.1:9/; }
        location = /ret { absolute_redirect off; return 301 /there?x=1; }
        location = /ret-abs { return 302 /there; }
    }"#,
    );
    Server::start(p, &conf)
}

fn get(s: &Server, path: &str) -> Response {
    let req = format!("GET {path} HTTP/1.1\r\nHost: client.test\r\nConnection: close\r\n\r\n");
    Response::parse(&s.raw(req.as_bytes())).unwrap()
}

#[test]
fn directory_redirect_locations() {
    let s = site();
    let port = s.addr.port();
    // Twice each: the second answer may come from a cache.
    for _ in 0..2 {
        let r = get(&s, "/a/dir");
        assert_eq!(r.status, 301);
        assert_eq!(
            r.header("Location"),
            Some(format!("http://client.test:{port}/a/dir/").as_str())
        );
        assert_eq!(get(&s, "/b/dir").header("Location"), Some("/b/dir/"));
        assert_eq!(
            get(&s, "/c/dir").header("Location"),
            Some("http://client.test/c/dir/")
        );
        assert_eq!(
            get(&s, "/d/dir?q=1").header("Location"),
            Some(format!("http://example.test:{port}/d/dir/?q=1").as_str())
        );
    }
}

#[test]
fn return_with_a_relative_location() {
    let s = site();
    let r = get(&s, "/ret");
    assert_eq!(r.status, 301);
    assert_eq!(r.header("Location"), Some("/there?x=1"));
    let r = get(&s, "/ret-abs");
    assert_eq!(r.status, 302);
    let want = format!("http://client.test:{}/there", s.addr.port());
    assert_eq!(r.header("Location"), Some(want.as_str()));
}

/// `msie_refresh on`: MSIE gets the redirect as a refresh page (200, no
/// Location); other clients the redirect.
#[test]
fn msie_refresh_page() {
    let s = site();
    let req = "GET /e/dir HTTP/1.1\r\nHost: client.test\r\n\
               User-Agent: Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)\r\n\
               Connection: close\r\n\r\n";
    let r = Response::parse(&s.raw(req.as_bytes())).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Location"), None);
    assert_eq!(r.header("Content-Type"), Some("text/html"));
    assert_eq!(
        r.body_str(),
        "<html><head><meta http-equiv=\"Refresh\" content=\"0; URL=/e/dir/\"></head><body></body></html>\r\n"
    );
    assert_eq!(get(&s, "/e/dir").status, 301);
}

/// An `error_page` to a URI that is not a path redirects with 302, and
/// with `msie_refresh on` MSIE gets the refresh page for it too (nginx's
/// `ngx_http_send_error_page`).
#[test]
fn msie_refresh_for_an_error_page_redirect() {
    let s = site();
    let req = "GET /ep HTTP/1.1\r\nHost: client.test\r\n\
               User-Agent: Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)\r\n\
               Connection: close\r\n\r\n";
    let r = Response::parse(&s.raw(req.as_bytes())).unwrap();
    assert!(r.body_str().contains("URL=text\""), "{}", r.body_str());
    let r = get(&s, "/ep");
    assert_eq!(r.status, 302);
    assert_eq!(r.header("Location"), Some("text"));
}

/// The redirect to a proxied location's name with its slash escapes the
/// URI as the directory redirect does (`<>\\^`{|}` too), as nginx.
#[test]
fn location_auto_redirect_escapes_strictly() {
    let s = site();
    let r = get(&s, "/a%3Cb%7Cc");
    assert_eq!(r.status, 301);
    assert_eq!(r.header("Location"), Some("/a%3Cb%7Cc/"));
}
