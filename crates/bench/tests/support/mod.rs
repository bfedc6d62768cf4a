//! Small HTTP servers on loopback for the tests: a well-behaved one and
//! fault servers (reset, early close, garbage, truncation, silence).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server answers each request.
#[derive(Clone, Debug)]
pub enum Mode {
    /// HTTP/1.1, Content-Length, keeps the connection unless asked to close.
    Ok { body: &'static str },
    /// Chunked body, keep-alive.
    Chunked,
    /// Status code other than 200.
    Status(u16),
    /// Resets the connection (SO_LINGER 0) after reading the request.
    Reset,
    /// Closes without answering.
    CloseEarly,
    /// Answers with bytes that are not HTTP.
    Garbage,
    /// Content-Length 100, sends 10 bytes, closes.
    Truncated,
    /// Body length alternates between 5 and 6 bytes per connection count.
    Varying,
    /// Reads the request and never answers.
    Silent,
    /// Answers one request with keep-alive, then closes the idle socket.
    OneThenClose { body: &'static str },
    /// Like `Ok`, but the server stalls `ms` before answering the `nth`
    /// request (counted over all connections).
    Stall { nth: u64, ms: u64 },
}

pub struct Server {
    pub addr: SocketAddr,
    pub connections: Arc<AtomicU64>,
    pub requests: Arc<AtomicU64>,
    /// The first request's bytes.
    pub first_request: Arc<Mutex<Vec<u8>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

pub fn start(mode: Mode) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let s = Server {
        addr,
        connections: Arc::new(AtomicU64::new(0)),
        requests: Arc::new(AtomicU64::new(0)),
        first_request: Arc::new(Mutex::new(Vec::new())),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let (conns, reqs, first, stop) = (
        s.connections.clone(),
        s.requests.clone(),
        s.first_request.clone(),
        s.stop.clone(),
    );
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let Ok(stream) = stream else { continue };
            let n = conns.fetch_add(1, Ordering::Relaxed);
            let (mode, reqs, first) = (mode.clone(), reqs.clone(), first.clone());
            std::thread::spawn(move || serve(stream, mode, n, &reqs, &first));
        }
    });
    s
}

/// Reads one request (head and Content-Length body); None at EOF.
fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let cl = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            let total = end + 4 + cl;
            if buf.len() >= total {
                let req: Vec<u8> = buf.drain(..total).collect();
                return Some(req);
            }
        }
        let mut tmp = [0u8; 16384];
        match s.read(&mut tmp) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    }
}

fn serve(mut s: TcpStream, mode: Mode, conn_no: u64, reqs: &AtomicU64, first: &Mutex<Vec<u8>>) {
    let mut buf = Vec::new();
    let mut served = 0u64;
    while let Some(req) = read_request(&mut s, &mut buf) {
        let n = reqs.fetch_add(1, Ordering::Relaxed);
        if n == 0
            && let Ok(mut f) = first.lock()
        {
            *f = req.clone();
        }
        let text = String::from_utf8_lossy(&req).to_ascii_lowercase();
        let http10 = text.lines().next().is_some_and(|l| l.ends_with("http/1.0"));
        let close = text.contains("connection: close")
            || (http10 && !text.contains("connection: keep-alive"));
        let is_head = text.starts_with("head ");
        let conn_hdr = if close { "close" } else { "keep-alive" };
        if let Mode::Stall { nth, ms } = mode
            && n == nth
        {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let resp: Vec<u8> = match &mode {
            Mode::Stall { .. } => format!(
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: {conn_hdr}\r\n\r\ns"
            )
            .into_bytes(),
            Mode::Ok { body } | Mode::OneThenClose { body } => {
                let b = if is_head { "" } else { body };
                format!(
                    "HTTP/1.1 200 OK\r\nServer: test/1.0 (unit)\r\nContent-Length: {}\r\nConnection: {conn_hdr}\r\n\r\n{b}",
                    body.len()
                )
                .into_bytes()
            }
            Mode::Chunked => format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: {conn_hdr}\r\n\r\n4\r\nabcd\r\n3;x=y\r\nefg\r\n0\r\n\r\n"
            )
            .into_bytes(),
            Mode::Status(code) => {
                format!("HTTP/1.1 {code} Nope\r\nContent-Length: 2\r\nConnection: {conn_hdr}\r\n\r\nno").into_bytes()
            }
            Mode::Reset => {
                let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
                return;
            }
            Mode::CloseEarly => return,
            Mode::Garbage => b"SSH-2.0-OpenSSH\r\n\r\n".to_vec(),
            Mode::Truncated => {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
                return;
            }
            Mode::Varying => {
                let body = if conn_no.is_multiple_of(2) { "12345" } else { "123456" };
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
                    .into_bytes()
            }
            Mode::Silent => {
                std::thread::sleep(Duration::from_secs(5));
                return;
            }
        };
        if s.write_all(&resp).is_err() {
            return;
        }
        served += 1;
        if close || matches!(mode, Mode::Varying) {
            return;
        }
        if matches!(mode, Mode::OneThenClose { .. }) && served == 1 {
            std::thread::sleep(Duration::from_millis(20));
            return;
        }
    }
}

/// Argument vector from string slices.
pub fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
