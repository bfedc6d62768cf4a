//! `random_index on`: a directory URI is answered by one of its regular
//! files (dot files, directories and links to directories skipped; links
//! to files followed), before `index`.

use std::collections::HashSet;

use crate::support::{Prefix, Server, conf_with};

#[test]
fn picks_only_regular_files() {
    let p = Prefix::new("random-index");
    for name in ["a", "b", "c"] {
        p.write(&format!("html/x/{name}"), name);
    }
    p.write("html/x/.hidden", "hidden");
    p.write("html/x/index.html", "index");
    p.write("html/target", "linked");
    std::fs::create_dir_all(p.dir.join("html/x/sub")).unwrap();
    std::os::unix::fs::symlink(p.dir.join("html/x/sub"), p.dir.join("html/x/dirlink")).unwrap();
    std::os::unix::fs::symlink(p.dir.join("html/target"), p.dir.join("html/x/filelink")).unwrap();
    std::fs::create_dir_all(p.dir.join("html/empty")).unwrap();
    let s = Server::start(
        p,
        &conf_with("server { listen 127.0.0.1:PORT; root html; location / { random_index on; } }"),
    );
    let mut seen = HashSet::new();
    for _ in 0..60 {
        let r = s.get("/x/");
        assert_eq!(r.status, 200);
        seen.insert(r.body_str().to_string());
    }
    let want: HashSet<String> = ["a", "b", "c", "index", "linked"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(seen, want, "every regular file, nothing else");
    // No file to pick: the module declines, and index/autoindex decide (403).
    assert_eq!(s.get("/empty/").status, 403);
    assert_eq!(s.get("/nowhere/").status, 404);
}
