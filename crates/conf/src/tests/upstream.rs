//! `upstream { }`: what it reads, and every refusal in nginx's words and at
//! nginx's line (each checked with Debian's `nginx -t`).

use std::net::SocketAddr;
use std::time::Duration;

use super::*;

fn groups(c: &Config) -> &[UpstreamConf] {
    &c.http.as_ref().expect("http").upstreams
}

#[test]
fn servers_parameters_and_methods() {
    let c = parse(&http(
        "upstream app {\n  least_conn;\n  server 127.0.0.1:8080 weight=3 max_fails=2 \
         fail_timeout=30s max_conns=10;\n  server [::1] backup;\n  server unix:/run/app.sock down;\n  \
         keepalive 16;\n  keepalive_timeout 5s;\n  keepalive_requests 50;\n}\n\
         upstream h { hash $request_uri consistent; server localhost:81; }",
    ));
    let [app, h] = groups(&c) else {
        panic!("two groups")
    };
    assert_eq!(app.method, BalanceMethod::LeastConn);
    let s = &app.servers;
    assert_eq!(s[0].name, "127.0.0.1:8080");
    assert_eq!(
        s[0].addrs,
        [PeerAddr::Inet(
            "127.0.0.1:8080".parse::<SocketAddr>().unwrap()
        )]
    );
    assert_eq!((s[0].weight, s[0].max_fails, s[0].max_conns), (3, 2, 10));
    assert_eq!(s[0].fail_timeout, Duration::from_secs(30));
    assert_eq!(s[1].addrs, [PeerAddr::Inet("[::1]:80".parse().unwrap())]);
    assert!(s[1].backup && !s[1].down);
    assert_eq!(s[2].addrs, [PeerAddr::Unix("/run/app.sock".into())]);
    assert!(s[2].down);
    assert_eq!(
        (app.keepalive, app.keepalive_requests, app.keepalive_timeout),
        (Some(16), 50, Duration::from_secs(5))
    );
    assert_eq!(app.keepalive_time, Duration::from_secs(3600));
    assert_eq!(h.method, BalanceMethod::Hash { consistent: true });
    assert_eq!(h.hash_key.as_deref(), Some("$request_uri"));
    // A name resolves now, every address a peer (localhost: at least one).
    assert!(!h.servers[0].addrs.is_empty());
    assert_eq!((h.servers[0].weight, h.servers[0].max_fails), (1, 1));
    assert_eq!(h.servers[0].fail_timeout, Duration::from_secs(10));
}

#[test]
fn include_inside_the_block() {
    let d = TempPrefix::new();
    d.write(
        "conf/peers.conf",
        "server 127.0.0.1:9000;\nserver 127.0.0.1:9001;\n",
    );
    d.write(
        "conf/nginx.conf",
        &http("upstream u {\n  include peers.conf;\n}"),
    );
    let c = load(&d.opts("conf/nginx.conf")).expect("load");
    assert_eq!(groups(&c)[0].servers.len(), 2);
}

#[test]
fn refusals_as_nginx() {
    for (body, want) in [
        (
            "upstream u {\n}",
            "no servers are inside upstream in /p/conf/nginx.conf:4",
        ),
        (
            "upstream u { server 127.0.0.1; }\nupstream u { server 127.0.0.2; }",
            "duplicate upstream \"u\" in /p/conf/nginx.conf:4",
        ),
        (
            "upstream u { server 127.0.0.1 weight=0; }",
            "invalid parameter \"weight=0\"",
        ),
        (
            "upstream u { server 127.0.0.1 bogus; }",
            "invalid parameter \"bogus\"",
        ),
        (
            "upstream u { server 127.0.0.1 fail_timeout=abc; }",
            "invalid parameter \"fail_timeout=abc\"",
        ),
        (
            "upstream u { ip_hash; server 127.0.0.1 backup; }",
            "balancing method does not support parameter \"backup\"",
        ),
        (
            "upstream u { server nonexistent.invalid; }",
            "host not found in upstream \"nonexistent.invalid\"",
        ),
        (
            "upstream u { server a:0; }",
            "invalid port in upstream \"a:0\"",
        ),
        (
            "upstream u { server [::1]:x; }",
            "invalid port in upstream \"[::1]:x\"",
        ),
        ("upstream u { server :80; }", "no host in upstream \":80\""),
        (
            "upstream u { server http://a; }",
            "invalid host in upstream \"http://a\"",
        ),
        (
            "upstream u { server unix:; }",
            "no path in the unix domain socket in upstream \"unix:\"",
        ),
        (
            "upstream u { server 127.0.0.1; root /x; }",
            "\"root\" directive is not allowed here",
        ),
        (
            "upstream u { server 127.0.0.1; frob; }",
            "unknown directive \"frob\"",
        ),
        (
            "upstream u { hash $uri cons; server 127.0.0.1; }",
            "invalid parameter \"cons\"",
        ),
        (
            "upstream u { random one; server 127.0.0.1; }",
            "invalid parameter \"one\"",
        ),
        (
            "upstream u { keepalive 0; server 127.0.0.1; }",
            "invalid value \"0\" in \"keepalive\" directive",
        ),
    ] {
        let want = if want.contains(" in /p/") {
            want.to_string()
        } else {
            format!("{want} in /p/conf/nginx.conf:3")
        };
        assert_eq!(err(&http(body)), want, "{body}");
    }
    // Checked at the end of `http { }`, without a position, as nginx.
    assert_eq!(
        err(&http("upstream u { hash $nope; server 127.0.0.1; }")),
        "unknown \"nope\" variable"
    );
}

#[test]
fn a_second_method_is_nginx_warning() {
    let c = parse(&http(
        "upstream u { ip_hash; least_conn; server 127.0.0.1; }",
    ));
    assert_eq!(groups(&c)[0].method, BalanceMethod::LeastConn);
    assert!(
        c.notices
            .iter()
            .any(|n| n == "load balancing method redefined in /p/conf/nginx.conf:3"),
        "{:?}",
        c.notices
    );
}

/// A deliberate difference: nginx's `zone` shares a group's peer state
/// (failures, connections) across workers; Peregrine accepts it and keeps
/// the state per worker, as nginx without a zone, and says so.
#[test]
fn zone_is_accepted_with_a_notice_that_state_stays_per_worker() {
    let c = parse(&http("upstream u { zone u 64k; server 127.0.0.1; }"));
    assert_eq!(groups(&c)[0].zone, Some(("u".to_string(), Some(64 << 10))));
    assert!(
        c.notices
            .iter()
            .any(|n| n.contains("\"zone\" is accepted") && n.contains("per worker")),
        "{:?}",
        c.notices
    );
}
