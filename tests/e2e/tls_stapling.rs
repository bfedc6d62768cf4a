//! `ssl_stapling on` with responses fetched from the OCSP responder the
//! certificate names: a responder on a real socket (a thread here)
//! answering with what `openssl ocsp` signed, and the staple as a rustls
//! client's verifier receives it.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::support::{Prefix, Server, conf_with, must, sh, wait_until};

/// Takes any certificate and keeps the OCSP response stapled to it.
#[derive(Debug, Default)]
struct Stapled(Mutex<Option<Vec<u8>>>);

impl ServerCertVerifier for Stapled {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        ocsp: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.0.lock().unwrap() = Some(ocsp.to_vec());
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(m, c, d, &algs)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = rustls::crypto::aws_lc_rs::default_provider().signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(m, c, d, &algs)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        rustls::crypto::aws_lc_rs::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The staple of one handshake with the server (empty: none).
fn staple(server: &Server) -> Vec<u8> {
    let seen = Arc::new(Stapled::default());
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(seen.clone())
        .with_no_client_auth();
    let mut tls = crate::tls::connect(server, &Arc::new(config), "a.test");
    let r = crate::tls::request(&mut tls, "/", "a.test", true);
    assert_eq!(r.status, 200);
    seen.0.lock().unwrap().clone().unwrap_or_default()
}

/// An OCSP responder answering every GET with `resp`; the request lines
/// it was sent.
fn responder(listener: TcpListener, resp: Vec<u8>) -> Arc<Mutex<Vec<String>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&got);
            log.lock()
                .unwrap()
                .push(text.lines().next().unwrap_or("").to_string());
            let head = format!(
                "HTTP/1.0 200 OK\r\nContent-Type: application/ocsp-response\r\nContent-Length: {}\r\n\r\n",
                resp.len()
            );
            let _ = s.write_all(head.as_bytes());
            let _ = s.write_all(&resp);
        }
    });
    asked
}

/// A CA, and a certificate for a.test it signed naming `url` as its OCSP
/// responder (authorityInfoAccess), serial 0x1001; `index` is the
/// status line of `openssl ca`'s database the response is signed from.
/// The DER response.
fn pki(p: &Prefix, url: &str, status: &str) -> Vec<u8> {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "Test CA");
    let ca = params.self_signed(&key).unwrap();
    p.write("conf/ca.crt", ca.pem());
    p.write("conf/ca.key", key.serialize_pem());
    let issuer = rcgen::Issuer::new(params, key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let mut leaf = rcgen::CertificateParams::new(vec!["a.test".to_string()]).unwrap();
    leaf.serial_number = Some(rcgen::SerialNumber::from(vec![0x10, 0x01]));
    // AuthorityInfoAccess { AccessDescription { id-ad-ocsp, [6] url } }
    let mut desc = vec![0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01];
    desc.push(0x86);
    desc.push(url.len() as u8);
    desc.extend_from_slice(url.as_bytes());
    let mut one = vec![0x30, desc.len() as u8];
    one.extend(desc);
    let mut aia = vec![0x30, one.len() as u8];
    aia.extend(one);
    leaf.custom_extensions
        .push(rcgen::CustomExtension::from_oid_content(
            &[1, 3, 6, 1, 5, 5, 7, 1, 1],
            aia,
        ));
    let cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    p.write("conf/leaf.crt", cert.pem());
    p.write("conf/a.test.crt", format!("{}{}", cert.pem(), ca.pem()));
    p.write("conf/a.test.key", leaf_key.serialize_pem());
    p.write(
        "conf/index.txt",
        format!("{status}\t1001\tunknown\t/CN=a.test\n"),
    );
    let d = p.dir.join("conf");
    let d = d.display();
    must(&format!(
        "openssl ocsp -issuer {d}/ca.crt -cert {d}/leaf.crt -reqout {d}/req.der"
    ));
    must(&format!(
        "openssl ocsp -index {d}/index.txt -CA {d}/ca.crt -rsigner {d}/ca.crt -rkey {d}/ca.key \
         -reqin {d}/req.der -respout {d}/resp.der -ndays 1"
    ));
    std::fs::read(p.dir.join("conf/resp.der")).unwrap()
}

const SERVER: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        ssl_stapling on;
        location / { return 200 "ok\n"; }
    }
"#;

fn openssl_present() -> bool {
    let ok = sh("openssl version").0;
    assert!(ok || std::env::var_os("CI").is_none(), "openssl is needed");
    ok
}

#[test]
fn a_good_response_from_the_certificates_responder_is_stapled() {
    if !openssl_present() {
        return;
    }
    let p = Prefix::new("tls-stapling");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let resp = pki(&p, &url, "V\t491231235959Z\t");
    let asked = responder(listener, resp.clone());
    let server = Server::start(p, &conf_with(SERVER));
    // nginx asks at the first handshake, Peregrine at load: either way
    // the staple comes within a few handshakes.
    wait_until("a staple", Duration::from_secs(10), || {
        staple(&server) == resp
    });
    let asked = asked.lock().unwrap();
    // nginx's GET: the path, then the base64 request URL-escaped.
    assert!(
        asked[0].starts_with("GET /") && asked[0].ends_with(" HTTP/1.0"),
        "{asked:?}"
    );
}

#[test]
fn a_revoked_certificate_is_not_stapled() {
    if !openssl_present() {
        return;
    }
    let p = Prefix::new("tls-stapling-revoked");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let resp = pki(&p, &url, "R\t491231235959Z\t240101000000Z");
    let asked = responder(listener, resp);
    let log = p.dir.join("logs/error.log");
    let server = Server::start(p, &conf_with(SERVER));
    wait_until("the responder asked", Duration::from_secs(10), || {
        staple(&server).is_empty() && !asked.lock().unwrap().is_empty()
    });
    wait_until("the error logged", Duration::from_secs(10), || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("certificate status \"revoked\" in the OCSP response")
    });
    assert!(staple(&server).is_empty(), "not stapled");
}
