//! The request-processing directives (build/request.rs): values, merging,
//! and nginx's messages (checked with nginx -t 1.22.1, except where the
//! comment says current nginx).

use super::*;

fn loc(body: &str) -> String {
    server(&format!("location / {{\n{body}\n}}"))
}

#[test]
fn messages_as_nginx() {
    let at = |n: u32| format!(" in {NAME}:{n}");
    for (body, want) in [
        ("disable_symlinks bogus;", "invalid parameter \"bogus\""),
        (
            "disable_symlinks on off;",
            "duplicate parameters \"on off\"",
        ),
        (
            "disable_symlinks off from=/x;",
            "\"from=\" cannot be used with \"off\" parameter",
        ),
        (
            "disable_symlinks from=/x;",
            "\"disable_symlinks\" must have \"off\", \"on\" or \"if_not_owner\" parameter",
        ),
        ("autoindex_format yaml;", "invalid value \"yaml\""),
        ("max_ranges -1;", "\"max_ranges\" directive invalid number"),
        (
            "merge_slashes on;",
            "\"merge_slashes\" directive is not allowed here",
        ),
    ] {
        assert_eq!(err(&loc(body)), format!("{want}{}", at(5)), "{body}");
    }
    for (body, want) in [
        (
            "charset_map a a { }",
            "\"charset_map\" between the same charsets \"a\" and \"a\"",
        ),
        ("charset_map a b { zz 41; }", "invalid value \"zz\""),
        ("charset_map a b { 41; }", "invalid parameters number"),
        (
            "charset_map a b { } charset_map b a { }",
            "duplicate \"charset_map\" between \"b\" and \"a\"",
        ),
        // Current nginx (1.22 takes both).
        (
            "charset_map utf-8 a { }",
            "\"charset_map\" with \"utf-8\" charset should be given in the second column",
        ),
        (
            "charset_map a utf-8 { 80 E2948080; }",
            "invalid value \"E2948080\"",
        ),
        (
            "charset_map a utf-8 { 80 F0908080; }",
            "invalid value \"F0908080\"",
        ),
    ] {
        assert_eq!(err(&http(body)), format!("{want}{}", at(3)), "{body}");
    }
}

#[test]
fn values_and_inheritance() {
    let c = parse(&http(
        "absolute_redirect off;\nmax_ranges 3;\ncharset_map koi8-r utf-8 { C1 D0B0; 41 42; }\n\
         server {\nmerge_slashes off;\nlog_not_found off;\n\
         location /i/ { internal; disable_symlinks if_not_owner from=$document_root; }\n\
         location /j/ { autoindex_format jsonp; port_in_redirect off; charset utf-8; source_charset koi8-r; }\n}",
    ));
    let s = only_server(&c);
    assert!(!s.merge_slashes);
    let (i, j) = (&s.locations[0].conf.request, &s.locations[1].conf.request);
    assert!(i.internal && !j.internal && !s.conf.request.internal);
    assert!(!i.absolute_redirect && !i.log_not_found && i.port_in_redirect);
    assert_eq!(i.max_ranges, Some(3));
    assert_eq!(i.disable_symlinks.mode, SymlinkMode::IfNotOwner);
    assert_eq!(i.disable_symlinks.from.as_deref(), Some("$document_root"));
    assert_eq!(j.autoindex_format, AutoindexFormat::Jsonp);
    assert!(!j.port_in_redirect && !j.server_name_in_redirect && j.msie_padding);
    assert_eq!(j.source_charset.as_deref(), Some("koi8-r"));
    let maps = &c.http.as_ref().unwrap().charset_maps;
    assert_eq!(maps.len(), 1);
    assert!(maps[0].to_utf8);
    assert_eq!(maps[0].forward[0xc1], vec![0xd0, 0xb0]);
    assert_eq!(maps[0].forward[0x41], vec![0x42]);
    assert_eq!(maps[0].forward[0x80], vec![b'?']);
    assert_eq!(maps[0].forward[0x20], vec![0x20]);
    let d = parse(&server("location / { }"));
    assert!(only_server(&d).merge_slashes);
    assert_eq!(only_server(&d).conf.request, RequestConf::default());
}

#[test]
fn recoding_needs_a_map() {
    assert_eq!(
        err(&server("charset a; source_charset b;")),
        "no \"charset_map\" between the charsets \"b\" and \"a\""
    );
    parse(&http(
        "charset_map b a { }\nserver { charset a; source_charset b; }",
    ));
    parse(&http(
        "charset_map a b { }\nserver { charset a; source_charset b; }",
    ));
    parse(&server("charset a; source_charset A;"));
}

/// Named groups of server-name and location regexes are variables
/// (nginx's `ngx_http_regex_compile`); other unknown names still are not.
#[test]
fn named_captures_are_variables() {
    parse(&http(
        "server { server_name ~^(?<sub>[a-z]+)\\.test$; root /srv/$sub; \
         location ~ ^/u/(?P<user>[a-z]+)$ { return 200 $user; } }",
    ));
    assert_eq!(
        err(&http(
            "server { server_name ~^(?<sub>.+)$; root /srv/$other; }"
        )),
        "unknown \"other\" variable"
    );
}
