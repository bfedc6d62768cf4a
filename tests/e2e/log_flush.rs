//! Log times in nginx's units: `flush=100ms` writes a buffered line within
//! moments; `open_log_file_cache` keeps the descriptors of log files used
//! `min_uses` times, so they are written after their directory moves.
//! (`PREFIX` stands for the test's prefix: Peregrine wants a path with
//! variables absolute, where nginx would take it relative to `root`.)

use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, conf_with};

const SERVERS: &str = r#"
log_format uri $uri;
server {
    listen 127.0.0.1:PORT;
    location /buffered { access_log logs/buffered.log uri buffer=64k flush=100ms; return 204; }
    location /cache {
        open_log_file_cache max=3 inactive=20s valid=1m min_uses=2;
        access_log PREFIX/logs/dir/cache_${arg_name} uri;
        return 204;
    }
}
"#;

#[test]
fn flush_in_milliseconds() {
    let p = Prefix::new("log-flush");
    let conf = conf_with(SERVERS).replace("PREFIX", &p.dir.to_string_lossy());
    let s = Server::start(p, &conf);
    let start = Instant::now();
    assert_eq!(s.get("/buffered").status, 204);
    let log = s.prefix.dir.join("logs/buffered.log");
    while std::fs::read(&log).unwrap_or_default().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the line was not flushed while the server runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "/buffered\n");
}

#[test]
fn cached_log_descriptors_outlive_a_moved_directory() {
    let p = Prefix::new("log-cache");
    let dir = p.dir.join("logs/dir");
    std::fs::create_dir_all(&dir).unwrap();
    // nginx opens these from its workers, which run as `nobody` under root.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let conf = conf_with(SERVERS).replace("PREFIX", &p.dir.to_string_lossy());
    let s = Server::start(p, &conf);
    for name in ["lru", "lru", "once", "first", "first", "second", "second"] {
        assert_eq!(s.get(&format!("/cache?name={name}")).status, 204);
    }
    let dir = s.prefix.dir.join("logs/dir");
    let moved = s.prefix.dir.join("logs/moved");
    std::fs::rename(&dir, &moved).unwrap();
    for name in ["lru", "once", "first", "second"] {
        assert_eq!(s.get(&format!("/cache?name={name}")).status, 204);
    }
    let count = |n: &str| {
        std::fs::read_to_string(moved.join(format!("cache_{n}")))
            .unwrap_or_default()
            .lines()
            .count()
    };
    // lru was evicted (max=3) and `once` never held: only the two held
    // files got the lines written after the move.
    assert_eq!(
        [count("lru"), count("once"), count("first"), count("second")],
        [2, 1, 3, 3]
    );
}
