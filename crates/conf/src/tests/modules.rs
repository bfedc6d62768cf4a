//! The small stock modules' directives and the log times (messages as
//! nginx's, from its sources).

use std::time::Duration;

use super::*;

fn loc(c: &Config) -> &LocConf {
    &only_server(c).locations[0].conf
}

#[test]
fn access_log_flush_takes_milliseconds() {
    let c = parse(
        &server("location / { access_log /l test buffer=1k flush=100ms; }")
            .replace("http {\n", "http {\nlog_format test $uri;\n"),
    );
    assert_eq!(
        loc(&c).access_log[0].flush,
        Some(Duration::from_millis(100))
    );
    assert_eq!(
        err(&http("access_log /x combined buffer=1k flush=0;")),
        "invalid flush time \"0\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("access_log /x combined buffer=1k flush=1M;")),
        "invalid flush time \"1M\" in /p/conf/nginx.conf:3"
    );
}

#[test]
fn open_log_file_cache_forms() {
    let c = parse(&server(
        "open_log_file_cache max=3 inactive=20s valid=1m min_uses=2;\nlocation / { access_log /l/$host; }",
    ));
    let want = OpenLogFileCacheConf {
        max: 3,
        inactive: Duration::from_secs(20),
        min_uses: 2,
        valid: Duration::from_secs(60),
    };
    assert_eq!(loc(&c).open_log_file_cache, Some(want));
    assert_eq!(
        loc(&c).access_log[0].cache,
        Some(want),
        "stamped on the log"
    );
    // `off` at an inner level undoes an outer cache.
    let off = parse(&http(
        "open_log_file_cache max=1;\nserver {\nlocation / { open_log_file_cache off; }\nlocation /b { }\n}",
    ));
    let s = only_server(&off);
    assert_eq!(s.locations[0].conf.open_log_file_cache, None);
    assert!(s.locations[1].conf.open_log_file_cache.is_some());
    assert_eq!(
        err(&http("open_log_file_cache inactive=1s;")),
        "\"open_log_file_cache\" must have \"max\" parameter in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("open_log_file_cache max=x;")),
        "invalid \"open_log_file_cache\" parameter \"max=x\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http(
            "open_log_file_cache max=1;\nopen_log_file_cache max=2;"
        )),
        "\"open_log_file_cache\" directive is duplicate in /p/conf/nginx.conf:4"
    );
}

#[test]
fn valid_referers_errors() {
    assert_eq!(
        err(&server("valid_referers none;")),
        "the \"none\" or \"blocked\" referers are specified in the \"valid_referers\" directive without any valid referer in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("valid_referers ~;")),
        "empty regex in \"~\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("valid_referers a.*.com;")),
        "invalid hostname or wildcard \"a.*.com\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("valid_referers a.com A.com;")),
        "conflicting parameter \"A.com\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&http("valid_referers a.com;")),
        "\"valid_referers\" directive is not allowed here in /p/conf/nginx.conf:3"
    );
    let c = parse(&server("valid_referers none server_names;\nlocation / { }"));
    let r = loc(&c).referer.as_ref().expect("inherited");
    assert!(r.none && r.server_names);
}

#[test]
fn userid_settings_merge_as_nginx() {
    let c = parse(&server(
        "userid on; userid_name test; userid_path /p; userid_domain d.example;\n\
         userid_expires max; userid_mark A; userid_p3p none;\n\
         location / { userid_flags httponly samesite=lax; }",
    ));
    let u = &loc(&c).userid;
    assert_eq!(u.mode, UseridMode::On);
    assert_eq!(u.name, "test");
    assert_eq!(u.path, "; path=/p");
    assert_eq!(u.domain, "; domain=d.example");
    assert_eq!(u.expires, USERID_MAX_EXPIRES);
    assert_eq!(u.mark, b'A');
    assert!(u.flags.httponly && !u.flags.secure);
    assert_eq!(u.flags.samesite, Some("lax"));
    assert_eq!(
        err(&http("userid_mark ab;")),
        "\"userid_mark\" directive value must be \"off\" or a single letter, digit or \"=\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("userid maybe;")),
        "invalid value \"maybe\" in /p/conf/nginx.conf:3"
    );
    assert_eq!(
        err(&http("userid_expires 1x;")),
        "\"userid_expires\" directive invalid value in /p/conf/nginx.conf:3"
    );
}

#[test]
fn secure_link_and_handlers() {
    assert_eq!(
        err(&server("secure_link_secret s;\nsecure_link $arg_h;")),
        "\"secure_link_secret\" cannot be mixed with \"secure_link\" and \"secure_link_md5\" in /p/conf/nginx.conf:5"
    );
    let c = parse(&server(
        "secure_link $arg_h,$arg_e; secure_link_md5 \"$uri s\";\nlocation / { empty_gif; random_index on; }",
    ));
    let l = loc(&c);
    assert_eq!(l.secure_link.variable.as_deref(), Some("$arg_h,$arg_e"));
    assert!(l.empty_gif && l.random_index);
    assert!(!only_server(&c).conf.empty_gif);
    assert_eq!(
        err(&server("random_index on;")),
        "\"random_index\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
}
