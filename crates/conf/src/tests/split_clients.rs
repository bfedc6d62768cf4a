//! `split_clients`: shares as nginx's bounds, and its messages (checked
//! with `nginx -t`).

use super::*;

#[test]
fn shares_become_bounds_on_the_hash_range() {
    let c = parse(&http(
        "split_clients \"${remote_addr}x\" $v { 10% a; 0.5% b; * c; }",
    ));
    let s = &c.http.as_ref().unwrap().split_clients[0];
    assert_eq!(
        (s.source.as_str(), s.var.as_str()),
        ("${remote_addr}x", "v")
    );
    // 1000 * 0xffffffff / 10000, then + 50 * 0xffffffff / 10000.
    assert_eq!(
        s.parts,
        [
            (429_496_729, "a".to_string()),
            (429_496_729 + 21_474_836, "b".to_string()),
            (0, "c".to_string()),
        ]
    );
    // A share completing 100 % takes the rest, as `*`.
    let c = parse(&http("split_clients $uri $w { 40% a; 60% b; }"));
    assert_eq!(c.http.as_ref().unwrap().split_clients[0].parts[1].0, 0);
}

#[test]
fn messages_as_nginx() {
    for (body, want) in [
        (
            "split_clients $uri $v { 60% a; 50% b; }",
            "percent total is greater than 100%",
        ),
        (
            "split_clients $uri $v { 0% a; }",
            "invalid percent value \"0%\"",
        ),
        (
            "split_clients $uri v { 10% a; }",
            "invalid variable name \"v\"",
        ),
    ] {
        assert_eq!(
            err(&http(body)),
            format!("{want} in /p/conf/nginx.conf:3"),
            "{body}"
        );
    }
    parse(&http("split_clients $uri $v { 10% a b; }"));
}
