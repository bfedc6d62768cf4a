//! limit_req, limit_conn, realip and geo: merged settings and nginx's
//! messages (each checked with `nginx -t`).

use super::*;

#[test]
fn limit_rules_merge_as_nginx() {
    let c = parse(&http(
        "limit_req_zone $binary_remote_addr zone=one:1m rate=30r/m;\n\
         limit_conn_zone $binary_remote_addr zone=addr:1m;\n\
         server {\nlimit_req zone=one burst=5 nodelay;\nlimit_req_status 429;\n\
         limit_conn addr 2;\nlocation /a { limit_req_dry_run on; }\n\
         location /b { limit_req zone=one delay=2; }\n}",
    ));
    let h = c.http.as_ref().unwrap();
    assert_eq!(h.limit_req_zones[0].rate, 500);
    assert_eq!(h.limit_req_zones[0].size, 1 << 20);
    let s = only_server(&c);
    let r = &s.conf.limit_req;
    assert_eq!((r.rules[0].burst, r.status, r.dry_run), (5000, 429, false));
    assert_eq!(r.rules[0].delay, crate::build::limit_req::NODELAY);
    let a = &s.locations[0].conf.limit_req;
    assert_eq!((a.rules.len(), a.status, a.dry_run), (1, 429, true));
    let b = &s.locations[1].conf.limit_req;
    assert_eq!(
        (b.rules[0].burst, b.rules[0].delay),
        (0, 2000),
        "its own rules"
    );
    assert_eq!(s.locations[1].conf.limit_conn.rules[0].conn, 2);
    assert!(!s.conf.fast_eligible, "a limited location takes no route");
}

#[test]
fn limit_messages_as_nginx() {
    let zone = "limit_req_zone $a zone=one:1m rate=1r/s;";
    for (text, want) in [
        (
            http("limit_req_zone $a zone=one:1m rate=2r/x;"),
            "invalid rate \"rate=2r/x\" in /p/conf/nginx.conf:3",
        ),
        (
            http("limit_req_zone $a zone=one:1k rate=2r/s;"),
            "zone \"zone=one:1k\" is too small in /p/conf/nginx.conf:3",
        ),
        (
            server("location / { limit_req zone=nope; }"),
            "zero size shared memory zone \"nope\"",
        ),
        (
            http(&format!(
                "{zone}\nserver {{ limit_req zone=one; limit_req zone=one; }}"
            )),
            "\"limit_req\" directive is duplicate in /p/conf/nginx.conf:4",
        ),
        (
            server("limit_req_status 302;"),
            "value must be between 400 and 599 in /p/conf/nginx.conf:4",
        ),
        (
            http(&format!("{zone}\nlimit_req_zone $b zone=one:1m rate=1r/s;")),
            "limit_req_zone \"one\" is already bound to key \"$a\" in /p/conf/nginx.conf:4",
        ),
        (
            server("limit_conn addr 0;"),
            "invalid number of connections \"0\" in /p/conf/nginx.conf:4",
        ),
        (
            server("limit_req_log_level crit;"),
            "invalid value \"crit\" in /p/conf/nginx.conf:4",
        ),
        (
            http("geo $g { ranges; 1.2.3.4 x; }"),
            "invalid range \"1.2.3.4\" in /p/conf/nginx.conf:3",
        ),
        (
            http("geo $g { 1.2.3.4/40 x; }"),
            "invalid network \"1.2.3.4/40\" in /p/conf/nginx.conf:3",
        ),
    ] {
        assert_eq!(err(&text), want, "{text}");
    }
}

#[test]
fn realip_settings_inherit_one_by_one() {
    let c = parse(&server(
        "set_real_ip_from 10.0.0.0/8;\nset_real_ip_from unix:;\nreal_ip_header X-Forwarded-For;\n\
         location /a { real_ip_recursive on; }\nlocation /b { real_ip_header X-Client; }",
    ));
    let s = only_server(&c);
    assert_eq!(s.conf.realip.from.len(), 2);
    assert_eq!(s.conf.realip.header, RealIpHeader::XForwardedFor);
    let a = &s.locations[0].conf.realip;
    assert!(a.recursive && a.header == RealIpHeader::XForwardedFor);
    let b = &s.locations[1].conf.realip;
    assert_eq!(b.header, RealIpHeader::Other("x-client".into()));
    assert_eq!(b.from.len(), 2);
}

#[test]
fn limit_except_settings_and_messages() {
    let c = parse(&server(
        "allow 10.0.0.1;\nlocation / { limit_except GET { deny all; } }\nlocation /b { }",
    ));
    let s = only_server(&c);
    let le = s.locations[0]
        .conf
        .limit_except
        .as_ref()
        .expect("limit_except");
    assert!(le.allows("GET") && le.allows("HEAD") && !le.allows("POST"));
    assert_eq!(le.conf.access.len(), 1, "the block's own rules");
    assert_eq!(s.locations[0].conf.access.len(), 1, "the location's own");
    assert!(s.locations[1].conf.limit_except.is_none());
    assert!(!s.locations[0].conf.fast_eligible);
    for (text, want) in [
        (
            server("location / { limit_except FOO { deny all; } }"),
            "invalid method \"FOO\" in /p/conf/nginx.conf:4",
        ),
        (
            server("location / { limit_except GET { deny all; } limit_except POST { } }"),
            "\"limit_except\" directive is duplicate in /p/conf/nginx.conf:4",
        ),
        (
            server("location / { limit_except GET { root /x; } }"),
            "\"root\" directive is not allowed here in /p/conf/nginx.conf:4",
        ),
    ] {
        assert_eq!(err(&text), want, "{text}");
    }
}
