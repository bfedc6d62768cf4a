//! Each argument form of each directive, and the defaults.

use std::net::SocketAddr;
use std::time::Duration;

use super::*;
use crate::model::{Op, Part, Template};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn main_defaults() {
    let c = parse("events {}\n");
    assert_eq!(c.main.worker_processes, WorkerProcesses::Count(1));
    assert_eq!(c.main.worker_cpu_affinity, None);
    assert_eq!(c.main.worker_rlimit_nofile, None);
    assert_eq!(
        c.main.error_log,
        vec![ErrorLogConf {
            target: LogTarget::File("/p/conf/logs/error.log".into()),
            level: LogLevel::Error
        }]
    );
    assert_eq!(
        c.main.pid,
        Some(PathBuf::from("/p/conf/logs/peregrine.pid"))
    );
    assert!(!c.main.daemon);
    assert_eq!(c.main.user, None);
    assert_eq!(c.main.worker_shutdown_timeout, None);
    assert_eq!(c.events.worker_connections, 512);
    assert!(!c.events.multi_accept);
    assert_eq!(c.events.use_method, None);
    assert!(c.http.is_none());
    assert_eq!(c.files.len(), 1);
}

#[test]
fn main_directives() {
    let c = parse(
        "worker_processes auto;\nworker_rlimit_nofile 65535;\nworker_shutdown_timeout 10s;\n\
         pid /run/p.pid;\ndaemon on;\nuser www data;\nerror_log stderr warn;\nerror_log logs/e.log debug_http;\n\
         events { worker_connections 4096; use epoll; multi_accept on; }\n",
    );
    assert_eq!(c.main.worker_processes, WorkerProcesses::Auto);
    assert_eq!(c.main.worker_rlimit_nofile, Some(65535));
    assert_eq!(c.main.worker_shutdown_timeout, Some(secs(10)));
    assert_eq!(c.main.pid, Some(PathBuf::from("/run/p.pid")));
    assert!(c.main.daemon);
    assert_eq!(
        c.main.user,
        Some(UserConf {
            user: "www".into(),
            group: Some("data".into())
        })
    );
    assert_eq!(c.main.error_log.len(), 2);
    assert_eq!(
        c.main.error_log[0],
        ErrorLogConf {
            target: LogTarget::Stderr,
            level: LogLevel::Warn
        }
    );
    assert_eq!(
        c.main.error_log[1].target,
        LogTarget::File("/p/conf/logs/e.log".into())
    );
    assert_eq!(c.main.error_log[1].level, LogLevel::Debug);
    assert_eq!(c.events.worker_connections, 4096);
    assert_eq!(c.events.use_method.as_deref(), Some("epoll"));
    assert!(c.events.multi_accept);
    let c = parse("worker_processes 8;\nuser nobody;\nevents {}\n");
    assert_eq!(c.main.worker_processes, WorkerProcesses::Count(8));
    assert_eq!(
        c.main.user,
        Some(UserConf {
            user: "nobody".into(),
            group: None
        })
    );
}

#[test]
fn cpu_affinity_forms() {
    let c = parse(
        "worker_cpu_affinity 0001 0010 0100 1000 10000000000000000000000000000000000000000000000000000000000000001;\nevents {}\n",
    );
    let Some(CpuAffinity::Masks(m)) = c.main.worker_cpu_affinity else {
        panic!("masks")
    };
    assert_eq!(m[0], CpuMask(vec![1]));
    assert_eq!(m[1], CpuMask(vec![2]));
    assert_eq!(m[3], CpuMask(vec![8]));
    assert_eq!(m[4], CpuMask(vec![1, 1]));
    let c = parse("worker_cpu_affinity auto;\nevents {}\n");
    assert_eq!(c.main.worker_cpu_affinity, Some(CpuAffinity::Auto(None)));
    let c = parse("worker_cpu_affinity auto 1010;\nevents {}\n");
    assert_eq!(
        c.main.worker_cpu_affinity,
        Some(CpuAffinity::Auto(Some(CpuMask(vec![0b1010]))))
    );
}

