//! nginx's inheritance: http → server → location → nested location, a value
//! set at a level overriding the inherited one.

use std::time::Duration;

use super::*;

#[test]
fn values_flow_down_unless_overridden() {
    let c = parse(&http(
        "sendfile on;\nkeepalive_timeout 30;\ngzip on;\nroot /srv/http;\nindex h.html;\nerror_page 404 /h404;\n\
         server {\n  keepalive_timeout 10;\n  root /srv/server;\n\
           location /a {\n    sendfile off;\n    location /a/b { gzip off; }\n    location /a/c { root /srv/c; index c.html; }\n  }\n\
           location /d { error_page 500 /d500; }\n}",
    ));
    let s = only_server(&c);
    assert!(s.conf.sendfile && s.conf.gzip.on);
    assert_eq!(s.conf.keepalive_timeout, Duration::from_secs(10));
    assert_eq!(s.conf.root, DocRoot::Root("/srv/server".into()));
    let a = &s.locations[0];
    assert!(!a.conf.sendfile && a.conf.gzip.on);
    assert_eq!(a.conf.keepalive_timeout, Duration::from_secs(10));
    assert_eq!(a.conf.root, DocRoot::Root("/srv/server".into()));
    assert_eq!(a.conf.index, vec!["h.html"]);
    assert_eq!(a.conf.error_pages[0].target, "/h404");
    let b = &a.locations[0];
    assert!(!b.conf.sendfile && !b.conf.gzip.on);
    let cc = &a.locations[1];
    assert_eq!(cc.conf.root, DocRoot::Root("/srv/c".into()));
    assert_eq!(cc.conf.index, vec!["c.html"]);
    assert!(!cc.conf.sendfile);
    // error_page at a level replaces the inherited ones.
    let d = &s.locations[1];
    assert_eq!(d.conf.error_pages.len(), 1);
    assert_eq!(d.conf.error_pages[0].target, "/d500");
}

#[test]
fn access_log_replaces_inherited_ones() {
    let c = parse(&http(
        "access_log logs/h1.log;\naccess_log logs/h2.log;\nserver {\n  location /own { access_log logs/own.log; }\n  location /inh {}\n  location /off { access_log off; location /off/in {} }\n}",
    ));
    let s = only_server(&c);
    assert_eq!(s.conf.access_log.len(), 2);
    assert_eq!(s.locations[0].conf.access_log.len(), 1);
    assert_eq!(
        s.locations[0].conf.access_log[0].target,
        LogTarget::File("/p/conf/logs/own.log".into())
    );
    assert_eq!(s.locations[1].conf.access_log.len(), 2);
    assert!(s.locations[2].conf.access_log.is_empty());
    assert!(s.locations[2].locations[0].conf.access_log.is_empty());
    // `off` with other logs at the same level: off wins, as in nginx.
    let c = parse(&http("server { access_log logs/x.log; access_log off; }"));
    assert!(only_server(&c).conf.access_log.is_empty());
}

#[test]
fn block_local_settings_are_not_inherited() {
    let c = parse(&server(
        "return 301 https://x/;\ntry_files $uri =404;\nlocation /s { stub_status; location /s/in {} }\nlocation /m { metrics on; location /m/in {} }",
    ));
    let s = only_server(&c);
    assert!(s.conf.rewrite.script.is_some());
    assert!(!s.conf.try_files.is_empty());
    let st = &s.locations[0];
    assert!(st.conf.rewrite.script.is_none() && st.conf.try_files.is_empty());
    assert!(st.conf.stub_status && !st.locations[0].conf.stub_status);
    assert!(s.locations[1].conf.metrics && !s.locations[1].locations[0].conf.metrics);
}

#[test]
fn alias_is_inherited_by_nested_locations() {
    let c = parse(&server(
        "location /a/ { alias /srv/x/; location ~ \\.txt$ {} }",
    ));
    let a = &only_server(&c).locations[0];
    assert_eq!(a.locations[0].conf.root, DocRoot::Alias("/srv/x/".into()));
}

#[test]
fn types_replace_and_inherit() {
    let c = parse(&http(
        "types { text/html html; text/css css; }\nserver {\n location /t { types { application/x-foo foo; } }\n location /i {}\n}",
    ));
    let s = only_server(&c);
    assert_eq!(s.conf.types.by_ext.len(), 2);
    assert_eq!(s.locations[0].conf.types.by_ext.len(), 1);
    assert!(
        std::sync::Arc::ptr_eq(&s.locations[1].conf.types, &s.conf.types)
            || s.locations[1].conf.types == s.conf.types
    );
}

#[test]
fn server_level_settings_inherit_from_http() {
    let c = parse(&http(
        "client_header_timeout 5s;\nlarge_client_header_buffers 2 1k;\nserver { client_header_buffer_size 2k; }\nserver { client_header_timeout 7; }",
    ));
    let servers = &c.http.as_ref().unwrap().servers;
    assert_eq!(servers[0].client_header_timeout, Duration::from_secs(5));
    assert_eq!(servers[0].client_header_buffer_size, 2048);
    assert_eq!(servers[0].large_client_header_buffers, (2, 1024));
    assert_eq!(servers[1].client_header_timeout, Duration::from_secs(7));
    assert_eq!(servers[1].client_header_buffer_size, 1024);
}

#[test]
fn compression_fields_inherit_separately() {
    let c = parse(&http(
        "gzip on;\nbrotli_comp_level 4;\nserver { gzip_comp_level 5; brotli on; location /x { gzip_types text/css; } }",
    ));
    let s = only_server(&c);
    let x = &s.locations[0].conf;
    assert!(x.gzip.on);
    assert_eq!(x.gzip.comp_level, 5);
    assert_eq!(x.gzip.types, vec!["text/html", "text/css"]);
    assert!(x.brotli.on);
    assert_eq!(x.brotli.comp_level, 4);
}

/// `ssl_protocols` twice at one level adds up, as nginx's bitmask slot
/// does (certbot's included options file beside a server's own line).
#[test]
fn ssl_protocols_twice_add_up() {
    let c = parse(&server(
        "ssl_protocols TLSv1.3;\n ssl_protocols TLSv1.2 TLSv1.3;",
    ));
    assert_eq!(only_server(&c).ssl.protocols, ["TLSv1.3", "TLSv1.2"]);
}

/// The deprecated `ssl on;` makes TLS the addresses its server is the
/// default server of, and no others (nginx reads the default server's
/// flag per connection): a port where another server is the default
/// stays plain.
#[test]
fn ssl_on_applies_where_its_server_is_the_default() {
    let c = parse(&http(
        "server { listen 80; server_name a; }\n\
         server { ssl on; listen 80; listen 8443; server_name b;\n\
           ssl_certificate c.pem; ssl_certificate_key k.pem; }",
    ));
    let servers = &c.http.as_ref().unwrap().servers;
    let ssl: Vec<(u16, bool)> = servers[1]
        .listen
        .iter()
        .map(|l| (l.addr.port(), l.ssl))
        .collect();
    assert_eq!(ssl, [(80, false), (8443, true)]);
}
