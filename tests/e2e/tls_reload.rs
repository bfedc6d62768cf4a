//! Reload (HUP) under TLS: certificates are read again and checked before
//! the new configuration is taken; a bad one fails the reload and the old
//! workers keep serving with the old certificate. Checked against nginx
//! with `E2E_SERVER=nginx`.

use std::time::{Duration, Instant};

use rustls::pki_types::CertificateDer;

use crate::support::{Prefix, Server, conf_with};
use crate::tls::{cert, client, connect, no_resumption, peer_cert, request};

/// How long a reload may take to show.
const RELOAD_WAIT: Duration = Duration::from_secs(5);

const CONF: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        location / { return 200 "a\n"; }
    }
"#;

/// The certificate a new connection gets, once it is `want` (or the last
/// one seen when the wait runs out).
fn served(
    server: &Server,
    roots: &[CertificateDer<'static>],
    want: &CertificateDer<'_>,
) -> CertificateDer<'static> {
    let config = client(roots, &[&rustls::version::TLS13]);
    let started = Instant::now();
    loop {
        let mut tls = connect(server, &config, "a.test");
        let r = request(&mut tls, "/", "a.test", true);
        assert_eq!(r.body_str(), "a\n");
        let got = peer_cert(&tls);
        if got == *want || started.elapsed() > RELOAD_WAIT {
            return got;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn reload_reads_certificates_again_and_a_bad_one_keeps_the_old() {
    let p = Prefix::new("tls-reload");
    let first = cert(&p, "a.test");
    let dir = p.dir.clone();
    let server = Server::start(p, &conf_with(CONF));
    assert_eq!(served(&server, std::slice::from_ref(&first), &first), first);

    // A certificate file that is no certificate: the reload fails.
    let crt = dir.join("conf/a.test.crt");
    let good = std::fs::read(&crt).unwrap();
    std::fs::write(&crt, "not a certificate\n").unwrap();
    server.signal(1); // HUP
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(
        served(&server, std::slice::from_ref(&first), &first),
        first,
        "old workers serve"
    );
    let log = std::fs::read_to_string(dir.join("logs/error.log")).unwrap();
    assert!(log.contains("cannot load certificate"), "{log}");

    // A new pair: the next reload takes it.
    std::fs::write(&crt, &good).unwrap();
    let tmp = Prefix::new("tls-reload-new");
    let second = cert(&tmp, "a.test");
    std::fs::copy(tmp.dir.join("conf/a.test.crt"), &crt).unwrap();
    std::fs::copy(tmp.dir.join("conf/a.test.key"), dir.join("conf/a.test.key")).unwrap();
    server.signal(1);
    let roots = [first, second.clone()];
    assert_eq!(
        served(&server, &roots, &second),
        second,
        "the new certificate"
    );
}

/// Clients asking while certificates are swapped by a reload.
const LOADERS: usize = 3;

#[test]
fn a_reload_swaps_certificates_under_load_with_no_failed_request() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let p = Prefix::new("tls-reload-load");
    let first = cert(&p, "a.test");
    let dir = p.dir.clone();
    let conf = conf_with(CONF).replace("worker_processes 1;", "worker_processes 2;");
    let server = Server::start(p, &conf);
    let tmp = Prefix::new("tls-reload-load-new");
    let second = cert(&tmp, "a.test");
    let roots = [first.clone(), second.clone()];
    // No resumption: every request a full handshake, its certificate the
    // one the server holds then.
    let config = no_resumption(&client(
        &roots,
        &[&rustls::version::TLS13, &rustls::version::TLS12],
    ));

    // Each loader: a new connection (a full handshake) per request, until
    // told to stop; what it saw, in order, and any failure.
    let stop = Arc::new(AtomicBool::new(false));
    let addr = server.addr;
    let loaders: Vec<_> = (0..LOADERS)
        .map(|_| {
            let (stop, config) = (stop.clone(), config.clone());
            std::thread::spawn(move || {
                let mut seen: Vec<CertificateDer<'static>> = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let mut tls = crate::tls::connect_to(addr, &config, "a.test");
                    let r = request(&mut tls, "/", "a.test", true);
                    assert_eq!((r.status, r.body_str()), (200, "a\n"));
                    seen.push(peer_cert(&tls));
                }
                seen
            })
        })
        .collect();

    std::thread::sleep(Duration::from_millis(300));
    for ext in ["crt", "key"] {
        let staged = dir.join(format!("conf/new.{ext}"));
        std::fs::copy(tmp.dir.join(format!("conf/a.test.{ext}")), &staged).unwrap();
        std::fs::rename(&staged, dir.join(format!("conf/a.test.{ext}"))).unwrap();
    }
    server.signal(1); // HUP
    assert_eq!(
        served(&server, &roots, &second),
        second,
        "the new certificate"
    );
    // Some more requests after the swap, then stop.
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for l in loaders {
        // A failed request panics its loader: `join` tells.
        let seen = l.join().expect("every request answered");
        assert!(seen.first() == Some(&first), "the old certificate first");
        assert!(seen.last() == Some(&second), "the new one last");
    }
}