#[test]
fn hints_are_accepted_with_notices() {
    let c = parse(&format!(
        "worker_priority -5;\n{}",
        http("server_names_hash_bucket_size 128;\nserver_names_hash_max_size 1024;\ntypes_hash_max_size 2048;\ntypes_hash_bucket_size 64;")
    )
    .replace("events {}", "events { accept_mutex off; accept_mutex_delay 500ms; }"));
    assert_eq!(c.notices.len(), 7, "{:?}", c.notices);
    assert!(c.notices[1].contains("\"accept_mutex\""));
    assert!(
        c.notices[3].contains("\"server_names_hash_bucket_size\"")
            && c.notices[3].contains("/p/conf/nginx.conf:4")
    );
    // nginx reads the hash sizes as plain numbers (`ngx_conf_set_num_slot`)
    // and `worker_priority` as a signed one; checked with nginx -t 1.22.1.
    for v in ["x", "1k", "-1", "9223372036854775808"] {
        assert_eq!(
            err(&http(&format!("server_names_hash_bucket_size {v};"))),
            "\"server_names_hash_bucket_size\" directive invalid number in /p/conf/nginx.conf:3"
        );
    }
    parse(&http(
        "types_hash_max_size 0;\nvariables_hash_bucket_size 9223372036854775807;",
    ));
    for v in [
        "auto",
        "-",
        "+",
        "\"\"",
        "9223372036854775808",
        "4294967295",
        "-8589934591",
    ] {
        assert_eq!(
            err(&format!("worker_priority {v};\nevents {{}}\n")),
            "\"worker_priority\" directive invalid number in /p/conf/nginx.conf:1"
        );
    }
    parse("worker_priority +5;\nevents {}\n");
    parse("worker_priority 4294967296;\nevents {}\n");
}

/// Hints are refused twice at one level, before their value is read, as
/// nginx's slot functions do; each block is its own level. Found by the
/// differential check (examples/nginx_diff.rs), checked with nginx -t 1.22.1.
#[test]
fn hints_are_duplicate_at_one_level() {
    assert_eq!(
        err("timer_resolution 1s;\ntimer_resolution x;\nevents {}\n"),
        "\"timer_resolution\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("events {\naccept_mutex on;\naccept_mutex on;\n}\n"),
        "\"accept_mutex\" directive is duplicate in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http(
            "server_names_hash_max_size 1;\nserver {}\nserver_names_hash_max_size 1;"
        )),
        "\"server_names_hash_max_size\" directive is duplicate in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&server(
            "types_hash_max_size 2;\nlocation / { types_hash_max_size 3; }\ntypes_hash_max_size 4;"
        )),
        "\"types_hash_max_size\" directive is duplicate in /p/conf/nginx.conf:6"
    );
    parse(&http(
        "types_hash_max_size 1;\nserver { types_hash_max_size 2; location / { types_hash_max_size 3; } }\nserver { types_hash_max_size 2; }",
    ));
    // worker_priority's 0 is nginx's "unset" mark.
    assert_eq!(
        err("worker_priority 1;\nworker_priority x;\nevents {}\n"),
        "\"worker_priority\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    parse("worker_priority -0;\nworker_priority 4294967296;\nworker_priority 1;\nevents {}\n");
    assert!(err("events { accept_mutex maybe; }").contains("it must be \"on\" or \"off\""));
}

