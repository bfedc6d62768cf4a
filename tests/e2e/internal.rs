//! `internal`: a location only internal redirects reach (error_page,
//! index, try_files); the request's own URI gets 404.

use crate::support::{Prefix, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("internal");
    p.write("html/private/page.html", "secret");
    p.write("html/private/index.html", "private index");
    p.write("html/errors/404.html", "custom not found");
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        root html;
        error_page 404 /errors/404.html;
        location /private/ { internal; }
        location /errors/ { internal; }
        location = /via-index/ { index /private/index.html; }
        location = /via-try { try_files /nothing /private/page.html; }
    }"#,
    );
    Server::start(p, &conf)
}

#[test]
fn direct_requests_get_404_and_redirects_get_through() {
    let s = site();
    // Three times: the second and third may be answered from the memory
    // cache or a route; `internal` must hold there too.
    for _ in 0..3 {
        let r = s.get("/private/page.html");
        assert_eq!(r.status, 404);
        // The 404's error_page is itself internal, and reached.
        assert_eq!(r.body_str(), "custom not found");
        assert_eq!(s.get("/errors/404.html").status, 404);
        let r = s.get("/via-index/");
        assert_eq!((r.status, r.body_str()), (200, "private index"));
        let r = s.get("/via-try");
        assert_eq!((r.status, r.body_str()), (200, "secret"));
    }
}
