use super::*;

fn conf(text: &str) -> Config {
    peregrine_conf::parse_str(text, "/tmp/peregrine-listen-test/nginx.conf")
        .unwrap_or_else(|e| panic!("{e}"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn wildcard_covers_specific_addresses_of_its_port() {
    let c = conf(
        "events {} http {
            server { listen 8081; listen 127.0.0.1:8081; listen 127.0.0.1:8082; }
            server { listen 127.0.0.1:8082; listen [::1]:8081; }
        }",
    );
    let addrs: Vec<String> = wanted(&c).iter().map(|s| s.addr.to_string()).collect();
    assert_eq!(addrs, ["0.0.0.0:8081", "127.0.0.1:8082", "[::1]:8081"]);
}

#[test]
fn no_http_block_listens_nowhere() {
    assert!(wanted(&conf("events {}")).is_empty());
}

#[test]
fn reconcile_keeps_grows_and_drops() {
    let p1 = free_port();
    let p2 = free_port();
    let a: SocketAddr = format!("127.0.0.1:{p1}").parse().unwrap();
    let b: SocketAddr = format!("127.0.0.1:{p2}").parse().unwrap();
    let mut l = Listeners::default();
    l.reconcile(
        &[Spec {
            addr: a,
            backlog: 16,
            deferred: false,
            unix: None,
            udp: false,
            ipv6only: true,
        }],
        2,
    )
    .unwrap();
    assert_eq!(l.bound[0].sockets.len(), 2);
    let kept = l.bound[0].sockets[0].local_addr().unwrap();
    // A worker's share is a dup of the same socket.
    let share = l.for_worker(1, 2).unwrap();
    assert_eq!(share.len(), 1);
    assert_eq!(share[0].2.local_addr().unwrap(), kept);
    drop(share);

    l.reconcile(
        &[
            Spec {
                addr: a,
                backlog: 16,
                deferred: false,
                unix: None,
                udp: false,
                ipv6only: true,
            },
            Spec {
                addr: b,
                backlog: 16,
                deferred: false,
                unix: None,
                udp: false,
                ipv6only: true,
            },
        ],
        3,
    )
    .unwrap();
    assert_eq!(l.bound.len(), 2);
    assert_eq!(
        l.bound.iter().map(|b| b.sockets.len()).collect::<Vec<_>>(),
        [3, 3]
    );
    // Fewer workers later: every socket still goes to some worker.
    let total: usize = (0..2).map(|w| l.for_worker(w, 2).unwrap().len()).sum();
    assert_eq!(total, 6);

    l.reconcile(
        &[Spec {
            addr: b,
            backlog: 16,
            deferred: false,
            unix: None,
            udp: false,
            ipv6only: true,
        }],
        1,
    )
    .unwrap();
    assert_eq!(l.addrs(), [b]);
    assert!(
        std::net::TcpStream::connect(a).is_err(),
        "removed address is closed"
    );
}

#[test]
fn failed_bind_keeps_what_was_serving() {
    let p1 = free_port();
    let a: SocketAddr = format!("127.0.0.1:{p1}").parse().unwrap();
    let mut l = Listeners::default();
    l.reconcile(
        &[Spec {
            addr: a,
            backlog: 16,
            deferred: false,
            unix: None,
            udp: false,
            ipv6only: true,
        }],
        1,
    )
    .unwrap();
    // Occupied without SO_REUSEPORT: binding there fails.
    let blocker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = blocker.local_addr().unwrap();
    let err = l
        .reconcile(
            &[
                Spec {
                    addr: a,
                    backlog: 16,
                    deferred: false,
                    unix: None,
                    udp: false,
                    ipv6only: true,
                },
                Spec {
                    addr: busy,
                    backlog: 16,
                    deferred: false,
                    unix: None,
                    udp: false,
                    ipv6only: true,
                },
            ],
            1,
        )
        .unwrap_err();
    assert!(matches!(err, EngineError::Bind { addr, .. } if addr == busy));
    assert_eq!(l.addrs(), [a]);
    assert!(std::net::TcpStream::connect(a).is_ok());
}

#[test]
fn port_zero_resolves_once_for_all_sockets() {
    let a: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut l = Listeners::default();
    l.reconcile(
        &[Spec {
            addr: a,
            backlog: 16,
            deferred: false,
            unix: None,
            udp: false,
            ipv6only: true,
        }],
        3,
    )
    .unwrap();
    let port = l.bound[0].local.port();
    assert_ne!(port, 0);
    for s in &l.bound[0].sockets {
        assert_eq!(s.local_addr().unwrap().port(), port);
    }
}

/// Accept is not deferred unless `listen ... deferred` says so (nginx's
/// default, `DEFER_ACCEPT_BY_DEFAULT`); the `listen` of an address that
/// carries socket options decides, whichever server it is in, and its
/// backlog too.
#[test]
fn not_deferred_by_default_and_the_listen_with_options_decides() {
    let (p, q) = (free_port(), free_port());
    let c = conf(&format!(
        "events {{}} http {{ server {{ listen 127.0.0.1:{p}; listen 127.0.0.1:{q}; }} \
         server {{ listen 127.0.0.1:{p} deferred backlog=77; listen 127.0.0.1:{q}; }} }}"
    ));
    let specs = wanted(&c);
    assert_eq!(specs.len(), 2);
    assert!(specs[0].deferred && specs[0].backlog == 77, "{specs:?}");
    assert!(!specs[1].deferred, "{specs:?}");
    let mut l = Listeners::default();
    l.reconcile(&specs, 1).unwrap();
    assert!(peregrine_sys::net::tcp_defer_accept(&l.bound[0].sockets[0]).unwrap() > 0);
    assert_eq!(
        peregrine_sys::net::tcp_defer_accept(&l.bound[1].sockets[0]).unwrap(),
        0
    );
}

#[test]
fn deferred_is_set_and_a_reload_clears_it() {
    let p = free_port();
    let c = conf(&format!(
        "events {{}} http {{ server {{ listen 127.0.0.1:{p} deferred; }} server {{ listen 127.0.0.1:{p}; }} }}"
    ));
    let specs = wanted(&c);
    assert!(specs[0].deferred, "{specs:?}");
    let mut l = Listeners::default();
    l.reconcile(&specs, 2).unwrap();
    for s in &l.bound[0].sockets {
        assert!(peregrine_sys::net::tcp_defer_accept(s).unwrap() > 0);
    }
    let plain = Spec {
        deferred: false,
        unix: None,
        udp: false,
        ipv6only: true,
        ..specs[0].clone()
    };
    l.reconcile(&[plain], 2).unwrap();
    for s in &l.bound[0].sockets {
        assert_eq!(peregrine_sys::net::tcp_defer_accept(s).unwrap(), 0);
    }
}

/// The accept queue limit `ss -ltn` reports for a listening port (its
/// Send-Q column), or `None` when `ss` is missing.
fn ss_backlog(port: u16) -> Option<u32> {
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(2)?.parse().ok()
}

/// A reload that changes `backlog=` applies it to the kept sockets, as
/// nginx's second `listen()` call does.
#[test]
fn reload_applies_a_new_backlog() {
    let p = free_port();
    let spec = |n| {
        wanted(&conf(&format!(
            "events {{}} http {{ server {{ listen 127.0.0.1:{p} backlog={n}; }} }}"
        )))
    };
    let mut l = Listeners::default();
    l.reconcile(&spec(77), 1).unwrap();
    let Some(before) = ss_backlog(p) else {
        eprintln!("ss is missing: the kernel's figure cannot be read");
        return;
    };
    assert_eq!(before, 77);
    l.reconcile(&spec(200), 1).unwrap();
    assert_eq!(ss_backlog(p), Some(200));
    assert_eq!(l.bound[0].spec.backlog, 200);
}