#[test]
fn http_defaults() {
    let c = parse(&http("server {}"));
    let s = only_server(&c);
    let l = &s.conf;
    assert_eq!(s.server_names.len(), 1);
    assert!(matches!(&s.server_names[0], ServerName::Exact(n) if n.is_empty()));
    assert_eq!(s.listen.len(), 1);
    assert!(s.listen[0].addr.port() == 80 || s.listen[0].addr.port() == 8000);
    assert!(s.listen[0].addr.ip().is_unspecified());
    assert_eq!(s.listen[0].backlog, 511);
    assert_eq!(s.client_header_timeout, secs(60));
    assert_eq!(s.client_header_buffer_size, 1024);
    assert_eq!(s.large_client_header_buffers, (4, 8192));
    assert_eq!(l.root, DocRoot::Root("/p/conf/html".into()));
    assert_eq!(l.index, vec!["index.html"]);
    assert_eq!(l.default_type, "text/plain");
    assert_eq!(
        l.types.by_ext.get("html").map(String::as_str),
        Some("text/html")
    );
    assert_eq!(
        l.types.by_ext.get("jpg").map(String::as_str),
        Some("image/jpeg")
    );
    assert!(!l.sendfile && !l.tcp_nopush && l.tcp_nodelay);
    assert_eq!(l.keepalive_timeout, secs(75));
    assert_eq!(l.keepalive_header, None);
    assert_eq!(l.keepalive_requests, 1000);
    assert_eq!(l.client_body_timeout, secs(60));
    assert_eq!(l.send_timeout, secs(60));
    assert_eq!(l.client_max_body_size, 1 << 20);
    assert_eq!(l.client_body_buffer_size, 16384);
    assert_eq!(l.open_file_cache, None);
    assert_eq!(l.open_file_cache_valid, secs(60));
    assert_eq!(l.open_file_cache_min_uses, 1);
    assert!(!l.open_file_cache_errors);
    assert_eq!(
        l.memory_cache,
        Some(MemoryCacheConf {
            size: 64 << 20,
            max_file: 16 << 10
        })
    );
    assert_eq!(l.access_log.len(), 1);
    assert_eq!(
        l.access_log[0].target,
        LogTarget::File("/p/conf/logs/access.log".into())
    );
    assert_eq!(l.access_log[0].format, "combined");
    assert!(!l.gzip.on);
    assert_eq!(l.gzip.types, vec!["text/html"]);
    assert_eq!((l.gzip.min_length, l.gzip.comp_level), (20, 1));
    assert_eq!(l.gzip.http_version, (1, 1));
    assert_eq!(l.gzip.buffers, (32, 4096));
    assert_eq!(l.brotli.comp_level, 6);
    assert_eq!(l.zstd.comp_level, 1);
    assert_eq!(l.charset, None);
    assert!(l.charset_types.contains(&"text/html".to_string()));
    let formats = &c.http.as_ref().unwrap().log_formats;
    assert_eq!(formats[0].name, "combined");
}

#[test]
fn listen_forms() {
    let c = parse(&server(
        "listen 127.0.0.1:8080 default_server reuseport backlog=1024;\nlisten 8081 reuseport;\nlisten [::1]:8082 default;\n\
         listen *:8083 deferred bind rcvbuf=64k;\nlisten 127.0.0.2;\n\
         listen 8084 deferred=off;\nlisten 8085 deferred=on;",
    ));
    let l = &only_server(&c).listen;
    assert_eq!(l[0].addr, "127.0.0.1:8080".parse::<SocketAddr>().unwrap());
    assert!(l[0].default_server && l[0].reuseport);
    assert_eq!(l[0].backlog, 1024);
    assert_eq!(l[0].span.line, 4);
    assert_eq!(l[1].addr, "0.0.0.0:8081".parse::<SocketAddr>().unwrap());
    assert!(l[1].reuseport && !l[1].default_server);
    assert_eq!(l[2].addr, "[::1]:8082".parse::<SocketAddr>().unwrap());
    assert!(l[2].default_server);
    assert_eq!(l[3].addr, "0.0.0.0:8083".parse::<SocketAddr>().unwrap());
    assert_eq!((l[3].deferred, l[0].deferred), (Some(true), None));
    assert_eq!((l[5].deferred, l[6].deferred), (Some(false), Some(true)));
    assert_eq!(l[4].addr, "127.0.0.2:80".parse::<SocketAddr>().unwrap());
    // The same address in two servers is name-based virtual hosting.
    let c = parse(&http(
        "server { listen 8080; } server { listen 8080 default_server; }",
    ));
    assert_eq!(c.http.unwrap().servers.len(), 2);
}

