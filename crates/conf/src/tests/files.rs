//! Loading from the file system: prefix, -c, -g, includes, -T's file list,
//! and the shared seed configurations.

use super::*;

const MIME: &str = include_str!("../../../../conf/mime.types");

#[test]
fn loads_with_prefix_and_relative_conf_file() {
    let t = TempPrefix::new();
    t.write(
        "conf/peregrine.conf",
        "events {}\nhttp {\ninclude mime.types;\nserver { listen 127.0.0.1:8080; root html; }\n}\n",
    );
    t.write("conf/mime.types", MIME);
    let c = load(&LoadOptions {
        prefix: t.root().to_path_buf(),
        conf_file: DEFAULT_CONF_FILE.into(),
        globals: None,
    })
    .expect("load");
    assert_eq!(c.prefix, t.root());
    assert_eq!(c.conf_file, t.root().join("conf/peregrine.conf"));
    assert_eq!(c.files.len(), 2);
    assert_eq!(c.files[1].path, t.root().join("conf/mime.types"));
    assert_eq!(c.files[1].text, MIME);
    let s = only_server(&c);
    assert_eq!(s.conf.root, DocRoot::Root(t.path("html")));
    assert_eq!(
        s.conf.types.by_ext.get("css").map(String::as_str),
        Some("text/css")
    );
    assert_eq!(
        s.conf.types.by_ext.get("woff2").map(String::as_str),
        Some("font/woff2")
    );
    assert_eq!(c.main.pid, Some(t.root().join("logs/peregrine.pid")));
    assert_eq!(
        c.main.error_log[0].target,
        LogTarget::File(t.root().join("logs/error.log"))
    );
}

#[test]
fn missing_main_file() {
    let t = TempPrefix::new();
    let e = load(&t.opts("conf/none.conf")).expect_err("missing");
    assert_eq!(
        e.to_string(),
        format!(
            "open() \"{}\" failed (2: No such file or directory)",
            t.path("conf/none.conf")
        )
    );
}

#[test]
fn includes_are_relative_to_the_main_files_directory() {
    let t = TempPrefix::new();
    t.write(
        "other/n.conf",
        "events {}\nhttp {\ninclude sub/a.conf;\n}\n",
    );
    t.write(
        "other/sub/a.conf",
        "server {\nlisten 8081;\ninclude sub/loc.inc;\n}\n",
    );
    t.write("other/sub/loc.inc", "location /x {}\n");
    let c = load(&t.opts("other/n.conf")).expect("load");
    let s = only_server(&c);
    assert_eq!(s.listen[0].addr.port(), 8081);
    assert_eq!(s.locations.len(), 1);
    assert_eq!(c.files.len(), 3);
    // Not relative to the including file:
    t.write(
        "conf/nginx.conf",
        "events {}\nhttp {\ninclude sub/a.conf;\n}\n",
    );
    t.write("conf/sub/a.conf", "include b.conf;\n");
    let e = load(&t.opts("conf/nginx.conf")).expect_err("b.conf is in sub/");
    t.write("conf/sub/b.conf", "");
    assert_eq!(
        e.to_string(),
        format!(
            "open() \"{}\" failed (2: No such file or directory) in {}:1",
            t.path("conf/b.conf"),
            t.path("conf/sub/a.conf")
        )
    );
}

#[test]
fn include_globs() {
    let t = TempPrefix::new();
    t.write(
        "conf/nginx.conf",
        "events {}\nhttp {\n  include sites/*.conf;\n  include none/*.conf;\n}\n",
    );
    t.write("conf/sites/b.conf", "server { listen 8082; }\n");
    t.write("conf/sites/a.conf", "server { listen 8081; }\n");
    t.write("conf/sites/.hidden.conf", "server { listen 8089; }\n");
    t.write("conf/sites/c.txt", "garbage");
    let c = load(&t.opts("conf/nginx.conf")).expect("load");
    let ports: Vec<u16> = c
        .http
        .unwrap()
        .servers
        .iter()
        .map(|s| s.listen[0].addr.port())
        .collect();
    assert_eq!(ports, vec![8081, 8082]);
    let abs = t.path("conf/sites/*.conf");
    t.write(
        "conf/nginx.conf",
        &format!("events {{}}\nhttp {{ include {abs}; }}\n"),
    );
    assert_eq!(
        load(&t.opts("conf/nginx.conf")).expect("load").files.len(),
        3
    );
}

