//! `disable_symlinks`: with `on` a symlinked file is refused with 403 and a
//! symlinked directory on the way with 404 (nginx's openat errors: ELOOP,
//! ENOTDIR); allowed within `from=`; followed with `off` (the default).

use crate::support::{Prefix, Server, conf_with};

#[test]
fn symlinks_refused_unless_off_or_before_from() {
    let p = Prefix::new("symlinks");
    p.write("html/real/f.txt", "file");
    let html = p.dir.join("html");
    std::os::unix::fs::symlink(html.join("real"), html.join("link")).unwrap();
    std::os::unix::fs::symlink(html.join("real/f.txt"), html.join("real/l.txt")).unwrap();
    let conf = conf_with(
        r#"    server {
        listen 127.0.0.1:PORT;
        root html;
        location /link/ { disable_symlinks on; }
        location /real/ { disable_symlinks on; }
        location /from/ { alias html/link/; disable_symlinks on from=$document_root; }
        location /off/ { alias html/link/; }
    }"#,
    );
    let s = Server::start(p, &conf);
    // Three times each: the memory cache must not answer past the check.
    for _ in 0..3 {
        assert_eq!(s.get("/real/f.txt").status, 200);
        assert_eq!(s.get("/real/l.txt").status, 403);
        assert_eq!(s.get("/link/f.txt").status, 404);
        assert_eq!(s.get("/off/f.txt").body_str(), "file");
        // The link is part of `from=` (the alias): not checked.
        assert_eq!(s.get("/from/f.txt").status, 200);
        assert_eq!(s.get("/real/missing").status, 404);
    }
}
