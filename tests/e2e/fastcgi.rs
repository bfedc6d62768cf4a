//! FastCGI against a real PHP-FPM (Debian's php8.2-fpm, started here from a
//! pool written by the test): Debian's PHP location (`snippets/fastcgi-php.conf`
//! and the `fastcgi.conf` this repository ships) serving a page, a POST
//! with a body, PATH_INFO; a PHP error logged from STDERR; PHP-FPM stopped
//! (502) and slow (504), with nginx's log lines. Each checked against nginx
//! (`E2E_SERVER=nginx cargo test --test e2e fastcgi::`). Skipped, with a
//! message, where PHP-FPM is not installed.

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Prefix, Response, Server, conf_with, free_port, wait_for_lines};

const PHP_FPM: &str = "/usr/sbin/php-fpm8.2";
const REPO: &str = env!("CARGO_MANIFEST_DIR");

const PAGE: &str = r#"<?php
header("X-Php: yes");
$body = file_get_contents("php://input");
echo "script=", $_SERVER["SCRIPT_NAME"], " info=", $_SERVER["PATH_INFO"] ?? "",
    " query=", $_SERVER["QUERY_STRING"], " method=", $_SERVER["REQUEST_METHOD"],
    " length=", $_SERVER["CONTENT_LENGTH"], " body=", $body, "\n";
"#;

/// A PHP-FPM master on a loopback port (or a UNIX socket), stopped on drop.
struct Fpm {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
    /// `fastcgi_pass`'s address.
    pass: String,
}

impl Fpm {
    /// `None` (with a message) where PHP-FPM is not installed.
    fn start(tag: &str) -> Option<Fpm> {
        Fpm::start_on(tag, false)
    }

