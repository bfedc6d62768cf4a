//! Regular expressions in locations and server names are PCRE's, as in
//! nginx: look-ahead, look-behind, back-references, named groups in both
//! spellings, possessive quantifiers; `~*` caseless; numbered captures in
//! `return` (named groups number as the others; `$name` variables for them
//! come with the variable registry, issue 17).

use crate::support::{Prefix, Server, conf_with};

const LOCATIONS: &str = r#"
    server {
        listen 127.0.0.1:PORT;
        location ~ ^/(?!api/)(?<page>[a-z]+)$ { return 200 "page $1"; }
        location ~ ^/api/(?P<ver>v\d++)/(\w+)/\2$ { return 200 "twice $1 $2"; }
        location ~ (?<!\.min)\.js$ { return 200 "js $uri"; }
        location ~* \.GIF$ { return 200 "gif $uri"; }
        location / { return 200 "fallback"; }
    }
"#;

#[test]
fn pcre_constructs_in_locations() {
    let server = Server::start(Prefix::new("regex"), &conf_with(LOCATIONS));
    let body = |path: &str| {
        let r = server.get(path);
        assert_eq!(r.status, 200, "{path}");
        r.body_str().to_string()
    };
    assert_eq!(body("/about"), "page about");
    assert_eq!(body("/api"), "page api");
    assert_eq!(body("/api/v2/x/x"), "twice v2 x");
    assert_eq!(body("/api/v2/x/y"), "fallback");
    assert_eq!(body("/app.js"), "js /app.js");
    assert_eq!(body("/app.min.js"), "fallback");
    assert_eq!(body("/a.gif"), "gif /a.gif");
}

#[test]
fn a_bad_regex_is_pcre2s_error_at_load() {
    let prefix = Prefix::new("regex-bad");
    prefix.conf(&conf_with(
        "server { listen 127.0.0.1:1; location ~ ^/(a { } }",
    ));
    let out = prefix.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pcre2_compile() failed: missing closing parenthesis in \"^/(a\" in "),
        "{err}"
    );
}
