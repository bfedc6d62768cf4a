//! The static fast path's flag (`LocConf::fast_eligible`): computed at load
//! from the verdicts of the directives written in each location's chain.

use super::*;

/// The flags of the server block and of its locations, in order (nested
/// ones after their parent).
fn flags(text: &str) -> (bool, Vec<bool>) {
    fn walk(l: &LocationConf, out: &mut Vec<bool>) {
        out.push(l.conf.fast_eligible);
        l.locations.iter().for_each(|n| walk(n, out));
    }
    let c = parse(text);
    let s = only_server(&c);
    let mut locs = Vec::new();
    s.locations.iter().for_each(|l| walk(l, &mut locs));
    (s.conf.fast_eligible, locs)
}

#[test]
fn a_plain_static_location_is_eligible() {
    let (srv, locs) = flags(&server(
        "listen 8080;\nroot /srv;\nsendfile on;\ngzip on;\nopen_file_cache max=10;\n\
         location / { index i.html; expires off; }\nlocation = /x { alias /srv/x; }",
    ));
    assert!(srv);
    assert_eq!(locs, [true, true]);
}

/// A content handler of its own (`stub_status`, `empty_gif`) keeps its
/// location off; it is not inherited, so a location inside keeps its flag,
/// and a sibling is not affected. `return` keeps its location off too.
#[test]
fn content_handlers_keep_their_own_location_off() {
    let (srv, locs) = flags(&server(
        "location /s { stub_status; location /s/in { } }\nlocation /f { }\nlocation /r { return 204; }\n\
         location /g { empty_gif; }",
    ));
    assert!(srv);
    assert_eq!(locs, [false, true, true, false, false]);
    // The rewrite module's `return` (`Never`): a server's script runs in
    // the server-rewrite phase, before any location, for every request.
    let (srv, locs) = flags(&server("return 204;\nlocation /a { }"));
    assert!(!srv);
    assert_eq!(locs, [false], "the server's return runs first everywhere");
}

/// A `When` test is evaluated on the merged settings of each location with
/// the directive in its chain: `userid on` at http is undone by `userid
/// off` below; `add_header` at server reaches every location.
#[test]
fn tests_judge_the_merged_settings() {
    let c = http(
        "userid on;\nserver {\n  listen 8080;\n  location /a { userid off; }\n  location /b { }\n}",
    );
    let c = parse(&c);
    let s = only_server(&c);
    assert!(!s.conf.fast_eligible);
    let got: Vec<bool> = s.locations.iter().map(|l| l.conf.fast_eligible).collect();
    assert_eq!(got, [true, false]);
    let (srv, locs) = flags(&server(
        "add_header X-A 1;\nlocation /a { }\nlocation /b { add_header_inherit off; }",
    ));
    assert!(!srv);
    assert_eq!(locs, [false, true], "inherit off: no header here");
    let (_, locs) = flags(&server(
        "root /srv/$host;\nlocation /a { }\nlocation /b { root /srv; }\nlocation /c { gzip_static on; }\n\
         location /d { disable_symlinks on; }\nlocation /e { internal; }",
    ));
    assert_eq!(locs, [false, true, false, false, false]);
}

/// `try_files` at server level belongs to the server block (nginx): its
/// locations keep their flag, the server's own settings lose it.
#[test]
fn a_server_try_files_stays_in_the_server() {
    let (srv, locs) = flags(&server("try_files $uri =404;\nlocation /a { }"));
    assert!(!srv);
    assert_eq!(locs, [true]);
}

/// Directives that come from an `include` are judged as if written there.
#[test]
fn included_directives_are_judged() {
    let p = TempPrefix::new();
    p.write("conf/h.conf", "add_trailer X-T 1;\n");
    p.write(
        "conf/nginx.conf",
        "events {}\nhttp {\n server {\n  listen 8080;\n  location /a { include h.conf; }\n  location /b { }\n }\n}\n",
    );
    let c = load(&p.opts("conf/nginx.conf")).expect("loads");
    let s = only_server(&c);
    let got: Vec<bool> = s.locations.iter().map(|l| l.conf.fast_eligible).collect();
    assert_eq!(got, [false, true]);
}
