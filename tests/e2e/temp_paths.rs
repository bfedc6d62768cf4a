//! `client_body_temp_path` and the other `*_temp_path` directories are
//! created at start, mode 0700, as nginx's `ngx_create_paths` creates them
//! (the directory, not its parents: a missing parent stops the start); a
//! bad level is refused at load.

use std::os::unix::fs::PermissionsExt;

use crate::support::{Prefix, Server, conf_with};

#[test]
fn temp_paths_are_created_at_start() {
    let p = Prefix::new("temp-paths");
    let dir = p.dir.clone();
    let conf = conf_with(
        "    client_body_temp_path body_temp 1 2;\n    proxy_temp_path proxy_temp;\n\
         server { listen 127.0.0.1:PORT; location / { return 204; } }",
    );
    let s = Server::start(p, &conf);
    assert_eq!(s.get("/").status, 204);
    for d in ["body_temp", "proxy_temp"] {
        let meta = std::fs::metadata(dir.join(d)).unwrap_or_else(|e| panic!("{d}: {e}"));
        assert!(meta.is_dir(), "{d}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{d}");
    }
}

#[test]
fn a_missing_parent_stops_the_start() {
    let p = Prefix::new("temp-paths-parent");
    p.conf(&conf_with(
        "    client_body_temp_path no/such/body;\n    server { listen 127.0.0.1:1; }",
    ));
    let out = std::process::Command::new(crate::support::BIN)
        .arg("-p")
        .arg(&p.dir)
        .args(["-c", "conf/nginx.conf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mkdir() \""), "{err}");
    assert!(err.contains("no/such/body\" failed"), "{err}");
}

#[test]
fn a_bad_level_is_refused() {
    let p = Prefix::new("temp-paths-bad");
    p.conf(&conf_with("    client_body_temp_path tmp/body 3;"));
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value \"3\""), "{err}");
}