#[test]
fn server_name_forms() {
    let c = parse(&server(
        "server_name Example.COM *.example.org .example.net www.example.* ~^(?<u>.+)\\.x$ \"\";",
    ));
    let n = &only_server(&c).server_names;
    assert!(matches!(&n[0], ServerName::Exact(s) if s == "example.com"));
    assert!(
        matches!(&n[1], ServerName::WildcardStart { suffix, also_bare: false } if suffix == ".example.org")
    );
    assert!(
        matches!(&n[2], ServerName::WildcardStart { suffix, also_bare: true } if suffix == ".example.net")
    );
    assert!(matches!(&n[3], ServerName::WildcardEnd(p) if p == "www.example."));
    assert!(matches!(&n[4], ServerName::Regex(r) if r.is_match("a.x") && !r.is_match("A.X")));
    assert!(matches!(&n[5], ServerName::Exact(s) if s.is_empty()));
    assert!(
        err(&server("server_name a*b.com;"))
            .starts_with("invalid server name or wildcard \"a*b.com\"")
    );
    // ngx_http_core_server_name's own check (nginx -t 1.22.1); found by
    // the differential check, examples/nginx_diff.rs.
    for name in ["*:8080", "*", "*.", "*x", "."] {
        assert_eq!(
            err(&server(&format!("server_name {name};"))),
            format!("server name \"{name}\" is invalid in /p/conf/nginx.conf:4")
        );
    }
    let c = parse(&server("server_name $HOSTNAME;"));
    assert!(
        matches!(&only_server(&c).server_names[0], ServerName::Exact(s) if !s.starts_with('$'))
    );
    let c = parse(&server("server_name ~^A\\.b$;"));
    assert!(matches!(&only_server(&c).server_names[0], ServerName::Regex(r) if r.is_match("a.b")));
    assert!(err(&server("server_name ~;")).starts_with("empty regex in server name \"~\""));
    let c = parse(&server("server_name a;\nserver_name b;"));
    assert_eq!(only_server(&c).server_names.len(), 2);
}

#[test]
fn location_forms() {
    let c = parse(&server(
        "location = /exact {}\nlocation ^~ /static/ {}\nlocation ~ \\.php$ {}\nlocation ~* \\.(gif|jpg)$ {}\n\
         location /prefix {}\nlocation @named {}\nlocation =/e2 {}\nlocation ^~/s2 {}\nlocation ~/r2 {}\nlocation ~*/r3 {}",
    ));
    let l = &only_server(&c).locations;
    assert!(matches!(&l[0].matcher, LocationMatch::Exact(p) if p == "/exact"));
    assert!(
        matches!(&l[1].matcher, LocationMatch::Prefix { path, no_regex: true } if path == "/static/")
    );
    assert!(
        matches!(&l[2].matcher, LocationMatch::Regex { regex, case_insensitive: false } if regex.is_match("/a.php") && !regex.is_match("/a.PHP"))
    );
    assert!(
        matches!(&l[3].matcher, LocationMatch::Regex { regex, case_insensitive: true } if regex.is_match("/A.GIF"))
    );
    assert!(
        matches!(&l[4].matcher, LocationMatch::Prefix { path, no_regex: false } if path == "/prefix")
    );
    assert!(matches!(&l[5].matcher, LocationMatch::Named(n) if n == "named"));
    assert!(matches!(&l[6].matcher, LocationMatch::Exact(p) if p == "/e2"));
    assert!(
        matches!(&l[7].matcher, LocationMatch::Prefix { path, no_regex: true } if path == "/s2")
    );
    assert!(matches!(
        &l[8].matcher,
        LocationMatch::Regex {
            case_insensitive: false,
            ..
        }
    ));
    assert!(matches!(
        &l[9].matcher,
        LocationMatch::Regex {
            case_insensitive: true,
            ..
        }
    ));
    assert_eq!(l[0].span.line, 4);
    assert_eq!(l[9].span.line, 13);
}

