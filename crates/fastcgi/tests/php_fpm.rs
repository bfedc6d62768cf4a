//! Interop with the real PHP-FPM (Debian's php8.2-fpm): a request encoded by
//! this crate goes over a real loopback socket to a PHP-FPM started here
//! from a pool written by the test, and its answer is decoded by this crate.
//! Ignored where PHP-FPM is not installed (see build.rs).

use peregrine_fastcgi::{
    Decoder, EndRequest, Event, HeadParser, HeadStatus, NGINX_REQUEST_ID, ParamsEncoder,
    ProtocolStatus, begin_request, end_stdin, stdin,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PHP_FPM: &str = "/usr/sbin/php-fpm8.2";

const SCRIPT: &str = r#"<?php
header("X-Test: yes");
http_response_code(201);
error_log("note for stderr");
$body = file_get_contents("php://input");
echo $_SERVER["REQUEST_METHOD"], " ", $_SERVER["QUERY_STRING"], " ",
    strlen($body), " ", md5($body), " ", strlen($_SERVER["HTTP_X_LONG"]), "\n";
"#;

/// A PHP-FPM master on a loopback port, stopped on drop.
struct Fpm {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for Fpm {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers too (SIGKILL would orphan them).
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
}

fn start_fpm() -> Fpm {
    let dir = std::env::temp_dir().join(format!("peregrine-fpm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.php"), SCRIPT).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let user = if is_root() { "user = root\n" } else { "" };
    let conf = format!(
        "[global]\nerror_log = {d}/fpm.log\npid = {d}/fpm.pid\ndaemonize = no\n\
         [test]\n{user}listen = 127.0.0.1:{port}\npm = static\npm.max_children = 1\n",
        d = dir.display()
    );
    std::fs::write(dir.join("fpm.conf"), conf).unwrap();
    let child = Command::new(PHP_FPM)
        .args(["-n", "-F", "-R", "-y"])
        .arg(dir.join("fpm.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("php-fpm starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "php-fpm listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Fpm { child, dir, port }
}

/// The request nginx would send for `POST /t.php?q=1` with `body`.
fn request(out: &mut Vec<u8>, script: &Path, body: &[u8], keep_conn: bool) {
    let id = NGINX_REQUEST_ID;
    begin_request(out, id, keep_conn);
    let mut p = ParamsEncoder::new(out, id);
    let len = body.len().to_string();
    let long = "v".repeat(300);
    for (n, v) in [
        ("SCRIPT_FILENAME", script.to_str().unwrap()),
        ("REQUEST_METHOD", "POST"),
        ("QUERY_STRING", "q=1"),
        ("CONTENT_LENGTH", &len),
        ("CONTENT_TYPE", "application/octet-stream"),
        ("SERVER_PROTOCOL", "HTTP/1.1"),
        ("GATEWAY_INTERFACE", "CGI/1.1"),
    ] {
        p.push(n.as_bytes(), v.as_bytes()).unwrap();
    }
    p.push_header(b"X-Long", long.as_bytes()).unwrap();
    p.finish();
    stdin(out, id, body);
    end_stdin(out, id);
}

struct Answer {
    status: u16,
    x_test: Option<Vec<u8>>,
    body: Vec<u8>,
    stderr: Vec<u8>,
    end: EndRequest,
}

/// Reads one answer from `sock` with this crate's decoder and head parser.
fn answer(sock: &mut TcpStream) -> Answer {
    let mut d = Decoder::new(NGINX_REQUEST_ID);
    let mut head = HeadParser::new(4096);
    let (mut body, mut stderr) = (Vec::new(), Vec::new());
    let mut buf = vec![0; 1000];
    loop {
        let n = sock.read(&mut buf).unwrap();
        assert!(n > 0, "php-fpm closed before END_REQUEST");
        let mut rest = &buf[..n];
        while let Some(ev) = {
            let pr = d.decode(rest).unwrap();
            let ev = pr.event.clone();
            let chunk = rest;
            rest = &rest[pr.consumed..];
            ev.map(|e| (e, chunk))
        } {
            match ev {
                (Event::Stdout(r), chunk) => {
                    let out = &chunk[r];
                    match head.feed(out).unwrap() {
                        HeadStatus::Complete(k) if body.is_empty() => body.extend(&out[k..]),
                        HeadStatus::Complete(_) => body.extend(out),
                        HeadStatus::Partial => {}
                    }
                }
                (Event::Stderr(r), chunk) => stderr.extend(&chunk[r]),
                (Event::StdoutEnd, _) => assert!(head.is_complete()),
                (Event::End(end), _) => {
                    assert!(rest.is_empty(), "nothing after END_REQUEST");
                    let h = head.head();
                    return Answer {
                        status: h.status(),
                        x_test: h.get("x-test").map(<[u8]>::to_vec),
                        body,
                        stderr,
                        end,
                    };
                }
                (Event::Ignored(t), _) => panic!("php-fpm sent {t:?}"),
            }
        }
    }
}

fn md5_hex(data: &[u8]) -> String {
    let out = Command::new("md5sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(data)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..32].to_owned()
}

#[test]
#[cfg_attr(not(php_fpm), ignore = "needs php-fpm (Debian's php8.2-fpm)")]
fn php_fpm_answers_what_we_encode_and_we_decode_it() {
    let fpm = start_fpm();
    let script = fpm.dir.join("t.php");
    // Three STDIN records (32 KiB, 32 KiB, the rest), padded.
    let body: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let want = format!("POST q=1 70000 {} 300\n", md5_hex(&body));
    let mut sock = TcpStream::connect(("127.0.0.1", fpm.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Two requests on one connection (FCGI_KEEP_CONN), as nginx's
    // fastcgi_keep_conn reuses it, then one that lets php-fpm close it.
    for keep in [true, true, false] {
        let mut out = Vec::new();
        request(&mut out, &script, &body, keep);
        sock.write_all(&out).unwrap();
        let a = answer(&mut sock);
        assert_eq!(a.status, 201);
        assert_eq!(a.x_test.as_deref(), Some(&b"yes"[..]));
        assert_eq!(String::from_utf8(a.body).unwrap(), want);
        let stderr = String::from_utf8(a.stderr).unwrap();
        assert!(stderr.contains("note for stderr"), "{stderr:?}");
        assert_eq!(a.end.app_status, 0);
        assert_eq!(a.end.protocol_status, ProtocolStatus::RequestComplete);
    }
    let mut rest = Vec::new();
    assert_eq!(
        sock.read_to_end(&mut rest).unwrap(),
        0,
        "closed without FCGI_KEEP_CONN"
    );
}
