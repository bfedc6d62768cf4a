//! The generator against real sockets: exact counts, keep-alive reuse,
//! every failure class, rate mode, and the output files.

mod support;

use std::time::{Duration, Instant};

use peregrine_bench::config::Config;
use peregrine_bench::report::{self, ReportOpts};
use peregrine_bench::run::{RunResult, execute};
use peregrine_bench::{BenchError, cli};
use support::{Mode, args, start};

fn config(v: &[&str]) -> Config {
    Config::from_args(&cli::parse(&args(v)).expect("parse")).expect("config")
}

fn bench(v: &[&str]) -> Result<RunResult, BenchError> {
    let cfg = config(v);
    execute(&cfg, cfg.concurrency, cfg.spec.keepalive, false)
}

#[test]
fn exact_counts_with_keepalive() {
    let s = start(Mode::Ok {
        body: "hello world",
    });
    let r = bench(&[
        "-n",
        "1000",
        "-c",
        "10",
        "-k",
        "--threads",
        "2",
        &s.url("/"),
    ])
    .expect("run");
    assert_eq!(r.stats.complete, 1000);
    assert_eq!(r.stats.failed(), 0);
    assert_eq!(r.stats.keepalive, 1000);
    assert_eq!(s.requests.load(std::sync::atomic::Ordering::Relaxed), 1000);
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 10);
    assert_eq!(r.stats.total.len(), 1000);
    assert_eq!(r.stats.body_bytes, 11_000);
    assert_eq!(r.info.doclen, 11);
    assert_eq!(r.info.server_software, "test/1.0");
}

#[test]
fn one_connection_per_request_without_keepalive() {
    let s = start(Mode::Ok { body: "x" });
    let r = bench(&["-n", "40", "-c", "4", &s.url("/a")]).expect("run");
    assert_eq!(r.stats.complete, 40);
    assert_eq!(r.stats.failed(), 0);
    assert_eq!(r.stats.keepalive, 0);
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 40);
    let text = report::render(&r.stats, &r.info, ReportOpts::default());
    assert!(!text.contains("Keep-Alive requests"));
}

/// Requests/s equals complete/time as printed; percentiles never decrease.
#[test]
fn report_figures_are_consistent() {
    let s = start(Mode::Ok { body: "hello" });
    let r = bench(&["-n", "300", "-c", "3", "-k", &s.url("/")]).expect("run");
    let text = report::render(&r.stats, &r.info, ReportOpts::default());
    let field = |name: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(name)).expect(name);
        line[name.len()..]
            .split_whitespace()
            .next()
            .expect("value")
            .parse()
            .expect("number")
    };
    let rps = field("Requests per second:");
    let taken = field("Time taken for tests:");
    let complete = field("Complete requests:");
    assert_eq!(complete, 300.0);
    assert!(
        (rps - complete / r.info.time_taken).abs() < 0.01,
        "{rps} vs {complete}/{taken}"
    );
    assert!((field("Time per request:") - 3.0 * taken * 1000.0 / complete).abs() < 0.5);
    let table: Vec<u64> = text
        .lines()
        .skip_while(|l| !l.starts_with("Percentage"))
        .skip(1)
        .map(|l| l.split_whitespace().nth(1).expect("ms").parse().expect("n"))
        .collect();
    assert_eq!(table.len(), 9);
    assert!(table.windows(2).all(|w| w[0] <= w[1]), "{table:?}");
    assert!(text.ends_with("(longest request)\n"));
}

#[test]
fn http10_sends_abs_exact_request() {
    let s = start(Mode::Ok { body: "x" });
    bench(&["-n", "1", "--http1.0", "-k", "-H", "X-A: 1", &s.url("/p?q")]).expect("run");
    let got = String::from_utf8(s.first_request.lock().expect("lock").clone()).expect("utf8");
    let want = format!(
        "GET /p?q HTTP/1.0\r\nConnection: Keep-Alive\r\nX-A: 1\r\nHost: {}\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
        s.addr
    );
    assert_eq!(got, want);
}