#[test]
fn root_alias_index() {
    let c = parse(&server(
        "root html/;\nindex a.html b.htm;\nindex c.html;\nlocation /a/ { alias /srv/a/; }\nlocation /b { root /srv/b/; }\nlocation /c { root $uri/y; }\nlocation /d { root /; }",
    ));
    let s = only_server(&c);
    assert_eq!(s.conf.root, DocRoot::Root("/p/conf/html".into()));
    assert_eq!(s.conf.index, vec!["a.html", "b.htm", "c.html"]);
    assert_eq!(s.locations[0].conf.root, DocRoot::Alias("/srv/a/".into()));
    assert_eq!(s.locations[1].conf.root, DocRoot::Root("/srv/b".into()));
    assert_eq!(s.locations[2].conf.root, DocRoot::Root("$uri/y".into()));
    assert_eq!(s.locations[3].conf.root, DocRoot::Root(String::new()));
}

#[test]
fn return_forms() {
    let c = parse(&server(
        "location /a { return 404; }\nlocation /b { return 301 https://x/; }\nlocation /c { return 200 \"ok\\n\"; }\n\
         location /d { return https://y/; }\nlocation /e { return 444; }\nlocation /f { return $scheme://h; }\nlocation /g { return 403; return 404; }",
    ));
    let l = &only_server(&c).locations;
    let r = |i: usize| match &l[i].conf.rewrite.script.as_ref().unwrap().ops[0] {
        Op::Return { code, text } => (*code, text.as_ref().map(show)),
        other => panic!("{other:?}"),
    };
    assert_eq!(r(0), (404, None));
    assert_eq!(r(1), (301, Some("https://x/".into())));
    assert_eq!(r(2), (200, Some("ok\n".into())));
    assert_eq!(r(3), (302, Some("https://y/".into())));
    assert_eq!(r(4).0, 444);
    assert_eq!(r(5), (302, Some("$scheme://h".into())));
    // Every `return` is an op; the first reached answers.
    assert_eq!(r(6).0, 403);
    assert_eq!(l[6].conf.rewrite.script.as_ref().unwrap().ops.len(), 2);
}

/// A compiled value written back as configuration text.
fn show(t: &Template) -> String {
    t.parts
        .iter()
        .map(|p| match p {
            Part::Lit(s) => s.clone(),
            Part::Var(n) => format!("${n}"),
            Part::Set(_, n) => format!("${n}"),
            Part::Capture(n) => format!("${n}"),
        })
        .collect()
}

#[test]
fn error_page_forms() {
    let c = parse(&server(
        "error_page 404 /404.html;\nerror_page 500 502 503 504 /50x.html;\nerror_page 403 = /x;\nerror_page 401 =200 @n;\nerror_page 402 =;",
    ));
    let e = &only_server(&c).conf.error_pages;
    assert_eq!(
        e[0],
        ErrorPageConf {
            codes: vec![404],
            overwrite: None,
            target: "/404.html".into()
        }
    );
    assert_eq!(e[1].codes, vec![500, 502, 503, 504]);
    assert_eq!(
        e[2],
        ErrorPageConf {
            codes: vec![403],
            overwrite: Some(None),
            target: "/x".into()
        }
    );
    assert_eq!(
        e[3],
        ErrorPageConf {
            codes: vec![401],
            overwrite: Some(Some(200)),
            target: "@n".into()
        }
    );
    assert_eq!(
        e[4],
        ErrorPageConf {
            codes: vec![402],
            overwrite: None,
            target: "=".into()
        }
    );
    // nginx -t 1.22.1: 499 is refused, and the URI is compiled (its `$`
    // checked) before the codes are read.
    assert_eq!(
        err(&server("error_page 499 /x;")),
        "invalid value \"499\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("error_page 1s /x$;")),
        "invalid variable name in /p/conf/nginx.conf:4"
    );
}

