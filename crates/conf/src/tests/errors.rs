//! Every error message, worded and positioned as nginx (checked with `nginx -t`).

use super::*;

#[test]
fn unknown_directive_with_suggestion() {
    assert_eq!(
        err("events {}\n\nWorker_processes 2;\n"),
        "unknown directive \"Worker_processes\" in /p/conf/nginx.conf:3; did you mean \"worker_processes\"?"
    );
    assert_eq!(
        err("events {}\nfrobnicate 1;\n"),
        "unknown directive \"frobnicate\" in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err(&http("gzip_typs text/css;")),
        "unknown directive \"gzip_typs\" in /p/conf/nginx.conf:3; did you mean \"gzip_types\"?"
    );
    // An empty quoted name is a directive name too.
    assert_eq!(
        err(&http("\"\" a;")),
        "unknown directive \"\" in /p/conf/nginx.conf:3"
    );
}

#[test]
fn unsupported_directive() {
    assert_eq!(
        err(&server("location / {\n slice 1m;\n}")),
        "\"slice\" directive is not supported by Peregrine yet in /p/conf/nginx.conf:5"
    );
    assert!(
        err(&server("location / { proxy_store on; }"))
            .starts_with("\"proxy_store\" directive is not supported")
    );
    // Inside `if`, a refused directive is refused by name too.
    assert!(
        err(&server("location / { if ($a) { grpc_pass x; } }"))
            .starts_with("\"grpc_pass\" directive is not supported")
    );
}

#[test]
fn not_allowed_here() {
    assert_eq!(
        err(&http("listen 80;")),
        "\"listen\" directive is not allowed here in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("location /a {}")),
        "\"location\" directive is not allowed here in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&server("alias /x;")),
        "\"alias\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("stub_status;")),
        "\"stub_status\" directive is not allowed here in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&server("log_format a x;")),
        "\"log_format\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("return 200;")),
        "\"return\" directive is not allowed here in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err("events {}\nsendfile on;\n"),
        "\"sendfile\" directive is not allowed here in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("events { http {} }\n"),
        "\"http\" directive is not allowed here in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err(&server("location / {\nclient_header_timeout 5;\n}")),
        "\"client_header_timeout\" directive is not allowed here in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&server("metrics on;")),
        "\"metrics\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
}

#[test]
fn invalid_number_of_arguments() {
    assert_eq!(
        err(&http("keepalive_timeout 1 2 3;")),
        "invalid number of arguments in \"keepalive_timeout\" directive in /p/conf/nginx.conf:3"
    );
    for (text, name) in [
        ("sendfile;", "sendfile"),
        ("sendfile on off;", "sendfile"),
        ("index;", "index"),
        (
            "large_client_header_buffers 4;",
            "large_client_header_buffers",
        ),
        ("log_format a;", "log_format"),
        ("error_page 404;", "error_page"),
        ("access_log;", "access_log"),
        ("types a {}", "types"),
    ] {
        assert_eq!(
            err(&http(text)),
            format!("invalid number of arguments in \"{name}\" directive in /p/conf/nginx.conf:3"),
            "{text}"
        );
    }
    assert_eq!(
        err(&server("location a b c {}")),
        "invalid number of arguments in \"location\" directive in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err("events x {}\n"),
        "invalid number of arguments in \"events\" directive in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err("user a b c;\nevents {}\n"),
        "invalid number of arguments in \"user\" directive in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err(&server("try_files /x;")),
        "invalid number of arguments in \"try_files\" directive in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("return 200 a b;")),
        "invalid number of arguments in \"return\" directive in /p/conf/nginx.conf:4"
    );
}

#[test]
fn structure_errors() {
    assert_eq!(
        err("events {}\nhttp {\nserver {\n"),
        "unexpected end of file, expecting \"}\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err("events {}\nhttp {\n}\n}\n"),
        "unexpected \"}\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err("events {}\nhttp {}\nworker_processes 2"),
        "unexpected end of file, expecting \";\" or \"}\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err("events {}\nhttp {server {listen 80 }}\n"),
        "unexpected \"}\" in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("events {}\nhttp {\ndefault_type {\n}\n}\n"),
        "directive \"default_type\" is not terminated by \";\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err("events {}\nhttp {\nserver;\n}\n"),
        "directive \"server\" has no opening \"{\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err("events {}\nhttp {\n;\n}\n"),
        "unexpected \";\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err("events {}\nhttp {\ndefault_type \"a\"b;\n}\n"),
        "unexpected \"b\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("types {\ntext/html html {}\n}")),
        "unexpected \"{\" in /p/conf/nginx.conf:4"
    );
}

