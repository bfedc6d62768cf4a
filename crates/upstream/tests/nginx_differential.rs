//! The balancers against nginx itself: Debian's nginx proxies sequential
//! requests to three loopback backends (each answers with its own port)
//! through one `upstream` per method, and the peers it picks must be the
//! peers this crate picks for the same requests: the smooth weighted
//! round robin's order, least_conn's tie-break, ip_hash's choice for
//! clients of 60 networks (bound to 127.x.y.1), `hash $arg_k`'s and `hash $arg_k consistent`'s for each key.
//! (random is random in both.) Skipped, with a message, when
//! `/usr/sbin/nginx` is not installed.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use peregrine_upstream::{Key, Method, PeerConf, Upstream};

const NGINX: &str = "/usr/sbin/nginx";
const REQUESTS: usize = 60;

/// A backend on a free port that answers every request with its port.
fn backend() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut head = Vec::new();
            let mut b = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&b[..n]),
                }
            }
            let body = port.to_string();
            let _ = write!(
                s,
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = s.shutdown(Shutdown::Both);
        }
    });
    port
}

struct Nginx {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The groups: (location and upstream name, method directive, weights).
/// In `dead` and `lcdead` the second server refuses connections: nginx
/// counts the failure, tries the next peer, and rests the dead one for
/// `fail_timeout` (longer than the test).
const GROUPS: &[(&str, &str, [u32; 3])] = &[
    ("rr", "", [5, 1, 1]),
    ("dead", "", [2, 3, 1]),
    ("lcdead", "least_conn;", [1, 1, 1]),
    ("lc", "least_conn;", [1, 2, 1]),
    ("iph", "ip_hash;", [1, 1, 1]),
    ("h", "hash $arg_k;", [1, 2, 1]),
    ("ch", "hash $arg_k consistent;", [1, 1, 2]),
];

fn start_nginx(ports: &[u16; 3], with_dead: &[u16; 3]) -> Option<Nginx> {
    if !std::path::Path::new(NGINX).exists() {
        eprintln!("skipped: {NGINX} not installed");
        return None;
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let dir = std::env::temp_dir().join(format!(
        "peregrine-upstream-diff-{}-{port}",
        std::process::id()
    ));
    std::fs::create_dir_all(dir.join("logs")).ok()?;
    let mut http = String::new();
    for (name, method, weights) in GROUPS {
        http += &format!("upstream {name} {{ {method}\n");
        let ports = if name.ends_with("dead") {
            with_dead
        } else {
            ports
        };
        for (p, w) in ports.iter().zip(weights) {
            http += &format!("  server 127.0.0.1:{p} weight={w};\n");
        }
        http += "}\n";
    }
    let locations: String = GROUPS
        .iter()
        .map(|(name, _, _)| format!("location /{name} {{ proxy_pass http://{name}; }}\n"))
        .collect();
    let conf = format!(
        "worker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/logs/error.log;\nevents {{}}\n\
         http {{ access_log off;\n{http}\nserver {{ listen 127.0.0.1:{port};\n{locations} }} }}\n",
        d = dir.display()
    );
    std::fs::write(dir.join("nginx.conf"), conf).ok()?;
    let child = Command::new(NGINX)
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .args(["-g", "daemon off; master_process off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let nginx = Nginx { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nginx did not start on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(nginx)
}

/// The backend port nginx's answer to `path`, asked from the loopback
/// address `from` (any 127/8 address is the machine's own), came from.
fn ask(port: u16, path: &str, from: [u8; 4]) -> u16 {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let local = std::net::SocketAddr::from((from, 0));
    sock.bind(&local.into()).unwrap();
    let server = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    sock.connect(&server.into()).unwrap();
    let mut s: TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let body = out.split("\r\n\r\n").nth(1).unwrap_or_default();
    body.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{path}: {out}"))
}

fn method(directive: &str) -> Method {
    match directive {
        "" => Method::RoundRobin,
        "least_conn;" => Method::LeastConn,
        "ip_hash;" => Method::IpHash,
        "hash $arg_k;" => Method::Hash { consistent: false },
        _ => Method::Hash { consistent: true },
    }
}

#[test]
fn every_method_picks_the_peers_nginx_picks() {
    let ports = [backend(), backend(), backend()];
    // A port nothing listens on (bound, then closed): connections to it
    // are refused.
    let dead = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let with_dead = [ports[0], dead, ports[2]];
    let Some(nginx) = start_nginx(&ports, &with_dead) else {
        return;
    };
    for (name, directive, weights) in GROUPS {
        let ports = if name.ends_with("dead") {
            with_dead
        } else {
            ports
        };
        let peers = ports
            .iter()
            .zip(weights)
            .map(|(p, &w)| PeerConf {
                weight: w,
                ..PeerConf::new(&format!("127.0.0.1:{p}"))
            })
            .collect();
        let mut ours = Upstream::new(name, peers, method(directive), 1).unwrap();
        let (mut want, mut got): (Vec<u16>, Vec<u16>) = (Vec::new(), Vec::new());
        for i in 0..REQUESTS {
            let key = format!("key{i}");
            // Clients from 60 networks (ip_hash hashes the /24).
            let from = [127, i as u8, (i * 7) as u8, 1];
            want.push(ask(nginx.port, &format!("/{name}?k={key}"), from));
            let k = match ours.method {
                Method::IpHash => Key::Addr(&from),
                Method::Hash { .. } => Key::Bytes(key.as_bytes()),
                _ => Key::None,
            };
            let mut a = ours.start(k);
            // The attempts of one request: a refused connection is a
            // failure, and the next peer is tried.
            let port = loop {
                let id = ours.get(&mut a, 0).unwrap();
                let port: u16 = ours
                    .peer(id)
                    .0
                    .name
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let refused = port == dead;
                ours.free(&mut a, refused, 0);
                if !refused {
                    break port;
                }
            };
            got.push(port);
        }
        assert_eq!(got, want, "upstream {name} ({directive})");
    }
}
