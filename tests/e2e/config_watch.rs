//! `config_watch TIME;` (Peregrine's, beyond nginx): a changed
//! configuration file is reloaded as HUP reloads it, only if it passes the
//! `-t` checks; a Kubernetes ConfigMap's update (the `..data` symlink
//! swapped to a new directory) is seen. Peregrine only.

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use crate::support::{Prefix, Server, is_nginx};

fn conf(answer: &str) -> String {
    format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         config_watch 100ms;\nevents {{ worker_connections 32; }}\n\
         http {{\n    access_log off;\n    server {{\n        listen 127.0.0.1:PORT;\n\
         include site/site.conf;\n        location / {{ return 200 \"{answer}\\n\"; }}\n    }}\n}}\n"
    )
}

fn wait_for_body(s: &Server, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = s.get("/").body_str().to_string();
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "still {got:?}, want {want:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_configmap_swap_is_reloaded_and_a_broken_one_is_not() {
    if is_nginx() {
        return;
    }
    let p = Prefix::new("watch");
    // A ConfigMap volume: site/ -> ..data -> ..v1/, swapped by symlink.
    p.write("conf/..v1/site.conf", "add_header X-V v1;\n");
    p.write("conf/..v2/site.conf", "add_header X-V v2;\n");
    p.write("conf/..v3/site.conf", "add_header X-V;\n");
    symlink("..v1", p.dir.join("conf/..data")).unwrap();
    symlink("..data", p.dir.join("conf/site")).unwrap();
    let s = Server::start(p, &conf("one"));
    assert_eq!(s.get("/").header("X-V"), Some("v1"));
    // The main file changes.
    let text = std::fs::read_to_string(s.prefix.dir.join("conf/nginx.conf")).unwrap();
    s.prefix.conf(&text.replace("\"one", "\"two"));
    wait_for_body(&s, "two\n");
    // The ConfigMap's atomic swap: a new ..data link renamed over the old.
    let swap = |to: &str| {
        let tmp = s.prefix.dir.join("conf/..data_tmp");
        symlink(to, &tmp).unwrap();
        std::fs::rename(&tmp, s.prefix.dir.join("conf/..data")).unwrap();
    };
    swap("..v2");
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.get("/").header("X-V") != Some("v2") {
        assert!(Instant::now() < deadline, "the swap was not reloaded");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A broken version: logged, not applied, the old one serves on.
    swap("..v3");
    let log = s.prefix.dir.join("logs/error.log");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("[emerg]")) {
        assert!(Instant::now() < deadline, "no [emerg] for the broken file");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let r = s.get("/");
    assert_eq!((r.body_str(), r.header("X-V")), ("two\n", Some("v2")));
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.matches("[emerg]").count(),
        1,
        "a broken file is tried once: {text}"
    );
    assert!(
        text.contains("configuration file changed, reloading"),
        "{text}"
    );
}
