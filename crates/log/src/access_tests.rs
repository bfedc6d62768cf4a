use std::io::Read as _;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use peregrine_conf::model::{ErrorLogConf, Span};

use super::*;
use crate::record::NoHeaders;
use crate::testutil::{TempDir, read};

fn alc(target: &Path, format: &str) -> AccessLogConf {
    AccessLogConf {
        cache: None,
        userid: None,
        target: LogTarget::File(target.to_path_buf()),
        format: format.to_owned(),
        buffer: None,
        flush: None,
        gzip: None,
        condition: None,
        span: Span::default(),
    }
}

fn fmt(name: &str, format: &str) -> LogFormatConf {
    LogFormatConf {
        name: name.to_owned(),
        escape: LogEscape::Default,
        format: format.to_owned(),
        parts: vec![format.to_owned()],
        span: Span::default(),
    }
}

fn rec(uri: &'static str, args: Option<&'static [u8]>) -> RequestLog<'static> {
    let t = UNIX_EPOCH + Duration::from_secs(1_796_037_017);
    RequestLog {
        remote: SocketAddrV4::new([127, 0, 0, 1].into(), 40000).into(),
        conn_remote: None,
        local: SocketAddrV4::new([127, 0, 0, 1].into(), 8080).into(),
        request_line: None,
        method: Some(b"GET"),
        request_uri: None,
        uri: Some(uri.as_bytes()),
        args,
        protocol: Some(b"HTTP/1.1"),
        request_headers: &NoHeaders,
        response_headers: &NoHeaders,
        status: 200,
        bytes_sent: 10,
        body_bytes_sent: 5,
        request_length: 40,
        start: t,
        end: t,
        connection: 3,
        connection_requests: 1,
        server_name: b"localhost",
        host: None,
        https: false,
        pipelined: false,
        request_id: None,
        userid: None,
        upstream: None,
        ssl: None,
        modules: None,
        proxy_protocol: None,
    }
}

/// An error log writing to `dir/error.log`.
fn elog(dir: &Path) -> (Arc<ErrorLog>, PathBuf) {
    let p = dir.join("error.log");
    let log = ErrorLog::new(&[ErrorLogConf {
        target: LogTarget::File(p.clone()),
        level: LogLevel::Info,
    }])
    .map(Arc::new)
    .unwrap_or_else(|_| Arc::new(ErrorLog::stderr(LogLevel::Info)));
    (log, p)
}

fn build(
    dir: &Path,
    formats: &[LogFormatConf],
    lists: &[Vec<AccessLogConf>],
) -> (AccessLogs, Vec<ListId>) {
    let (e, _) = elog(dir);
    let (mut logs, ids) = AccessLogs::from_lists(formats, lists, e).expect("builds");
    // Expected lines are written in UTC whatever the machine's zone.
    logs.time = TimeCache::utc();
    (logs, ids)
}

#[test]
fn unbuffered_lines_land_at_once() {
    let dir = TempDir::new("plain");
    let a = dir.path().join("a.log");
    let (mut logs, ids) = build(
        dir.path(),
        &[fmt("u", "$uri $status")],
        &[vec![alc(&a, "u"), alc(&a, "combined")]],
    );
    logs.log_list(ids[0], &rec("/x", None));
    assert_eq!(
        read(&a),
        "/x 200\n127.0.0.1 - - [30/Nov/2026:11:10:17 +0000] \"-\" 200 5 \"-\" \"-\"\n"
    );
}

#[test]
fn same_path_shares_one_file() {
    let dir = TempDir::new("share");
    let a = dir.path().join("a.log");
    let b = dir.path().join("b.log");
    let lists = [
        vec![alc(&a, "combined")],
        vec![alc(&a, "combined"), alc(&b, "combined")],
        vec![],
    ];
    let (mut logs, ids) = build(dir.path(), &[], &lists);
    assert_eq!(logs.files.len(), 2);
    assert_eq!(logs.plan.lists.len(), 3);
    assert!(logs.plan.lists[ids[2].0 as usize].is_empty());
    logs.log_list(ids[0], &rec("/1", None));
    logs.log_list(ids[1], &rec("/2", None));
    logs.log_list(ids[2], &rec("/3", None));
    assert_eq!(read(&a).lines().count(), 2);
    assert_eq!(read(&b).lines().count(), 1);
}