#[test]
fn try_files_stub_status_autoindex_metrics() {
    let c = parse(&server(
        "try_files $uri $uri/ =404;\nautoindex on;\nlocation /s { stub_status; }\nlocation /t { stub_status on; }\nlocation /m { metrics on; try_files $uri @fallback; }\nlocation @fallback {}",
    ));
    let s = only_server(&c);
    assert_eq!(s.conf.try_files, vec!["$uri", "$uri/", "=404"]);
    assert!(s.conf.autoindex && !s.conf.stub_status);
    assert!(s.locations[0].conf.stub_status && s.locations[1].conf.stub_status);
    assert!(s.locations[2].conf.metrics && !s.locations[0].conf.metrics);
    assert_eq!(s.locations[2].conf.try_files, vec!["$uri", "@fallback"]);
    assert!(s.locations[0].conf.autoindex);
}

#[test]
fn connection_and_body_settings() {
    let c = parse(&http(
        "sendfile on; tcp_nopush on; tcp_nodelay off;\nkeepalive_timeout 65 60;\nkeepalive_requests 100000;\nreset_timedout_connection on;\n\
         client_header_timeout 10s; client_body_timeout 1m; send_timeout 500ms;\nclient_header_buffer_size 4k;\nlarge_client_header_buffers 8 16k;\n\
         client_max_body_size 1g; client_body_buffer_size 10m;\nserver {}",
    ));
    let s = only_server(&c);
    let l = &s.conf;
    assert!(l.sendfile && l.tcp_nopush && !l.tcp_nodelay);
    assert_eq!(l.keepalive_timeout, secs(65));
    assert_eq!(l.keepalive_header, Some(secs(60)));
    assert_eq!(l.keepalive_requests, 100_000);
    assert!(l.reset_timedout_connection);
    assert_eq!(s.client_header_timeout, secs(10));
    assert_eq!(l.client_body_timeout, secs(60));
    assert_eq!(l.send_timeout, Duration::from_millis(500));
    assert_eq!(s.client_header_buffer_size, 4096);
    assert_eq!(s.large_client_header_buffers, (8, 16384));
    assert_eq!(l.client_max_body_size, 1 << 30);
    assert_eq!(l.client_body_buffer_size, 10 << 20);
    let c = parse(&http("keepalive_timeout 0;\nserver {}"));
    assert_eq!(only_server(&c).conf.keepalive_timeout, Duration::ZERO);
}

#[test]
fn caches() {
    let c = parse(&http(
        "open_file_cache max=1000 inactive=20s;\nopen_file_cache_valid 30s;\nopen_file_cache_min_uses 2;\nopen_file_cache_errors on;\n\
         memory_cache size=1m max_file=4k;\nserver { open_file_cache off; memory_cache off; location /a { open_file_cache max=5; memory_cache max_file=1k; } }",
    ));
    let h = &c.http.as_ref().unwrap().servers[0];
    let s = &h.conf;
    assert_eq!(s.open_file_cache, None);
    assert_eq!(s.memory_cache, None);
    let l = &h.locations[0].conf;
    assert_eq!(
        l.open_file_cache,
        Some(OpenFileCacheConf {
            max: 5,
            inactive: secs(60)
        })
    );
    assert_eq!(
        l.memory_cache,
        Some(MemoryCacheConf {
            size: 64 << 20,
            max_file: 1024
        })
    );
    assert_eq!(l.open_file_cache_valid, secs(30));
    assert_eq!(l.open_file_cache_min_uses, 2);
    assert!(l.open_file_cache_errors);
    // nginx -t accepts any ngx_uint_t (differential check).
    let c = parse(&http(
        "open_file_cache_min_uses 9223372036854775807;
server {}",
    ));
    assert_eq!(only_server(&c).conf.open_file_cache_min_uses, u32::MAX);
    let c = parse(&http(
        "open_file_cache max=1000 inactive=20s;\nmemory_cache size=1m max_file=4k;\nserver {}",
    ));
    let l = &only_server(&c).conf;
    assert_eq!(
        l.open_file_cache,
        Some(OpenFileCacheConf {
            max: 1000,
            inactive: secs(20)
        })
    );
    assert_eq!(
        l.memory_cache,
        Some(MemoryCacheConf {
            size: 1 << 20,
            max_file: 4096
        })
    );
}

