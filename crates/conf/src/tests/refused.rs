//! nginx's directives Peregrine does not implement: refused by name once
//! nginx's own checks (context, block, arguments) pass, and the tuning hints
//! and `load_module` that come with nginx's full directive list. Messages of
//! the checks are nginx's (`nginx -t` 1.22.1 gives the same for these).

use super::*;

#[test]
fn well_formed_nginx_directives_are_refused_by_name() {
    for (text, name, line) in [
        (server("location / { slice 1m; }"), "slice", 4),
        (server("location / { mirror /m; }"), "mirror", 4),
        (server("http3 on;"), "http3", 4),
        (
            server("location / { xslt_stylesheet a.xsl; }"),
            "xslt_stylesheet",
            4,
        ),
        (server("location / { dav_methods PUT; }"), "dav_methods", 4),
        (
            "events {}\nstream { server { listen 1; ssl_preread on; } }\n".into(),
            "ssl_preread",
            2,
        ),
        (
            "events {}\nmail { server { listen 1; protocol imap; proxy_smtp_auth on; } }\n".into(),
            "proxy_smtp_auth",
            2,
        ),
        (
            server("location / { image_filter resize 10 10; }"),
            "image_filter",
            4,
        ),
        ("ssl_engine x;\nevents {}\n".into(), "ssl_engine", 1),
    ] {
        assert_eq!(
            err(&text),
            format!(
                "\"{name}\" directive is not supported by Peregrine yet in /p/conf/nginx.conf:{line}"
            ),
        );
    }
}

/// nginx's order: context, then `;` or `{`, then the number of arguments;
/// "not supported" only for what nginx would accept.
#[test]
fn malformed_nginx_directives_get_nginx_messages() {
    assert_eq!(
        err(&server("proxy_pass http://x;")),
        "\"proxy_pass\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err("events {}\nhttp { stream {} }\n"),
        "\"stream\" directive is not allowed here in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err(&http("map $a $b;")),
        "directive \"map\" has no opening \"{\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&server("location / { deny all { } }")),
        "directive \"deny\" is not terminated by \";\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("location / { deny; }")),
        "invalid number of arguments in \"deny\" directive in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("ssl_session_cache a b c;")),
        "invalid number of arguments in \"ssl_session_cache\" directive in /p/conf/nginx.conf:3"
    );
    // A name in two modules: `server` with arguments is upstream's, and
    // upstream's context is not one Peregrine is in.
    assert_eq!(
        err(&server("server 127.0.0.1;")),
        "\"server\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
}

#[test]
fn misspelt_nginx_directives_suggest_them() {
    assert_eq!(
        err(&server("location / { proxy_pas http://x; }")),
        "unknown directive \"proxy_pas\" in /p/conf/nginx.conf:4; did you mean \"proxy_pass\"?"
    );
}

#[test]
fn new_hints_are_accepted_with_notices() {
    let c = parse(&format!(
        "master_process off;\npcre_jit on;\nenv PATH;\nenv A=b;\nthread_pool p threads=4 max_queue=0;\n\
         worker_rlimit_core 1g;\nlock_file logs/l;\nworking_directory /tmp;\ndebug_points abort;\n{}",
        http(
            "map_hash_max_size 4096;\nmap_hash_bucket_size 64;\naio threads=p;\ndirectio 4m;\n\
             output_buffers 2 32k;\npostpone_output 1460;\ngzip_window 8k;\ngzip_hash 128k;\n\
             keepalive_min_timeout 5s;"
        )
    )
    .replace("events {}", "events { epoll_events 512; debug_connection 127.0.0.1; debug_connection ::1; }"));
    for name in [
        "master_process",
        "env",
        "thread_pool",
        "map_hash_max_size",
        "aio",
        "gzip_hash",
        "epoll_events",
        "debug_connection",
    ] {
        assert!(
            c.notices
                .iter()
                .any(|n| n.starts_with(&format!("\"{name}\" is an nginx tuning hint"))),
            "{name}: {:?}",
            c.notices
        );
    }
}

#[test]
fn new_hints_check_values_as_nginx() {
    let main = |line: &str| err(&format!("{line}\nevents {{}}\n"));
    assert_eq!(
        main("master_process maybe;"),
        "invalid value \"maybe\" in \"master_process\" directive, it must be \"on\" or \"off\" in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        main("debug_points x;"),
        "invalid value \"x\" in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        main("thread_pool p max_queue=1;"),
        "\"thread_pool\" must have \"threads\" parameter in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        main("thread_pool p threads=0;"),
        "invalid threads value \"threads=0\" in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        main("worker_rlimit_core lots;"),
        "\"worker_rlimit_core\" directive invalid value in /p/conf/nginx.conf:1"
    );
    assert!(main("env TZ=UTC;").starts_with("\"env TZ=...\" is not supported by Peregrine yet"));
    // Repeatable ones are not duplicates; the others are.
    parse("env A;\nenv B;\nthread_pool a threads=1;\nthread_pool b threads=1;\nevents {}\n");
    assert_eq!(
        main("pcre_jit on;\npcre_jit on;"),
        "\"pcre_jit\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err(&http("gzip_window 1000;")),
        "\"gzip_window\" directive must be 512, 1k, 2k, 4k, 8k, 16k, or 32k in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("gzip_hash 256;")),
        "\"gzip_hash\" directive must be 512, 1k, 2k, 4k, 8k, 16k, 32k, 64k, or 128k in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("aio sometimes;")),
        "\"aio\" directive invalid value in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("output_buffers 0 32k;")),
        "\"output_buffers\" directive invalid value in /p/conf/nginx.conf:3"
    );
}

#[test]
fn load_module_of_built_in_and_stock_modules() {
    let c = parse(
        "load_module modules/ngx_http_gzip_static_module.so;\n\
         load_module /usr/lib/nginx/modules/ngx_stream_module.so;\n\
         load_module modules/ngx_http_brotli_filter_module.so;\nevents {}\n",
    );
    assert_eq!(
        c.notices,
        [
            "module \"ngx_http_gzip_static_module\" is built into Peregrine in /p/conf/nginx.conf:1",
            "module \"ngx_stream_module\" is built into Peregrine in /p/conf/nginx.conf:2",
            "module \"ngx_http_brotli_filter_module\" is built into Peregrine in /p/conf/nginx.conf:3",
        ]
    );
    assert_eq!(
        err("load_module modules/ngx_http_lua_module.so;\nevents {}\n"),
        "module \"ngx_http_lua_module\" is not supported by Peregrine yet in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err("events { load_module x.so; }\n"),
        "\"load_module\" directive is not allowed here in /p/conf/nginx.conf:1"
    );
}
