//! The http2 module's directives: both ways of turning HTTP/2 on, the
//! settings, and the obsolete directives with nginx's warnings.

use super::*;

#[test]
fn http2_on_and_the_listen_parameter() {
    let c = parse(&http(
        "http2_max_concurrent_streams 7;\nserver { listen 8081 http2; http2_body_preread_size 1k; }\nserver { listen 8080; http2 on; }",
    ));
    let s = &c.http.as_ref().unwrap().servers;
    assert!(s[0].listen[0].http2 && !s[0].http2.on);
    assert_eq!(s[0].http2.max_concurrent_streams, 7);
    assert_eq!(s[0].http2.body_preread_size, 1024);
    assert!(!s[1].listen[0].http2 && s[1].http2.on);
    assert_eq!(s[1].http2.body_preread_size, 64 * 1024);
    assert_eq!(
        c.notices,
        [
            "the \"listen ... http2\" directive is deprecated, use the \"http2\" directive instead in /p/conf/nginx.conf:4"
        ]
    );
}

#[test]
fn obsolete_http2_directives_warn_with_their_successor() {
    let c = parse(&server(
        "http2_idle_timeout 3m;\nhttp2_max_requests 10;\nhttp2_max_field_size 4k;\nhttp2_max_header_size 16k;\nhttp2_recv_timeout 5s;",
    ));
    let want = [
        ("http2_idle_timeout", "keepalive_timeout"),
        ("http2_max_requests", "keepalive_requests"),
        ("http2_max_field_size", "large_client_header_buffers"),
        ("http2_max_header_size", "large_client_header_buffers"),
        ("http2_recv_timeout", "client_header_timeout"),
    ];
    assert_eq!(c.notices.len(), want.len(), "{:?}", c.notices);
    for ((old, new), n) in want.iter().zip(&c.notices) {
        assert!(
            n.starts_with(&format!(
                "the \"{old}\" directive is obsolete, use the \"{new}\" directive instead in"
            )),
            "{n}"
        );
    }
}

#[test]
fn http2_values_are_checked_as_nginx_checks_them() {
    assert_eq!(
        err(&server("location / { http2_chunk_size 0; }")),
        "the http2 chunk size cannot be zero in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("http2 maybe;")),
        "invalid value \"maybe\" in \"http2\" directive, it must be \"on\" or \"off\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("http2 on; http2 off;")),
        "\"http2\" directive is duplicate in /p/conf/nginx.conf:4"
    );
}
