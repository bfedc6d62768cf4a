//! The rewrite module: `rewrite` (flags, captures, arguments, redirects),
//! `if` (every operator; the block's settings), `set`, `break`, `return`
//! in script order, `error_page` to a named location, the internal
//! redirect cycle's 500. Each test runs against nginx too
//! (`E2E_SERVER=nginx`).

use crate::support::{Prefix, Server, conf_with, wait_for_lines};

fn site(tag: &str, server_body: &str) -> Server {
    let p = Prefix::new(tag);
    p.write("html/file.txt", "file");
    p.write("html/new/page.txt", "new page");
    p.write("html/other/file.txt", "other root");
    p.write("html/dir/index.html", "dir index");
    let conf = conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n        root html;\n{server_body}\n    }}"
    ));
    Server::start(p, &conf)
}

#[test]
fn rewrite_last_break_and_captures() {
    let s = site(
        "rw-flags",
        r#"
        location /old/ {
            rewrite ^/old/(.*)\.htm$ /new/$1.txt last;
            return 404;
        }
        location /new/ { }
        location /brk/ {
            rewrite ^/brk/(?<name>[a-z]+)$ /new/$name.txt break;
            return 410;
        }
        location /chain/ {
            rewrite ^/chain/a$ /chain/b;
            rewrite ^/chain/b$ /chain/c;
            return 200 "uri=$uri";
        }
        location /args/ {
            rewrite ^/args/(\w+)$ /echo/?p=$1 last;
        }
        location /drop/ {
            rewrite ^ /echo/? last;
        }
        location /echo/ {
            return 200 "args=$args arg_p=$arg_p uri=$uri";
        }
        "#,
    );
    let r = s.get("/old/page.htm");
    assert_eq!((r.status, r.body_str()), (200, "new page"));
    // `break` stays in the location: its content phase serves the new URI.
    let r = s.get("/brk/page");
    assert_eq!((r.status, r.body_str()), (200, "new page"));
    // Without a flag the script goes on with the new URI.
    let r = s.get("/chain/a");
    assert_eq!((r.status, r.body_str()), (200, "uri=/chain/c"));
    let r = s.get("/args/xy?q=1");
    assert_eq!(r.body_str(), "args=p=xy&q=1 arg_p=xy uri=/echo/");
    let r = s.get("/drop/x?q=1");
    assert_eq!(r.body_str(), "args= arg_p= uri=/echo/");
}