#[test]
fn if_condition_skips_empty_and_zero() {
    let dir = TempDir::new("cond");
    let a = dir.path().join("a.log");
    let mut c = alc(&a, "u");
    c.condition = Some("$arg_log".into());
    let (mut logs, ids) = build(dir.path(), &[fmt("u", "$uri")], &[vec![c]]);
    logs.log_list(ids[0], &rec("/none", None));
    logs.log_list(ids[0], &rec("/zero", Some(b"log=0")));
    logs.log_list(ids[0], &rec("/empty", Some(b"log=")));
    logs.log_list(ids[0], &rec("/one", Some(b"log=1")));
    logs.log_list(ids[0], &rec("/00", Some(b"log=00")));
    assert_eq!(read(&a), "/one\n/00\n");
}

#[test]
fn buffer_holds_until_full_flush_or_drop() {
    let dir = TempDir::new("buf");
    let a = dir.path().join("a.log");
    let mut c = alc(&a, "u");
    c.buffer = Some(16);
    let (mut logs, ids) = build(dir.path(), &[fmt("u", "$uri")], &[vec![c]]);
    logs.log_list(ids[0], &rec("/aaaaaa", None)); // 8 bytes
    logs.log_list(ids[0], &rec("/bbbbbb", None)); // 16: exactly full
    assert_eq!(read(&a), "");
    logs.log_list(ids[0], &rec("/c", None)); // does not fit: flush first
    assert_eq!(read(&a), "/aaaaaa\n/bbbbbb\n");
    // Longer than the whole buffer: the buffer, then the line, in order.
    logs.log_list(ids[0], &rec("/a-line-longer-than-16", None));
    assert_eq!(read(&a), "/aaaaaa\n/bbbbbb\n/c\n/a-line-longer-than-16\n");
    logs.log_list(ids[0], &rec("/d", None));
    assert_eq!(logs.next_flush(), None); // no flush= given
    logs.flush();
    assert!(read(&a).ends_with("/d\n"));
    logs.log_list(ids[0], &rec("/e", None));
    drop(logs);
    assert!(read(&a).ends_with("/d\n/e\n"));
}

#[test]
fn flush_timer() {
    let dir = TempDir::new("flush");
    let a = dir.path().join("a.log");
    let mut c = alc(&a, "u");
    c.buffer = Some(4096);
    c.flush = Some(Duration::from_secs(5));
    let (mut logs, ids) = build(dir.path(), &[fmt("u", "$uri")], &[vec![c]]);
    let before = Instant::now();
    logs.log_list(ids[0], &rec("/a", None));
    let deadline = logs.next_flush().expect("a deadline once data waits");
    assert!(deadline >= before + Duration::from_secs(5));
    logs.log_list(ids[0], &rec("/b", None));
    // The deadline belongs to the oldest line.
    assert_eq!(logs.next_flush(), Some(deadline));
    logs.tick(deadline - Duration::from_millis(1));
    assert_eq!(read(&a), "");
    logs.tick(deadline);
    assert_eq!(read(&a), "/a\n/b\n");
    assert_eq!(logs.next_flush(), None);
}

#[test]
fn reopen_after_rename_loses_nothing() {
    let dir = TempDir::new("reopen");
    let a = dir.path().join("a.log");
    let rotated = dir.path().join("a.log.1");
    let mut buffered = alc(&a, "u");
    buffered.buffer = Some(1024);
    let (mut logs, ids) = build(dir.path(), &[fmt("u", "$uri")], &[vec![buffered]]);
    for _ in 0..10 {
        logs.log_list(ids[0], &rec("/old", None));
    }
    std::fs::rename(&a, &rotated).expect("rename");
    logs.log_list(ids[0], &rec("/old-too", None));
    logs.reopen().expect("reopen");
    logs.log_list(ids[0], &rec("/new", None));
    logs.flush();
    let old = read(&rotated);
    assert_eq!(old.lines().count(), 11);
    assert!(old.ends_with("/old-too\n"));
    assert_eq!(read(&a), "/new\n");
}