#[test]
fn access_log_forms_and_log_format() {
    let c = parse(&http(
        "log_format main '$remote_addr \"$request\" '\n    '$status';\nlog_format j escape=json '{\"a\":\"$arg_a\"}';\n\
         access_log logs/a.log main buffer=16k flush=5s;\naccess_log /var/log/b.log combined gzip=5 if=$cookie_loggable;\naccess_log logs/c.log;\n\
         access_log logs/d.log main gzip;\nserver { location /off { access_log off; } }",
    ));
    let http_conf = c.http.as_ref().unwrap();
    let f = &http_conf.log_formats;
    assert_eq!(f.len(), 3);
    assert_eq!(f[1].name, "main");
    assert_eq!(f[1].format, "$remote_addr \"$request\" $status");
    assert_eq!(f[1].span.line, 4);
    assert_eq!(f[2].escape, LogEscape::Json);
    let s = &http_conf.servers[0];
    let a = &s.conf.access_log;
    assert_eq!(a.len(), 4);
    assert_eq!(a[0].target, LogTarget::File("/p/conf/logs/a.log".into()));
    assert_eq!(
        (a[0].format.as_str(), a[0].buffer, a[0].flush),
        ("main", Some(16384), Some(secs(5)))
    );
    assert_eq!(
        (a[1].gzip, a[1].buffer, a[1].condition.as_deref()),
        (Some(5), Some(65536), Some("$cookie_loggable"))
    );
    assert_eq!(a[2].format, "combined");
    assert_eq!(a[3].gzip, Some(1));
    assert!(s.locations[0].conf.access_log.is_empty());
}

#[test]
fn gzip_and_friends() {
    let c = parse(&http(
        "gzip on;\ngzip_types text/css application/javascript;\ngzip_types TEXT/xml;\ngzip_min_length 1k;\ngzip_comp_level 6;\n\
         gzip_proxied expired no-cache no-store private no_last_modified no_etag auth;\ngzip_disable \"MSIE [1-6]\\.\" msie6;\n\
         gzip_vary on;\ngzip_http_version 1.0;\ngzip_buffers 16 8k;\ngzip_static always;\n\
         brotli on; brotli_types text/css; brotli_comp_level 0; brotli_min_length 100; brotli_static on;\n\
         zstd on; zstd_types *; zstd_comp_level 22; zstd_min_length 1m; zstd_static off;\nserver {}",
    ));
    let l = &only_server(&c).conf;
    let g = &l.gzip;
    assert!(g.on && g.vary);
    assert_eq!(
        g.types,
        vec![
            "text/html",
            "text/css",
            "application/javascript",
            "text/xml"
        ]
    );
    assert_eq!((g.min_length, g.comp_level), (1024, 6));
    assert!(g.proxied.expired && g.proxied.no_cache && g.proxied.no_store && g.proxied.private);
    assert!(g.proxied.no_last_modified && g.proxied.no_etag && g.proxied.auth && !g.proxied.any);
    assert_eq!(g.disable.len(), 1);
    assert!(g.disable[0].is_match("Mozilla/4.0 (compatible; msie 6.0)"));
    assert!(g.disable_msie6);
    assert_eq!(g.http_version, (1, 0));
    assert_eq!(g.buffers, (16, 8192));
    assert_eq!(g.static_, StaticMode::Always);
    assert_eq!(
        l.brotli,
        CompressConf {
            on: true,
            types: vec!["text/css".into()],
            comp_level: 0,
            min_length: 100,
            static_: StaticMode::On
        }
    );
    assert_eq!(
        l.zstd,
        CompressConf {
            on: true,
            types: vec!["*".into()],
            comp_level: 22,
            min_length: 1 << 20,
            static_: StaticMode::Off
        }
    );
    let c = parse(&http("gzip_proxied any;\ngzip_proxied off;\nserver {}"));
    assert_eq!(only_server(&c).conf.gzip.proxied, GzipProxied::default());
}

