//! The rewrite module's compiler and condition parser, through the whole
//! configuration loader (messages as nginx 1.22's `nginx -t`).

use super::*;
use crate::tests::{err, parse, server};
use crate::variables::VarId;

fn script(c: &Config, loc: usize) -> Arc<Script> {
    let s = &c.http.as_ref().expect("http").servers[0];
    s.locations[loc]
        .conf
        .rewrite
        .script
        .clone()
        .expect("script")
}

fn at4(m: &str) -> String {
    format!("{m} in /p/conf/nginx.conf:4")
}

#[test]
fn values_compile_into_parts() {
    let c = parse(&server(
        "location / { set $x \"a${uri}b$1$host_x$arg_q\"; set $y $x; return 200 $y; }\n\
         location /b { set $host_x 1; }",
    ));
    let s = script(&c, 0);
    let Op::Set { target, value } = &s.ops[0] else {
        panic!("{:?}", s.ops[0])
    };
    assert_eq!(*target, SetTarget::Var(0));
    assert_eq!(
        value.parts,
        vec![
            Part::Lit("a".into()),
            Part::Var(VarId::resolve("uri").unwrap()),
            Part::Lit("b".into()),
            Part::Capture(1),
            Part::Set(1, "host_x".into()),
            Part::Var(VarId::resolve("arg_q").unwrap()),
        ]
    );
    let Op::Set { value, .. } = &s.ops[1] else {
        panic!()
    };
    assert_eq!(value.parts, vec![Part::Set(0, "x".into())]);
    // `$host_x` is unknown: nothing sets it.
    assert!(err(&server("location / { set $x $host_x; }")).contains("unknown \"host_x\" variable"));
}

#[test]
fn set_variables_are_known_everywhere() {
    let c = parse(&server(
        "location / { add_header X $v; return 200 $v; }\nlocation /s { set $v 1; }",
    ));
    assert_eq!(c.http.as_ref().unwrap().variables.names, ["v".to_string()]);
    assert_eq!(
        err(&server("location / { return 200 $v; }")),
        "unknown \"v\" variable"
    );
    assert_eq!(
        err(&server("location / { set x 1; }")),
        at4("invalid variable name \"x\"")
    );
    assert_eq!(
        err(&server("location / { set $uri 1; }")),
        at4("the duplicate \"uri\" variable")
    );
    assert_eq!(
        err(&server("location / { set $x a$; }")),
        at4("invalid variable name")
    );
    assert_eq!(
        err(&server("location / { set $x ${a; }")),
        at4("the closing bracket in \"a\" variable is missing")
    );
}

#[test]
fn rewrite_flags_and_arguments() {
    let c = parse(&server(
        "location / {\nrewrite ^/(.*)$ /x?a=$1 last;\nrewrite ^ /y? break;\nrewrite ^ http://h/$uri;\nrewrite ^ /z permanent;\nrewrite ^ /w redirect;\nrewrite ^ /v;\n}",
    ));
    let s = script(&c, 0);
    let r = |i: usize| match &s.ops[i] {
        Op::Rewrite(r) => r.clone(),
        o => panic!("{o:?}"),
    };
    let a = r(0);
    assert_eq!(
        (a.flag, a.redirect, a.add_args),
        (RewriteFlag::Last, None, true)
    );
    assert_eq!(a.uri.parts, vec![Part::Lit("/x".into())]);
    assert_eq!(
        a.args.unwrap().parts,
        vec![Part::Lit("a=".into()), Part::Capture(1)]
    );
    let b = r(1);
    assert_eq!(
        (b.flag, b.add_args, b.args.is_none()),
        (RewriteFlag::Break, false, true)
    );
    let h = r(2);
    assert_eq!((h.flag, h.redirect), (RewriteFlag::Last, Some(302)));
    assert_eq!(r(3).redirect, Some(301));
    assert_eq!(r(4).redirect, Some(302));
    assert_eq!((r(5).flag, r(5).redirect), (RewriteFlag::None, None));
    assert_eq!(
        err(&server("location / { rewrite ^ /x lost; }")),
        at4("invalid parameter \"lost\"")
    );
    assert_eq!(
        err(&server("location / { rewrite ^ \"\"; }")),
        at4("empty replacement")
    );
    assert!(err(&server("location / { rewrite ^(x /; }")).starts_with("pcre2_compile() failed"));
    // Named groups are variables.
    parse(&server("location / { rewrite ^/(?<name>.+)$ /$name; }"));
}

