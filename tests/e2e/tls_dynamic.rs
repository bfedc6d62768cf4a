//! Certificates named by variables (`ssl_certificate $ssl_server_name.crt;`,
//! a `map` of the SNI, `data:$var`): loaded at each handshake, once the
//! SNI is known. Checked against nginx with `E2E_SERVER=nginx` (Debian's
//! 1.22 has them: 1.15.9 added variables, 1.15.10 `data:`).

use rustls::pki_types::CertificateDer;

use crate::support::{Prefix, Server, conf_with, wait_for_lines};
use crate::tls::{cert, client, connect, no_resumption, peer_cert, request};

/// A self-signed ECDSA certificate for `names`, written as
/// `conf/FILE.crt` and `conf/FILE.key`; its DER.
fn cert_for(p: &Prefix, file: &str, names: &[&str]) -> CertificateDer<'static> {
    let key = rcgen::KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let cert = rcgen::CertificateParams::new(names)
        .unwrap()
        .self_signed(&key)
        .unwrap();
    p.write(&format!("conf/{file}.crt"), cert.pem());
    p.write(&format!("conf/{file}.key"), key.serialize_pem());
    cert.der().clone()
}

/// One address; the SNI picks the block, then its certificates.
const CONF: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    map $ssl_server_name $pair {
        m.b.test  b.test;
        default   a.test;
    }
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test b.test nx.test;
        ssl_certificate $ssl_server_name.crt;
        ssl_certificate_key $ssl_server_name.key;
        location / { return 200 "sni $ssl_server_name\n"; }
    }
    server {
        listen 127.0.0.1:PORT ssl;
        server_name m.a.test m.b.test;
        ssl_certificate $pair.crt;
        ssl_certificate_key $pair.key;
        location / { return 200 "map $ssl_server_name\n"; }
    }
    server {
        listen 127.0.0.1:PORT ssl;
        server_name c.test;
        ssl_certificate data:$cert_pem;
        ssl_certificate_key data:$key_pem;
        location / { return 200 "data\n"; }
    }
"#;

/// One request on a new connection as `name`: the body and the
/// certificate served.
fn ask(
    server: &Server,
    config: &std::sync::Arc<rustls::ClientConfig>,
    name: &str,
) -> (String, CertificateDer<'static>) {
    let mut tls = connect(server, config, name);
    let r = request(&mut tls, "/", name, true);
    (r.body_str().to_string(), peer_cert(&tls))
}

#[test]
fn certificates_named_by_variables_follow_the_sni() {
    let p = Prefix::new("tls-dynamic");
    let a = cert_for(&p, "a.test", &["a.test", "m.a.test"]);
    let b = cert_for(&p, "b.test", &["b.test", "m.b.test"]);
    let c = cert_for(&p, "c.test", &["c.test"]);
    // The third block's pair comes inline, from map values (nginx reads
    // quoted strings over several lines).
    let pem = |ext: &str| {
        let text = std::fs::read_to_string(p.dir.join(format!("conf/c.test.{ext}"))).unwrap();
        text.trim_end().to_string()
    };
    let maps = format!(
        "    map $ssl_server_name $cert_pem {{ default \"{}\"; }}\n    map $ssl_server_name $key_pem {{ default \"{}\"; }}\n",
        pem("crt"),
        pem("key")
    );
    let conf = conf_with(&format!("{maps}{CONF}"));
    let server = Server::start(p, &conf);
    let config = no_resumption(&client(
        &[a.clone(), b.clone(), c.clone()],
        &[&rustls::version::TLS13],
    ));

    // By the SNI itself: each name its own pair.
    assert_eq!(
        ask(&server, &config, "a.test"),
        ("sni a.test\n".into(), a.clone())
    );
    assert_eq!(
        ask(&server, &config, "b.test"),
        ("sni b.test\n".into(), b.clone())
    );
    // Through a map of the SNI (its default for other names).
    assert_eq!(
        ask(&server, &config, "m.b.test"),
        ("map m.b.test\n".into(), b)
    );
    assert_eq!(
        ask(&server, &config, "m.a.test"),
        ("map m.a.test\n".into(), a)
    );
    // Inline PEM.
    assert_eq!(ask(&server, &config, "c.test"), ("data\n".into(), c));

    // A name with no files: the handshake fails, nginx's words logged.
    let mut tls = connect(&server, &config, "nx.test");
    let sent = std::io::Write::write_all(&mut tls, b"GET / HTTP/1.0\r\n\r\n");
    let read = std::io::Read::read(&mut tls, &mut [0u8; 64]);
    assert!(
        sent.is_err() || read.is_err(),
        "no certificate: no handshake"
    );
    let log = wait_for_lines(&server.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("[error]") && l.contains("cannot load certificate") && l.contains("nx.test.crt")
    });
    assert_eq!(log.len(), 1, "{log:?}");
}

#[test]
fn a_changed_file_is_served_from_the_next_handshake() {
    let p = Prefix::new("tls-dynamic-change");
    let first = cert(&p, "a.test");
    let conf = conf_with(
        "    ssl_protocols TLSv1.2 TLSv1.3;\n    server {\n        listen 127.0.0.1:PORT ssl;\n        ssl_certificate $ssl_server_name.crt;\n        ssl_certificate_key $ssl_server_name.key;\n        location / { return 200 \"ok\\n\"; }\n    }\n",
    );
    let dir = p.dir.clone();
    let server = Server::start(p, &conf);
    let tmp = Prefix::new("tls-dynamic-new");
    let second = cert(&tmp, "a.test");
    // No resumption: a resumed session would show the certificate it was
    // made with, whatever the server's files hold now.
    let config = no_resumption(&client(
        &[first.clone(), second.clone()],
        &[&rustls::version::TLS13],
    ));
    let mut tls = connect(&server, &config, "a.test");
    assert_eq!(request(&mut tls, "/", "a.test", true).body_str(), "ok\n");
    assert_eq!(peer_cert(&tls), first);
    // Replaced by renaming (a new inode), as certificate tools do.
    for ext in ["crt", "key"] {
        let staged = dir.join(format!("conf/new.{ext}"));
        std::fs::copy(tmp.dir.join(format!("conf/a.test.{ext}")), &staged).unwrap();
        std::fs::rename(&staged, dir.join(format!("conf/a.test.{ext}"))).unwrap();
    }
    let mut tls = connect(&server, &config, "a.test");
    assert_eq!(request(&mut tls, "/", "a.test", true).body_str(), "ok\n");
    assert_eq!(peer_cert(&tls), second, "no reload needed");
}