#[test]
fn first_error_in_file_order_wins() {
    // nginx interprets as it reads: a directive error before a syntax error wins...
    assert_eq!(
        err("events {}\nhttp {\nsendfile maybe;\nserver {\n"),
        "invalid value \"maybe\" in \"sendfile\" directive, it must be \"on\" or \"off\" in /p/conf/nginx.conf:3"
    );
    // ...and a syntax error before a directive error wins.
    assert_eq!(
        err("events {}\nhttp {\n;\nsendfile maybe;\n}\n"),
        "unexpected \";\" in /p/conf/nginx.conf:3"
    );
    // A syntax error inside http comes before http's end-of-block checks...
    assert_eq!(
        err(&server("location /x {}\nlocation /x {}\n;")),
        "unexpected \";\" in /p/conf/nginx.conf:6"
    );
    // ...which come before anything after http.
    assert_eq!(
        err(&format!("{}}}\n", server("location /x {}\nlocation /x {}"))),
        "duplicate location \"/x\" in /p/conf/nginx.conf:5"
    );
}

#[test]
fn duplicates() {
    assert_eq!(
        err("events {\nworker_connections 1;\nworker_connections 2;\n}\n"),
        "\"worker_connections\" directive is duplicate in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err("events {}\nevents {}\n"),
        "\"events\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("events {}\nhttp {}\nhttp {}\n"),
        "\"http\" directive is duplicate in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("keepalive_timeout 1;\nkeepalive_timeout 2;")),
        "\"keepalive_timeout\" directive is duplicate in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("root /a;\nroot /b;")),
        "\"root\" directive is duplicate in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("default_type a;\ndefault_type b;")),
        "\"default_type\" directive is duplicate in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("open_file_cache off;\nopen_file_cache max=1;")),
        "\"open_file_cache\" directive is duplicate in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("try_files /x =404;\ntry_files /y /z;")),
        "\"try_files\" directive is duplicate in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err("daemon on; daemon off;\nevents {}\n"),
        "\"daemon\" directive is duplicate in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err("pid a; pid b;\nevents {}\n"),
        "\"pid\" directive is duplicate in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err("worker_processes 1;\nworker_processes 2;\nevents {}\n"),
        "\"worker_processes\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("events {multi_accept on; multi_accept on;}\n"),
        "\"multi_accept\" directive is duplicate in /p/conf/nginx.conf:1"
    );
    assert_eq!(
        err(&server("location /a {\nalias /x;\nalias /y;\n}")),
        "\"alias\" directive is duplicate in /p/conf/nginx.conf:6"
    );
}

#[test]
fn root_and_alias_conflicts() {
    assert_eq!(
        err(&server("location /a {\nroot /x;\nalias /y;\n}")),
        "\"alias\" directive is duplicate, \"root\" directive was specified earlier in /p/conf/nginx.conf:6"
    );
    assert_eq!(
        err(&server("location /a {\nalias /x;\nroot /y;\n}")),
        "\"root\" directive is duplicate, \"alias\" directive was specified earlier in /p/conf/nginx.conf:6"
    );
    assert_eq!(
        err(&server("location @n {\nalias /x;\n}")),
        "the \"alias\" directive cannot be used inside the named location in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&http("root $document_root;")),
        "the $document_root variable cannot be used in the \"root\" directive in /p/conf/nginx.conf:3"
    );
}

