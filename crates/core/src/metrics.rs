//! Peregrine's Prometheus endpoint (`metrics on;`): the text exposition
//! format, version 0.0.4 (<https://prometheus.io/docs/instrumenting/exposition_formats/>).
//!
//! A content handler, as stub_status: a location with `metrics on` is
//! answered by [`HttpCore::metrics`] in the content phase (after `return`
//! and `try_files`, as any content handler). The engine keeps the numbers
//! (per-worker counters, summed at scrape time, as for stub_status) and
//! hands them over as a [`MetricsSnapshot`] through its
//! [`crate::StatusSource`]; core renders them, with the server blocks named
//! by their first `server_name` at scrape time. The
//! format is a few `write!`s: a client crate (prometheus, metrics) would
//! bring its own registry and locks, which the request path must not have.

use std::fmt::Write as _;
use std::sync::Arc;

use peregrine_conf::model::LocConf;

use crate::http::{Ctx, HttpCore, Step};
use crate::request::Method;
use peregrine_codec::fields::FieldList;

use crate::response::{Body, Response};
use crate::special::{self, PageCtx, Special};

/// Server blocks counted separately in `peregrine_requests_total`; blocks
/// past this share the `server="other"` series, so the per-worker counter
/// block has a fixed size (nothing allocated or resized per request).
pub const MAX_SERVER_SLOTS: usize = 32;

/// Status classes 1xx..5xx; a status outside them is clamped into the
/// nearest one by [`status_class`].
pub const STATUS_CLASSES: usize = 5;

/// Upper bounds of `peregrine_request_duration_seconds`, in microseconds
/// (Prometheus' default buckets extended down to 0.5 ms: a static file is
/// served in well under 1 ms).
pub const DURATION_BUCKETS_US: [u64; 14] = [
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
    2_500_000, 5_000_000, 10_000_000,
];

/// The histogram's slots: one per bucket plus the `+Inf` overflow.
pub const DURATION_SLOTS: usize = DURATION_BUCKETS_US.len() + 1;

/// The index of `status`'s class (0 = 1xx ... 4 = 5xx).
pub fn status_class(status: u16) -> usize {
    usize::from(status / 100).clamp(1, STATUS_CLASSES) - 1
}

/// The histogram slot of a request that took `us` microseconds.
pub fn duration_slot(us: u64) -> usize {
    DURATION_BUCKETS_US.partition_point(|&b| b < us)
}

/// Everything a scrape shows, summed over workers by the engine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Requests by server-block index (`MAX_SERVER_SLOTS` slots, then one
    /// for "other") and status class.
    pub requests: Vec<[u64; STATUS_CLASSES]>,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub reading: u64,
    pub writing: u64,
    pub waiting: u64,
    pub active: u64,
    pub accepted: u64,
    pub handled: u64,
    /// Non-cumulative counts per slot (the last one is over 10 s).
    pub duration: [u64; DURATION_SLOTS],
    pub duration_sum_us: u64,
    pub workers: u64,
    pub reloads_ok: u64,
    pub reloads_failed: u64,
    /// Open-file and memory cache lookups, summed over workers.
    pub caches: CacheCounts,
}

/// Cache lookups that hit or missed (`HttpCore::take_cache_counts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounts {
    pub open_file_hits: u64,
    pub open_file_misses: u64,
    pub memory_hits: u64,
    pub memory_misses: u64,
}

/// Appends one family's HELP and TYPE lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP peregrine_{name} {help}");
    let _ = writeln!(out, "# TYPE peregrine_{name} {kind}");
}

