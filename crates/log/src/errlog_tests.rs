use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::testutil::{TempDir, read};

fn line(level: LogLevel, conn: Option<&ConnContext<'_>>, msg: fmt::Arguments<'_>) -> String {
    let mut buf = [0u8; MAX_ERROR_LINE];
    let now = UNIX_EPOCH + Duration::from_secs(1_796_037_017);
    let n = format_line(&mut buf, now, &crate::tz::UTC, level, conn, msg);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn ids() -> String {
    format!("{}#{}", std::process::id(), thread_id())
}

#[test]
fn request_line_like_nginx() {
    // nginx 1.22.1 wrote, for `GET /missing` with `Host: localhost`:
    // 2026/11/30 11:10:17 [error] 8069#8069: *2 open() "/tmp/lg/html/missing"
    // failed (2: No such file or directory), client: 127.0.0.1, server:
    // localhost, request: "GET /missing HTTP/1.1", host: "localhost"
    let ctx = ConnContext {
        id: 2,
        client: Some([127, 0, 0, 1].into()),
        server: Some(b"localhost"),
        request_line: Some(b"GET /missing HTTP/1.1"),
        host: Some(b"localhost"),
        ..ConnContext::default()
    };
    let e = std::io::Error::from_raw_os_error(2);
    let got = line(
        LogLevel::Error,
        Some(&ctx),
        format_args!(
            "open() \"{}\" failed ({})",
            "/tmp/lg/html/missing",
            OsErr(&e)
        ),
    );
    let want = format!(
        "2026/11/30 11:10:17 [error] {}: *2 open() \"/tmp/lg/html/missing\" failed (2: No such file or directory), client: 127.0.0.1, server: localhost, request: \"GET /missing HTTP/1.1\", host: \"localhost\"\n",
        ids()
    );
    assert_eq!(got, want);
}

#[test]
fn action_and_no_request_like_nginx() {
    // nginx: `[info] 8069#8069: *7 client sent invalid method while reading
    // client request line, client: 127.0.0.1, server: localhost, request: "garbage"`
    let ctx = ConnContext {
        id: 7,
        action: Some("reading client request line"),
        client: Some([127, 0, 0, 1].into()),
        server: Some(b"localhost"),
        request_line: Some(b"garbage"),
        referrer: Some(b"http://r/"),
        ..ConnContext::default()
    };
    let got = line(
        LogLevel::Info,
        Some(&ctx),
        format_args!("client sent invalid method"),
    );
    let want = format!(
        "2026/11/30 11:10:17 [info] {}: *7 client sent invalid method while reading client request line, client: 127.0.0.1, server: localhost, request: \"garbage\", referrer: \"http://r/\"\n",
        ids()
    );
    assert_eq!(got, want);
    let plain = line(
        LogLevel::Notice,
        None,
        format_args!("start worker processes"),
    );
    assert_eq!(
        plain,
        format!(
            "2026/11/30 11:10:17 [notice] {}: start worker processes\n",
            ids()
        )
    );
}

#[test]
fn long_lines_are_cut() {
    let long = "x".repeat(5000);
    let got = line(LogLevel::Warn, None, format_args!("{long}"));
    assert_eq!(got.len(), MAX_ERROR_LINE);
    assert!(got.ends_with("xx\n"));
}

#[test]
fn tid_is_this_threads() {
    let main = thread_id();
    let other = std::thread::spawn(thread_id).join().unwrap_or(main);
    assert_ne!(main, other);
    let task = format!("/proc/self/task/{main}");
    assert!(std::path::Path::new(&task).exists(), "{task}");
}

#[test]
fn levels_per_target_and_reopen() {
    let dir = TempDir::new("errlog");
    let a = dir.path().join("a.log");
    let b = dir.path().join("b.log");
    let log = ErrorLog::new(&[
        ErrorLogConf {
            target: LogTarget::File(a.clone()),
            level: LogLevel::Warn,
        },
        ErrorLogConf {
            target: LogTarget::File(b.clone()),
            level: LogLevel::Crit,
        },
    ])
    .expect("opens");
    assert!(!log.enabled(LogLevel::Notice));
    assert!(log.enabled(LogLevel::Warn));
    log.log(LogLevel::Info, None, format_args!("info"));
    log.log(LogLevel::Error, None, format_args!("err"));
    log.log(LogLevel::Emerg, None, format_args!("emerg"));
    assert!(read(&a).contains("[error]") && read(&a).contains("[emerg]"));
    assert!(!read(&a).contains("[info]"));
    assert!(!read(&b).contains("[error]") && read(&b).contains("[emerg] "));

    // logrotate: rename, reopen, later lines go to the new file.
    let rotated = dir.path().join("a.log.1");
    std::fs::rename(&a, &rotated).expect("rename");
    log.log(LogLevel::Error, None, format_args!("before reopen"));
    log.reopen().expect("reopen");
    log.log(LogLevel::Error, None, format_args!("after reopen"));
    assert!(read(&rotated).contains("before reopen"));
    assert!(read(&a).contains("after reopen"));
    assert!(!read(&a).contains("before reopen"));

    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&a)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0);
    // 0644 less the umask (typically 022).
    assert_eq!(mode & !0o644, 0);
}

#[test]
fn reopen_failure_keeps_the_old_descriptor() {
    let dir = TempDir::new("errlog-gone");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let p = sub.join("e.log");
    let log = ErrorLog::new(&[ErrorLogConf {
        target: LogTarget::File(p.clone()),
        level: LogLevel::Error,
    }])
    .expect("opens");
    let moved = dir.path().join("moved");
    std::fs::rename(&sub, &moved).expect("rename dir");
    let err = log.reopen().expect_err("directory is gone");
    assert!(
        err.to_string().contains("No such file or directory"),
        "{err}"
    );
    log.log(LogLevel::Error, None, format_args!("still here"));
    let text = read(&moved.join("e.log"));
    assert!(text.contains("[emerg]") && text.contains("failed (2: No such file or directory)"));
    assert!(text.contains("still here"));
}

#[test]
fn open_failure_is_typed() {
    let err = ErrorLog::new(&[ErrorLogConf {
        target: LogTarget::File("/nonexistent-dir/x/e.log".into()),
        level: LogLevel::Error,
    }])
    .expect_err("cannot open");
    assert_eq!(
        err.to_string(),
        "open() \"/nonexistent-dir/x/e.log\" failed (2: No such file or directory)"
    );
    assert!(
        !ErrorLog::new(&[])
            .map(|l| l.enabled(LogLevel::Emerg))
            .unwrap_or(true)
    );
}