#[test]
fn reopen_failure_keeps_logging() {
    let dir = TempDir::new("gone");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let a = sub.join("a.log");
    let (e, elog_path) = elog(dir.path());
    let (mut logs, ids) =
        AccessLogs::from_lists(&[fmt("u", "$uri")], &[vec![alc(&a, "u")]], e).expect("builds");
    let moved = dir.path().join("moved");
    std::fs::rename(&sub, &moved).expect("rename dir");
    assert!(logs.reopen().is_err());
    logs.log_list(ids[0], &rec("/still", None));
    assert_eq!(read(&moved.join("a.log")), "/still\n");
    assert!(read(&elog_path).contains("[emerg]"));
    // An unlinked file still takes writes (the descriptor holds the inode):
    // nothing to report.
    std::fs::remove_dir_all(&moved).expect("rm");
    logs.log_list(ids[0], &rec("/unlinked", None));
    assert!(!read(&elog_path).contains("[alert]"));
}

#[test]
fn disk_full_is_reported_once_per_interval() {
    let dir = TempDir::new("full");
    let (e, elog_path) = elog(dir.path());
    let full = Path::new("/dev/full");
    let (mut logs, ids) =
        AccessLogs::from_lists(&[fmt("u", "$uri")], &[vec![alc(full, "u")]], e).expect("builds");
    let headers = vec![("Host", "LocalHost:8080"), ("Referer", "http://r/")];
    let mut r = rec("/x", None);
    r.request_line = Some(b"GET /x HTTP/1.1");
    r.request_headers = &headers;
    for i in 0..50u64 {
        // Advance the logical second so the ENOSPC skip does not hide writes.
        r.end = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 + i);
        logs.log_list(ids[0], &r);
    }
    let text = read(&elog_path);
    // nginx 1.22.1 with `access_log /dev/full;` wrote exactly this (once for
    // three requests): `[alert] PID#TID: *1 write() to "/dev/full" failed
    // (28: No space left on device) while logging request, client:
    // 127.0.0.1, server: localhost, request: "GET / HTTP/1.1", host:
    // "LocalHost:9", referrer: "http://r/"`.
    assert_eq!(text.matches("[alert]").count(), 1, "{text}");
    assert!(
        text.contains(": *3 write() to \"/dev/full\" failed (28: No space left on device) while logging request, client: 127.0.0.1, server: localhost, request: \"GET /x HTTP/1.1\", host: \"LocalHost:8080\", referrer: \"http://r/\"\n"),
        "{text}"
    );
    // Within the failing second the file is skipped (nginx's disk_full_time).
    assert!(logs.files[0].skipping(1_049));
}

#[test]
fn gzip_members_decompress_to_the_lines() {
    let dir = TempDir::new("gzip");
    let a = dir.path().join("a.log.gz");
    let mut c = alc(&a, "u");
    c.gzip = Some(5);
    c.buffer = Some(64);
    let (mut logs, ids) = build(dir.path(), &[fmt("u", "$uri")], &[vec![c]]);
    let mut want = String::new();
    for i in 0..40 {
        let uri: &'static str = ["/0123456789", "/abc"][i % 2];
        logs.log_list(ids[0], &rec(uri, None));
        want.push_str(uri);
        want.push('\n');
    }
    drop(logs);
    let bytes = std::fs::read(&a).unwrap_or_default();
    assert_eq!(&bytes[..2], [0x1f, 0x8b]);
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(bytes.as_slice())
        .read_to_string(&mut text)
        .expect("valid gzip");
    assert_eq!(text, want);
}

