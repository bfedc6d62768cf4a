//! Test harness: an engine running in-process on a free port, and a raw
//! HTTP client over real sockets.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_engine::{Command, Control, RunOptions};

pub struct Server {
    pub addr: SocketAddr,
    pub control: Control,
    pub dir: PathBuf,
    pub thread: Option<JoinHandle<Result<(), String>>>,
    pub log: Arc<std::sync::Mutex<Vec<String>>>,
    /// The master thread (it runs the `ready` callback), for `tgkill`.
    pub master_tid: u32,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fresh directory with `html/` holding `files`.
pub fn temp_dir(files: &[(&str, &[u8])]) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("peregrine-engine-it-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("html")).unwrap();
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    for (name, data) in files {
        std::fs::write(dir.join("html").join(name), data).unwrap();
    }
    dir
}

/// Parses `conf` where `{PORT}` and `{DIR}` are substituted.
pub fn config(conf: &str, dir: &std::path::Path, port: u16) -> Arc<peregrine_conf::Config> {
    let text = conf
        .replace("{PORT}", &port.to_string())
        .replace("{DIR}", dir.to_str().unwrap());
    let path = dir.join("nginx.conf");
    std::fs::write(&path, &text).unwrap();
    Arc::new(
        peregrine_conf::parse_str(&text, path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}")),
    )
}

/// Starts the engine with `conf` (a config text) serving `files`.
pub fn start(conf: &str, files: &[(&str, &[u8])]) -> Server {
    start_with_reload(conf, files, |_| None)
}

/// As [`start`]; `reload(n)` gives the text for the n-th reload (from 1).
pub fn start_with_reload(
    conf: &str,
    files: &[(&str, &[u8])],
    reload: impl Fn(usize) -> Option<String> + Send + 'static,
) -> Server {
    start_custom(conf, files, reload, |_| {})
}

/// As [`start_with_reload`], with a last say on the options.
pub fn start_custom(
    conf: &str,
    files: &[(&str, &[u8])],
    reload: impl Fn(usize) -> Option<String> + Send + 'static,
    tweak: impl FnOnce(&mut RunOptions),
) -> Server {
    let dir = temp_dir(files);
    let port = free_port();
    let c = config(conf, &dir, port);
    let log: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let log2 = log.clone();
    let rdir = dir.clone();
    let count = std::sync::atomic::AtomicUsize::new(0);
    let mut opts = RunOptions::new(Box::new(move || {
        let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        match reload(n) {
            Some(text) => Ok(config(&text, &rdir, port)),
            None => Err("reload refused by test".into()),
        }
    }));
    opts.handle_signals = false;
    opts.write_pid = false;
    opts.error_log = Arc::new(move |level, msg| {
        log2.lock().unwrap_or_else(|e| e.into_inner()).push(format!(
            "[{}] {msg}",
            peregrine_engine::format_error_line(level, "").trim()
        ));
    });
    tweak(&mut opts);
    let (tx, rx) = mpsc::channel();
    opts.ready = Some(Box::new(move |r| {
        let _ = tx.send((r, peregrine_sys::gettid()));
    }));
    let thread =
        std::thread::spawn(move || peregrine_engine::run(c, opts).map_err(|e| e.to_string()));
    let (ready, master_tid) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("engine did not start");
    Server {
        addr: ready.addrs[0],
        control: ready.control,
        dir,
        thread: Some(thread),
        log,
        master_tid,
    }
}

impl Server {
    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    }

    /// Sends `cmd` and waits for `run` to return (Stop/Quit).
    pub fn stop_with(mut self, cmd: Command) -> Result<(), String> {
        self.control.send(cmd).unwrap();
        self.thread.take().unwrap().join().unwrap()
    }

    pub fn logged(&self, needle: &str) -> bool {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|l| l.contains(needle))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = self.control.send(Command::Stop);
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One parsed response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// Reads one response (Content-Length framed; `head_only` for HEAD).
pub fn read_response(s: &mut TcpStream, buf: &mut Vec<u8>, head_only: bool) -> Option<Resp> {
    loop {
        if let Some(end) = find(buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
            let mut r = Resp {
                status,
                head,
                body: Vec::new(),
            };
            let len: usize = if head_only || status == 100 || status == 304 {
                0
            } else {
                r.header("content-length").map_or(0, |v| v.parse().unwrap())
            };
            while buf.len() < end + 4 + len {
                if !read_more(s, buf) {
                    return None;
                }
            }
            r.body = buf[end + 4..end + 4 + len].to_vec();
            buf.drain(..end + 4 + len);
            return Some(r);
        }
        if !read_more(s, buf) {
            return None;
        }
    }
}

fn read_more(s: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut tmp = [0u8; 65536];
    match s.read(&mut tmp) {
        Ok(0) | Err(_) => false,
        Ok(n) => {
            buf.extend_from_slice(&tmp[..n]);
            true
        }
    }
}

pub fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// Sends `req` on a new connection and reads one response.
pub fn get(server: &Server, req: &str) -> Resp {
    let mut s = server.connect();
    s.write_all(req.as_bytes()).unwrap();
    read_response(&mut s, &mut Vec::new(), req.starts_with("HEAD")).expect("no response")
}

/// Whether the peer closes within `within` (EOF or reset) without sending
/// anything more; panics if bytes arrive.
pub fn closes_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut tmp = [0u8; 1024];
    match s.read(&mut tmp) {
        Ok(0) => true,
        Ok(n) => panic!("unexpected bytes: {:?}", String::from_utf8_lossy(&tmp[..n])),
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
    }
}

pub const BASIC: &str = "
worker_processes 2;
error_log stderr info;
events { worker_connections 64; }
http {
    server {
        listen 127.0.0.1:{PORT};
        root {DIR}/html;
        location = /status { stub_status; }
    }
}
";
