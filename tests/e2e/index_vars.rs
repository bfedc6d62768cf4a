//! `index` names with variables (`index $server_name.html`), expanded per
//! request as nginx's index module does.

use crate::support::{Prefix, Server, conf_with};

#[test]
fn index_names_expand_variables() {
    let p = Prefix::new("index-vars");
    p.write("html/d/site.test.html", "by name");
    p.write("html/site.test.html", "at root");
    let conf = conf_with(
        r#"
    server {
        listen 127.0.0.1:PORT;
        server_name site.test;
        root html;
        location /d/ { index ${server_name}.html; }
        location /r/ { index /$server_name.html; }
    }
"#,
    );
    let s = Server::start(p, &conf);
    let r = s.get("/d/");
    assert_eq!((r.status, r.body_str()), (200, "by name"));
    let r = s.get("/r/");
    assert_eq!((r.status, r.body_str()), (200, "at root"));
}
