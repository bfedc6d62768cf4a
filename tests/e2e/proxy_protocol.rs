//! PROXY protocol (`listen ... proxy_protocol`): the header a load balancer
//! sends before the client's bytes, raw v1 and v2 bytes on real sockets, on
//! a TLS port too, and through a real HAProxy (`send-proxy`,
//! `send-proxy-v2`). Checked against nginx (`E2E_SERVER=nginx`).

use std::io::Write;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{
    IO_TIMEOUT, Prefix, Response, Server, free_port, is_nginx, read_to_close, wait_for_lines,
};

/// The v2 signature and `PROXY` command (version 2).
const V2: [u8; 13] = *b"\r\n\r\n\0\r\nQUIT\n\x21";

fn site(extra_listen: &str) -> Server {
    let p = Prefix::new("pp");
    // `$proxy_protocol_tlv_*` came with nginx 1.23.2 (Debian's is 1.22).
    let alpn = if is_nginx() {
        ""
    } else {
        "add_header X-ALPN $proxy_protocol_tlv_alpn;\n"
    };
    p.write("html/t", "SEE-THIS\n");
    let conf = format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{\n    include mime.types;\n\
         log_format pp \"$remote_addr:$remote_port $proxy_protocol_addr $status\";\n\
         access_log logs/access.log pp;\n\
         server {{\n        listen 127.0.0.1:PORT proxy_protocol;\n{extra_listen}\
         root html;\n\
         add_header X-IP $remote_addr!$remote_port;\n\
         add_header X-PP $proxy_protocol_addr!$proxy_protocol_port;\n\
         add_header X-PPS $proxy_protocol_server_addr!$proxy_protocol_server_port;\n\
         {alpn}\
         location /real/ {{\n            set_real_ip_from 127.0.0.1;\n\
         real_ip_header proxy_protocol;\n            error_page 404 =200 /t;\n\
         location /real/denied {{ deny 192.0.2.1; }}\n        }}\n    }}\n}}\n"
    );
    Server::start(p, &conf)
}

