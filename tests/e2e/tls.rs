//! TLS (`listen ... ssl`, `ssl_certificate`...): real handshakes with a
//! rustls client over real sockets, certificates made at test time
//! (rcgen), checked against nginx with `E2E_SERVER=nginx`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, ServerName};

use crate::support::{IO_TIMEOUT, Prefix, Response, Server, conf_with, is_nginx, read_to_close};

/// A self-signed ECDSA certificate for `name`, written as
/// `conf/NAME.crt` and `conf/NAME.key`; its DER.
pub(crate) fn cert(p: &Prefix, name: &str) -> CertificateDer<'static> {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec![name.to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    p.write(&format!("conf/{name}.crt"), cert.pem());
    p.write(&format!("conf/{name}.key"), key.serialize_pem());
    cert.der().clone()
}

/// A client trusting `roots`, offering `versions`.
pub(crate) fn client(
    roots: &[CertificateDer<'static>],
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    Arc::new(config)
}

/// `config` resuming no session: each connection a full handshake, with
/// the certificate sent (a resumed one shows the stored session's).
pub(crate) fn no_resumption(config: &Arc<rustls::ClientConfig>) -> Arc<rustls::ClientConfig> {
    let mut config = rustls::ClientConfig::clone(config);
    config.resumption = rustls::client::Resumption::disabled();
    Arc::new(config)
}

pub(crate) type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

pub(crate) fn connect(server: &Server, config: &Arc<rustls::ClientConfig>, sni: &str) -> Tls {
    let sock = server.connect();
    let name = ServerName::try_from(sni.to_string()).unwrap();
    let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
    Tls::new(conn, sock)
}

/// [`connect`] to an address (from a thread that has no `Server`).
pub(crate) fn connect_to(
    addr: std::net::SocketAddr,
    config: &Arc<rustls::ClientConfig>,
    sni: &str,
) -> Tls {
    let sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let name = ServerName::try_from(sni.to_string()).unwrap();
    let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
    Tls::new(conn, sock)
}

/// One request on `tls`; the response, read up to its declared length.
pub(crate) fn request(tls: &mut Tls, path: &str, host: &str, close: bool) -> Response {
    let conn = if close { "close" } else { "keep-alive" };
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: {conn}\r\n\r\n");
    tls.write_all(req.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 16384];
    loop {
        if let Some(r) = Response::parse(&got) {
            let len: usize = r.header("content-length").map_or(0, |v| v.parse().unwrap());
            if r.body.len() >= len {
                return r;
            }
        }
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => panic!("read: {e} after {} bytes", got.len()),
        }
    }
    Response::parse(&got).expect("a response")
}

/// nginx 1.22's default `ssl_protocols` lacks TLSv1.3 (1.23.4 added it,
/// Peregrine follows current nginx): said at http level so that the tests
/// run against both.
const SERVERS: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        location / { return 200 "a $scheme $https $server_name\n"; }
        location /big { root html; }
    }
    server {
        listen 127.0.0.1:PORT ssl;
        server_name b.test;
        ssl_certificate b.test.crt;
        ssl_certificate_key b.test.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / { return 200 "b $scheme $https $server_name\n"; }
    }
"#;

fn start() -> (Server, CertificateDer<'static>, CertificateDer<'static>) {
    let p = Prefix::new("tls");
    let a = cert(&p, "a.test");
    let b = cert(&p, "b.test");
    let big: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    p.write("html/big/file.txt", &big);
    (Server::start(p, &conf_with(SERVERS)), a, b)
}

pub(crate) fn peer_cert(tls: &Tls) -> CertificateDer<'static> {
    tls.conn.peer_certificates().unwrap()[0]
        .clone()
        .into_owned()
}

#[test]
fn sni_picks_the_server_block_and_its_certificate() {
    let (server, a, b) = start();
    for versions in [
        &[&rustls::version::TLS13][..],
        &[&rustls::version::TLS12][..],
    ] {
        let config = client(&[a.clone(), b.clone()], versions);
        let mut tls = connect(&server, &config, "b.test");
        let r = request(&mut tls, "/", "b.test", true);
        assert_eq!(r.status, 200);
        assert_eq!(r.body_str(), "b https on b.test\n");
        assert_eq!(peer_cert(&tls), b, "b.test's certificate");
        let mut tls = connect(&server, &config, "a.test");
        let r = request(&mut tls, "/", "a.test", true);
        assert_eq!(r.body_str(), "a https on a.test\n");
        assert_eq!(peer_cert(&tls), a);
    }
}

