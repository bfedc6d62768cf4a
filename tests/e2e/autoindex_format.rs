//! `autoindex_format xml | json | jsonp`, as nginx's autoindex module
//! writes them.

use crate::support::{Prefix, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("aiformat");
    p.write("html/d/f\"<.txt", "x".repeat(42));
    std::fs::create_dir_all(p.dir.join("html/d/sub")).unwrap();
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        root html;
        autoindex on;
        location /x/ { alias html/d/; autoindex_format xml; }
        location /j/ { alias html/d/; autoindex_format json; }
        location /p/ { alias html/d/; autoindex_format jsonp; }
    }"#,
    );
    Server::start(p, &conf)
}

#[test]
fn xml_listing() {
    let s = site();
    let r = s.get("/x/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("text/xml; charset=utf-8"));
    let b = r.body_str();
    assert!(
        b.starts_with("<?xml version=\"1.0\"?>\r\n<list>\r\n<directory mtime=\""),
        "{b}"
    );
    assert!(b.contains("Z\">sub</directory>\r\n<file mtime=\""), "{b}");
    assert!(
        b.ends_with("Z\" size=\"42\">f&quot;&lt;.txt</file>\r\n</list>\r\n"),
        "{b}"
    );
}

#[test]
fn json_and_jsonp_listings() {
    let s = site();
    let r = s.get("/j/");
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    let b = r.body_str();
    assert!(
        b.starts_with("[\r\n{ \"name\":\"sub\", \"type\":\"directory\", \"mtime\":\""),
        "{b}"
    );
    assert!(
        b.contains(" },\r\n{ \"name\":\"f\\\"<.txt\", \"type\":\"file\", \"mtime\":\""),
        "{b}"
    );
    assert!(b.ends_with(" GMT\", \"size\":42 }\r\n]"), "{b}");
    let r = s.get("/p/sub/?callback=cb_1.x");
    assert_eq!(r.header("Content-Type"), Some("application/javascript"));
    assert_eq!(r.body_str(), "/* callback */\r\ncb_1.x([\r\n]);");
    let r = s.get("/p/sub/?callback=");
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    assert_eq!(r.body_str(), "[\r\n]");
    assert_eq!(s.get("/p/sub/?callback=a(b)").status, 400);
}