    /// With `unix`, PHP-FPM listens on `fpm.sock` in its directory.
    fn start_on(tag: &str, unix: bool) -> Option<Fpm> {
        if !Path::new(PHP_FPM).exists() {
            eprintln!("skipped: {PHP_FPM} is not installed");
            return None;
        }
        let dir =
            std::env::temp_dir().join(format!("peregrine-e2e-fpm-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let sock = dir.join("fpm.sock");
        let listen = if unix {
            sock.display().to_string()
        } else {
            format!("127.0.0.1:{port}")
        };
        let conf = format!(
            "[global]\nerror_log = {d}/fpm.log\npid = {d}/fpm.pid\ndaemonize = no\n\
             [e2e]\nuser = root\nlisten = {listen}\npm = static\npm.max_children = 2\n",
            d = dir.display()
        );
        std::fs::write(dir.join("pool.conf"), conf).unwrap();
        let child = Command::new(PHP_FPM)
            .args(["-n", "-F", "-R", "-y"])
            .arg(dir.join("pool.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("php-fpm starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while if unix {
            std::os::unix::net::UnixStream::connect(&sock).is_err()
        } else {
            TcpStream::connect(("127.0.0.1", port)).is_err()
        } {
            assert!(Instant::now() < deadline, "php-fpm listens on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Fpm {
            child: Some(child),
            dir,
            port,
            pass: if unix {
                format!("unix:{}", sock.display())
            } else {
                format!("127.0.0.1:{port}")
            },
        })
    }

    /// SIGTERM: the master stops its workers too.
    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let _ = c.wait();
        }
    }
}

impl Drop for Fpm {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server with Debian's PHP location passing to `fpm`, its scripts in html/.
fn php_server(fpm: &Fpm, tag: &str, extra: &str, scripts: &[(&str, &str)]) -> Server {
    let prefix = Prefix::new(tag);
    for f in [
        "fastcgi.conf",
        "fastcgi_params",
        "snippets/fastcgi-php.conf",
    ] {
        prefix.write(
            &format!("conf/{f}"),
            std::fs::read(Path::new(REPO).join("conf").join(f)).unwrap(),
        );
    }
    for (name, text) in scripts {
        prefix.write(&format!("html/{name}"), text);
    }
    let conf = conf_with(&format!(
        "server {{ listen 127.0.0.1:PORT; root html; index index.php;\n\
         location ~ [^/]\\.php(/|$) {{\n include snippets/fastcgi-php.conf;\n \
         fastcgi_pass {};\n {extra}\n }}\n}}",
        fpm.pass
    ));
    Server::start(prefix, &conf)
}

fn post(s: &Server, path: &str, body: &str) -> Response {
    let mut c = s.connect();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    c.write_all(req.as_bytes()).unwrap();
    Response::parse(&crate::support::read_to_close(&mut c)).expect("a response")
}

#[test]
fn debian_php_location_serves_pages_bodies_and_path_info() {
    let Some(fpm) = Fpm::start("page") else {
        return;
    };
    let s = php_server(&fpm, "fcgi-page", "", &[("t.php", PAGE)]);
    let r = s.get("/t.php?a=1");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-Php"), Some("yes"));
    assert_eq!(
        r.body_str(),
        "script=/t.php info= query=a=1 method=GET length= body=\n"
    );
    let r = s.get("/t.php/x/y");
    assert_eq!(
        r.body_str(),
        "script=/t.php info=/x/y query= method=GET length= body=\n"
    );
    let r = post(&s, "/t.php", "hello=world");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body_str(),
        "script=/t.php info= query= method=POST length=11 body=hello=world\n"
    );
    // try_files $fastcgi_script_name =404: a missing script is not passed.
    assert_eq!(s.get("/missing.php").status, 404);
}

/// Over a UNIX socket the request goes out right after `connect` (which
/// completes at once there) and the answer is read once PHP-FPM's
/// readiness is reported: pages, a body and keep-alive requests one
/// after another on the client connection all come back whole.
#[test]
fn php_over_a_unix_socket_serves_pages_and_bodies() {
    let Some(fpm) = Fpm::start_on("unix", true) else {
        return;
    };
    let s = php_server(&fpm, "fcgi-unix", "", &[("t.php", PAGE)]);
    let mut c = s.connect();
    for i in 0..5 {
        c.write_all(format!("GET /t.php?i={i} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
            .unwrap();
        let r = crate::support::read_responses(&mut c, 1, false)
            .pop()
            .expect("a response");
        assert_eq!(r.status, 200, "request {i}");
        assert_eq!(
            r.body_str(),
            format!("script=/t.php info= query=i={i} method=GET length= body=\n")
        );
    }
    let r = post(&s, "/t.php", "hello=world");
    assert_eq!(
        r.body_str(),
        "script=/t.php info= query= method=POST length=11 body=hello=world\n"
    );
}

#[test]
fn status_header_becomes_the_status() {
    let Some(fpm) = Fpm::start("status") else {
        return;
    };
    let s = php_server(
        &fpm,
        "fcgi-status",
        "",
        &[
            (
                "nf.php",
                "<?php header('Status: 404 Not Found'); echo 'gone';",
            ),
            ("loc.php", "<?php header('Location: http://example.com/x');"),
        ],
    );
    let r = s.get("/nf.php");
    assert_eq!(r.status, 404);
    assert_eq!(r.body_str(), "gone");
    assert_eq!(r.header("Status"), None);
    let r = s.get("/loc.php");
    assert_eq!(r.status, 302);
    assert_eq!(r.header("Location"), Some("http://example.com/x"));
}

#[test]
fn php_error_is_logged_from_stderr() {
    let Some(fpm) = Fpm::start("stderr") else {
        return;
    };
    let s = php_server(
        &fpm,
        "fcgi-stderr",
        "",
        &[("e.php", "<?php error_log('e2e note'); echo 'ok';")],
    );
    let r = s.get("/e.php");
    assert_eq!((r.status, r.body_str()), (200, "ok"));
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("FastCGI sent in stderr")
    });
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    assert!(l.contains("[error]"), "{l}");
    assert!(
        l.contains(
            "FastCGI sent in stderr: \"PHP message: e2e note\" while reading response header from upstream"
        ),
        "{l}"
    );
    assert!(
        l.contains(&format!("upstream: \"fastcgi://127.0.0.1:{}\"", fpm.port)),
        "{l}"
    );
}

const UPLOAD: &str = r#"<?php
$f = $_FILES["f"] ?? null;
$sum = $f ? array_sum(unpack("C*", file_get_contents($f["tmp_name"]))) : -1;
echo "name=", $f["name"] ?? "", " size=", $f["size"] ?? -1, " sum=", $sum,
    " error=", $f["error"] ?? -1, "\n";
"#;

/// A multipart upload larger than `client_body_buffer_size`: the body
/// goes through a temporary file (nginx's warning names it) and PHP gets
/// every byte of the file.
#[test]
fn an_upload_over_the_body_buffer_reaches_php_whole() {
    let Some(fpm) = Fpm::start("upload") else {
        return;
    };
    let s = php_server(
        &fpm,
        "fcgi-upload",
        "client_body_buffer_size 1k; client_max_body_size 1m;",
        &[("up.php", UPLOAD)],
    );
    let file: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let sum: u64 = file.iter().map(|&b| u64::from(b)).sum();
    let mut body = b"--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n\
Content-Type: application/octet-stream\r\n\r\n"
        .to_vec();
    body.extend_from_slice(&file);
    body.extend_from_slice(b"\r\n--XyZ--\r\n");
    let mut c = s.connect();
    let head = format!(
        "POST /up.php HTTP/1.0\r\nHost: localhost\r\n\
         Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(&body).unwrap();
    let r = Response::parse(&crate::support::read_to_close(&mut c)).expect("a response");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body_str(),
        format!("name=a.bin size=100000 sum={sum} error=0\n")
    );
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("a client request body is buffered to a temporary file")
    });
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("[warn]"), "{}", lines[0]);
}

#[test]
fn php_fpm_stopped_is_502() {
    let Some(mut fpm) = Fpm::start("stopped") else {
        return;
    };
    let s = php_server(&fpm, "fcgi-stopped", "", &[("t.php", PAGE)]);
    assert_eq!(s.get("/t.php").status, 200);
    fpm.stop();
    assert_eq!(s.get("/t.php").status, 502);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("connect() failed")
    });
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0]
            .contains("connect() failed (111: Connection refused) while connecting to upstream"),
        "{}",
        lines[0]
    );
}

#[test]
fn slow_php_is_504() {
    let Some(fpm) = Fpm::start("slow") else {
        return;
    };
    let s = php_server(
        &fpm,
        "fcgi-slow",
        "fastcgi_read_timeout 1s;",
        &[("slow.php", "<?php sleep(3); echo 'late';")],
    );
    assert_eq!(s.get("/slow.php").status, 504);
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("timed out")
    });
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains(
            "upstream timed out (110: Connection timed out) while reading response header from upstream"
        ),
        "{}",
        lines[0]
    );
}
