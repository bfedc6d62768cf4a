//! `stream { }`: what the block reads and the messages it gives.

use super::{err, parse};
use crate::stream::{StreamHandler, StreamPass};

fn stream(body: &str) -> String {
    format!("events {{}}\nstream {{\n{body}\n}}\n")
}

#[test]
fn servers_listen_and_pass() {
    let c = parse(&stream(
        "upstream u { server 127.0.0.1:8081 weight=2; }\n\
         server { listen 8443; listen 127.0.0.1:53 udp; proxy_pass u; proxy_timeout 5s; }\n\
         server { listen 8444 proxy_protocol; proxy_pass 127.0.0.1:8082; proxy_protocol on; }",
    ));
    let s = c.stream.expect("a stream block");
    assert_eq!(s.servers.len(), 2);
    let a = &s.servers[0];
    assert!(a.listen[1].udp);
    assert_eq!(a.handler, StreamHandler::Proxy(StreamPass::Upstream(0)));
    assert_eq!(a.timeout, std::time::Duration::from_secs(5));
    assert_eq!(a.connect_timeout, std::time::Duration::from_secs(60));
    let b = &s.servers[1];
    assert!(b.listen[0].proxy_protocol && b.proxy_protocol);
    assert!(matches!(
        b.handler,
        StreamHandler::Proxy(StreamPass::Addrs { .. })
    ));
}

#[test]
fn nginx_s_messages() {
    for (body, want) in [
        (
            "server { proxy_pass 127.0.0.1:1; }",
            "no \"listen\" is defined for server in /p/conf/nginx.conf:3",
        ),
        (
            "server { listen 1 udp proxy_protocol; proxy_pass 127.0.0.1:1; }",
            "\"listen\" directive \"proxy_protocol\" parameter is incompatible with \"udp\" in /p/conf/nginx.conf:3",
        ),
        (
            "server { listen 1; proxy_pass backend; }",
            "no port in upstream \"backend\" in /p/conf/nginx.conf:3",
        ),
        (
            "server { listen 1; }",
            "no handler for server in /p/conf/nginx.conf:3",
        ),
        (
            "server { listen 1; proxy_pass 127.0.0.1:1; ssl_preread on; }",
            "\"ssl_preread\" directive is not supported by Peregrine yet in /p/conf/nginx.conf:3",
        ),
        (
            "server { listen 1; proxy_pass 127.0.0.1:1; location / {} }",
            "unknown directive \"location\" in /p/conf/nginx.conf:3",
        ),
        (
            "listen 1;",
            "\"listen\" directive is not allowed here in /p/conf/nginx.conf:3",
        ),
    ] {
        assert_eq!(err(&stream(body)), want, "{body}");
    }
}

#[test]
fn unknown_variables_are_refused() {
    assert_eq!(
        err(&stream(
            "log_format a '$nope';\nserver { listen 1; proxy_pass 127.0.0.1:1; access_log /tmp/x a; }"
        )),
        "unknown \"nope\" variable"
    );
}