#[test]
fn events_section_required() {
    assert_eq!(err("http {}\n"), "no \"events\" section in configuration");
    assert_eq!(err(""), "no \"events\" section in configuration");
}

#[test]
fn location_errors() {
    assert_eq!(
        err("events {}\nhttp {\nserver\n{\nlocation /x\n{\n}\nlocation /x\n\n{\n}}}\n"),
        "duplicate location \"/x\" in /p/conf/nginx.conf:10"
    );
    assert_eq!(
        err(&server("location = /x {}\nlocation =/x {}")),
        "duplicate location \"/x\" in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&server("location /x {}\nlocation ^~ /x {}")),
        "duplicate location \"/x\" in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&server(
            "location /a {\nlocation /a/b {}\nlocation /a/b {}\n}"
        )),
        "duplicate location \"/a/b\" in /p/conf/nginx.conf:6"
    );
    let pfx = "/p/conf/nginx.conf:4";
    assert_eq!(
        err(&server("location @a { location /b {} }")),
        format!("location \"/b\" cannot be inside the named location \"@a\" in {pfx}")
    );
    assert_eq!(
        err(&server("location /a { location @b {} }")),
        format!("named location \"@b\" can be on the server level only in {pfx}")
    );
    assert_eq!(
        err(&server("location /a { location /b {} }")),
        format!("location \"/b\" is outside location \"/a\" in {pfx}")
    );
    assert_eq!(
        err(&server("location = /a { location /a/b {} }")),
        format!("location \"/a/b\" cannot be inside the exact location \"/a\" in {pfx}")
    );
    assert_eq!(
        err(&server("location ~ /a { location /b {} }")),
        format!("location \"/b\" is outside location \"/a\" in {pfx}")
    );
    assert_eq!(
        err(&server("location x /a {}")),
        format!("invalid location modifier \"x\" in {pfx}")
    );
    assert_eq!(
        err(&server("location ~ ( {}")),
        format!("pcre2_compile() failed: missing closing parenthesis in \"(\" in {pfx}")
    );
    // Allowed: same URI as exact and prefix, regex children anywhere, duplicate regexes.
    parse(&server(
        "location /a {} location = /a {} location ~ x {} location ~ x {}",
    ));
    parse(&server(
        "location /a { location ~ \\.php$ {} location /a/b { location /a/b/c {} } }",
    ));
}

#[test]
fn listen_errors() {
    let at = "/p/conf/nginx.conf:4";
    assert_eq!(
        err(&server("listen x:abc;")),
        format!("invalid port in \"x:abc\" of the \"listen\" directive in {at}")
    );
    assert_eq!(
        err(&server("listen 0;")),
        format!("invalid port in \"0\" of the \"listen\" directive in {at}")
    );
    assert_eq!(
        err(&server("listen 65536;")),
        format!("invalid port in \"65536\" of the \"listen\" directive in {at}")
    );
    assert_eq!(
        err(&server("listen abc;")),
        format!("host not found in \"abc\" of the \"listen\" directive in {at}")
    );
    assert_eq!(
        err(&server("listen 80 foo;")),
        format!("invalid parameter \"foo\" in {at}")
    );
    let p = "quic";
    assert_eq!(
        err(&server(&format!("listen 80 default_server {p};"))),
        format!(
            "the \"{p}\" parameter of the \"listen\" directive is not supported by Peregrine yet in {at}"
        )
    );

    assert_eq!(
        err(&http(
            "server { listen 8080; } server { listen 127.0.0.1:8080 deferred=off backlog=77; }"
        )),
        "socket options of \"listen 127.0.0.1:8080\" cannot apply: a wildcard \"listen\" \
         of port 8080 takes its connections in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&server("listen 80 deferred=yes;")),
        format!("invalid parameter \"deferred=yes\" in {at}")
    );
    assert_eq!(
        err(&server("listen 80 backlog=x;")),
        format!("invalid backlog \"backlog=x\" in {at}")
    );
    assert_eq!(
        err(&http(
            "server {listen 127.0.0.1:8080 default_server;}\nserver {\nlisten 127.0.0.1:8080 default_server;\n}"
        )),
        "a duplicate default server for 127.0.0.1:8080 in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&server("listen 127.0.0.1:8080; listen 127.0.0.1:8080;")),
        format!("a duplicate listen 127.0.0.1:8080 in {at}")
    );
    assert_eq!(
        err(&server("listen *:8080 default_server; listen 8080;")),
        format!("a duplicate listen 0.0.0.0:8080 in {at}")
    );
    assert_eq!(
        err(&http(
            "server {listen 8080 reuseport;}\nserver {listen 8080 reuseport;}"
        )),
        "duplicate listen options for 0.0.0.0:8080 in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("listen [::]:8080; listen [::]:8080;")),
        format!("a duplicate listen [::]:8080 in {at}")
    );
}

