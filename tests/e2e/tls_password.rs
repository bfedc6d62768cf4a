//! `ssl_password_file`: keys encrypted as OpenSSL 3 writes them (PKCS #8,
//! PBES2 with AES), opened with the first password of the file that fits;
//! a file without the right one fails the start in nginx's words.

use crate::support::{Prefix, Server, conf_with, is_nginx, must, sh};
use crate::tls::{client, connect, peer_cert, request};

/// An encrypted RSA key and its self-signed certificate for `name`, made
/// with the openssl command as nginx's own tests make them.
fn encrypted_pair(
    p: &Prefix,
    name: &str,
    password: &str,
) -> rustls::pki_types::CertificateDer<'static> {
    let d = p.dir.join("conf");
    let d = d.display();
    must(&format!(
        "openssl genrsa -out {d}/{name}.key -passout pass:{password} -aes128 2048"
    ));
    // A leaf certificate (the system's openssl.cnf makes CA ones, which
    // webpki refuses as a server's).
    p.write(
        "conf/openssl.conf",
        "[req]\ndistinguished_name = dn\n[dn]\n",
    );
    must(&format!(
        "openssl req -x509 -new -config {d}/openssl.conf -subj /CN={name}/ \
         -addext subjectAltName=DNS:{name} -addext basicConstraints=CA:FALSE \
         -key {d}/{name}.key -passin pass:{password} -out {d}/{name}.crt"
    ));
    let pem = std::fs::read(p.dir.join(format!("conf/{name}.crt"))).unwrap();
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(&pem).unwrap()
}

const SERVER: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_password_file passwords;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        location / { return 200 "$https\n"; }
    }
"#;

fn openssl_present() -> bool {
    sh("openssl version").0
}

#[test]
fn an_encrypted_key_opens_with_a_password_of_the_file() {
    if !openssl_present() {
        assert!(std::env::var_os("CI").is_none(), "openssl is needed");
        return;
    }
    let p = Prefix::new("tls-password");
    let crt = encrypted_pair(&p, "a.test", "s3cret");
    let key = std::fs::read_to_string(p.dir.join("conf/a.test.key")).unwrap();
    assert!(key.contains("ENCRYPTED PRIVATE KEY"), "{key}");
    // The wrong one first: each is tried, as nginx's passwords are.
    p.write("conf/passwords", "wrong\r\ns3cret\r\n");
    let server = Server::start(p, &conf_with(SERVER));
    let config = client(std::slice::from_ref(&crt), &[&rustls::version::TLS13]);
    let mut tls = connect(&server, &config, "a.test");
    let r = request(&mut tls, "/", "a.test", true);
    assert_eq!((r.status, r.body_str()), (200, "on\n"));
    assert_eq!(peer_cert(&tls), crt);
}

#[test]
fn no_right_password_fails_the_start() {
    if !openssl_present() {
        assert!(std::env::var_os("CI").is_none(), "openssl is needed");
        return;
    }
    let p = Prefix::new("tls-password-bad");
    encrypted_pair(&p, "a.test", "s3cret");
    p.write("conf/passwords", "wrong\n");
    p.conf(&conf_with(&SERVER.replace("PORT", "8443")));
    if is_nginx() {
        return;
    }
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "peregrine: [emerg] cannot load certificate key \"{}\": PEM_read_bio_PrivateKey() failed (bad decrypt)",
        p.dir.join("conf/a.test.key").display()
    );
    assert!(err.starts_with(&want), "{err}");
}
