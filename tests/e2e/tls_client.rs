//! Client certificates (`ssl_verify_client`, `ssl_client_certificate`),
//! the `$ssl_*` variables, `ssl_reject_handshake` and the deprecated
//! `ssl on;`: real handshakes with a rustls client, certificates made at
//! test time (rcgen), checked against nginx with `E2E_SERVER=nginx`.

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use crate::support::{Prefix, Server, conf_with};
use crate::tls::{Tls, cert, client, connect, request};

/// A CA written as `conf/ca.crt`, and a client certificate it signed
/// (CN=client, O=Peregrine) with its key.
struct Pki {
    ca: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl Pki {
    fn new(p: &Prefix) -> Pki {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "Test CA");
        let ca = params.self_signed(&key).unwrap();
        p.write("conf/ca.crt", ca.pem());
        Pki {
            ca: rcgen::Issuer::new(params, key),
        }
    }

    /// A client certificate: signed by the CA, or self-signed.
    fn client(&self, signed: bool) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "client");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Peregrine");
        params.serial_number = Some(rcgen::SerialNumber::from(vec![0x0a, 0x1b]));
        let cert = if signed {
            params.signed_by(&key, &self.ca).unwrap()
        } else {
            params.self_signed(&key).unwrap()
        };
        let der = PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        (vec![cert.der().clone()], der)
    }
}

fn client_with_cert(
    roots: &[CertificateDer<'static>],
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Arc<rustls::ClientConfig> {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(store)
        .with_client_auth_cert(chain, key)
        .unwrap();
    Arc::new(config)
}

const VERIFY: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        ssl_verify_client MODE;
        ssl_client_certificate ca.crt;
        add_header X-Verify $ssl_client_verify always;
        location / {
            return 200 "$ssl_client_verify|$ssl_client_s_dn|$ssl_client_i_dn|$ssl_client_serial|$ssl_protocol|$ssl_session_reused|$ssl_server_name\n";
        }
    }
"#;

fn start_verify(mode: &str) -> (Server, CertificateDer<'static>, Pki) {
    let p = Prefix::new("tls-verify");
    let a = cert(&p, "a.test");
    let pki = Pki::new(&p);
    let conf = conf_with(&VERIFY.replace("MODE", mode));
    (Server::start(p, &conf), a, pki)
}

fn ask(server: &Server, config: &Arc<rustls::ClientConfig>) -> crate::support::Response {
    let mut tls: Tls = connect(server, config, "a.test");
    request(&mut tls, "/", "a.test", true)
}

#[test]
fn a_verified_client_certificate_and_its_variables() {
    let (server, a, pki) = start_verify("on");
    let (chain, key) = pki.client(true);
    let r = ask(&server, &client_with_cert(&[a], chain, key));
    assert_eq!(r.status, 200, "{}", r.body_str());
    assert_eq!(
        r.body_str(),
        "SUCCESS|O=Peregrine,CN=client|CN=Test CA|0A1B|TLSv1.3|.|a.test\n"
    );
}

#[test]
fn verify_on_refuses_no_certificate_and_an_untrusted_one() {
    let (server, a, pki) = start_verify("on");
    let r = ask(
        &server,
        &client(std::slice::from_ref(&a), &[&rustls::version::TLS13]),
    );
    assert_eq!(r.status, 400);
    assert!(
        r.body_str()
            .contains("<center>No required SSL certificate was sent</center>"),
        "{}",
        r.body_str()
    );
    // The server's `add_header ... always` applies to 496 and 495.
    assert_eq!(r.header("x-verify"), Some("NONE"));
    let (chain, key) = pki.client(false);
    let r = ask(&server, &client_with_cert(&[a], chain, key));
    assert_eq!(r.status, 400);
    assert!(
        r.body_str()
            .contains("<center>The SSL certificate error</center>"),
        "{}",
        r.body_str()
    );
    let verify = r.header("x-verify").unwrap_or_default();
    assert!(verify.starts_with("FAILED:"), "{verify}");
}

#[test]
fn optional_no_ca_serves_and_says_why() {
    let (server, a, pki) = start_verify("optional_no_ca");
    let r = ask(
        &server,
        &client(std::slice::from_ref(&a), &[&rustls::version::TLS13]),
    );
    assert_eq!(r.status, 200);
    assert!(
        r.body_str().starts_with("NONE||||TLSv1.3|"),
        "{}",
        r.body_str()
    );
    let (chain, key) = pki.client(false);
    let r = ask(&server, &client_with_cert(&[a], chain, key));
    assert_eq!(r.status, 200);
    assert!(
        r.body_str().starts_with("FAILED:") && r.body_str().contains("|O=Peregrine,CN=client|"),
        "{}",
        r.body_str()
    );
}

#[test]
fn reject_handshake_on_the_default_server() {
    let p = Prefix::new("tls-reject");
    let b = cert(&p, "b.test");
    let conf = conf_with(
        r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        ssl_reject_handshake on;
    }
    server {
        listen 127.0.0.1:PORT ssl;
        server_name b.test;
        ssl_certificate b.test.crt;
        ssl_certificate_key b.test.key;
        location / { return 200 "b\n"; }
    }
"#,
    );
    let server = Server::start(p, &conf);
    let config = client(&[b], &[&rustls::version::TLS13]);
    let mut tls = connect(&server, &config, "b.test");
    assert_eq!(request(&mut tls, "/", "b.test", true).body_str(), "b\n");
    // Another name: the default server, which rejects the hello.
    let name = ServerName::try_from("c.test").unwrap();
    let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
    let mut tls = Tls::new(conn, server.connect());
    use std::io::Write;
    let err = tls
        .write_all(b"GET / HTTP/1.0\r\n\r\n")
        .and_then(|_| tls.flush());
    let err = match err {
        Err(e) => e,
        Ok(()) => {
            use std::io::Read;
            tls.read(&mut [0u8; 64])
                .expect_err("the handshake is refused")
        }
    };
    assert!(
        err.to_string().contains("UnrecognisedName"),
        "an unrecognized_name alert: {err}"
    );
}