#[test]
fn value_errors_in_nginx_wording() {
    let at = "/p/conf/nginx.conf:3";
    assert_eq!(
        err(&http("keepalive_timeout abc;")),
        format!("\"keepalive_timeout\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("keepalive_timeout 10 1ms;")),
        format!("\"keepalive_timeout\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("sendfile yes;")),
        format!(
            "invalid value \"yes\" in \"sendfile\" directive, it must be \"on\" or \"off\" in {at}"
        )
    );
    assert_eq!(
        err(&http("client_max_body_size 1x;")),
        format!("\"client_max_body_size\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("send_timeout 1x;")),
        format!("\"send_timeout\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("keepalive_requests x;")),
        format!("\"keepalive_requests\" directive invalid number in {at}")
    );
    assert_eq!(
        err(&http("gzip_static x;")),
        format!("invalid value \"x\" in {at}")
    );
    assert_eq!(
        err(&http("gzip_comp_level 10;")),
        format!("value must be between 1 and 9 in {at}")
    );
    assert_eq!(
        err(&http("gzip_comp_level 0;")),
        format!("value must be between 1 and 9 in {at}")
    );
    assert_eq!(
        err(&http("brotli_comp_level 12;")),
        format!("value must be between 0 and 11 in {at}")
    );
    assert_eq!(
        err(&http("zstd_comp_level 23;")),
        format!("value must be between 1 and 22 in {at}")
    );
    assert_eq!(
        err(&http("gzip_http_version 2.0;")),
        format!("invalid value \"2.0\" in {at}")
    );
    assert_eq!(
        err(&http("gzip_proxied foo;")),
        format!("invalid value \"foo\" in {at}")
    );
    assert_eq!(
        err(&http("gzip_buffers 4 x;")),
        format!("\"gzip_buffers\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("open_file_cache foo;")),
        format!("invalid \"open_file_cache\" parameter \"foo\" in {at}")
    );
    assert_eq!(
        err(&http("open_file_cache max=0;")),
        format!("invalid \"open_file_cache\" parameter \"max=0\" in {at}")
    );
    assert_eq!(
        err(&http("open_file_cache inactive=10s;")),
        format!("\"open_file_cache\" must have the \"max\" parameter in {at}")
    );
    assert_eq!(
        err(&http("open_file_cache max=10 inactive=1x;")),
        format!("invalid \"open_file_cache\" parameter \"inactive=1x\" in {at}")
    );
    assert_eq!(
        err(&http("large_client_header_buffers 4 x;")),
        format!("\"large_client_header_buffers\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("large_client_header_buffers x 4k;")),
        format!("\"large_client_header_buffers\" directive invalid value in {at}")
    );
    assert_eq!(
        err(&http("memory_cache size=x;")),
        format!("invalid \"memory_cache\" parameter \"size=x\" in {at}")
    );
    assert_eq!(
        err(&http("memory_cache off size=1m;")),
        format!("invalid \"memory_cache\" parameter \"size=1m\" in {at}")
    );
    assert_eq!(
        err(&http("index a \"\";")),
        format!("index \"\" in \"index\" directive is invalid in {at}")
    );
    assert_eq!(
        err(&http("gzip_disable \"(\";")),
        format!("pcre2_compile() failed: missing closing parenthesis in \"(\" in {at}")
    );
}

#[test]
fn main_value_errors() {
    let at = "/p/conf/nginx.conf:1";
    assert_eq!(
        err("worker_processes abc;\nevents {}\n"),
        format!("\"worker_processes\" directive invalid value in {at}")
    );
    assert_eq!(
        err("events {worker_connections abc;}\n"),
        format!("invalid number \"abc\" in {at}")
    );
    assert_eq!(
        err("events {use foo;}\n"),
        format!("invalid event type \"foo\" in {at}")
    );
    assert_eq!(
        err("error_log stderr foo;\nevents {}\n"),
        format!("invalid log level \"foo\" in {at}")
    );
    assert_eq!(
        err("error_log stderr warn warn;\nevents {}\n"),
        format!("duplicate log level \"warn\" in {at}")
    );
    assert_eq!(
        err("worker_cpu_affinity 0x1;\nevents {}\n"),
        format!("invalid character \"x\" in \"worker_cpu_affinity\" in {at}")
    );
    assert_eq!(
        err("worker_cpu_affinity auto 0x1;\nevents {}\n"),
        format!("invalid character \"x\" in \"worker_cpu_affinity\" in {at}")
    );
    assert_eq!(
        err("worker_rlimit_nofile -1;\nevents {}\n"),
        format!("\"worker_rlimit_nofile\" directive invalid number in {at}")
    );
    assert_eq!(
        err("worker_shutdown_timeout x;\nevents {}\n"),
        format!("\"worker_shutdown_timeout\" directive invalid value in {at}")
    );
    assert_eq!(
        err("error_log syslog:server=127.0.0.1,foo;\nevents {}\n"),
        format!("unknown syslog parameter \"foo\" in {at}")
    );
    assert_eq!(
        err("error_log memory:0;\nevents {}\n"),
        format!("invalid buffer size \"0\" in {at}")
    );
    assert_eq!(
        err(&http(
            "access_log syslog:server=127.0.0.1 combined buffer=1k;"
        )),
        "logs to syslog cannot be buffered in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("access_log syslog:server=127.0.0.1 combined gzip;")),
        "logs to syslog cannot be buffered in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("access_log syslog:tag=x;")),
        "no syslog server specified in /p/conf/nginx.conf:3"
    );
}

#[test]
fn return_error_page_try_files_errors() {
    let at = "/p/conf/nginx.conf:4";
    assert_eq!(
        err(&server("return abc;")),
        format!("invalid return code \"abc\" in {at}")
    );
    assert_eq!(
        err(&server("return 1000;")),
        format!("invalid return code \"1000\" in {at}")
    );
    assert_eq!(
        err(&server("error_page 99 /x;")),
        format!("value \"99\" must be between 300 and 599 in {at}")
    );
    assert_eq!(
        err(&server("error_page 404 =x /x;")),
        format!("invalid value \"=x\" in {at}")
    );
    assert_eq!(
        err(&server("error_page 404 /x /y;")),
        format!("invalid value \"/x\" in {at}")
    );
    assert_eq!(
        err(&server("error_page abc /y;")),
        format!("invalid value \"abc\" in {at}")
    );
    assert_eq!(
        err(&server("try_files /x =abc;")),
        format!("invalid code \"=abc\" in {at}")
    );
}

#[test]
fn log_errors() {
    let at = "/p/conf/nginx.conf:3";
    assert_eq!(
        err(&http("access_log /x nosuch;")),
        format!("unknown log format \"nosuch\" in {at}")
    );
    assert_eq!(
        err(&http("access_log /x main;\nlog_format main x;")),
        format!("unknown log format \"main\" in {at}")
    );
    assert_eq!(
        err(&http("access_log /x combined foo=1;")),
        format!("invalid parameter \"foo=1\" in {at}")
    );
    assert_eq!(
        err(&http("access_log /x combined buffer=x;")),
        format!("invalid buffer size \"x\" in {at}")
    );
    assert_eq!(
        err(&http("access_log /x combined gzip=10;")),
        format!("invalid compression level \"10\" in {at}")
    );
    assert_eq!(
        err(&http("access_log off combined;")),
        format!("invalid parameter \"combined\" in {at}")
    );
    assert_eq!(
        err(&http("access_log /x combined flush=1s;")),
        format!("no buffer is defined for access_log \"/x\" in {at}")
    );
    assert_eq!(
        err(&http("log_format combined x;")),
        format!("duplicate \"log_format\" name \"combined\" in {at}")
    );
    assert_eq!(
        err(&http("log_format a x;\nlog_format a y;")),
        "duplicate \"log_format\" name \"a\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("log_format a escape=foo x;")),
        format!("unknown log format escaping \"foo\" in {at}")
    );
}

#[test]
fn seed_002_article_is_refused_at_nginx_line() {
    let text = include_str!("../../testdata/seed-002-article.conf");
    let e = parse_str(text, "/p/conf/nginx.conf").expect_err("must be refused");
    // `nginx -t` says: unknown directive "Location" in .../seed2.conf:49
    assert_eq!(
        e.to_string(),
        "unknown directive \"Location\" in /p/conf/nginx.conf:49; did you mean \"location\"?"
    );
    assert_eq!(e.span.as_ref().map(|s| s.line), Some(49));
}

/// A second value at one level is "duplicate" before it is read, as nginx's
/// slot functions check (found by the differential check,
/// examples/nginx_diff.rs; each case checked with nginx -t 1.22.1).
#[test]
fn duplicate_is_reported_before_the_value() {
    assert_eq!(
        err("worker_shutdown_timeout 1s;\nworker_shutdown_timeout x;\nevents {}\n"),
        "\"worker_shutdown_timeout\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("worker_processes 1;\nworker_processes x;\nevents {}\n"),
        "\"worker_processes\" directive is duplicate in /p/conf/nginx.conf:2"
    );
    assert_eq!(
        err("events {\nuse epoll;\nuse x;\n}\n"),
        "\"use\" directive is duplicate in /p/conf/nginx.conf:3"
    );
    for (first, second) in [
        ("sendfile on", "sendfile x"),
        ("charset utf-8", "charset x"),
        ("gzip_http_version 1.0", "gzip_http_version x"),
        ("client_max_body_size 1", "client_max_body_size x"),
        ("keepalive_requests 1", "keepalive_requests x"),
    ] {
        let name = first.split(' ').next().unwrap_or_default();
        let text = http(&format!("{first};\n{second};"));
        assert_eq!(
            err(&text),
            format!("\"{name}\" directive is duplicate in /p/conf/nginx.conf:4"),
            "{text}"
        );
    }
}

#[test]
fn resolver_errors_as_nginx() {
    let at = "/p/conf/nginx.conf:3";
    let cases = [
        (
            "resolver 127.0.0.1 valid=x;",
            "invalid parameter: valid=x".to_string(),
        ),
        (
            "resolver 127.0.0.1:0;",
            "invalid port in resolver \"127.0.0.1:0\"".into(),
        ),
        (
            "resolver 127.0.0.1:99999;",
            "invalid port in resolver \"127.0.0.1:99999\"".into(),
        ),
        (
            "resolver no.such.host.invalid;",
            "host not found in resolver \"no.such.host.invalid\"".into(),
        ),
        (
            "resolver 127.0.0.1 ipv4=off ipv6=off;",
            "\"ipv4\" and \"ipv6\" cannot both be \"off\"".into(),
        ),
        (
            "resolver 127.0.0.1; resolver 127.0.0.2;",
            "\"resolver\" directive is duplicate".into(),
        ),
        (
            "resolver_timeout abc;",
            "\"resolver_timeout\" directive invalid value".into(),
        ),
    ];
    for (d, want) in cases {
        assert_eq!(err(&http(d)), format!("{want} in {at}"), "{d}");
    }
}