#[test]
fn include_everywhere() {
    let t = TempPrefix::new();
    t.write("conf/main.inc", "worker_processes 3;\n");
    t.write("conf/events.inc", "worker_connections 77;\n");
    t.write("conf/loc.inc", "autoindex on;\n");
    t.write("conf/types.inc", "text/x-foo foo;\n");
    t.write(
        "conf/nginx.conf",
        "include main.inc;\nevents { include events.inc; }\nhttp {\n types { include types.inc; }\n server { location / { include loc.inc; } }\n}\n",
    );
    let c = load(&t.opts("conf/nginx.conf")).expect("load");
    assert_eq!(c.main.worker_processes, WorkerProcesses::Count(3));
    assert_eq!(c.events.worker_connections, 77);
    let s = only_server(&c);
    assert!(s.locations[0].conf.autoindex);
    assert_eq!(
        s.conf.types.by_ext.get("foo").map(String::as_str),
        Some("text/x-foo")
    );
}

#[test]
fn errors_inside_includes_name_the_included_file() {
    let t = TempPrefix::new();
    t.write("conf/nginx.conf", "events {}\nhttp {\ninclude c.conf;\n}\n");
    t.write("conf/c.conf", "server {\n listen 8082;\n");
    let e = load(&t.opts("conf/nginx.conf")).expect_err("eof");
    assert_eq!(
        e.to_string(),
        format!(
            "unexpected end of file, expecting \"}}\" in {}:3",
            t.path("conf/c.conf")
        )
    );
    t.write("conf/c.conf", "server {\n listen 8082;}}\n");
    let e = load(&t.opts("conf/nginx.conf")).expect_err("extra brace");
    assert_eq!(
        e.to_string(),
        format!("unexpected \"}}\" in {}:2", t.path("conf/c.conf"))
    );
    t.write("conf/c.conf", "types { include; }\n");
    let e = load(&t.opts("conf/nginx.conf")).expect_err("include arity in types");
    assert!(
        e.to_string()
            .starts_with("invalid number of arguments in \"include\" directive")
    );
}

#[test]
fn recursive_include_is_refused() {
    let t = TempPrefix::new();
    t.write("conf/nginx.conf", "events {}\ninclude self.conf;\n");
    t.write("conf/self.conf", "include self.conf;\n");
    let e = load(&t.opts("conf/nginx.conf")).expect_err("loop");
    assert!(e.message.contains("nested deeper"), "{e}");
}

#[test]
fn globals_are_main_directives_read_first() {
    let t = TempPrefix::new();
    t.write("conf/nginx.conf", "worker_processes 2;\nevents {}\n");
    let mut o = t.opts("conf/nginx.conf");
    o.globals = Some("daemon off; pid /tmp/x.pid;".into());
    let c = load(&o).expect("load");
    assert!(!c.main.daemon);
    assert_eq!(c.main.pid, Some("/tmp/x.pid".into()));
    o.globals = Some("worker_processes 1;".into());
    assert_eq!(
        load(&o).unwrap_err().to_string(),
        format!(
            "\"worker_processes\" directive is duplicate in {}:1",
            t.path("conf/nginx.conf")
        )
    );
    for (g, want) in [
        (
            "worker_processes abc;",
            "\"worker_processes\" directive invalid value in command line",
        ),
        ("foo 1;", "unknown directive \"foo\" in command line"),
        (
            "worker_processes 1",
            "unexpected end of parameter, expecting \";\" in command line",
        ),
        (
            "events {}",
            "block directives are not supported in -g option in command line",
        ),
        (
            "listen 80;",
            "\"listen\" directive is not allowed here in command line",
        ),
    ] {
        o.globals = Some(g.into());
        assert_eq!(load(&o).unwrap_err().to_string(), want, "{g}");
    }
}

