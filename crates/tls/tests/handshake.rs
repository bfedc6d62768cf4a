//! Real TLS handshakes on loopback: a `ServerConfig` built from nginx-style
//! settings and PEM files on disk, a rustls client over a real socket.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use peregrine_tls::certs::CertPair;
use peregrine_tls::config::ServerTls;
use peregrine_tls::error::TlsError;
use rustls::crypto::aws_lc_rs as provider;
use rustls::pki_types::{CertificateDer, ServerName};

/// A self-signed certificate for `localhost` (RSA or ECDSA P-256), written
/// as PEM files into `dir`.
fn write_pair(dir: &Path, rsa: bool) -> (CertPair, CertificateDer<'static>) {
    let key = if rsa {
        rcgen::KeyPair::generate_for(&rcgen::PKCS_RSA_SHA256).unwrap()
    } else {
        rcgen::KeyPair::generate().unwrap()
    };
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let tag = if rsa { "rsa" } else { "ecdsa" };
    let pair = CertPair {
        cert: dir.join(format!("{tag}.crt")),
        key: dir.join(format!("{tag}.key")),
    };
    std::fs::write(&pair.cert, cert.pem()).unwrap();
    std::fs::write(&pair.key, key.serialize_pem()).unwrap();
    (pair, cert.der().clone())
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("peregrine-tls-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Serves one connection: reads 4 bytes, answers "pong".
fn serve_once(config: Arc<rustls::ServerConfig>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let conn = rustls::ServerConnection::new(config).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, sock);
        let mut buf = [0u8; 4];
        if tls.read_exact(&mut buf).is_ok() {
            let _ = tls.write_all(b"pong");
            let _ = tls.flush();
        }
    });
    addr
}

/// Connects with `client`, trusting `roots`; returns the server's
/// certificate and the negotiated suite's name.
fn handshake(
    addr: std::net::SocketAddr,
    roots: &[CertificateDer<'static>],
    client: rustls::ConfigBuilder<rustls::ClientConfig, rustls::WantsVerifier>,
) -> (CertificateDer<'static>, String) {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone()).unwrap();
    }
    let config = client.with_root_certificates(store).with_no_client_auth();
    let conn =
        rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("localhost").unwrap())
            .unwrap();
    let mut tls = rustls::StreamOwned::new(conn, TcpStream::connect(addr).unwrap());
    tls.write_all(b"ping").unwrap();
    let mut answer = [0u8; 4];
    tls.read_exact(&mut answer).unwrap();
    assert_eq!(&answer, b"pong");
    let cert = tls.conn.peer_certificates().unwrap()[0].clone();
    let suite = format!("{:?}", tls.conn.negotiated_cipher_suite().unwrap().suite());
    (cert, suite)
}

