//! Shared helpers: a throw-away prefix directory, the real `peregrine` binary
//! started on a free loopback port, and raw HTTP over real sockets.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = match option_env!("CARGO_BIN_EXE_peregrine") {
    Some(bin) => bin,
    None => "peregrine",
};
const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// How long a server may take to start listening before the test fails.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Read timeout for a response: generous, tests never measure time.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// The usual test configuration around `http_body`: one worker, the error
/// log at `info` in `logs/`, no access log, `mime.types` included.
pub fn conf_with(http_body: &str) -> String {
    format!(
        "worker_processes 1;\nerror_log logs/error.log info;\npid logs/test.pid;\n\
         events {{ worker_connections 128; }}\n\
         http {{\n    include mime.types;\n    access_log off;\n{http_body}\n}}\n"
    )
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A prefix directory (conf/, html/, logs/) removed on drop.
pub struct Prefix {
    pub dir: PathBuf,
}

impl Prefix {
    pub fn new(tag: &str) -> Prefix {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("peregrine-e2e-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["conf", "html", "logs"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::copy(
            Path::new(REPO).join("conf/mime.types"),
            dir.join("conf/mime.types"),
        )
        .unwrap();
        Prefix { dir }
    }

    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Writes conf/nginx.conf.
    pub fn conf(&self, text: &str) -> PathBuf {
        self.write("conf/nginx.conf", text)
    }

    /// Runs the binary with `-p PREFIX -c conf/nginx.conf` and extra args.
    pub fn run(&self, extra: &[&str]) -> Output {
        Command::new(BIN)
            .arg("-p")
            .arg(&self.dir)
            .args(["-c", "conf/nginx.conf"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// True when the suite runs against nginx (`E2E_SERVER=nginx`).
pub fn is_nginx() -> bool {
    std::env::var("E2E_SERVER").is_ok_and(|v| v == "nginx")
}

/// The name a server puts in its `Server` header and error pages
/// (`server_tokens on`, the default).
pub fn server_name() -> &'static str {
    if is_nginx() {
        "nginx/1.22.1"
    } else {
        // nginx's token for the release Peregrine follows (codec's
        // SERVER_VERSION; docs/nginx-tests.md says why).
        "nginx/1.29.8"
    }
}

/// The lines of `path` that `keep` accepts, once there are at least `n` of
/// them or after 5 s (logs are written by the server's workers and may
/// lag behind the response); read as lossy UTF-8, since a log line may
/// carry bytes a client sent.
pub fn wait_for_lines(path: &Path, n: usize, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read(path).unwrap_or_default();
        let lines: Vec<String> = String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| keep(l))
            .map(str::to_string)
            .collect();
        if lines.len() >= n || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A loopback port free at the time of asking (the kernel picks it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running server, stopped (SIGTERM, then SIGKILL) on drop.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub prefix: Prefix,
}

impl Server {
    /// Writes `conf` (with `PORT` replaced by a free port) and starts the server.
    ///
    /// With `E2E_SERVER=nginx` in the environment the same test runs against
    /// Debian's nginx instead: that is how the expectations of these tests
    /// are checked against the reference (`E2E_SERVER=nginx cargo test --test e2e`;
    /// tests of Peregrine-only features are skipped then, see `is_nginx`).
    pub fn start(prefix: Prefix, conf: &str) -> Server {
        let port = free_port();
        prefix.conf(&conf.replace("PORT", &port.to_string()));
        let mut cmd = if is_nginx() {
            let mut c = Command::new("/usr/sbin/nginx");
            c.args(["-g", "daemon off;"]);
            c
        } else {
            Command::new(BIN)
        };
        let child = cmd
            .arg("-p")
            .arg(&prefix.dir)
            .args(["-c", "conf/nginx.conf"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut server = Server {
            child,
            addr,
            prefix,
        };
        server.wait_listening();
        server
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(probe) = TcpStream::connect(self.addr) {
                // Wait for the server to accept and close the probe, so no
                // test sees it accepted later (stub_status counts it).
                let _ = probe.shutdown(std::net::Shutdown::Write);
                let _ = probe.set_read_timeout(Some(IO_TIMEOUT));
                let _ = (&probe).read_to_end(&mut Vec::new());
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("server exited early ({status}): {err}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("server did not listen on {} in time", self.addr);
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        s
    }

    /// One request on a fresh connection; reads until the server closes.
    pub fn raw(&self, request: &[u8]) -> Vec<u8> {
        let mut s = self.connect();
        s.write_all(request).unwrap();
        read_to_close(&mut s)
    }

    pub fn get(&self, path: &str) -> Response {
        let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        Response::parse(&self.raw(req.as_bytes())).expect("a response")
    }

    /// Sends `sig` and waits for the server to exit.
    pub fn stop(&mut self, sig: i32) -> std::process::ExitStatus {
        send_signal(self.child.id() as i32, sig);
        self.child.wait().unwrap()
    }

    pub fn signal(&self, sig: i32) {
        send_signal(self.child.id() as i32, sig);
    }
}

/// Sends a signal with the `kill` command, keeping tests free of `unsafe`.
pub fn send_signal(pid: i32, sig: i32) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        send_signal(self.child.id() as i32, 15);
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    out
}

/// A parsed HTTP/1.x response (head + body as received).
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub status_line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Bytes after this response (the next pipelined one).
    pub rest: Vec<u8>,
}

impl Response {
    /// Parses one response; the body is framed by Content-Length, chunked,
    /// or runs to the end of `bytes`.
    pub fn parse(bytes: &[u8]) -> Option<Response> {
        Self::parse_framed(bytes, false)
    }

    /// Like parse, for a response to HEAD (no body whatever the head says).
    pub fn parse_head(bytes: &[u8]) -> Option<Response> {
        Self::parse_framed(bytes, true)
    }

    fn parse_framed(bytes: &[u8], head_only: bool) -> Option<Response> {
        let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
        let head = std::str::from_utf8(&bytes[..end]).ok()?;
        let mut lines = head.split("\r\n");
        let status_line = lines.next()?.to_string();
        let status = status_line.split(' ').nth(1)?.parse().ok()?;
        let headers: Vec<(String, String)> = lines
            .filter(|l| !l.is_empty())
            .filter_map(|l| {
                let (n, v) = l.split_once(':')?;
                Some((n.to_string(), v.trim().to_string()))
            })
            .collect();
        let mut r = Response {
            status,
            status_line,
            headers,
            body: Vec::new(),
            rest: Vec::new(),
        };
        let after = &bytes[end..];
        if head_only || status == 304 || status == 204 || (100..200).contains(&status) {
            r.rest = after.to_vec();
        } else if let Some(len) = r.header("content-length") {
            let len: usize = len.parse().ok()?;
            let len = len.min(after.len());
            r.body = after[..len].to_vec();
            r.rest = after[len..].to_vec();
        } else if r.header("transfer-encoding") == Some("chunked") {
            let (body, used) = dechunk(after)?;
            r.body = body;
            r.rest = after[used..].to_vec();
        } else {
            r.body = after.to_vec();
        }
        Some(r)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn body_str(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap_or("<binary>")
    }
}

/// Decodes a chunked body; returns it and the bytes used.
pub fn dechunk(mut b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let total = b.len();
    let mut out = Vec::new();
    loop {
        let line_end = b.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&b[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        b = &b[line_end + 2..];
        if size == 0 {
            let trailer_end = b.windows(2).position(|w| w == b"\r\n")? + 2;
            b = &b[trailer_end..];
            return Some((out, total - b.len()));
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}

/// Reads responses from a keep-alive connection until `n` complete ones arrived.
pub fn read_responses(s: &mut TcpStream, n: usize, head_only: bool) -> Vec<Response> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 65536];
    let mut out = Vec::new();
    while out.len() < n {
        if let Some(r) = try_complete(&buf, head_only) {
            buf = r.rest.clone();
            out.push(r);
            continue;
        }
        match s.read(&mut tmp) {
            Ok(0) | Err(_) => break,
            Ok(k) => buf.extend_from_slice(&tmp[..k]),
        }
    }
    out
}

fn try_complete(buf: &[u8], head_only: bool) -> Option<Response> {
    let r = if head_only {
        Response::parse_head(buf)?
    } else {
        Response::parse(buf)?
    };
    if let Some(len) = r.header("content-length") {
        if !head_only && r.status != 304 && r.body.len() < len.parse::<usize>().ok()? {
            return None;
        }
    } else if r.header("transfer-encoding") == Some("chunked") {
        // parse() returned Some only if dechunk succeeded: complete.
    } else if !head_only && r.status != 304 {
        return None;
    }
    Some(r)
}

/// For tests that change the system (install a package, build an image):
/// whether this process is root and `tools_ok`; skipped otherwise with
/// `why`, except under `CI=true`, where `.ci/run` provides both and their
/// absence fails the test.
pub fn system_test_ready(tools_ok: bool, tools: &str) -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    if root && tools_ok {
        return true;
    }
    let why = format!("needs root ({root}) and {tools} ({tools_ok})");
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("skipped: {why}");
    false
}

/// Runs `cmd` with `sh -c`: whether it succeeded, and its stdout + stderr.
pub fn sh(cmd: &str) -> (bool, String) {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// [`sh`] that must succeed; its output.
pub fn must(cmd: &str) -> String {
    let (ok, text) = sh(cmd);
    assert!(ok, "`{cmd}` failed: {text}");
    text
}

/// One GET on a fresh connection to 127.0.0.1:`port`; `None` when nothing
/// answers (not listening yet, or any more).
pub fn get_at(port: u16, path: &str) -> Option<Response> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    Response::parse(&read_to_close(&mut s))
}

/// Polls `f` until it holds; fails the test after `within`.
pub fn wait_until(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The uid of process `pid`'s main thread (the master) and of each of its
/// worker threads (named `worker-N`), as the kernel sees them: the master
/// stays root while the workers run as `user` (per-thread credentials).
pub fn master_and_worker_uids(pid: u32) -> (u32, Vec<u32>) {
    let uid = |status: &str| -> u32 {
        let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let master = uid(&std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap());
    let mut workers = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.starts_with("worker-") {
            workers.push(uid(&std::fs::read_to_string(dir.join("status")).unwrap()));
        }
    }
    (master, workers)
}