#[test]
fn conditions_as_nginx_reads_them() {
    let c = parse(&server(
        "location / {\nif ($a) { return 204; }\nif ( $arg_c = \"\" ) { return 403; }\n\
         if ($http_x !~* ^(a|b)$) { break; }\nif (!-f $request_filename) { rewrite ^ /x; }\n\
         if (-x /bin/sh) { }\nset $a 1;\n}",
    ));
    let s = script(&c, 0);
    let conds: Vec<&Cond> = s
        .ops
        .iter()
        .filter_map(|o| match o {
            Op::If { cond, .. } => Some(cond),
            _ => None,
        })
        .collect();
    assert!(matches!(conds[0], Cond::Var(t) if t.parts == vec![Part::Set(0, "a".into())]));
    assert!(matches!(conds[1], Cond::Eq { value, negate: false, .. } if value.parts.is_empty()));
    assert!(matches!(conds[2], Cond::Match { regex, negate: true, .. } if regex.is_caseless()));
    assert!(matches!(
        conds[3],
        Cond::File {
            op: FileTest::Plain,
            negate: true,
            ..
        }
    ));
    assert!(matches!(
        conds[4],
        Cond::File {
            op: FileTest::Exec,
            negate: false,
            ..
        }
    ));
    // The `if` op jumps past its block's ops.
    let Op::If { next, conf, .. } = &s.ops[0] else {
        panic!()
    };
    assert_eq!((*next, conf.is_some()), (2, true));
    for (cond, m) in [
        ("$a", "invalid condition \"$a\""),
        ("(a)", "invalid condition \"a\""),
        ("($a", "invalid condition \"$a\""),
        ("($a = b c)", "invalid condition \"$a\""),
        ("($a == b)", "unexpected \"==\" in condition"),
        ("(-q /x)", "invalid condition \"-q\""),
        ("(-f)", "invalid condition \"-f\""),
    ] {
        assert_eq!(
            err(&server(&format!("location / {{ if {cond} {{ }} }}"))),
            at4(m),
            "{cond}"
        );
    }
}

#[test]
fn if_blocks_take_their_locations_settings() {
    let c = parse(&server(
        "location / {\nroot /r;\nexpires 1h;\nif ($arg_a) { root /other; add_header X 1; }\n}",
    ));
    let s = script(&c, 0);
    let Op::If {
        conf: Some(inner), ..
    } = &s.ops[0]
    else {
        panic!()
    };
    assert_eq!(inner.root, DocRoot::Root("/other".into()));
    assert_eq!(inner.add_headers.len(), 1);
    assert_eq!(
        inner.expires,
        c.http.as_ref().unwrap().servers[0].locations[0]
            .conf
            .expires
    );
    assert!(inner.rewrite.script.is_none() && inner.rewrite.outer_script);
    // A server's `if` has no settings of its own, and takes only the
    // rewrite module's directives.
    let c = parse(&server("if ($arg_a) { return 403; }"));
    let srv = &c.http.as_ref().unwrap().servers[0];
    let ops = &srv.conf.rewrite.script.as_ref().unwrap().ops;
    assert!(matches!(
        &ops[0],
        Op::If {
            conf: None,
            next: 2,
            ..
        }
    ));
    assert_eq!(
        err(&server("if ($a) { root /x; }")),
        at4("\"root\" directive is not allowed here")
    );
    assert_eq!(
        err(&server("location / { if ($a) { if ($b) { } } }")),
        at4("\"if\" directive is not allowed here")
    );
    assert_eq!(
        err(&server("location / { if ($a) { try_files $uri =404; } }")),
        at4("\"try_files\" directive is not allowed here")
    );
}

#[test]
fn flags_inherit() {
    let c = parse(&server(
        "rewrite_log on;\nuninitialized_variable_warn off;\nrecursive_error_pages on;\nlocation / { }",
    ));
    let l = &c.http.as_ref().unwrap().servers[0].locations[0]
        .conf
        .rewrite;
    assert!(l.log && !l.uninitialized_warn && l.recursive_error_pages && l.is_none());
    assert_eq!(
        err(&server("rewrite_log on;\nrewrite_log off;")),
        "\"rewrite_log\" directive is duplicate in /p/conf/nginx.conf:5"
    );
}

#[test]
fn a_set_family_name_is_in_the_table_and_marks_it() {
    let c = parse(&server(
        "location / { set $http_connection bar; return 200 $http_connection; }",
    ));
    let vars = &c.http.as_ref().unwrap().variables;
    assert_eq!(vars.names, ["http_connection".to_string()]);
    assert!(vars.shadows_family);
    let c = parse(&server(
        "location / { set $v bar; return 200 $http_connection; }",
    ));
    assert!(!c.http.as_ref().unwrap().variables.shadows_family);
}
