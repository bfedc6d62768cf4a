//! Host validation and CONNECT as current nginx (`ngx_http_validate_host`
//! per RFC 3986 since 1.29.4, CONNECT's authority-form since 1.29.3): the
//! host from a Host header or an absolute-form target, echoed as `$host`.
//! Where Debian's nginx 1.22 answers otherwise the test is skipped under
//! `E2E_SERVER=nginx`, with the reason.

use crate::support::{Prefix, Response, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("host-rules");
    Server::start(
        p,
        &conf_with(
            "    server {\n        listen 127.0.0.1:PORT;\n        server_name localhost;\n\
             location / { return 200 \"$host\"; }\n    }\n",
        ),
    )
}

fn send(s: &Server, raw: &[u8]) -> Response {
    Response::parse(&s.raw(raw)).expect("a response")
}

/// `Host: HOST` on an HTTP/1.0 request.
fn by_header(s: &Server, host: &[u8]) -> Response {
    let mut raw = b"GET / HTTP/1.0\r\nHost: ".to_vec();
    raw.extend_from_slice(host);
    raw.extend_from_slice(b"\r\n\r\n");
    send(s, &raw)
}

/// `GET http://AUTHORITY/` with a valid Host header, which the target's
/// host overrides.
fn by_target(s: &Server, authority: &[u8]) -> Response {
    let mut raw = b"GET http://".to_vec();
    raw.extend_from_slice(authority);
    raw.extend_from_slice(b"/ HTTP/1.0\r\nHost: localhost\r\n\r\n");
    send(s, &raw)
}

/// `(status, $host)`: the host only on a 200.
fn answer(r: &Response) -> (u16, String) {
    let body = if r.status == 200 { r.body_str() } else { "" };
    (r.status, body.to_string())
}

/// What every nginx accepts and refuses: lowercased, the port and one
/// trailing dot dropped; `..`, `/` (in a Host header) and an empty host
/// refused.
#[test]
fn hosts_all_nginx_versions_agree_on() {
    let s = site();
    let ok = |h: &str| (200, h.to_string());
    let cases: &[(&[u8], (u16, String))] = &[
        (b"Mixed.Example", ok("mixed.example")),
        (b"www.example.org.", ok("www.example.org")),
        (b"example.org.:8080", ok("example.org")),
        (b"10.1.2.3:", ok("10.1.2.3")),
        (b"[fe80::1:2]:443", ok("[fe80::1:2]")),
        (b"[::FFFF:10.0.0.1]", ok("[::ffff:10.0.0.1]")),
        (b"a..example", (400, String::new())),
        (b".", (400, String::new())),
    ];
    for (host, want) in cases {
        assert_eq!(answer(&by_header(&s, host)), *want, "Host: {host:?}");
        assert_eq!(answer(&by_target(&s, host)), *want, "target {host:?}");
    }
    assert_eq!(by_header(&s, b"").status, 400);
    assert_eq!(by_header(&s, b"a/b").status, 400);
    assert_eq!(by_target(&s, b"h:1:2").status, 400);
}

/// A Host header nginx 1.29.4+ refuses by RFC 3986's grammar: a port
/// above 65535 or of anything but digits, a second port, a dot after a
/// port or an IP literal, text before or after a literal, an unclosed
/// literal, a byte outside reg-name's set. nginx 1.22 accepted each
/// (passing over what followed the first colon).
#[test]
#[cfg_attr(
    e2e_nginx,
    ignore = "nginx 1.22 accepts these (no RFC 3986 Host check)"
)]
fn host_header_follows_rfc_3986() {
    let s = site();
    for host in [
        &b"10.1.2.3:65536"[..],
        b"10.1.2.3:1000000",
        b"10.1.2.3:80:80",
        b"example.org.:80.1",
        b"example.org:x",
        b"[fe80::1].",
        b"[fe80::1].:80",
        b"pre[fe80::1]:80",
        b"[fe80::1]x",
        b"[fe80::1",
        b"a\\b",
        b"a@b",
        "bücher.example".as_bytes(),
    ] {
        assert_eq!(by_header(&s, host).status, 400, "Host: {host:?}");
    }
    // The largest port and leading zeros pass.
    assert_eq!(answer(&by_header(&s, b"a.b:65535")), (200, "a.b".into()));
    assert_eq!(answer(&by_header(&s, b"a.b:000080")), (200, "a.b".into()));
    assert_eq!(
        answer(&by_header(&s, b"a%41~!$&'()*+,;=_")),
        (200, "a%41~!$&'()*+,;=_".into())
    );
}

/// An absolute-form target's port is validated with its host (nginx
/// 1.29.3+): above 65535 is 400. nginx 1.22 did not look at it.
#[test]
#[cfg_attr(e2e_nginx, ignore = "nginx 1.22 does not check the target's port")]
fn target_port_is_bounded() {
    let s = site();
    assert_eq!(by_target(&s, b"10.1.2.3:123456").status, 400);
    assert_eq!(by_target(&s, b"10.1.2.3:65536").status, 400);
    assert_eq!(
        answer(&by_target(&s, b"10.1.2.3:65535")),
        (200, "10.1.2.3".into())
    );
}

/// CONNECT takes an authority-form target, `host:port`, and is then
/// refused with 405 (nginx 1.29.3+, without `allow_connect`); any other
/// target is 400. nginx 1.22 read the target as absolute-form: 400 for
/// `host:port`, hence skipped there.
#[test]
#[cfg_attr(e2e_nginx, ignore = "nginx 1.22 has no authority-form CONNECT")]
fn connect_wants_authority_form() {
    let s = site();
    let connect = |target: &str| {
        let raw = format!("CONNECT {target} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        send(&s, raw.as_bytes())
    };
    let r = connect("example.org:443");
    assert_eq!(r.status_line, "HTTP/1.1 405 Not Allowed");
    assert_eq!(connect("[::1]:8443").status, 405);
    for bad in [
        "/",
        "/x",
        "example.org",
        "example.org:",
        "example.org:99999",
    ] {
        assert_eq!(connect(bad).status, 400, "CONNECT {bad}");
    }
}
