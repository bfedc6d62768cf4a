//! `allow`/`deny`: rules in order, a level's own list replacing its
//! parent's, and nginx's messages (checked with `nginx -t`).

use super::*;

#[test]
fn rules_in_order_and_inheritance() {
    let c = parse(&server(
        "allow 10.0.0.0/8;\ndeny all;\nlocation /a { }\nlocation /b { allow ::1; deny unix:; }",
    ));
    let s = only_server(&c);
    assert_eq!(s.conf.access.len(), 2);
    assert_eq!(
        s.conf.access[0],
        AccessRule {
            deny: false,
            net: AccessNet::V4 {
                addr: 0x0a00_0000,
                mask: 0xff00_0000
            }
        }
    );
    assert_eq!(s.locations[0].conf.access, s.conf.access, "inherited");
    let b = &s.locations[1].conf.access;
    assert_eq!(b.len(), 2, "its own list replaces the server's");
    assert_eq!(
        b[1],
        AccessRule {
            deny: true,
            net: AccessNet::Unix
        }
    );
}

#[test]
fn messages_as_nginx() {
    assert_eq!(
        err(&server("allow 10.0.0.0/33;")),
        "invalid parameter \"10.0.0.0/33\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("allow x;")),
        "invalid parameter \"x\" in /p/conf/nginx.conf:4"
    );
    let c = parse(&server("deny 10.1.2.3/8;"));
    assert!(
        c.notices
            .iter()
            .any(|n| n == "low address bits of 10.1.2.3/8 are meaningless in /p/conf/nginx.conf:4"),
        "{:?}",
        c.notices
    );
}