#[test]
fn post_body_is_sent_and_counted() {
    let dir = tempdir("post");
    let body = dir.join("body");
    std::fs::write(&body, b"a=1&b=2").expect("write");
    let s = start(Mode::Ok { body: "ok" });
    let r = bench(&[
        "-n",
        "5",
        "-k",
        "-p",
        body.to_str().expect("path"),
        "-T",
        "application/x-www-form-urlencoded",
        &s.url("/"),
    ])
    .expect("run");
    assert_eq!(r.stats.complete, 5);
    let req = String::from_utf8(s.first_request.lock().expect("lock").clone()).expect("utf8");
    assert!(req.starts_with("POST / HTTP/1.1\r\n"));
    assert!(
        req.contains("Content-length: 7\r\nContent-type: application/x-www-form-urlencoded\r\n")
    );
    assert!(req.ends_with("\r\n\r\na=1&b=2"));
    assert!(r.info.send_body);
    let text = report::render(&r.stats, &r.info, ReportOpts::default());
    assert!(text.contains("Total body sent:"));
    assert!(text.contains("kb/s sent"));
}

#[test]
fn refused_connections_are_connect_failures() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let r = bench(&["-n", "5", &url]).expect("run");
    assert_eq!(
        (r.stats.complete, r.stats.failed_connect, r.stats.failed()),
        (5, 5, 5)
    );
    let text = report::render(&r.stats, &r.info, ReportOpts::default());
    assert!(text.contains(
        "Failed requests:        5\n   (Connect: 5, Receive: 0, Length: 0, Exceptions: 0)\n"
    ));
    // ab gives up after 10 failures when nothing ever succeeded.
    let e = bench(&["-n", "50", &url]).expect_err("aborted");
    assert!(
        e.to_string().starts_with("Test aborted after 10 failures"),
        "{e}"
    );
}

#[test]
fn resets_are_receive_failures() {
    let s = start(Mode::Reset);
    let e = bench(&["-n", "3", &s.url("/")]).expect_err("ab exits without -r");
    assert!(matches!(e, BenchError::Receive(_)), "{e}");
    let r = bench(&["-n", "6", "-c", "2", "-r", &s.url("/")]).expect("run with -r");
    assert_eq!((r.stats.complete, r.stats.failed_receive), (6, 6));
}

#[test]
fn early_close_and_garbage_are_exceptions() {
    let s = start(Mode::CloseEarly);
    let r = bench(&["-n", "4", &s.url("/")]).expect("run");
    assert_eq!((r.stats.complete, r.stats.failed_exceptions), (4, 4));
    let s = start(Mode::Garbage);
    let r = bench(&["-n", "4", "-k", &s.url("/")]).expect("run");
    assert_eq!((r.stats.complete, r.stats.failed_exceptions), (4, 4));
}

#[test]
fn truncated_and_varying_bodies_are_length_failures() {
    let s = start(Mode::Truncated);
    let r = bench(&["-n", "3", &s.url("/")]).expect("run");
    assert_eq!(
        (r.stats.complete, r.stats.failed_length),
        (3, 3),
        "{:?}",
        (
            r.stats.failed_exceptions,
            r.stats.failed_receive,
            r.stats.failed_connect
        )
    );
    let s = start(Mode::Varying);
    let r = bench(&["-n", "10", &s.url("/")]).expect("run");
    // Connections alternate 5 and 6 bytes; the first response sets the length.
    assert_eq!(r.stats.complete, 10);
    assert_eq!(r.stats.failed_length, 5);
    let r = bench(&["-n", "10", "-l", &s.url("/")]).expect("run");
    assert_eq!(r.stats.failed(), 0);
}

#[test]
fn non_2xx_is_counted_but_not_failed() {
    let s = start(Mode::Status(404));
    let r = bench(&["-n", "7", "-k", &s.url("/")]).expect("run");
    assert_eq!(
        (r.stats.complete, r.stats.non_2xx, r.stats.failed()),
        (7, 7, 0)
    );
    let text = report::render(&r.stats, &r.info, ReportOpts::default());
    assert!(
        text.contains("Non-2xx responses:      7\nKeep-Alive requests:    7\n"),
        "{text}"
    );
}

