//! The stream module (`stream { }`): TCP sessions proxied to a real echo
//! backend, bytes both ways; a refused peer (next upstream, then 502 in the
//! access log and the client's connection closed); `proxy_protocol on` in
//! front of a real HTTP listener with `listen ... proxy_protocol`; a UDP
//! echo. Debian's nginx has the stream module only as a dynamic module its
//! packages do not install here, so these run against Peregrine only.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::thread;

use crate::support::{
    IO_TIMEOUT, Prefix, Server, free_port, is_nginx, read_to_close, wait_for_lines,
};

/// A TCP echo backend: each connection's bytes come back until it closes.
fn tcp_echo() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for mut c in l.incoming().flatten() {
            thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = c.read(&mut buf) {
                    if n == 0 || c.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

fn udp_echo() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = s.local_addr().unwrap().port();
    thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = s.recv_from(&mut buf) {
            let _ = s.send_to(&buf[..n], from);
        }
    });
    port
}

fn start(stream_body: &str) -> Server {
    let p = Prefix::new("stream");
    p.write("html/t", "SEE-THIS");
    let conf = format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{ access_log off; server {{ listen 127.0.0.1:PORT; }} }}\n\
         stream {{\n log_format s '$remote_addr $protocol $status $bytes_sent $bytes_received $upstream_addr';\n\
         {stream_body}\n}}\n"
    );
    Server::start(p, &conf)
}

#[test]
fn tcp_bytes_both_ways_and_the_log_line() {
    if is_nginx() {
        return;
    }
    let echo = tcp_echo();
    let front = free_port();
    let s = start(&format!(
        "server {{ listen 127.0.0.1:{front}; proxy_pass 127.0.0.1:{echo}; access_log logs/s.log s; }}"
    ));
    let mut c = TcpStream::connect(("127.0.0.1", front)).unwrap();
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    c.write_all(b"hello, stream").unwrap();
    let mut got = [0u8; 13];
    c.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"hello, stream");
    c.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(read_to_close(&mut c).is_empty());
    let lines = wait_for_lines(&s.prefix.dir.join("logs/s.log"), 1, |_| true);
    assert_eq!(
        lines[0],
        format!("127.0.0.1 TCP 200 13 13 127.0.0.1:{echo}")
    );
}

#[test]
fn a_refused_peer_is_skipped_then_502() {
    if is_nginx() {
        return;
    }
    let echo = tcp_echo();
    let dead = free_port();
    let (front, alone) = (free_port(), free_port());
    let s = start(&format!(
        "upstream u {{ server 127.0.0.1:{dead}; server 127.0.0.1:{echo}; }}\n\
         server {{ listen 127.0.0.1:{front}; proxy_pass u; access_log logs/s.log s; }}\n\
         server {{ listen 127.0.0.1:{alone}; proxy_pass 127.0.0.1:{dead}; access_log logs/s.log s; }}"
    ));
    // The first peer refuses: the next one answers.
    let mut c = TcpStream::connect(("127.0.0.1", front)).unwrap();
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    c.write_all(b"ping").unwrap();
    let mut got = [0u8; 4];
    c.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"ping");
    drop(c);
    // The only peer refuses: the client's connection is closed, 502 logged.
    let mut c = TcpStream::connect(("127.0.0.1", alone)).unwrap();
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    assert!(read_to_close(&mut c).is_empty());
    let lines = wait_for_lines(&s.prefix.dir.join("logs/s.log"), 2, |_| true);
    assert!(
        lines.contains(&format!("127.0.0.1 TCP 502 0 0 127.0.0.1:{dead}")),
        "{lines:?}"
    );
    assert!(
        lines.contains(&format!(
            "127.0.0.1 TCP 200 4 4 127.0.0.1:{dead}, 127.0.0.1:{echo}"
        )),
        "{lines:?}"
    );
    let errors = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("connect() failed (111: Connection refused) while connecting to upstream")
    });
    assert!(
        errors[0].contains(&format!(
            ", client: 127.0.0.1, server: 127.0.0.1:{alone}, upstream: \"127.0.0.1:{dead}\""
        )) || errors[0].contains(&format!("server: 127.0.0.1:{front}")),
        "{errors:?}"
    );
}

#[test]
fn proxy_protocol_on_to_an_http_listener() {
    if is_nginx() {
        return;
    }
    let (front, back) = (free_port(), free_port());
    let p = Prefix::new("stream-pp");
    p.write("html/t", "SEE-THIS");
    let conf = format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{ access_log off;\n\
           server {{ listen 127.0.0.1:PORT; }}\n\
           server {{ listen 127.0.0.1:{back} proxy_protocol; add_header X-PP $proxy_protocol_addr:$proxy_protocol_port; }}\n\
         }}\n\
         stream {{ server {{ listen 127.0.0.1:{front}; proxy_pass 127.0.0.1:{back}; proxy_protocol on; }} }}\n"
    );
    let _s = Server::start(p, &conf);
    let mut c = TcpStream::connect(("127.0.0.1", front)).unwrap();
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let me = c.local_addr().unwrap().port();
    c.write_all(b"GET /t HTTP/1.0\r\n\r\n").unwrap();
    let text = String::from_utf8_lossy(&read_to_close(&mut c)).into_owned();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains(&format!("X-PP: 127.0.0.1:{me}\r\n")),
        "{text}"
    );
    assert!(text.ends_with("SEE-THIS"), "{text}");
}

#[test]
fn udp_datagrams_go_and_come_back() {
    if is_nginx() {
        return;
    }
    let echo = udp_echo();
    let front = free_port();
    let s = start(&format!(
        "server {{ listen 127.0.0.1:{front} udp; proxy_pass 127.0.0.1:{echo}; proxy_responses 1; access_log logs/s.log s; }}"
    ));
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    c.connect(("127.0.0.1", front)).unwrap();
    c.send(b"datagram").unwrap();
    let mut buf = [0u8; 64];
    let n = c.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"datagram");
    let lines = wait_for_lines(&s.prefix.dir.join("logs/s.log"), 1, |_| true);
    assert_eq!(lines[0], format!("127.0.0.1 UDP 200 8 8 127.0.0.1:{echo}"));
}