#[test]
fn types_charset_default_type_proxy() {
    let c = parse(&http(
        "types {\n text/html html htm;\n image/png PNG;\n}\ntypes { text/plain html; }\ndefault_type application/octet-stream;\n\
         charset GBK;\ncharset_types text/css;\nproxy_buffers 4 128k;\nproxy_busy_buffers_size 128k;\nserver { types {} charset off; }",
    ));
    let http_conf = c.http.as_ref().unwrap();
    let s = &http_conf.servers[0];
    assert!(s.conf.types.by_ext.is_empty());
    assert_eq!(s.conf.charset, None);
    let c = parse(&http(
        "types {\n text/html html htm;\n image/png PNG;\n}\ntypes { text/plain html; }\ndefault_type application/octet-stream;\n\
         charset GBK;\ncharset_types text/css;\nproxy_buffers 4 128k;\nproxy_busy_buffers_size 128k;\nserver {}",
    ));
    let l = &only_server(&c).conf;
    assert_eq!(
        l.types.by_ext.get("html").map(String::as_str),
        Some("text/plain")
    );
    assert_eq!(
        l.types.by_ext.get("htm").map(String::as_str),
        Some("text/html")
    );
    assert_eq!(
        l.types.by_ext.get("png").map(String::as_str),
        Some("image/png")
    );
    assert_eq!(l.default_type, "application/octet-stream");
    assert_eq!(l.charset.as_deref(), Some("GBK"));
    assert_eq!(l.charset_types, vec!["text/css"]);
    assert_eq!(l.proxy_buffers, Some((4, 131072)));
    assert_eq!(l.proxy_busy_buffers_size, Some(131072));
}

#[test]
fn quoted_and_variable_arguments_are_kept() {
    let c = parse(&server(
        "location /a { try_files \"$uri\" '${uri}.html' $uri\\ x =404; }",
    ));
    assert_eq!(
        only_server(&c).locations[0].conf.try_files,
        vec!["$uri", "${uri}.html", "$uri\\ x", "=404"]
    );
}

#[test]
fn nginx_warnings_become_notices() {
    let c = parse(&http(
        "index /abs.html last.html;\nserver { server_name a/b x.com; }\nserver { server_name x.com; }",
    ));
    assert_eq!(
        c.notices,
        vec![
            "only the last index in \"index\" directive should be absolute in /p/conf/nginx.conf:3"
                .to_string(),
            "server name \"a/b\" has suspicious symbols in /p/conf/nginx.conf:4".to_string(),
            format!(
                "conflicting server name \"x.com\" on {}, ignored",
                only_listen_addr(&c)
            ),
        ]
    );
    let c = parse("events { use epoll; }\n");
    assert_eq!(c.notices.len(), 1);
    assert!(c.notices[0].starts_with("\"use\" is an nginx tuning hint"));
    assert!(parse(&http("index a.html /abs.html;")).notices.is_empty());
}

fn only_listen_addr(c: &Config) -> std::net::SocketAddr {
    c.http.as_ref().unwrap().servers[0].listen[0].addr
}

/// Whether `root`/`alias` has variables is decided once, at load, for
/// every level (the static path reads the flag instead of the text).
#[test]
fn root_variables_flag_follows_the_merged_root() {
    let c = parse(&server(
        "root /srv/$host;\nlocation /a { }\nlocation /b { root /plain; }\nlocation ~ ^/c(.*) { alias /d$1; }",
    ));
    let s = only_server(&c);
    assert!(s.conf.root_has_vars);
    let flags: Vec<bool> = s.locations.iter().map(|l| l.conf.root_has_vars).collect();
    assert_eq!(flags, [true, false, true]);
}
