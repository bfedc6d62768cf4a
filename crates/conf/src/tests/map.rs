//! `map`: the table read, and every refusal in nginx's words (checked with
//! Debian's `nginx -t`).

use super::*;

#[test]
fn the_table_as_read() {
    let c = parse(&http(
        "map $http_host $m {\n  hostnames;\n  volatile;\n  default d;\n  Exact.COM e;\n  \
         .example.com w;\n  www.test.* t;\n  ~^(?<sub>[a-z]+)\\.x$ \"$sub\";\n  \\hostnames h;\n}",
    ));
    let m = &c.http.as_ref().unwrap().maps[0];
    assert_eq!((m.source.as_str(), m.var.as_str()), ("$http_host", "m"));
    assert!(m.hostnames && m.volatile);
    assert_eq!(m.default.as_deref(), Some("d"));
    assert_eq!(m.exact.get("exact.com").map(String::as_str), Some("e"));
    assert_eq!(m.exact.get("hostnames").map(String::as_str), Some("h"));
    assert_eq!(
        m.wildcards,
        [
            (
                MapWildcard::Head {
                    suffix: ".example.com".into(),
                    bare: true
                },
                "w".to_string()
            ),
            (MapWildcard::Tail("www.test.".into()), "t".to_string()),
        ]
    );
    assert_eq!(m.regexes.len(), 1);
}

#[test]
fn the_variable_and_named_groups_are_known() {
    // `$m` and the regex's `$sub` are variables once the map defines them.
    parse(&http(
        "map $uri $m { ~^/(?<sub>.+)$ 1; }\nserver { location / { return 200 \"$m $sub\"; } }",
    ));
}

#[test]
fn refusals_as_nginx() {
    for (body, want) in [
        ("map $a b { }", "invalid variable name \"b\""),
        (
            "map $uri $b { default 1; default 2; }",
            "duplicate default map parameter",
        ),
        (
            "map $uri $b { k 1 2; }",
            "invalid number of the map parameters",
        ),
        ("map $uri $b { k 1; k 2; }", "conflicting parameter \"k\""),
        ("map $uri $b { K 1; k 2; }", "conflicting parameter \"k\""),
        (
            "map $uri $b { hostnames; *.a.* 1; }",
            "invalid hostname or wildcard \"*.a.*\"",
        ),
        (
            "map $uri $b { hostnames; .x.com 1; *.x.com 2; }",
            "conflicting parameter \"*.x.com\"",
        ),
        (
            "map $uri $b { ~(unclosed 1; }",
            "pcre2_compile() failed: missing closing parenthesis in \"(unclosed\"",
        ),
        ("map $uri $b { k { } }", "unexpected \"{\""),
    ] {
        assert_eq!(
            err(&http(body)),
            format!("{want} in /p/conf/nginx.conf:3"),
            "{body}"
        );
    }
    assert_eq!(
        err(&http("map $uri $b { k $nope; }")),
        "unknown \"nope\" variable"
    );
}