/// A label value escaped as the format requires (`\`, `"`, newline).
fn label(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Renders `s` in the text format; `servers` names server-block indexes.
pub fn render(s: &MetricsSnapshot, servers: &[&str], out: &mut String) {
    render_requests(s, servers, out);
    let counters = [
        (
            "bytes_received_total",
            "Request head and body bytes read.",
            s.bytes_received,
        ),
        (
            "bytes_sent_total",
            "Response head and body bytes written.",
            s.bytes_sent,
        ),
        (
            "connections_accepted_total",
            "Connections accepted.",
            s.accepted,
        ),
        (
            "connections_handled_total",
            "Connections handled.",
            s.handled,
        ),
        (
            "open_file_cache_hits_total",
            "open_file_cache lookups answered from the cache.",
            s.caches.open_file_hits,
        ),
        (
            "open_file_cache_misses_total",
            "open_file_cache lookups that opened or stat-ed the file.",
            s.caches.open_file_misses,
        ),
        (
            "memory_cache_hits_total",
            "memory_cache lookups answered from memory.",
            s.caches.memory_hits,
        ),
        (
            "memory_cache_misses_total",
            "memory_cache lookups not answered from memory.",
            s.caches.memory_misses,
        ),
    ];
    for (name, help, v) in counters {
        family(out, name, "counter", help);
        let _ = writeln!(out, "peregrine_{name} {v}");
    }
    family(
        out,
        "connections",
        "gauge",
        "Client connections by state (as stub_status).",
    );
    for (state, v) in [
        ("reading", s.reading),
        ("writing", s.writing),
        ("waiting", s.waiting),
        ("active", s.active),
    ] {
        let _ = writeln!(out, "peregrine_connections{{state=\"{state}\"}} {v}");
    }
    render_histogram(s, out);
    family(out, "workers", "gauge", "Worker threads running.");
    let _ = writeln!(out, "peregrine_workers {}", s.workers);
    family(
        out,
        "reloads_total",
        "counter",
        "Configuration reloads by outcome.",
    );
    for (result, v) in [("ok", s.reloads_ok), ("failed", s.reloads_failed)] {
        let _ = writeln!(out, "peregrine_reloads_total{{result=\"{result}\"}} {v}");
    }
    family(out, "build_info", "gauge", "The running version.");
    let version = env!("CARGO_PKG_VERSION");
    let _ = writeln!(out, "peregrine_build_info{{version=\"{version}\"}} 1");
}

/// `requests_total`: only server slots that served something.
fn render_requests(s: &MetricsSnapshot, servers: &[&str], out: &mut String) {
    family(
        out,
        "requests_total",
        "counter",
        "Requests by server block and status class.",
    );
    for (i, classes) in s.requests.iter().enumerate() {
        if classes.iter().all(|&n| n == 0) {
            continue;
        }
        let name = match servers.get(i) {
            Some(n) if i < MAX_SERVER_SLOTS => n,
            _ if i < MAX_SERVER_SLOTS => "",
            _ => "other",
        };
        for (c, n) in classes.iter().enumerate() {
            out.push_str("peregrine_requests_total{server=\"");
            label(out, name);
            let _ = writeln!(out, "\",status=\"{}xx\"}} {n}", c + 1);
        }
    }
}

/// `request_duration_seconds`: cumulative buckets, sum and count.
fn render_histogram(s: &MetricsSnapshot, out: &mut String) {
    family(
        out,
        "request_duration_seconds",
        "histogram",
        "Time from the first request byte to the last response byte.",
    );
    let mut cumulative = 0u64;
    for (i, n) in s.duration.iter().enumerate() {
        cumulative += n;
        let le = match DURATION_BUCKETS_US.get(i) {
            Some(&us) => (us as f64 / 1e6).to_string(),
            None => "+Inf".to_string(),
        };
        let _ = writeln!(
            out,
            "peregrine_request_duration_seconds_bucket{{le=\"{le}\"}} {cumulative}"
        );
    }
    let sum = s.duration_sum_us as f64 / 1e6;
    let _ = writeln!(out, "peregrine_request_duration_seconds_sum {sum}");
    let _ = writeln!(out, "peregrine_request_duration_seconds_count {cumulative}");
}

impl HttpCore {
    /// The index of the server block `srv` among this configuration's (the
    /// engine's `server` label), by identity: a linear scan of pointers,
    /// cheaper than hashing for the handful of blocks a config has.
    pub fn server_index(&self, srv: &Arc<peregrine_conf::model::ServerConf>) -> Option<usize> {
        self.servers.iter().position(|s| Arc::ptr_eq(&s.conf, srv))
    }

    /// The content handler of a location with `metrics on`: the scrape of
    /// the status source's numbers (zeros without one) for GET and HEAD,
    /// 405 otherwise (through `error_page`, as stub_status's).
    pub(crate) fn metrics(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if !matches!(ctx.method, Method::Get | Method::Head) {
            return Step::Special(Special::status(405));
        }
        let snap = self
            .status_source()
            .and_then(|s| s.metrics())
            .unwrap_or_default();
        let conf = ctx.conf.clone();
        Step::Done(self.metrics_response(&conf, ctx.method, &snap))
    }

    /// The answer of a location with `metrics on`: the scrape for GET and
    /// HEAD, 405 otherwise (as stub_status).
    pub fn metrics_response(
        &mut self,
        conf: &Arc<LocConf>,
        method: Method,
        snap: &MetricsSnapshot,
    ) -> Response {
        if !matches!(method, Method::Get | Method::Head) {
            let page = PageCtx {
                conf,
                header_only: false,
                padding: false,
                origin: "",
            };
            return special::builtin(&Special::status(405), &page);
        }
        let names: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        let mut text = String::with_capacity(4096);
        render(snap, &names, &mut text);
        let mut head = FieldList::with_capacity(2);
        head.push_first("Content-Type", "text/plain; version=0.0.4");
        head.set_content_length(Some(text.len() as u64));
        let header_only = method == Method::Head;
        Response {
            status: 200,
            head: head.into(),
            content_length: Some(text.len() as u64),
            chunked: false,
            trailers: None,
            body: if header_only {
                Body::Empty
            } else {
                Body::Shared(Arc::from(text.into_bytes()))
            },
            keepalive: true,
            header_only,
            conf: Some(conf.clone()),
            server: None,
            compressible: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MetricsSnapshot {
        let mut s = MetricsSnapshot {
            requests: vec![[0; STATUS_CLASSES]; MAX_SERVER_SLOTS + 1],
            bytes_received: 300,
            bytes_sent: 4000,
            reading: 1,
            writing: 2,
            waiting: 3,
            active: 6,
            accepted: 9,
            handled: 9,
            workers: 2,
            reloads_ok: 1,
            ..MetricsSnapshot::default()
        };
        s.requests[0][1] = 5;
        s.requests[0][3] = 2;
        s.requests[MAX_SERVER_SLOTS][4] = 1;
        s.duration[duration_slot(100)] += 3;
        s.duration[duration_slot(20_000_000)] += 1;
        s.duration_sum_us = 20_000_300;
        s
    }

    #[test]
    fn classes_and_slots() {
        assert_eq!(status_class(200), 1);
        assert_eq!(status_class(404), 3);
        assert_eq!(status_class(599), 4);
        assert_eq!(status_class(0), 0);
        assert_eq!(status_class(999), 4);
        assert_eq!(duration_slot(0), 0);
        assert_eq!(duration_slot(500), 0);
        assert_eq!(duration_slot(501), 1);
        assert_eq!(duration_slot(10_000_000), DURATION_SLOTS - 2);
        assert_eq!(duration_slot(10_000_001), DURATION_SLOTS - 1);
    }

    #[test]
    fn renders_every_family_in_valid_lines() {
        let mut out = String::new();
        render(&sample(), &["local\"host"], &mut out);
        for line in out.lines() {
            if line.starts_with("# HELP ") || line.starts_with("# TYPE ") {
                continue;
            }
            let (name, value) = line.rsplit_once(' ').expect(line);
            assert!(value.parse::<f64>().is_ok(), "{line}");
            assert!(name.starts_with("peregrine_"), "{line}");
            assert_eq!(name.contains('{'), name.ends_with('}'), "{line}");
        }
        for want in [
            "peregrine_requests_total{server=\"local\\\"host\",status=\"2xx\"} 5",
            "peregrine_requests_total{server=\"local\\\"host\",status=\"4xx\"} 2",
            "peregrine_requests_total{server=\"other\",status=\"5xx\"} 1",
            "peregrine_bytes_received_total 300",
            "peregrine_bytes_sent_total 4000",
            "peregrine_connections{state=\"waiting\"} 3",
            "peregrine_connections{state=\"active\"} 6",
            "peregrine_connections_accepted_total 9",
            "peregrine_request_duration_seconds_bucket{le=\"0.0005\"} 3",
            "peregrine_request_duration_seconds_bucket{le=\"10\"} 3",
            "peregrine_request_duration_seconds_bucket{le=\"+Inf\"} 4",
            "peregrine_request_duration_seconds_sum 20.0003",
            "peregrine_request_duration_seconds_count 4",
            "peregrine_workers 2",
            "peregrine_reloads_total{result=\"ok\"} 1",
            "peregrine_reloads_total{result=\"failed\"} 0",
            "# TYPE peregrine_request_duration_seconds histogram",
        ] {
            assert!(out.lines().any(|l| l == want), "missing {want} in\n{out}");
        }
        assert!(out.contains("peregrine_build_info{version=\""));
        // Idle server blocks print no series.
        assert_eq!(out.matches("peregrine_requests_total{").count(), 10);
    }
}