/// `header` then a GET of `path`, written in pieces of `piece` bytes with
/// a pause between them (a header cut anywhere must still be read).
fn get_in_pieces(s: &Server, header: &[u8], path: &str, piece: usize) -> Vec<u8> {
    let mut c = s.connect();
    let mut all = header.to_vec();
    all.extend_from_slice(format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").as_bytes());
    let _ = c.set_nodelay(true);
    for chunk in all.chunks(piece) {
        c.write_all(chunk).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    read_to_close(&mut c)
}

fn get(s: &Server, header: &[u8], path: &str) -> Response {
    Response::parse(&get_in_pieces(s, header, path, usize::MAX)).expect("a response")
}

#[test]
fn v1_header_gives_the_variables_and_realip() {
    let s = site("");
    let v1 = b"PROXY TCP4 192.0.2.1 192.0.2.2 123 5678\r\n";
    let r = get(&s, v1, "/t");
    assert_eq!(r.status, 200);
    assert_eq!(r.body_str(), "SEE-THIS\n");
    assert_eq!(r.header("X-PP"), Some("192.0.2.1!123"));
    assert_eq!(r.header("X-PPS"), Some("192.0.2.2!5678"));
    assert!(r.header("X-IP").unwrap().starts_with("127.0.0.1!"));
    // Trusted: the header's source is the client, for rules and the log.
    let r = get(&s, v1, "/real/x");
    assert_eq!(r.header("X-IP"), Some("192.0.2.1!123"));
    assert_eq!(get(&s, v1, "/real/denied").status, 403);
    let v6 = b"PROXY TCP6 2001:Db8::1 2001:db8::2 123 5678\r\n";
    let r = get(&s, v6, "/real/x");
    assert_eq!(r.header("X-IP"), Some("2001:db8::1!123"));
    assert_eq!(r.header("X-PP"), Some("2001:Db8::1!123"));
    // UNKNOWN: the connection's own addresses, no proxy_protocol values.
    let r = get(&s, b"PROXY UNKNOWN 1 2 3\r\n", "/t");
    assert_eq!((r.status, r.header("X-PP")), (200, Some("!")));
    let log = s.prefix.dir.join("logs/access.log");
    let lines = wait_for_lines(&log, 5, |_| true);
    assert!(
        lines.contains(&"192.0.2.1:123 192.0.2.1 200".to_string()),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"192.0.2.1:123 192.0.2.1 403".to_string()),
        "{lines:?}"
    );
}

/// A deliberate difference: nginx takes the header from its first read and
/// calls a cut one broken; Peregrine waits for the rest (under
/// `client_header_timeout`), so a slow sender is not refused.
#[test]
fn a_header_cut_into_pieces_is_read_whole() {
    if is_nginx() {
        return;
    }
    let s = site("");
    for piece in [1, 3, 7, 20] {
        let r = Response::parse(&get_in_pieces(
            &s,
            b"PROXY TCP4 192.0.2.1 192.0.2.2 123 5678\r\n",
            "/t",
            piece,
        ))
        .expect("a response");
        assert_eq!(r.header("X-PP"), Some("192.0.2.1!123"), "pieces of {piece}");
    }
}

/// A v2 PROXY header over TCP/IPv4 with `tlvs` after the addresses.
fn v2_tcp4(tlvs: &[u8]) -> Vec<u8> {
    let mut h = V2.to_vec();
    h.push(0x11);
    h.extend_from_slice(&(12 + tlvs.len() as u16).to_be_bytes());
    h.extend_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
    h.extend_from_slice(&123u16.to_be_bytes());
    h.extend_from_slice(&5678u16.to_be_bytes());
    h.extend_from_slice(tlvs);
    h
}

#[test]
fn v2_header_with_tlvs() {
    let s = site("");
    let h = v2_tcp4(b"\x01\x00\x02h2\x04\x00\x04\xde\xad\xbe\xef");
    let r = get(&s, &h, "/real/x");
    assert_eq!(r.header("X-PP"), Some("192.0.2.1!123"));
    assert_eq!(r.header("X-PPS"), Some("192.0.2.2!5678"));
    assert_eq!(r.header("X-IP"), Some("192.0.2.1!123"));
    if !is_nginx() {
        assert_eq!(r.header("X-ALPN"), Some("h2"));
    }
    for piece in [1, 5, 16].into_iter().filter(|_| !is_nginx()) {
        let r = Response::parse(&get_in_pieces(&s, &h, "/t", piece)).unwrap();
        assert_eq!(
            r.header("X-PPS"),
            Some("192.0.2.2!5678"),
            "pieces of {piece}"
        );
    }
    // LOCAL (a balancer's own health check): no addresses.
    let mut local = V2.to_vec();
    local[12] = 0x20;
    local.extend_from_slice(&[0, 0, 0]);
    let r = get(&s, &local, "/t");
    assert_eq!((r.status, r.header("X-PP")), (200, Some("!")));
}

#[test]
fn a_broken_header_closes_the_connection_with_nginx_error() {
    let s = site("");
    let mut c = s.connect();
    c.write_all(b"GET /t HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_to_close(&mut c), b"", "no answer without a header");
    let mut c = s.connect();
    c.write_all(b"PROXY TCP5 1 2 3 4\r\n").unwrap();
    assert_eq!(read_to_close(&mut c), b"");
    let log = s.prefix.dir.join("logs/error.log");
    let lines = wait_for_lines(&log, 2, |l| l.contains("broken header"));
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("[error]"), "{lines:?}");
    assert!(
        lines[0].contains("broken header: \"GET /t HTTP/1.0"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("broken header: \"PROXY TCP5 1 2 3 4"),
        "{lines:?}"
    );
    if !is_nginx() {
        // Current nginx quotes the input up to its first CR or LF (1.22
        // quotes all it read, newlines included).
        assert!(
            lines[0].contains("broken header: \"GET /t HTTP/1.0\" while reading PROXY protocol"),
            "{lines:?}"
        );
    }
}

#[test]
fn a_silent_connection_times_out_under_client_header_timeout() {
    let p = Prefix::new("pp-timeout");
    let conf = "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events { worker_connections 128; }\nhttp {\n    access_log off;\n\
         server {\n        listen 127.0.0.1:PORT proxy_protocol;\n\
         client_header_timeout 1s;\n    }\n}\n";
    let s = Server::start(p, conf);
    // Silent, then (Peregrine: see above) with half a header.
    let halves: &[&[u8]] = if is_nginx() {
        &[b""]
    } else {
        &[b"", b"PROXY TCP4 192.0.2.1 "]
    };
    for half in halves {
        let mut c = s.connect();
        c.write_all(half).unwrap();
        let started = Instant::now();
        assert_eq!(read_to_close(&mut c), b"");
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(900), "{waited:?}");
        assert!(waited < Duration::from_secs(4), "{waited:?}");
    }
}

#[test]
fn on_a_tls_port_the_header_comes_before_the_handshake() {
    let p = Prefix::new("pp-tls");
    let der = crate::tls::cert(&p, "localhost");
    p.write("html/t", "SEE-THIS\n");
    let port = free_port();
    let conf = format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\nhttp {{\n    access_log off;\n\
         server {{\n        listen 127.0.0.1:PORT;\n        listen 127.0.0.1:{port} ssl proxy_protocol;\n\
         ssl_certificate localhost.crt;\n        ssl_certificate_key localhost.key;\n\
         root html;\n        add_header X-PP $proxy_protocol_addr!$proxy_protocol_port;\n\
         add_header X-Scheme $scheme;\n    }}\n}}\n"
    );
    let s = Server::start(p, &conf);
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    sock.write_all(&v2_tcp4(b"")).unwrap();
    let config = crate::tls::client(&[der], &[&rustls::version::TLS12]);
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(config, name).unwrap();
    let mut tls = crate::tls::Tls::new(conn, sock);
    let r = crate::tls::request(&mut tls, "/t", "localhost", true);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-PP"), Some("192.0.2.1!123"));
    assert_eq!(r.header("X-Scheme"), Some("https"));
    drop(s);
}

