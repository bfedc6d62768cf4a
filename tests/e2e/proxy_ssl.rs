//! TLS to upstreams (`proxy_pass https://`, `proxy_ssl_*`): the backend is
//! a TLS server block of the same server on loopback with a certificate
//! made by the test (rcgen); checked against nginx with `E2E_SERVER=nginx`.

use crate::support::{Prefix, Server, conf_with, free_port, wait_for_lines};

/// A self-signed certificate for `name` (CN and subjectAltName) made by
/// `openssl req -x509` as nginx's suite makes its own, written as
/// `conf/NAME.crt` and `conf/NAME.key`.
fn cert(p: &Prefix, name: &str) {
    let conf = p.dir.join("conf");
    let ok = std::process::Command::new("openssl")
        .args(["req", "-x509", "-new", "-nodes", "-newkey", "ec"])
        .args(["-pkeyopt", "ec_paramgen_curve:prime256v1", "-days", "2"])
        .arg("-subj")
        .arg(format!("/CN={name}"))
        .arg("-addext")
        .arg(format!("subjectAltName=DNS:{name}"))
        .arg("-keyout")
        .arg(conf.join(format!("{name}.key")))
        .arg("-out")
        .arg(conf.join(format!("{name}.crt")))
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "openssl req");
}

/// A proxy on PORT whose locations reach a TLS backend (`backend.test`'s
/// certificate, `$ssl_server_name` and `$connection` in headers).
fn start(locations: &str) -> Server {
    let p = Prefix::new("proxy-ssl");
    cert(&p, "backend.test");
    cert(&p, "other.test");
    let backend = free_port();
    let conf = conf_with(&format!(
        "    upstream pool {{ server 127.0.0.1:{backend}; keepalive 4; }}\n\
         server {{ listen 127.0.0.1:{backend} ssl; \
            ssl_certificate backend.test.crt; ssl_certificate_key backend.test.key; \
            location / {{ add_header X-Name \"[$ssl_server_name]\"; \
                          add_header X-Conn $connection; return 200 ok; }} }}\n\
         server {{ listen 127.0.0.1:PORT; \
            location /plain {{ proxy_pass https://127.0.0.1:{backend}/; }}\n{locations}\n}}"
    ));
    Server::start(p, &conf)
}

#[test]
fn verify_off_takes_any_certificate_and_sends_no_sni() {
    let s = start("");
    let r = s.get("/plain");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-Name"), Some("[]"), "SNI is off by default");
}

#[test]
fn sni_verify_and_nginx_error_lines() {
    let locs = "proxy_ssl_session_reuse off;\n\
                location /sni { proxy_pass https://pool/; proxy_ssl_server_name on; \
                proxy_ssl_session_reuse off; \
                proxy_ssl_name backend.test; }\n\
                location /ok { proxy_pass https://pool/; proxy_ssl_verify on; \
                proxy_ssl_name backend.test; proxy_ssl_trusted_certificate backend.test.crt; }\n\
                location /name { proxy_pass https://pool/; proxy_ssl_verify on; \
                proxy_ssl_name other.test; proxy_ssl_trusted_certificate backend.test.crt; }\n\
                location /untrusted { proxy_pass https://pool/; proxy_ssl_verify on; \
                proxy_ssl_name backend.test; proxy_ssl_trusted_certificate other.test.crt; }";
    // No resumption: nginx keeps one session per peer for every location,
    // with the verify result and certificate of the handshake that made it.
    let s = start(locs);
    let r = s.get("/sni");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-Name"), Some("[backend.test]"));
    let log = s.prefix.dir.join("logs/error.log");
    let r = s.get("/ok");
    assert_eq!(
        r.status,
        200,
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert_eq!(s.get("/name").status, 502);
    assert_eq!(s.get("/untrusted").status, 502);
    let lines = wait_for_lines(&log, 2, |l| l.contains("while SSL handshaking to upstream"));
    assert!(
        lines.iter().any(|l| l.contains(
            "upstream SSL certificate does not match \"other.test\" while SSL handshaking to upstream"
        )),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("upstream SSL certificate verify error: (18:self")),
        "{lines:?}"
    );
}

#[test]
fn keepalive_reuses_the_tls_connection() {
    let s = start(
        "location /ka { proxy_pass https://pool/; proxy_http_version 1.1; \
         proxy_set_header Connection \"\"; }",
    );
    let a = s.get("/ka");
    let b = s.get("/ka");
    assert_eq!((a.status, b.status), (200, 200));
    assert!(a.header("X-Conn").is_some());
    assert_eq!(
        a.header("X-Conn"),
        b.header("X-Conn"),
        "one upstream connection"
    );
}
