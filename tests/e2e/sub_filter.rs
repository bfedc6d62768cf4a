//! `sub_filter` (once and all, several strings, case-insensitive, with
//! variables) and `add_before_body`/`add_after_body` around static files
//! and `return` bodies. Checked against nginx (`E2E_SERVER=nginx`).

use crate::support::{Prefix, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("sub_filter");
    p.write("html/t.html", "foo FOO bar foo");
    p.write("html/add/a.html", "BODY");
    p.write("html/before.txt", "BEFORE");
    let conf = conf_with(
        r#"
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /once/ { alias html/; sub_filter foo X; }
        location /all/ {
            alias html/;
            sub_filter_once off;
            sub_filter foo X;
            sub_filter bar $arg_r;
        }
        location /ret {
            sub_filter_types text/plain;
            sub_filter_once off;
            sub_filter a b;
            return 200 "aAa";
        }
        location /add/ {
            add_before_body /before.txt;
            add_after_body /after;
        }
        location /after { return 200 "AFTER"; }
    }"#,
    );
    Server::start(p, &conf)
}

#[test]
fn replaces_once_or_all() {
    let s = site();
    let r = s.get("/once/t.html");
    assert_eq!(r.body, b"X FOO bar foo");
    assert_eq!(r.header("Last-Modified"), None);
    assert_eq!(s.get("/all/t.html?r=Y").body, b"X X Y X");
    assert_eq!(s.get("/ret").body, b"bbb");
}

#[test]
fn addition_wraps_the_body() {
    let s = site();
    let r = s.get("/add/a.html");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"BEFOREBODYAFTER");
}