#[test]
fn gzip_alone_gets_the_default_buffer() {
    let mut c = alc(Path::new("/x"), "combined");
    c.gzip = Some(1);
    assert_eq!(
        buffer_conf(&c).ok().flatten().map(|b| b.size),
        Some(GZIP_DEFAULT_BUFFER)
    );
}

#[test]
fn configuration_errors() {
    let dir = TempDir::new("errs");
    let a = dir.path().join("a.log");
    let (e, _) = elog(dir.path());
    let try_lists = |formats: &[LogFormatConf], lists: &[Vec<AccessLogConf>]| {
        AccessLogs::from_lists(formats, lists, Arc::clone(&e))
            .err()
            .map(|e| e.to_string())
    };
    assert_eq!(
        try_lists(&[], &[vec![alc(&a, "nope")]]),
        Some("unknown log format \"nope\"".to_owned())
    );
    assert_eq!(
        try_lists(&[fmt("x", "$nope")], &[]),
        Some("unknown \"nope\" variable".to_owned())
    );
    let mut cond = alc(&a, "combined");
    cond.condition = Some("$bad_var".into());
    assert_eq!(
        try_lists(&[], &[vec![cond]]),
        Some("unknown \"bad_var\" variable".to_owned())
    );
    let mut b1 = alc(&a, "combined");
    b1.buffer = Some(100);
    let mut b2 = b1.clone();
    b2.buffer = Some(200);
    let msg = try_lists(&[], &[vec![b1.clone()], vec![b2]]).unwrap_or_default();
    assert!(
        msg.contains("already defined with conflicting parameters"),
        "{msg}"
    );
    // Unbuffered and buffered uses of one file agree: the file is buffered.
    assert_eq!(try_lists(&[], &[vec![alc(&a, "combined")], vec![b1]]), None);
    let mut nobuf = alc(&a, "combined");
    nobuf.flush = Some(Duration::from_secs(1));
    let msg = try_lists(&[], &[vec![nobuf]]).unwrap_or_default();
    assert!(
        msg.starts_with("no buffer is defined for access_log"),
        "{msg}"
    );
    let rel = Path::new("logs/$host.log");
    let msg = try_lists(&[], &[vec![alc(rel, "combined")]]).unwrap_or_default();
    assert!(
        msg.starts_with("access_log path with variables must be absolute"),
        "{msg}"
    );
    let mut buffered = alc(&dir.path().join("$host.log"), "combined");
    buffered.buffer = Some(4096);
    let msg = try_lists(&[], &[vec![buffered]]).unwrap_or_default();
    assert_eq!(msg, "buffered logs cannot have variables in name");
    let msg = try_lists(&[], &[vec![alc(&dir.path().join("$nope.log"), "combined")]]);
    assert_eq!(msg.as_deref(), Some("unknown \"nope\" variable"));
    let bad = dir.path().join("no/such/dir/a.log");
    let msg = try_lists(&[], &[vec![alc(&bad, "combined")]]).unwrap_or_default();
    assert!(
        msg.ends_with("failed (2: No such file or directory)"),
        "{msg}"
    );
}

#[test]
fn combined_can_be_redefined_by_the_configuration() {
    let dir = TempDir::new("redef");
    let a = dir.path().join("a.log");
    let (mut logs, ids) = build(
        dir.path(),
        &[fmt("combined", "C $uri")],
        &[vec![alc(&a, "combined")]],
    );
    logs.log_list(ids[0], &rec("/q", None));
    assert_eq!(read(&a), "C /q\n");
}

#[test]
fn reopen_signal_from_another_thread() {
    let dir = TempDir::new("signal");
    let a = dir.path().join("a.log");
    let (mut logs, ids) = build(dir.path(), &[fmt("u", "$uri")], &[vec![alc(&a, "u")]]);
    let sig = ReopenSignal::new();
    logs.watch(&sig);
    logs.log_list(ids[0], &rec("/before", None));
    std::fs::rename(&a, dir.path().join("a.log.1")).expect("rename");
    let s2 = sig.clone();
    std::thread::spawn(move || s2.trigger())
        .join()
        .expect("thread");
    logs.tick(Instant::now());
    logs.log_list(ids[0], &rec("/after", None));
    assert_eq!(read(&a), "/after\n");
    assert_eq!(read(&dir.path().join("a.log.1")), "/before\n");
}