fn client_with(
    suites: Vec<rustls::SupportedCipherSuite>,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> rustls::ConfigBuilder<rustls::ClientConfig, rustls::WantsVerifier> {
    let p = rustls::crypto::CryptoProvider {
        cipher_suites: suites,
        ..provider::default_provider()
    };
    rustls::ClientConfig::builder_with_provider(Arc::new(p))
        .with_protocol_versions(versions)
        .unwrap()
}

#[test]
fn rsa_and_ecdsa_pairs_are_chosen_by_what_the_client_can_use() {
    let dir = temp_dir("pairs");
    let (ecdsa, ecdsa_der) = write_pair(&dir, false);
    let (rsa, rsa_der) = write_pair(&dir, true);
    let tls = ServerTls {
        certificates: vec![ecdsa, rsa],
        ..ServerTls::default()
    };
    let built = tls.build(None).unwrap();
    assert!(built.warnings.is_empty());
    let roots = [ecdsa_der.clone(), rsa_der.clone()];

    // TLS 1.3, any scheme: the first pair.
    let all = provider::default_provider().cipher_suites;
    let addr = serve_once(built.config.clone());
    let (cert, suite) = handshake(addr, &roots, client_with(all, &[&rustls::version::TLS13]));
    assert_eq!(cert, ecdsa_der);
    assert!(suite.starts_with("TLS13_"), "{suite}");

    // TLS 1.2 with RSA suites only: the RSA pair.
    let rsa_only = vec![provider::cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256];
    let addr = serve_once(built.config.clone());
    let (cert, suite) = handshake(
        addr,
        &roots,
        client_with(rsa_only, &[&rustls::version::TLS12]),
    );
    assert_eq!(cert, rsa_der);
    assert_eq!(suite, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
}

#[test]
fn ssl_ciphers_and_protocols_limit_what_is_negotiated() {
    let dir = temp_dir("ciphers");
    let (rsa, rsa_der) = write_pair(&dir, true);
    let tls = ServerTls {
        certificates: vec![rsa],
        protocols: vec!["TLSv1.1".into(), "TLSv1.2".into()],
        ciphers: "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384".into(),
        prefer_server_ciphers: true,
        ..ServerTls::default()
    };
    let built = tls.build(None).unwrap();
    assert_eq!(built.warnings.len(), 1, "TLSv1.1 is dropped with a warning");
    let all = provider::default_provider().cipher_suites;
    let addr = serve_once(built.config);
    let both = &[&rustls::version::TLS12, &rustls::version::TLS13];
    let (_, suite) = handshake(addr, &[rsa_der], client_with(all, both));
    // TLS 1.3 is not enabled, and the server's order wins.
    assert_eq!(suite, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");
}

#[test]
fn bad_files_are_nginxs_errors() {
    let dir = temp_dir("bad");
    let (ecdsa, _) = write_pair(&dir, false);
    let (rsa, _) = write_pair(&dir, true);
    let missing = CertPair {
        cert: dir.join("nope.crt"),
        key: ecdsa.key.clone(),
    };
    let err = ServerTls {
        certificates: vec![missing],
        ..ServerTls::default()
    }
    .build(None)
    .err()
    .unwrap();
    assert!(
        err.to_string().starts_with("cannot load certificate \""),
        "{err}"
    );
    let crossed = CertPair {
        cert: ecdsa.cert.clone(),
        key: rsa.key.clone(),
    };
    let err = ServerTls {
        certificates: vec![crossed],
        ..ServerTls::default()
    }
    .build(None)
    .err()
    .unwrap();
    assert!(matches!(err, TlsError::KeyMismatch { .. }), "{err}");
    let err = ServerTls::default().build(None).err().unwrap();
    assert!(matches!(err, TlsError::NoCertificate));
}

/// Two instances reading the same `ssl_session_ticket_key` file: a client's
/// ticket from one resumes on the other (what the directive is for behind a
/// load balancer); an instance with another key does a full handshake.
#[test]
fn ticket_keys_shared_by_instances_resume_across_them() {
    let dir = temp_dir("tickets");
    let (rsa, rsa_der) = write_pair(&dir, true);
    let key_file = dir.join("ticket.key");
    std::fs::write(&key_file, [7u8; 80]).unwrap();
    let other_key = dir.join("other.key");
    std::fs::write(&other_key, [9u8; 80]).unwrap();
    let instance = |key: &Path| {
        ServerTls {
            certificates: vec![rsa.clone()],
            ticket_keys: vec![key.to_path_buf()],
            ..ServerTls::default()
        }
        .build(None)
        .unwrap()
        .config
    };
    let mut store = rustls::RootCertStore::empty();
    store.add(rsa_der).unwrap();
    let client = Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(store)
            .with_no_client_auth(),
    );
    let connect = |addr| {
        let conn = rustls::ClientConnection::new(
            client.clone(),
            ServerName::try_from("localhost").unwrap(),
        )
        .unwrap();
        let mut tls = rustls::StreamOwned::new(conn, TcpStream::connect(addr).unwrap());
        tls.write_all(b"ping").unwrap();
        let mut answer = [0u8; 4];
        tls.read_exact(&mut answer).unwrap();
        tls.conn.handshake_kind().unwrap()
    };
    use rustls::HandshakeKind::{Full, Resumed};
    assert_eq!(connect(serve_once(instance(&key_file))), Full);
    assert_eq!(connect(serve_once(instance(&key_file))), Resumed);
    assert_eq!(connect(serve_once(instance(&other_key))), Full);
}

/// A key as `openssl ecparam -genkey` writes it (an `EC PARAMETERS`
/// block, then a SEC1 `EC PRIVATE KEY`), as nginx's test suite makes its
/// keys: it loads, and a handshake with it works.
#[test]
fn openssl_ecparam_keys_load() {
    let dir = temp_dir("ecparam");
    let key = dir.join("ec.key");
    let cert = dir.join("ec.crt");
    let run = |args: &[&str]| {
        std::process::Command::new("openssl")
            .args(args)
            .output()
            .map(|o| o.status.success())
    };
    let made = run(&[
        "ecparam",
        "-genkey",
        "-name",
        "prime256v1",
        "-out",
        key.to_str().unwrap(),
    ]);
    if !matches!(made, Ok(true)) {
        eprintln!("no openssl command: skipped");
        return;
    }
    let ok = run(&[
        "req",
        "-x509",
        "-new",
        "-key",
        key.to_str().unwrap(),
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-addext",
        "basicConstraints=critical,CA:FALSE",
        "-out",
        cert.to_str().unwrap(),
    ]);
    assert!(matches!(ok, Ok(true)));
    use rustls::pki_types::pem::PemObject;
    let der = CertificateDer::pem_file_iter(&cert)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let tls = ServerTls {
        certificates: vec![CertPair { cert, key }],
        ..ServerTls::default()
    };
    let built = tls.build(None).expect("an ecparam key loads");
    let all = provider::default_provider().cipher_suites;
    let addr = serve_once(built.config);
    let (got, _) = handshake(
        addr,
        std::slice::from_ref(&der),
        client_with(all, &[&rustls::version::TLS13]),
    );
    assert_eq!(got, der);
}
