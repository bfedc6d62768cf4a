//! TLS sessions: `$ssl_session_id` kept by a resumed session, and
//! `ssl_session_timeout` ending sessions (tickets and the session cache),
//! with a rustls client that resumes as browsers do.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{Prefix, Server, conf_with, is_nginx};
use crate::tls::{cert, client, connect, request};

/// `TIMEOUT` and `TICKETS` are set per test.
const SERVER: &str = r#"
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:PORT ssl;
        server_name a.test;
        ssl_certificate a.test.crt;
        ssl_certificate_key a.test.key;
        ssl_session_cache shared:S:1m;
        ssl_session_tickets TICKETS;
        ssl_session_timeout TIMEOUT;
        location / { return 200 "$ssl_session_reused $ssl_session_id"; }
    }
"#;

fn start(timeout: &str, tickets: &str) -> (Server, rustls::pki_types::CertificateDer<'static>) {
    let p = Prefix::new("tls-sessions");
    let a = cert(&p, "a.test");
    let conf = SERVER
        .replace("TIMEOUT", timeout)
        .replace("TICKETS", tickets);
    (Server::start(p, &conf_with(&conf)), a)
}

/// One request on a new connection with `config` (its session store is
/// what resumes): `(reused, id)`.
fn ask(server: &Server, config: &Arc<rustls::ClientConfig>) -> (String, String) {
    let mut tls = connect(server, config, "a.test");
    let r = request(&mut tls, "/", "a.test", true);
    let body = r.body_str().to_string();
    let (reused, id) = body.split_once(' ').expect("two values");
    (reused.to_string(), id.to_string())
}

const VERSIONS: [&[&rustls::SupportedProtocolVersion]; 2] =
    [&[&rustls::version::TLS13], &[&rustls::version::TLS12]];

#[test]
fn a_resumed_session_keeps_its_id() {
    for tickets in ["on", "off"] {
        let (server, a) = start("5m", tickets);
        for versions in VERSIONS {
            let config = client(std::slice::from_ref(&a), versions);
            let (reused, first) = ask(&server, &config);
            assert_eq!(reused, ".", "tickets {tickets} {versions:?}");
            let (reused, again) = ask(&server, &config);
            assert_eq!(reused, "r", "tickets {tickets} {versions:?}");
            assert_eq!(again.len(), 64, "{again}");
            assert!(again.bytes().all(|b| b.is_ascii_hexdigit()), "{again}");
            // Peregrine's: the id shown at the first connection is the
            // resumed one's, for TLS 1.3 (rustls hands a resumed TLS 1.2
            // session's stored data back to no one: a known limit, see
            // `peregrine_tls::tickets::new_session_id`). nginx's OpenSSL
            // gives each TLS 1.3 ticket a session of its own, whose id the
            // first connection did not show.
            if !is_nginx() && !first.is_empty() && versions[0] == &rustls::version::TLS13 {
                assert_eq!(first, again, "tickets {tickets} {versions:?}");
            }
            // Another client's session is another id.
            let (_, other) = ask(&server, &client(std::slice::from_ref(&a), versions));
            assert_ne!(other, again);
        }
    }
}

#[test]
fn sessions_end_after_ssl_session_timeout() {
    for tickets in ["on", "off"] {
        let (server, a) = start("1", tickets);
        for versions in VERSIONS {
            let config = client(std::slice::from_ref(&a), versions);
            assert_eq!(ask(&server, &config).0, ".");
            // Past the one-second timeout (whole seconds are compared).
            std::thread::sleep(Duration::from_millis(2100));
            assert_eq!(
                ask(&server, &config).0,
                ".",
                "expired: tickets {tickets} {versions:?}"
            );
            assert_eq!(ask(&server, &config).0, "r", "the new session resumes");
        }
    }
}

/// Connections taken per test of resumption across workers: fewer than
/// the engine's block of connection ids per worker (64), so that two
/// connections with ids in one block were accepted by one worker.
const ACROSS: usize = 40;

/// Which worker served a `"$ssl_session_reused $pid $connection"` body:
/// nginx's workers are processes (`$pid`); Peregrine's are threads of one
/// process, each taking `$connection` numbers in blocks of 64.
fn worker_of(body: &str) -> (String, u64) {
    let mut parts = body.split(' ');
    let _ = parts.next();
    let pid = parts.next().unwrap_or_default().to_string();
    let conn: u64 = parts.next().unwrap_or_default().trim().parse().unwrap();
    if is_nginx() {
        (pid, 0)
    } else {
        (pid, (conn - 1) / 64)
    }
}

#[test]
fn sessions_resume_on_another_worker_by_ticket_and_by_cache() {
    for tickets in ["on", "off"] {
        let p = Prefix::new("tls-sessions-workers");
        let a = cert(&p, "a.test");
        let conf = SERVER
            .replace("TIMEOUT", "5m")
            .replace("TICKETS", tickets)
            .replace(
                "$ssl_session_reused $ssl_session_id",
                "$ssl_session_reused $pid $connection",
            )
            .replace(
                "listen 127.0.0.1:PORT ssl;",
                "listen 127.0.0.1:PORT ssl reuseport;",
            );
        // Four workers, each with its own listening socket (`reuseport`,
        // which Peregrine always does): the kernel spreads connections by
        // their addresses. nginx's one shared socket would not (its
        // EPOLLEXCLUSIVE wakes the same idle worker again and again).
        let conf = conf_with(&conf).replace("worker_processes 1;", "worker_processes 4;");
        let server = Server::start(p, &conf);
        for versions in VERSIONS {
            let config = client(std::slice::from_ref(&a), versions);
            let mut tls = connect(&server, &config, "a.test");
            let first = request(&mut tls, "/", "a.test", true)
                .body_str()
                .to_string();
            assert!(first.starts_with(". "), "{first}");
            let mut elsewhere = 0;
            for _ in 0..ACROSS / 2 {
                let mut tls = connect(&server, &config, "a.test");
                let body = request(&mut tls, "/", "a.test", true)
                    .body_str()
                    .to_string();
                assert!(
                    body.starts_with("r "),
                    "tickets {tickets} {versions:?}: {body}"
                );
                if worker_of(&body) != worker_of(&first) {
                    elsewhere += 1;
                }
            }
            assert!(
                elsewhere > 0,
                "tickets {tickets} {versions:?}: no connection reached another worker"
            );
        }
    }
}
