//! The files and documents a run writes: JSON schema, `-e` CSV, `-g`
//! gnuplot TSV, `--hdr-log`, `--plot`, `merge`, `--sweep`.

mod support;

use std::path::PathBuf;

use peregrine_bench::config::Config;
use peregrine_bench::json::{SCHEMA, Summary};
use peregrine_bench::run::execute;
use peregrine_bench::{cli, merge};
use support::{Mode, args, start};

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pb-out-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("tempdir");
    d
}

fn summary(v: &[&str]) -> Summary {
    let cfg = Config::from_args(&cli::parse(&args(v)).expect("parse")).expect("config");
    let r = execute(&cfg, cfg.concurrency, cfg.spec.keepalive, false).expect("run");
    Summary::new(
        &r.stats,
        &r.info,
        cfg.url_strings.clone(),
        r.threads,
        cfg.rate,
    )
}

#[test]
fn json_schema() {
    let s = start(Mode::Ok { body: "json" });
    let doc =
        serde_json::to_value(summary(&["-n", "50", "-c", "5", "-k", &s.url("/")])).expect("json");
    assert_eq!(doc["schema"], SCHEMA);
    for key in [
        "info",
        "urls",
        "threads",
        "rate_requested",
        "requests",
        "bytes",
        "requests_per_second",
        "time_per_request_ms",
        "time_per_request_all_ms",
        "transfer_rate_kbytes_per_sec",
        "latency",
        "connection_times",
        "per_second",
        "histograms",
    ] {
        assert!(doc.get(key).is_some(), "missing {key}");
    }
    assert_eq!(doc["requests"]["complete"], 50);
    assert_eq!(doc["requests"]["keepalive"], 50);
    assert_eq!(doc["info"]["doclen"], 4);
    for row in ["connect", "processing", "waiting", "total"] {
        for f in ["min", "mean", "sd", "median", "max"] {
            assert!(doc["connection_times"][row][f].is_number(), "{row}.{f}");
        }
    }
    let p: Vec<f64> = doc["latency"]["percentiles"]
        .as_array()
        .expect("array")
        .iter()
        .map(|v| v["ms"].as_f64().expect("ms"))
        .collect();
    assert_eq!(p.len(), 13);
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    let rps = doc["requests_per_second"].as_f64().expect("rps");
    let t = doc["info"]["time_taken"].as_f64().expect("t");
    assert!((rps - 50.0 / t).abs() < 1e-6);
}

#[test]
fn csv_gnuplot_hdrlog_and_plot_files() {
    let s = start(Mode::Ok { body: "files" });
    let d = tempdir("files");
    let (csv, tsv, hlog, svg) = (
        d.join("p.csv"),
        d.join("p.tsv"),
        d.join("h.hlog"),
        d.join("p.svg"),
    );
    let code = peregrine_bench::run(&args(&[
        "-n",
        "120",
        "-c",
        "4",
        "-k",
        "-q",
        "--json",
        "-e",
        csv.to_str().expect("p"),
        "-g",
        tsv.to_str().expect("p"),
        "--hdr-log",
        hlog.to_str().expect("p"),
        "--plot",
        svg.to_str().expect("p"),
        &s.url("/"),
    ]))
    .expect("run");
    assert_eq!(code, 0);
    let csv_text = std::fs::read_to_string(&csv).expect("csv");
    assert_eq!(
        csv_text.lines().next(),
        Some("Percentage served,Time in ms")
    );
    assert_eq!(csv_text.lines().count(), 102);
    let tsv_text = std::fs::read_to_string(&tsv).expect("tsv");
    let mut lines = tsv_text.lines();
    assert_eq!(
        lines.next(),
        Some("starttime\tseconds\tctime\tdtime\tttime\twait")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 120);
    assert!(rows.iter().all(|r| r.split('\t').count() == 6));
    let total = peregrine_bench::hdrlog::read_total(&hlog).expect("hlog");
    assert_eq!(total.latencies.len(), 120);
    let svg_text = std::fs::read_to_string(&svg).expect("svg");
    assert!(svg_text.contains("<svg") && svg_text.contains("Latency by percentile"));
    let _ = std::fs::remove_dir_all(d);
}