#[test]
fn rewrite_redirects() {
    let s = site(
        "rw-redirect",
        r#"
        location /p { rewrite ^/p(.*)$ /dest$1 permanent; }
        location /t { rewrite ^ /dest redirect; }
        location /abs { rewrite ^ http://example.com/x?a=1; }
        location /q { rewrite ^ http://example.com/y?; }
        "#,
    );
    let r = s.get("/p/a");
    assert_eq!(r.status, 301);
    let loc = r.header("Location").unwrap();
    assert!(loc.ends_with("/dest/a"), "{loc}");
    assert!(loc.starts_with("http://localhost:"), "{loc}");
    let r = s.get("/t?z=9");
    assert_eq!(r.status, 302);
    assert!(r.header("Location").unwrap().ends_with("/dest?z=9"));
    let r = s.get("/abs?b=2");
    assert_eq!(r.status, 302);
    assert_eq!(r.header("Location"), Some("http://example.com/x?a=1&b=2"));
    let r = s.get("/q?b=2");
    assert_eq!(r.header("Location"), Some("http://example.com/y"));
}

#[test]
fn if_operators() {
    let s = site(
        "rw-if",
        r#"
        location /var { if ($arg_c) { return 204; } return 200 no; }
        location /eq { if ($arg_c = "a b") { return 204; } return 200 no; }
        location /ne { if ($arg_c != x) { return 204; } return 200 no; }
        location /re { if ($arg_c ~ ^f(o+)$) { return 200 "o=$1"; } return 200 no; }
        location /rei { if ($arg_c ~* ^FOO$) { return 204; } return 200 no; }
        location /nre { if ($arg_c !~ foo) { return 204; } return 200 no; }
        location /named { if ($arg_c ~ ^(?<who>\w+)-) { return 200 "who=$who"; } return 200 no; }
        location /file { if (-f $document_root/$arg_c) { return 204; } return 200 no; }
        location /nofile { if (!-e $document_root/$arg_c) { return 204; } return 200 no; }
        location /isdir { if (-d $document_root/$arg_c) { return 204; } return 200 no; }
        location /rf { if (-f $request_filename) { return 204; } return 200 no; }
        "#,
    );
    let ok = |path: &str, status: u16, body: &str| {
        let r = s.get(path);
        assert_eq!((r.status, r.body_str()), (status, body), "{path}");
    };
    ok("/var?c=1", 204, "");
    ok("/var?c=0", 200, "no");
    ok("/var", 200, "no");
    ok("/eq?c=a%20b", 200, "no");
    ok("/ne?c=y", 204, "");
    ok("/ne?c=x", 200, "no");
    ok("/re?c=fooo", 200, "o=ooo");
    ok("/rei?c=foo", 204, "");
    ok("/nre?c=bar", 204, "");
    ok("/nre?c=food", 200, "no");
    ok("/named?c=ann-x", 200, "who=ann");
    ok("/file?c=file.txt", 204, "");
    ok("/file?c=dir", 200, "no");
    ok("/nofile?c=nothing", 204, "");
    ok("/nofile?c=dir", 200, "no");
    ok("/isdir?c=dir", 204, "");
    ok("/rf", 200, "no");
}

#[test]
fn set_variables_reach_other_directives() {
    let s = site(
        "rw-set",
        r#"
        location /s {
            set $a "x-$arg_v";
            set $b "$a/$a";
            add_header X-B $b;
            return 200 "b=$b";
        }
        location /order {
            set $v one;
            if ($arg_two) { set $v two; }
            return 200 $v;
            set $v three;
        }
        location /try {
            set $f file.txt;
            try_files /$f =404;
        }
        "#,
    );
    let r = s.get("/s?v=1");
    assert_eq!((r.status, r.body_str()), (200, "b=x-1/x-1"));
    assert_eq!(r.header("X-B"), Some("x-1/x-1"));
    assert_eq!(s.get("/order").body_str(), "one");
    assert_eq!(s.get("/order?two=1").body_str(), "two");
    let r = s.get("/try");
    assert_eq!((r.status, r.body_str()), (200, "file"));
}

#[test]
fn if_block_settings_apply_when_true() {
    let s = site(
        "rw-ifconf",
        r#"
        location / {
            if ($arg_other) {
                root html/other;
                add_header X-If yes;
            }
        }
        location /tf {
            try_files /file.txt =404;
            if ($arg_x) { }
        }
        location /args {
            set $args "a=1&$args";
            return 200 "args=$args arg_a=$arg_a";
        }
        location /stop {
            set $v before;
            break;
            set $v after;
            return 200 $v;
        }
        "#,
    );
    let r = s.get("/file.txt");
    assert_eq!(
        (r.status, r.body_str(), r.header("X-If")),
        (200, "file", None)
    );
    let r = s.get("/file.txt?other=1");
    assert_eq!(
        (r.status, r.body_str(), r.header("X-If")),
        (200, "other root", Some("yes"))
    );
    // The same request again (a cached answer must not skip the script).
    let r = s.get("/file.txt?other=1");
    assert_eq!(r.body_str(), "other root");
    let r = s.get("/file.txt");
    assert_eq!(r.body_str(), "file");
    // nginx's "if is evil": a true `if` selects settings without the
    // location's try_files.
    assert_eq!(s.get("/tf").body_str(), "file");
    assert_eq!(s.get("/tf?x=1").status, 404);
    assert_eq!(s.get("/args?b=2").body_str(), "args=a=1&b=2 arg_a=1");
    // `break` stops the script: no return, the static file answers 404.
    assert_eq!(s.get("/stop").status, 404);
}

#[test]
fn server_script_runs_before_location_selection() {
    let s = site(
        "rw-server",
        r#"
        if ($arg_deny) { return 403; }
        rewrite ^/short$ /new/page.txt;
        set $where server;
        location / { return 200 "where=$where uri=$uri"; }
        location /new/ { }
        "#,
    );
    assert_eq!(s.get("/x?deny=1").status, 403);
    let r = s.get("/short");
    assert_eq!((r.status, r.body_str()), (200, "new page"));
    assert_eq!(s.get("/x").body_str(), "where=server uri=/x");
}

#[test]
fn server_break_stops_only_the_server_script() {
    let s = site(
        "rw-srvbreak",
        r#"
        set $s one;
        break;
        set $s two;
        location / {
            set $l "$s-loc";
            return 200 $l;
        }
        "#,
    );
    assert_eq!(s.get("/x").body_str(), "one-loc");
}

#[test]
fn error_page_to_named_location() {
    let s = site(
        "rw-named",
        r#"
        location /missing/ { error_page 404 = @fallback; }
        location /gone/ { error_page 404 @fallback; }
        location @fallback {
            rewrite ^ /new/page.txt break;
        }
        location /twice/ {
            error_page 404 /also-missing;
        }
        location /also-missing { error_page 404 = @fallback; return 404; }
        "#,
    );
    let r = s.get("/missing/x");
    assert_eq!((r.status, r.body_str()), (200, "new page"));
    let r = s.get("/gone/x");
    assert_eq!((r.status, r.body_str()), (404, "new page"));
    // `recursive_error_pages off`: the second error_page is not followed.
    let r = s.get("/twice/x");
    assert_eq!(r.status, 404);
    assert!(r.body_str().contains("404 Not Found"), "{}", r.body_str());
}

#[test]
fn recursive_error_pages_on_follows_the_second() {
    let s = site(
        "rw-recursive",
        r#"
        recursive_error_pages on;
        location /twice/ { error_page 404 /also-missing; }
        location /also-missing { error_page 404 = @fallback; return 404; }
        location @fallback { return 200 fallback; }
        "#,
    );
    let r = s.get("/twice/x");
    assert_eq!((r.status, r.body_str()), (200, "fallback"));
}

#[test]
fn rewrite_cycle_is_500_with_nginx_log_line() {
    let s = site(
        "rw-cycle",
        r#"
        location /loop { rewrite ^ /loop last; }
        location /a/ { rewrite ^/a/(x*)$ /a/$1x last; }
        location = /a/xxxxxxxxxx { return 200 "reached $uri"; }
        location /b/ { rewrite ^/b/(x*)$ /b/$1x last; }
        location = /b/xxxxxxxxxxx { return 200 "reached $uri"; }
        "#,
    );
    let r = s.get("/loop");
    assert_eq!(r.status, 500);
    let log = s.prefix.dir.join("logs/error.log");
    let lines = wait_for_lines(&log, 1, |l| l.contains("redirection cycle"));
    assert!(
        lines[0].contains("rewrite or internal redirection cycle while processing \"/loop\""),
        "{}",
        lines[0]
    );
    // Ten URI changes pass, the eleventh is the cycle
    // (NGX_HTTP_MAX_URI_CHANGES: `uri_changes` starts at 11).
    let r = s.get("/a/");
    assert_eq!((r.status, r.body_str()), (200, "reached /a/xxxxxxxxxx"));
    assert_eq!(s.get("/b/").status, 500);
}

/// `-t` on `conf` (a server body): the exit code and the text after
/// `[emerg] ` (nginx says `nginx:`, Peregrine `peregrine:` before it).
fn test_conf(server_body: &str) -> (Option<i32>, String) {
    let p = Prefix::new("rw-bad");
    p.conf(&conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:1;\n{server_body}\n    }}"
    )));
    let bin = if crate::support::is_nginx() {
        "/usr/sbin/nginx"
    } else {
        crate::support::BIN
    };
    let out = std::process::Command::new(bin)
        .arg("-t")
        .arg("-p")
        .arg(&p.dir)
        .args(["-c", "conf/nginx.conf"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find_map(|l| l.split_once("[emerg] ").map(|(_, m)| m.to_string()))
        .unwrap_or_default();
    let line = line.replace(&p.dir.display().to_string(), "PREFIX");
    // nginx's stderr lines carry its `PID#TID: `.
    let line = match line.split_once("#") {
        Some((pid, rest)) if pid.bytes().all(|b| b.is_ascii_digit()) => rest
            .split_once(": ")
            .map_or(rest.to_string(), |(_, m)| m.to_string()),
        _ => line,
    };
    (out.status.code(), line)
}

#[test]
fn bad_scripts_get_nginx_s_messages() {
    for (body, want) in [
        (
            "location / { if ($a { return 204; } }",
            "invalid condition \"$a\" in PREFIX/conf/nginx.conf:10",
        ),
        (
            "location / { if ($arg_a == 1) { return 204; } }",
            "unexpected \"==\" in condition in PREFIX/conf/nginx.conf:10",
        ),
        (
            "location / { return 200 $nothing; }",
            "unknown \"nothing\" variable",
        ),
        (
            "location / { set $x a$; }",
            "invalid variable name in PREFIX/conf/nginx.conf:10",
        ),
        (
            "location / { set x 1; }",
            "invalid variable name \"x\" in PREFIX/conf/nginx.conf:10",
        ),
        (
            "location / { rewrite ^ /x forever; }",
            "invalid parameter \"forever\" in PREFIX/conf/nginx.conf:10",
        ),
        (
            "if ($a) { root /x; }",
            "\"root\" directive is not allowed here in PREFIX/conf/nginx.conf:10",
        ),
    ] {
        let (code, line) = test_conf(body);
        assert_eq!((code, line.as_str()), (Some(1), want), "{body}");
    }
}

/// `rewrite_log on` writes nginx's notices for each regex tried, with the
/// request's context, and `uninitialized_variable_warn` its warning.
#[test]
fn rewrite_log_and_uninitialized_variables_reach_the_error_log() {
    let p = Prefix::new("rewrite-log");
    p.write("html/b.txt", "b\n");
    let s = Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        root html;\n\
             rewrite_log on;\n\
             location /a { rewrite ^/a(.*)$ /b.txt break; }\n\
             location = /z { set $never_set 1; return 204; }\n\
             location = /n { if ($never_set) { return 500; } return 200 \"ok\\n\"; }\n    }\n",
        ),
    );
    assert_eq!(s.get("/a").body, b"b\n");
    assert_eq!(s.get("/n").body, b"ok\n");
    let log = s.prefix.dir.join("logs/error.log");
    let lines = wait_for_lines(&log, 3, |l| {
        l.contains("[notice]") || l.contains("using uninitialized")
    });
    let all = lines.join("\n");
    assert!(
        all.contains("[notice]") && all.contains("\"^/a(.*)$\" matches \"/a\""),
        "{all}"
    );
    assert!(all.contains("rewritten data: \"/b.txt\""), "{all}");
    assert!(
        all.contains("using uninitialized \"never_set\" variable"),
        "{all}"
    );
    assert!(all.contains("request: \"GET /a HTTP/1.1\""), "{all}");
}

