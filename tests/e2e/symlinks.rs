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

/// The configured `alias` is the administrator's: `.` and `..` segments
/// in it are walked as nginx walks them, while a `..` the URI would add
/// is still refused; `$document_root` of a regex location's alias is the
/// alias with its captures (`disable_symlinks ... from=$document_root`
/// relies on it).
#[test]
fn dot_segments_in_the_configured_alias_and_an_expanded_document_root() {
    let p = Prefix::new("alias-dots");
    p.write("html/sub/f.txt", "f\n");
    let dir = p.dir.join("html").display().to_string();
    let s = Server::start(
        p,
        &conf_with(&format!(
            "    server {{\n        listen 127.0.0.1:PORT;\n\
             location /dots/ {{ disable_symlinks on; alias {dir}/./sub/../sub/; }}\n\
             location ~ ^/dr/(.+)$ {{ alias {dir}/$1; return 200 \"$document_root\\n\"; }}\n    }}\n"
        )),
    );
    let r = s.get("/dots/f.txt");
    assert_eq!((r.status, r.body.as_slice()), (200, &b"f\n"[..]));
    assert_eq!(s.get("/dr/sub").body, format!("{dir}/sub\n").into_bytes());
}
