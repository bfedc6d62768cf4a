//! The upstream cache's configuration: `proxy_cache_path` and its
//! messages, a location's cache settings and their inheritance. Each
//! message checked with `nginx -t` (1.22.1).

use std::time::Duration;

use super::*;
use crate::cache::CacheZoneRef;

const PATH: &str = "proxy_cache_path /c levels=1:2 keys_zone=one:1m inactive=1h max_size=1g;";

#[test]
fn a_cache_path_is_read_with_nginx_defaults() {
    let c = parse(&http(&format!(
        "{PATH}\nproxy_cache_path /d keys_zone=two:32k use_temp_path=off \
         loader_threshold=300 manager_files=10;"
    )));
    let h = c.http.as_ref().unwrap();
    let one = &h.cache_paths[0];
    assert_eq!((one.name.as_str(), one.size), ("one", 1 << 20));
    assert_eq!(one.levels, vec![1, 2]);
    assert_eq!(one.inactive, Duration::from_secs(3600));
    assert_eq!(one.max_size, Some(1 << 30));
    let two = &h.cache_paths[1];
    assert_eq!(two.inactive, Duration::from_secs(600));
    assert!(two.levels.is_empty() && !two.use_temp_path);
}

#[test]
fn cache_path_messages_are_nginx_words() {
    for (body, want) in [
        (
            "proxy_cache_path /c levels=1:3 keys_zone=a:1m;",
            "invalid \"levels\" \"levels=1:3\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c levels=1:2:2:2 keys_zone=a:1m;",
            "invalid \"levels\" \"levels=1:2:2:2\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c keys_zone=a;",
            "invalid keys zone size \"keys_zone=a\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c keys_zone=a:1k;",
            "keys zone \"keys_zone=a:1k\" is too small in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c keys_zone=a:1m purger=on;",
            "invalid parameter \"purger=on\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c keys_zone=a:1m inactive=x;",
            "invalid inactive value \"inactive=x\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c keys_zone=a:1m use_temp_path=maybe;",
            "invalid use_temp_path value \"use_temp_path=maybe\", it must be \"on\" or \"off\" \
             in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_path /c keys_zone=a:1m;\nproxy_cache_path /c keys_zone=b:1m;",
            "the same path name \"/c\" used in /p/conf/nginx.conf:3 and in /p/conf/nginx.conf:4",
        ),
        (
            "proxy_cache_path /c keys_zone=a:1m;\nproxy_cache_path /d keys_zone=a:1m;",
            "duplicate zone \"a\" in /p/conf/nginx.conf:4",
        ),
        (
            "proxy_cache_valid 20x 1m;",
            "invalid status \"20x\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_use_stale foo;",
            "invalid value \"foo\" in /p/conf/nginx.conf:3",
        ),
        (
            "proxy_cache_methods GET FOO;",
            "invalid value \"FOO\" in /p/conf/nginx.conf:3",
        ),
    ] {
        assert_eq!(err(&http(body)), want, "{body}");
    }
    assert_eq!(
        err(&http("proxy_cache_path /c;")),
        "invalid number of arguments in \"proxy_cache_path\" directive in /p/conf/nginx.conf:3"
    );
}

#[test]
fn a_zone_must_be_defined_by_its_own_module() {
    assert_eq!(
        err(&http(&format!(
            "{PATH}\nserver {{ location / {{ proxy_pass http://127.0.0.1:1; proxy_cache b; }} }}"
        ))),
        "\"proxy_cache\" zone \"b\" is unknown in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("location / { proxy_cache one; proxy_cache one; }")),
        "\"proxy_cache\" directive is duplicate in /p/conf/nginx.conf:4"
    );
    assert!(
        err(&http(&format!(
            "{PATH}\nserver {{ location / {{ fastcgi_pass 127.0.0.1:1; fastcgi_cache one; }} }}"
        )))
        .starts_with("the shared memory zone \"one\" is already declared for a different use")
    );
}

#[test]
fn location_settings_inherit_and_lists_replace() {
    let c = parse(&http(&format!(
        "{PATH}\nproxy_cache one;\nproxy_cache_valid 200 1m;\nproxy_cache_bypass $a;\n\
         server {{ location / {{ proxy_cache_valid 5m; proxy_cache_lock on; }} \
         location /off {{ proxy_cache off; }} }}"
    )));
    let s = only_server(&c);
    let l = &s.locations[0].conf.proxy.cache;
    assert!(matches!(&l.zone, CacheZoneRef::Zone(n, _) if n == "one"));
    assert_eq!(l.valid.len(), 3);
    assert_eq!(l.valid[0], (200, Duration::from_secs(300)));
    assert_eq!(l.bypass.as_ref(), &["$a".to_string()]);
    assert!(l.lock && l.convert_head && l.min_uses == 1);
    assert_eq!(s.locations[1].conf.proxy.cache.zone, CacheZoneRef::Off);
}