#[test]
fn thread_safety() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<AccessLogs>();
    send_sync::<ErrorLog>();
    send_sync::<ReopenSignal>();
}

#[test]
fn request_id_is_shared_by_the_requests_logs() {
    let dir = TempDir::new("reqid");
    let a = dir.path().join("a.log");
    let b = dir.path().join("b.log");
    let (mut logs, ids) = build(
        dir.path(),
        &[fmt("i", "$request_id"), fmt("j", "$request_id $uri")],
        &[vec![alc(&a, "i"), alc(&b, "j")]],
    );
    logs.log_list(ids[0], &rec("/1", None));
    logs.log_list(ids[0], &rec("/2", None));
    let (ra, rb) = (read(&a), read(&b));
    let la: Vec<&str> = ra.lines().collect();
    let lb: Vec<&str> = rb.lines().collect();
    assert_eq!(la.len(), 2);
    assert_eq!(la[0].len(), 32);
    assert_ne!(la[0], la[1]);
    assert_eq!(lb, [format!("{} /1", la[0]), format!("{} /2", la[1])]);
    // An id from the engine wins.
    let mut r = rec("/3", None);
    r.request_id = Some(b"0123456789abcdef0123456789abcdef");
    logs.log_list(ids[0], &r);
    assert!(read(&a).ends_with("0123456789abcdef0123456789abcdef\n"));
}

#[test]
fn paths_with_variables_open_per_request() {
    let dir = TempDir::new("script");
    let (e, elog_path) = elog(dir.path());
    let tpl = dir.path().join("$server_name-$arg_v.log");
    let (mut logs, ids) =
        AccessLogs::from_lists(&[fmt("u", "$uri")], &[vec![alc(&tpl, "u")]], e).expect("builds");
    logs.log_list(ids[0], &rec("/a", Some(b"v=1")));
    logs.log_list(ids[0], &rec("/b", Some(b"v=2")));
    logs.log_list(ids[0], &rec("/c", Some(b"v=1")));
    assert_eq!(read(&dir.path().join("localhost-1.log")), "/a\n/c\n");
    assert_eq!(read(&dir.path().join("localhost-2.log")), "/b\n");
    // A value that would climb out of the directory is refused.
    logs.log_list(ids[0], &rec("/d", Some(b"v=/../../x")));
    assert!(
        read(&elog_path).contains("refusing access_log path"),
        "{}",
        read(&elog_path)
    );
    // A missing directory: reported (nginx: `[crit] open() ... failed`).
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let (e2, elog2) = elog(&sub);
    let missing = dir.path().join("nodir/$arg_v.log");
    let (mut logs2, ids2) =
        AccessLogs::from_lists(&[fmt("u", "$uri")], &[vec![alc(&missing, "u")]], e2)
            .expect("builds");
    logs2.log_list(ids2[0], &rec("/e", Some(b"v=1")));
    let text = read(&elog2);
    assert!(text.contains("[crit]"), "{text}");
    assert!(
        text.contains("failed (2: No such file or directory) while logging request"),
        "{text}"
    );
}

/// A configuration whose only access log has variables in its path does
/// log: the engine drops an `is_empty` set altogether.
#[test]
fn variable_paths_alone_are_not_empty() {
    let dir = TempDir::new("varonly");
    let (e, _) = elog(dir.path());
    let path = dir.path().join("$uri.log");
    let (logs, _) =
        AccessLogs::from_lists(&[fmt("u", "$uri")], &[vec![alc(&path, "u")]], e).expect("builds");
    assert!(!logs.is_empty());
    let (none, _) =
        AccessLogs::from_lists(&[fmt("u", "$uri")], &[vec![]], elog(dir.path()).0).expect("builds");
    assert!(none.is_empty());
}