#[test]
fn unknown_sni_gets_the_default_server_certificate() {
    let (server, a, b) = start();
    let config = client(&[a.clone(), b], &[&rustls::version::TLS13]);
    // A name no server has: the address's default server (the first),
    // whose certificate the client must then accept for that name: trust
    // is for a.test only, so ask as a.test with Host c.test.
    let mut tls = connect(&server, &config, "a.test");
    let r = request(&mut tls, "/", "c.test", true);
    assert_eq!(r.body_str(), "a https on a.test\n");
    assert_eq!(peer_cert(&tls), a);
}

#[test]
fn keepalive_and_a_large_file_over_tls() {
    let (server, a, _) = start();
    let config = client(&[a], &[&rustls::version::TLS13]);
    let mut tls = connect(&server, &config, "a.test");
    let r = request(&mut tls, "/", "a.test", false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection"), Some("keep-alive"));
    let r = request(&mut tls, "/big/file.txt", "a.test", false);
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 300_000);
    assert!(
        r.body
            .iter()
            .enumerate()
            .all(|(i, &c)| c == b'a' + (i % 26) as u8)
    );
    let r = request(&mut tls, "/", "a.test", true);
    assert_eq!(r.body_str(), "a https on a.test\n");
}

#[test]
fn plain_http_on_a_tls_port_is_nginx_400() {
    let (server, _, _) = start();
    let mut s = server.connect();
    s.write_all(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
        .unwrap();
    let r = Response::parse(&read_to_close(&mut s)).expect("a response");
    assert_eq!(r.status, 400);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(
        r.body_str()
            .contains("<center>The plain HTTP request was sent to HTTPS port</center>"),
        "{}",
        r.body_str()
    );
    let log = std::fs::read_to_string(server.prefix.dir.join("logs/error.log")).unwrap();
    assert!(
        log.contains("client sent plain HTTP request to HTTPS port"),
        "{log}"
    );
}

#[test]
fn a_missing_certificate_fails_the_test() {
    let p = Prefix::new("tls-missing");
    let conf = conf_with(
        "    server {\n        listen 127.0.0.1:8443 ssl;\n        ssl_certificate none.crt;\n        ssl_certificate_key none.key;\n    }\n",
    );
    p.conf(&conf);
    if is_nginx() {
        return;
    }
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "peregrine: [emerg] cannot load certificate \"{}\": ",
        p.dir.join("conf/none.crt").display()
    );
    assert!(err.starts_with(&want), "{err}");
}

#[test]
fn listen_ssl_without_a_certificate_is_refused() {
    let p = Prefix::new("tls-nocert");
    let file = p.conf(&conf_with(
        "    server {\n        listen 127.0.0.1:8443 ssl;\n    }\n",
    ));
    if is_nginx() {
        return;
    }
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "peregrine: [emerg] no \"ssl_certificate\" is defined for the \"listen ... ssl\" directive in {}:8",
        file.display()
    );
    assert_eq!(err.lines().next(), Some(want.as_str()), "{err}");
}

#[test]
fn handshake_timeout_is_the_header_timeout() {
    let p = Prefix::new("tls-timeout");
    let _ = cert(&p, "a.test");
    let conf = conf_with(
        "    client_header_timeout 1s;\n    server {\n        listen 127.0.0.1:PORT ssl;\n        ssl_certificate a.test.crt;\n        ssl_certificate_key a.test.key;\n    }\n",
    );
    let server = Server::start(p, &conf);
    let mut s = server.connect();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    // Half a ClientHello record header, then silence.
    s.write_all(&[0x16, 0x03]).unwrap();
    let started = std::time::Instant::now();
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "closed without an answer");
    assert!(
        started.elapsed() < IO_TIMEOUT,
        "closed by the header timeout"
    );
}