/// A URI changed by `rewrite` and kept in its location by `break` (or the
/// `break` flag) goes upstream whole: `proxy_pass`'s own URI part is
/// ignored (nginx's `r->valid_location` cleared); without a rewrite the
/// part replaces the location's prefix as usual.
#[test]
fn proxy_pass_uri_part_is_ignored_after_rewrite_and_break() {
    let s = site(
        "rewrite-valid-location",
        "        location /seen/ { return 200 \"seen $uri\"; }\n\
         location /brk { rewrite ^ /seen/by-rewrite; break; \
         proxy_pass http://127.0.0.1:PORT/seen/part; }\n\
         location /flag/ { rewrite ^/flag/(.*)$ /seen/$1 break; \
         proxy_pass http://127.0.0.1:PORT/ignored/; }\n\
         location /kept/ { proxy_pass http://127.0.0.1:PORT/seen/; }",
    );
    assert_eq!(s.get("/brk").body_str(), "seen /seen/by-rewrite");
    assert_eq!(s.get("/flag/x").body_str(), "seen /seen/x");
    assert_eq!(s.get("/kept/a").body_str(), "seen /seen/a");
}

/// `error_page` to a URI for a `return 302 TEXT`: the page that answers
/// keeps the redirect's Location (nginx's `headers_out.location` outlives
/// the internal redirect), with the error_page's status.
#[test]
fn an_error_page_keeps_the_redirect_location() {
    let s = site(
        "rw-ep-location",
        r#"
        location /moved { error_page 302 /page; return 302 /new/page.txt; }
        location /text { error_page 302 /page; return 302 "there"; }
        location /page { return 200 "page"; }
        "#,
    );
    let r = s.get("/text");
    assert_eq!((r.status, r.body_str()), (302, "page"));
    assert_eq!(r.header("Location"), Some("there"));
    let r = s.get("/moved");
    assert_eq!((r.status, r.body_str()), (302, "page"));
    let loc = r.header("Location").unwrap();
    assert!(
        loc.starts_with("http://localhost:") && loc.ends_with("/new/page.txt"),
        "{loc}"
    );
}