#[test]
fn nothing_waits_past_the_timeout() {
    let s = start(Mode::Silent);
    let t0 = Instant::now();
    let r = bench(&["-n", "2", "-c", "2", "-s", "1", &s.url("/")]).expect("run");
    assert!(
        // -s 1: give up after one second; the margin is for a loaded machine,
        // the point is that it does not wait for the silent server forever.
        t0.elapsed() < Duration::from_millis(4000),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(
        (
            r.stats.complete,
            r.stats.failed_exceptions,
            r.stats.timeouts
        ),
        (2, 2, 2)
    );
}

#[test]
fn keepalive_close_by_server_is_retried_not_failed() {
    let s = start(Mode::OneThenClose { body: "abc" });
    let r = bench(&["-n", "10", "-k", &s.url("/")]).expect("run");
    assert_eq!((r.stats.complete, r.stats.failed()), (10, 0));
    assert_eq!(s.requests.load(std::sync::atomic::Ordering::Relaxed), 10);
}

#[test]
fn pipelined_batch_survives_keepalive_closes() {
    let s = start(Mode::OneThenClose { body: "abc" });
    let r = bench(&["-n", "20", "-k", "--pipeline", "4", &s.url("/")]).expect("run");
    assert_eq!((r.stats.complete, r.stats.failed()), (20, 0));
}

/// Each response says `Connection: close`: the unanswered rest of every
/// pipelined batch goes back to the budget and is sent again.
#[test]
fn requests_given_back_are_sent_again() {
    let s = start(Mode::Varying);
    let r = bench(&[
        "-n",
        "10",
        "-c",
        "2",
        "-k",
        "-l",
        "--pipeline",
        "4",
        &s.url("/"),
    ])
    .expect("run");
    assert_eq!(
        (r.stats.complete, r.stats.failed(), r.stats.keepalive),
        (10, 0, 0)
    );
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::Relaxed), 10);
}

#[test]
fn chunked_and_head() {
    let s = start(Mode::Chunked);
    let r = bench(&["-n", "20", "-c", "2", "-k", &s.url("/")]).expect("run");
    assert_eq!(
        (r.stats.complete, r.stats.failed(), r.stats.keepalive),
        (20, 0, 20)
    );
    assert_eq!(r.stats.body_bytes, 140);
    let s = start(Mode::Ok { body: "hello" });
    let r = bench(&["-n", "5", "-k", "-i", &s.url("/")]).expect("run");
    assert_eq!(
        (r.stats.complete, r.stats.failed(), r.stats.body_bytes),
        (5, 0, 0)
    );
}

#[test]
fn pipelining_sends_exact_counts() {
    let s = start(Mode::Ok { body: "p" });
    let r = bench(&["-n", "103", "-c", "2", "-k", "--pipeline", "4", &s.url("/")]).expect("run");
    assert_eq!((r.stats.complete, r.stats.failed()), (103, 0));
    assert_eq!(s.requests.load(std::sync::atomic::Ordering::Relaxed), 103);
}

#[test]
fn bad_input_is_a_clear_error() {
    let e = Config::from_args(
        &cli::parse(&args(&["-n", "2", "-c", "3", "http://127.0.0.1/"])).expect("parse"),
    )
    .expect_err("c > n");
    assert_eq!(
        e.to_string(),
        "Cannot use concurrency level greater than total number of requests"
    );
    let e = Config::from_args(
        &cli::parse(&args(&["-p", "/nonexistent/x", "http://127.0.0.1/"])).expect("parse"),
    )
    .expect_err("body");
    assert!(e.to_string().starts_with("/nonexistent/x:"), "{e}");
    let e = bench(&["-n", "1", "http://nonexistent.invalid/"]).expect_err("resolve");
    assert!(matches!(e, BenchError::Resolve { .. }), "{e}");
    assert!(matches!(
        peregrine_bench::run(&args(&["https://127.0.0.1/"])),
        Err(BenchError::Unsupported(_))
    ));
    assert!(peregrine_bench::run(&args(&["-Z"])).is_err());
}