/// HAProxy in TCP mode in front of `backend`, `send` being its server
/// option (`send-proxy`, `send-proxy-v2`); stopped on drop.
struct Haproxy {
    child: Child,
    port: u16,
    _dir: Prefix,
}

impl Haproxy {
    fn start(backend: std::net::SocketAddr, send: &str) -> Option<Haproxy> {
        let bin = "/usr/sbin/haproxy";
        if !std::path::Path::new(bin).exists() {
            eprintln!("skipped: no {bin}");
            return None;
        }
        let dir = Prefix::new("haproxy");
        let port = free_port();
        let cfg = dir.write(
            "haproxy.cfg",
            format!(
                "global\n    maxconn 64\ndefaults\n    mode tcp\n    timeout connect 2s\n\
                 timeout client 5s\n    timeout server 5s\n\
                 frontend fe\n    bind 127.0.0.1:{port}\n    default_backend be\n\
                 backend be\n    server s1 {backend} {send}\n"
            ),
        );
        let child = Command::new(bin)
            .args(["-db", "-f"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "haproxy did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Haproxy {
            child,
            port,
            _dir: dir,
        })
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn through_a_real_haproxy_the_client_is_known() {
    let s = site("");
    for send in ["send-proxy", "send-proxy-v2"] {
        let Some(h) = Haproxy::start(s.addr, send) else {
            return;
        };
        let mut c = TcpStream::connect(("127.0.0.1", h.port)).unwrap();
        c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let client_port = c.local_addr().unwrap().port();
        c.write_all(b"GET /real/x HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let r = Response::parse(&read_to_close(&mut c)).expect("a response");
        assert_eq!(r.status, 200, "{send}");
        // HAProxy reports the client's own address and port.
        let want = format!("127.0.0.1!{client_port}");
        assert_eq!(r.header("X-PP"), Some(want.as_str()), "{send}");
        assert_eq!(r.header("X-IP"), Some(want.as_str()), "{send}");
        assert_eq!(
            r.header("X-PPS"),
            Some(format!("127.0.0.1!{}", h.port).as_str()),
            "{send}"
        );
    }
}
