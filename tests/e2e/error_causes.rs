//! The error-log line of a failed lookup comes from the call that failed:
//! its name (`open()`, `openat()` under `disable_symlinks`) and its errno,
//! and the path nginx's handler names (the file, the index file). In the
//! first two cases looking at the path again would tell another story.

use std::path::Path;

use crate::support::{Prefix, Server, conf_with, wait_for_lines};

/// The `[error]` lines of the server's error log that contain `needle`
/// (waiting for `n` of them).
fn errors(dir: &Path, needle: &str, n: usize) -> Vec<String> {
    wait_for_lines(&dir.join("logs/error.log"), n, |l| {
        l.contains(" [error] ") && l.contains(needle)
    })
}

/// `open_file_cache_errors on`: the second request is answered from the
/// cached error, so the file created in between does not change its line.
#[test]
fn a_cached_error_is_logged_as_it_was_met() {
    let p = Prefix::new("cause-cached");
    p.write("html/a.txt", "a");
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             open_file_cache max=10 inactive=60s;\n        open_file_cache_valid 60s;\n\
             open_file_cache_errors on;\n    }\n",
        ),
    );
    assert_eq!(s.get("/late.txt").status, 404);
    s.prefix.write("html/late.txt", "here now");
    assert_eq!(s.get("/late.txt").status, 404, "the cached error");
    let root = s.prefix.dir.join("html");
    let want = format!(
        "open() \"{}/late.txt\" failed (2: No such file or directory)",
        root.display()
    );
    let lines = errors(&s.prefix.dir, "late.txt", 2);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for l in &lines {
        assert!(l.contains(&want), "{l}");
    }
}

/// `disable_symlinks on`: a symlink is refused by nginx's `openat()`
/// walk (403, ELOOP), a symlinked directory on the way with ENOTDIR
/// (404); a plain open would follow both.
#[test]
fn a_refused_symlink_is_logged_as_openat() {
    let p = Prefix::new("cause-symlink");
    p.write("html/real/t.txt", "t");
    let html = p.dir.join("html");
    std::os::unix::fs::symlink(html.join("real/t.txt"), html.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(html.join("real"), html.join("linkdir")).unwrap();
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             disable_symlinks on;\n    }\n",
        ),
    );
    assert_eq!(s.get("/real/t.txt").status, 200);
    assert_eq!(s.get("/link.txt").status, 403);
    assert_eq!(s.get("/linkdir/t.txt").status, 404);
    let root = html.display();
    let lines = errors(&s.prefix.dir, "openat()", 2);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    let want = [
        format!("openat() \"{root}/link.txt\" failed (40: Too many levels of symbolic links)"),
        format!("openat() \"{root}/linkdir/t.txt\" failed (20: Not a directory)"),
    ];
    for (l, w) in lines.iter().zip(&want) {
        assert!(l.contains(w.as_str()), "{l}\nwant {w}");
    }
}

/// Index files the worker may not read (run as root only: the workers then
/// drop to `nobody`). Without an open file cache nginx stats an index file
/// (`test_only`), so an unreadable one is found, then fails the static
/// handler's `open()`; one in an unsearchable directory fails the stat:
/// `ngx_http_index_error`'s line, naming the index file. With a cache it
/// opens it: the index module's line for both. A directory listed by
/// `autoindex` or `random_index` that may not be read: `opendir()`'s line.
#[test]
fn unreadable_index_files() {
    use std::os::unix::fs::PermissionsExt;
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    if uid_line.split_whitespace().nth(1) != Some("0") {
        return;
    }
    let p = Prefix::new("cause-index");
    let mode = |path: &Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap();
    };
    mode(&p.write("html/locked/index.html", "secret\n"), 0o000);
    mode(&p.write("html/c/locked/index.html", "secret\n"), 0o000);
    p.write("html/shut/index.html", "secret\n");
    mode(&p.dir.join("html/shut"), 0o644);
    p.write("html/ai/sub/x", "x");
    mode(&p.dir.join("html/ai/sub"), 0o311);
    p.write("html/ri/sub/x", "x");
    mode(&p.dir.join("html/ri/sub"), 0o311);
    mode(&p.dir, 0o755);
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             location /c/ { open_file_cache max=10; }\n\
             location /ai/ { autoindex on; }\n\
             location /ri/ { random_index on; }\n    }\n",
        )
        .replace(
            "worker_processes 1;",
            "worker_processes 1;\nuser nobody nogroup;",
        ),
    );
    for uri in ["/locked/", "/shut/", "/c/locked/", "/ai/sub/", "/ri/sub/"] {
        assert_eq!(s.get(uri).status, 403, "{uri}");
    }
    let root = s.prefix.dir.join("html");
    let root = root.display();
    let want = [
        format!("open() \"{root}/locked/index.html\" failed (13: Permission denied)"),
        format!("\"{root}/shut/index.html\" is forbidden (13: Permission denied)"),
        format!("\"{root}/c/locked/index.html\" is forbidden (13: Permission denied)"),
        format!("opendir() \"{root}/ai/sub\" failed (13: Permission denied)"),
        format!("opendir() \"{root}/ri/sub\" failed (13: Permission denied)"),
    ];
    let lines = errors(&s.prefix.dir, "(13: Permission denied)", want.len());
    assert_eq!(lines.len(), want.len(), "{lines:#?}");
    for (l, w) in lines.iter().zip(&want) {
        assert!(l.contains(w.as_str()), "{l}\nwant {w}");
    }
}

/// A failure is logged where it happens, whatever `error_page` then makes
/// of the answer (here a page of its own, and a 200).
#[test]
fn a_failure_under_error_page_is_still_logged() {
    let p = Prefix::new("cause-error-page");
    p.write("html/404.html", "not here\n");
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             error_page 404 /404.html;\n\
             location /ok/ { error_page 404 =200 /404.html; }\n    }\n",
        ),
    );
    let r = s.get("/gone.txt");
    assert_eq!((r.status, r.body_str()), (404, "not here\n"));
    let r = s.get("/ok/gone.txt");
    assert_eq!((r.status, r.body_str()), (200, "not here\n"));
    let root = s.prefix.dir.join("html");
    let lines = errors(&s.prefix.dir, "gone.txt", 2);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for (l, uri) in lines.iter().zip(["/gone.txt", "/ok/gone.txt"]) {
        let want = format!(
            "open() \"{}{uri}\" failed (2: No such file or directory)",
            root.display()
        );
        assert!(l.contains(&want), "{l}\nwant {want}");
    }
}