#[test]
fn rate_mode_holds_the_rate() {
    let s = start(Mode::Ok { body: "r" });
    let r = bench(&[
        "--rate",
        "500",
        "--duration",
        "2s",
        "-c",
        "8",
        "-k",
        &s.url("/"),
    ])
    .expect("run");
    let rate = r.stats.complete as f64 / r.info.time_taken;
    assert!(
        (rate - 500.0).abs() <= 5.0,
        "rate {rate} ({} in {})",
        r.stats.complete,
        r.info.time_taken
    );
    assert_eq!(r.stats.failed(), 0);
}

/// A 500 ms stall at 200 requests/s delays the ~100 requests that were
/// due during it: the open model reports them, the closed model sees one
/// slow request (coordinated omission).
#[test]
fn rate_mode_does_not_hide_a_stall() {
    let s = start(Mode::Stall { nth: 50, ms: 500 });
    let r = bench(&["--rate", "200", "-n", "300", "-c", "1", "-k", &s.url("/")]).expect("rate run");
    assert_eq!((r.stats.complete, r.stats.failed()), (300, 0));
    let p80 = r.stats.total.value_at_quantile(0.80);
    assert!(p80 >= 50_000, "p80 {p80} µs should show the stall");
    assert!(r.stats.total.max() >= 450_000);
    let s = start(Mode::Stall { nth: 50, ms: 500 });
    let r = bench(&["-n", "300", "-c", "1", "-k", &s.url("/")]).expect("closed run");
    assert!(r.stats.total.value_at_quantile(0.80) < 50_000);
}

#[test]
fn duration_mode_runs_for_the_duration() {
    let s = start(Mode::Ok { body: "d" });
    let t0 = Instant::now();
    let r = bench(&["--duration", "1s", "-c", "2", "-k", &s.url("/")]).expect("run");
    // Nothing waits past the duration; the margin is for a loaded CI machine.
    assert!(t0.elapsed() < Duration::from_millis(3000));
    assert_eq!(r.info.time_taken, 1.0);
    assert!(r.stats.complete > 100);
    assert_eq!(r.stats.failed(), 0);
    // Every counted response was served; at most one request per
    // connection was still in flight at the end and is not counted.
    let served = s.requests.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        r.stats.complete <= served && served <= r.stats.complete + 2,
        "{} vs {served}",
        r.stats.complete
    );
}

#[test]
fn several_urls_share_the_connections() {
    let a = start(Mode::Ok { body: "a" });
    let b = start(Mode::Ok { body: "b" });
    let r = bench(&[
        "-n",
        "20",
        "-c",
        "2",
        "-k",
        "--threads",
        "1",
        &a.url("/"),
        &b.url("/"),
    ])
    .expect("run");
    assert_eq!(r.stats.complete, 20);
    assert_eq!(
        a.requests.load(std::sync::atomic::Ordering::Relaxed)
            + b.requests.load(std::sync::atomic::Ordering::Relaxed),
        20
    );
    assert!(a.requests.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let d = tempdir("urls");
    let list = d.join("urls.txt");
    std::fs::write(
        &list,
        format!("# targets\n{}\n\n{}\n", a.url("/x"), b.url("/y")),
    )
    .expect("write");
    let r = bench(&[
        "-n",
        "10",
        "-c",
        "2",
        "--url-file",
        list.to_str().expect("path"),
    ])
    .expect("url file");
    assert_eq!((r.stats.complete, r.stats.failed()), (10, 0));
    let _ = std::fs::remove_dir_all(d);
    assert!(b.requests.load(std::sync::atomic::Ordering::Relaxed) > 0);
}

pub fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("pb-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tempdir");
    d
}