/// Two machines' results merge into exact totals and percentiles.
#[test]
fn merge_json_results() {
    let fast = start(Mode::Ok { body: "m" });
    let d = tempdir("merge");
    let a = summary(&["-n", "100", "-c", "2", "-k", &fast.url("/")]);
    let b = summary(&["-n", "50", "-c", "1", "-k", &fast.url("/")]);
    let (pa, pb) = (d.join("a.json"), d.join("b.json"));
    std::fs::write(&pa, serde_json::to_string(&a).expect("json")).expect("write");
    std::fs::write(&pb, serde_json::to_string(&b).expect("json")).expect("write");
    let m = merge::merge(&[pa.clone(), pb.clone()]).expect("merge");
    assert_eq!(m.stats.complete, 150);
    assert_eq!(m.stats.total.len(), 150);
    assert_eq!(m.info.concurrency, 3);
    assert_eq!(m.info.time_taken, a.info.time_taken.max(b.info.time_taken));
    let mut both = a.to_stats().expect("a").total;
    both.add(b.to_stats().expect("b").total).expect("add");
    assert_eq!(
        m.stats.total.value_at_quantile(0.99),
        both.value_at_quantile(0.99)
    );
    assert_eq!(
        peregrine_bench::run(&args(&[
            "merge",
            pa.to_str().expect("p"),
            pb.to_str().expect("p")
        ]))
        .expect("cli"),
        0
    );
    let bad = d.join("bad.json");
    std::fs::write(&bad, "{\"schema\": 1}").expect("write");
    assert!(merge::merge(&[bad]).is_err());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn sweep_runs_every_point() {
    let s = start(Mode::Ok { body: "sweep" });
    let d = tempdir("sweep");
    let svg = d.join("sweep.svg");
    let code = peregrine_bench::run(&args(&[
        "-n",
        "40",
        "-q",
        "--sweep",
        "1,4",
        "--sweep-keepalive",
        "both",
        "--plot",
        svg.to_str().expect("p"),
        &s.url("/"),
    ]))
    .expect("sweep");
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&svg).expect("svg");
    assert!(
        text.contains("Requests per second")
            && text.contains("keep-alive")
            && text.contains("close")
    );
    // 40 requests at each of 4 points.
    assert_eq!(s.requests.load(std::sync::atomic::Ordering::Relaxed), 160);
    let _ = std::fs::remove_dir_all(d);
}

/// `--hdr-log` files say how long the run took: merging them reports that
/// time (the longest of the machines'), not 0.000 seconds.
#[test]
fn merge_hdr_logs_keeps_the_time_taken() {
    let fast = start(Mode::Ok { body: "h" });
    let d = tempdir("merge-hlog");
    let (pa, pb) = (d.join("a.hlog"), d.join("b.hlog"));
    for (p, n) in [(&pa, "40"), (&pb, "20")] {
        let code = peregrine_bench::run(&args(&[
            "-n",
            n,
            "-c",
            "2",
            "-q",
            "--hdr-log",
            p.to_str().expect("p"),
            &fast.url("/"),
        ]))
        .expect("run");
        assert_eq!(code, 0);
    }
    let a = peregrine_bench::hdrlog::read_total(&pa).expect("a");
    let b = peregrine_bench::hdrlog::read_total(&pb).expect("b");
    assert_eq!(a.latencies.len(), 40);
    // A short run's one interval is as long as the run, under a second.
    assert!(a.time_taken > 0.0 && a.time_taken < 1.0, "{}", a.time_taken);
    assert!(b.time_taken > 0.0 && b.time_taken < 1.0, "{}", b.time_taken);
    let m = merge::merge(&[pa, pb]).expect("merge");
    assert_eq!(m.stats.complete, 60);
    assert_eq!(m.info.time_taken, a.time_taken.max(b.time_taken));
    let _ = std::fs::remove_dir_all(d);
}