/// The configurations of /work/shared/conf (copied into testdata so that the
/// test does not depend on where shared/ is), each loaded as nginx.conf with
/// mime.types beside it.
#[test]
fn shared_seed_configurations_load() {
    let confs = [
        (
            "seed-000-common.conf",
            include_str!("../../testdata/shared/seed-000-common.conf"),
        ),
        (
            "seed-000.conf",
            include_str!("../../testdata/shared/seed-000.conf"),
        ),
        (
            "seed-001.conf",
            include_str!("../../testdata/shared/seed-001.conf"),
        ),
        (
            "seed-002.conf",
            include_str!("../../testdata/shared/seed-002.conf"),
        ),
        (
            "seed-003.conf",
            include_str!("../../testdata/shared/seed-003.conf"),
        ),
    ];
    for (name, text) in confs {
        let t = TempPrefix::new();
        t.write("conf/nginx.conf", text);
        t.write("conf/mime.types", MIME);
        let c = load(&t.opts("conf/nginx.conf")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = only_server(&c);
        assert_eq!(
            s.listen[0].addr,
            "127.0.0.1:8080".parse().unwrap(),
            "{name}"
        );
        assert!(s.conf.types.by_ext.contains_key("css"), "{name}");
    }
}

#[test]
fn shared_seed_details() {
    let t = TempPrefix::new();
    t.write("conf/mime.types", MIME);
    t.write(
        "conf/nginx.conf",
        include_str!("../../testdata/shared/seed-000.conf"),
    );
    let c = load(&t.opts("conf/nginx.conf")).expect("seed-000");
    assert_eq!(c.main.worker_processes, WorkerProcesses::Count(24));
    assert_eq!(c.main.error_log[0].level, LogLevel::Crit);
    assert_eq!(c.events.worker_connections, 4000);
    let l = &only_server(&c).conf;
    assert!(l.access_log.is_empty());
    assert_eq!(l.keepalive_requests, 100_000);
    assert!(l.gzip.proxied.auth && l.gzip.disable[0].is_match("MSIE 6.0"));
    t.write(
        "conf/nginx.conf",
        include_str!("../../testdata/shared/seed-002.conf"),
    );
    let c = load(&t.opts("conf/nginx.conf")).expect("seed-002");
    let s = only_server(&c);
    assert_eq!(s.locations.len(), 3);
    assert!(s.locations[1].conf.stub_status && s.locations[1].conf.access_log.is_empty());
    assert_eq!(s.conf.error_pages[0].codes, vec![500, 502, 503, 504]);
    assert_eq!(c.notices.len(), 2, "{:?}", c.notices);
    t.write(
        "conf/nginx.conf",
        include_str!("../../testdata/shared/seed-001.conf"),
    );
    let c = load(&t.opts("conf/nginx.conf")).expect("seed-001");
    assert_eq!(only_server(&c).client_header_buffer_size, 10 << 20);
    let Some(CpuAffinity::Masks(m)) = &c.main.worker_cpu_affinity else {
        panic!("affinity")
    };
    assert_eq!(m[5], CpuMask(vec![0b10010]));
}

/// /work/shared/conf itself, when present (it is beside the repository in
/// development and CI): every file there loads.
#[test]
fn shared_directory_when_present() {
    let Ok(dir) = std::fs::read_dir("/work/shared/conf") else {
        return;
    };
    for entry in dir.flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("read");
        let t = TempPrefix::new();
        t.write("conf/nginx.conf", &text);
        t.write("conf/mime.types", MIME);
        load(&t.opts("conf/nginx.conf"))
            .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
    }
}

/// The repository's own default configuration loads with its mime.types.
#[test]
fn repository_default_configuration_loads() {
    let t = TempPrefix::new();
    t.write(
        "conf/peregrine.conf",
        include_str!("../../../../conf/peregrine.conf"),
    );
    t.write("conf/mime.types", MIME);
    let c = load(&LoadOptions {
        prefix: t.root().to_path_buf(),
        conf_file: DEFAULT_CONF_FILE.into(),
        globals: None,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let s = only_server(&c);
    assert!(s.listen[0].default_server);
    assert_eq!(s.locations.len(), 2);
    assert!(c.notices.is_empty(), "{:?}", c.notices);
}

#[test]
fn nesting_across_includes_is_bounded() {
    let t = TempPrefix::new();
    // Each file opens a location and includes the next one: unbounded
    // nesting if the walk did not count includes and blocks together.
    t.write(
        "conf/nginx.conf",
        "events {}\nhttp { server { location / { include n.conf; } } }\n",
    );
    t.write("conf/n.conf", "location / { include n.conf; }\n");
    let e = load(&t.opts("conf/nginx.conf")).expect_err("bounded");
    assert!(e.message.contains("nested deeper"), "{e}");
}

/// `include /dev/zero` (or `-c /dev/zero`) was read until memory ran out.
/// nginx reads a file up to the size `fstat` reports, 0 for a device, so it
/// accepts the include and finds no `events` in the main file.
#[test]
fn devices_read_as_empty_files() {
    let t = TempPrefix::new();
    t.write(
        "conf/nginx.conf",
        "events {}\ninclude /dev/zero;\nhttp {}\n",
    );
    let c = load(&t.opts("conf/nginx.conf")).expect("nginx -t accepts it");
    assert!(
        c.files
            .iter()
            .any(|f| f.path == Path::new("/dev/zero") && f.text.is_empty())
    );
    let e = load(&t.opts("/dev/zero")).expect_err("no events");
    assert_eq!(e.to_string(), "no \"events\" section in configuration");
}