#[test]
fn deprecated_ssl_on_makes_the_server_speak_tls() {
    let p = Prefix::new("tls-on");
    let a = cert(&p, "a.test");
    let conf = conf_with(
        r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT;
        server_name a.test;
        ssl on;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        location / { return 200 "$scheme $https\n"; }
    }
"#,
    );
    let server = Server::start(p, &conf);
    let config = client(&[a], &[&rustls::version::TLS13]);
    let mut tls = connect(&server, &config, "a.test");
    assert_eq!(
        request(&mut tls, "/", "a.test", true).body_str(),
        "https on\n"
    );
}

#[test]
fn a_host_whose_server_asks_for_certificates_is_misdirected() {
    let p = Prefix::new("tls-misdirected");
    let a = cert(&p, "a.test");
    let b = cert(&p, "b.test");
    let _ = Pki::new(&p);
    let conf = conf_with(
        r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        ssl_verify_client optional;
        ssl_client_certificate ca.crt;
        location / { return 200 "a\n"; }
    }
    server {
        listen 127.0.0.1:PORT ssl;
        server_name b.test;
        ssl_certificate b.test.crt;
        ssl_certificate_key b.test.key;
        location / { return 200 "b\n"; }
    }
"#,
    );
    let server = Server::start(p, &conf);
    let config = client(&[a, b], &[&rustls::version::TLS13]);
    // Negotiated b.test, asking for a.test, whose server checks clients.
    let mut tls = connect(&server, &config, "b.test");
    let r = request(&mut tls, "/", "a.test", true);
    assert_eq!(r.status, 421, "{}", r.body_str());
    // The other way round: b.test's server does not ask.
    let mut tls = connect(&server, &config, "a.test");
    let r = request(&mut tls, "/", "b.test", true);
    assert_eq!((r.status, r.body_str()), (200, "b\n"));
}

#[test]
fn a_failed_handshake_is_logged_at_info_in_nginx_words() {
    let (server, _a, _pki) = start_verify("off");
    // A client that trusts nothing aborts the handshake with an alert.
    let config = client(&[], &[&rustls::version::TLS13]);
    let mut tls: Tls = connect(&server, &config, "a.test");
    use std::io::Write;
    assert!(tls.write_all(b"GET / HTTP/1.0\r\n\r\n").is_err());
    let log = server.prefix.dir.join("logs/error.log");
    let lines = crate::support::wait_for_lines(&log, 1, |l| {
        l.contains("[info]")
            && l.contains("SSL_do_handshake() failed (SSL: ")
            && l.contains("while SSL handshaking, client: 127.0.0.1")
    });
    assert_eq!(lines.len(), 1, "{:?}", std::fs::read_to_string(&log));
}
