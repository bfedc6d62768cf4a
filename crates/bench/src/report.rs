//! ab's report, line for line in ab 2.3's layout and order, computed from
//! the histograms (ab sorts every sample; a histogram gives the same
//! figures within its 0.1% precision, then rounded to whole ms as ab does).

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::files::round_ms;
use crate::stats::Stats;

/// The percentages of ab's "Percentage of the requests served" table.
pub const AB_PERCENTILES: [u32; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// The run facts the report needs besides the counters.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunInfo {
    pub server_software: String,
    pub host: String,
    pub port: u16,
    pub path: String,
    /// The first response's body length.
    pub doclen: u64,
    /// `-l`: ab prints "Variable".
    pub variable_length: bool,
    pub concurrency: u64,
    /// Seconds from the start to the last completion.
    pub time_taken: f64,
    pub keepalive: bool,
    /// `-p`/`-u` given: ab adds "Total body sent" and the sent rates.
    pub send_body: bool,
}

/// Report switches: `-d` and `-S`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReportOpts {
    pub no_percentiles: bool,
    pub no_confidence: bool,
}

/// One Connection Times row, in whole ms except the deviation.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub min: u64,
    pub mean: u64,
    pub sd: f64,
    pub median: u64,
    pub max: u64,
}

impl Row {
    /// ab's figures for one histogram of microseconds.
    pub fn of(h: &Histogram<u64>) -> Row {
        let n = h.len();
        // ab divides by n-1 (sample deviation); the histogram by n.
        let sd = if n > 1 {
            h.stdev() * (n as f64 / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Row {
            min: round_ms(h.min()),
            mean: round_ms(h.mean() as u64),
            sd: sd / 1000.0,
            median: round_ms(h.value_at_quantile(0.5)),
            max: round_ms(h.max()),
        }
    }
}

/// The report text from "Server Software:" to the percentile table.
pub fn render(s: &Stats, info: &RunInfo, opts: ReportOpts) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Server Software:        {}", info.server_software);
    let _ = writeln!(o, "Server Hostname:        {}", info.host);
    let _ = writeln!(o, "Server Port:            {}", info.port);
    o.push('\n');
    let _ = writeln!(o, "Document Path:          {}", info.path);
    if info.variable_length {
        o.push_str("Document Length:        Variable\n");
    } else {
        let _ = writeln!(o, "Document Length:        {} bytes", info.doclen);
    }
    o.push('\n');
    let _ = writeln!(o, "Concurrency Level:      {}", info.concurrency);
    let _ = writeln!(o, "Time taken for tests:   {:.3} seconds", info.time_taken);
    let _ = writeln!(o, "Complete requests:      {}", s.complete);
    let _ = writeln!(o, "Failed requests:        {}", s.failed());
    if s.failed() > 0 {
        let _ = writeln!(
            o,
            "   (Connect: {}, Receive: {}, Length: {}, Exceptions: {})",
            s.failed_connect, s.failed_receive, s.failed_length, s.failed_exceptions
        );
    }
    if s.write_errors > 0 {
        let _ = writeln!(o, "Write errors:           {}", s.write_errors);
    }
    if s.non_2xx > 0 {
        let _ = writeln!(o, "Non-2xx responses:      {}", s.non_2xx);
    }
    if info.keepalive {
        let _ = writeln!(o, "Keep-Alive requests:    {}", s.keepalive);
    }
    let _ = writeln!(o, "Total transferred:      {} bytes", s.bytes_read);
    if info.send_body {
        let _ = writeln!(o, "Total body sent:        {}", s.bytes_sent);
    }
    let _ = writeln!(o, "HTML transferred:       {} bytes", s.body_bytes);
    rates(&mut o, s, info);
    if !s.total.is_empty() {
        times(&mut o, s, opts);
        if !opts.no_percentiles && s.total.len() > 1 {
            percentiles(&mut o, &s.total);
        }
    }
    o
}

fn rates(o: &mut String, s: &Stats, info: &RunInfo) {
    let t = info.time_taken;
    if t <= 0.0 || s.complete == 0 {
        return;
    }
    let done = s.complete as f64;
    let _ = writeln!(o, "Requests per second:    {:.2} [#/sec] (mean)", done / t);
    let _ = writeln!(
        o,
        "Time per request:       {:.3} [ms] (mean)",
        info.concurrency as f64 * t * 1000.0 / done
    );
    let _ = writeln!(
        o,
        "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
        t * 1000.0 / done
    );
    let _ = writeln!(
        o,
        "Transfer rate:          {:.2} [Kbytes/sec] received",
        s.bytes_read as f64 / 1024.0 / t
    );
    if info.send_body {
        let _ = writeln!(
            o,
            "                        {:.2} kb/s sent",
            s.bytes_sent as f64 / 1024.0 / t
        );
        let total = (s.bytes_read + s.bytes_sent) as f64;
        let _ = writeln!(
            o,
            "                        {:.2} kb/s total",
            total / 1024.0 / t
        );
    }
}

fn times(o: &mut String, s: &Stats, opts: ReportOpts) {
    let rows = [
        (
            "Connect:    ",
            Row::of(&s.connect),
            "the initial connection time",
        ),
        (
            "Processing: ",
            Row::of(&s.processing),
            "the processing time",
        ),
        ("Waiting:    ", Row::of(&s.waiting), "the waiting time"),
        ("Total:      ", Row::of(&s.total), "the total time"),
    ];
    o.push_str("\nConnection Times (ms)\n");
    if opts.no_confidence {
        o.push_str("              min   avg   max\n");
        for (label, r, _) in &rows {
            let _ = writeln!(o, "{label}{:5} {:5}{:5}", r.min, r.mean, r.max);
        }
        return;
    }
    o.push_str("              min  mean[+/-sd] median   max\n");
    for (label, r, _) in &rows {
        let _ = writeln!(
            o,
            "{label}{:5} {:4} {:5.1} {:6} {:7}",
            r.min, r.mean, r.sd, r.median, r.max
        );
    }
    // ab's SANE() check, on the ms figures as ab has them.
    for (_, r, what) in &rows {
        let d = (r.mean as f64 - r.median as f64).abs();
        if d > 2.0 * r.sd {
            let _ = writeln!(
                o,
                "ERROR: The median and mean for {what} are more than twice the standard\n       deviation apart. These results are NOT reliable."
            );
        } else if d > r.sd {
            let _ = writeln!(
                o,
                "WARNING: The median and mean for {what} are not within a normal deviation\n        These results are probably not that reliable."
            );
        }
    }
}

/// ab's percentage table alone (for merged latency-only logs).
pub fn render_percentiles(total: &Histogram<u64>) -> String {
    let mut o = String::new();
    percentiles(&mut o, total);
    o
}

fn percentiles(o: &mut String, total: &Histogram<u64>) {
    o.push_str("\nPercentage of the requests served within a certain time (ms)\n");
    for p in AB_PERCENTILES {
        if p >= 100 {
            let _ = writeln!(o, " 100%  {:5} (longest request)", round_ms(total.max()));
        } else {
            let v = total.value_at_quantile(f64::from(p) / 100.0);
            let _ = writeln!(o, "  {p}%  {:5}", round_ms(v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Timing;

    fn sample() -> (Stats, RunInfo) {
        let mut s = Stats::default();
        for ms in [1u64, 2, 2, 3, 8] {
            s.record(Timing {
                connect_us: 0,
                wait_us: ms * 500,
                total_us: ms * 1000,
            });
        }
        s.complete = 5;
        s.bytes_read = 950;
        s.body_bytes = 30;
        let info = RunInfo {
            server_software: "SimpleHTTP/0.6".into(),
            host: "127.0.0.1".into(),
            port: 18080,
            path: "/index.html".into(),
            doclen: 6,
            concurrency: 2,
            time_taken: 0.021,
            ..RunInfo::default()
        };
        (s, info)
    }

    /// The layout of Debian's ab 2.3 output, field for field.
    #[test]
    fn ab_layout() {
        let (s, info) = sample();
        let text = render(&s, &info, ReportOpts::default());
        let want_head = "Server Software:        SimpleHTTP/0.6\nServer Hostname:        127.0.0.1\n\
Server Port:            18080\n\nDocument Path:          /index.html\nDocument Length:        6 bytes\n\n\
Concurrency Level:      2\nTime taken for tests:   0.021 seconds\nComplete requests:      5\n\
Failed requests:        0\nTotal transferred:      950 bytes\nHTML transferred:       30 bytes\n\
Requests per second:    238.10 [#/sec] (mean)\nTime per request:       8.400 [ms] (mean)\n\
Time per request:       4.200 [ms] (mean, across all concurrent requests)\n\
Transfer rate:          44.18 [Kbytes/sec] received\n\nConnection Times (ms)\n";
        let want_table = "              min  mean[+/-sd] median   max\nConnect:        0    0   0.0      0       0\n";
        assert!(text.contains(&format!("{want_head}{want_table}")), "{text}");
        assert!(text.starts_with(want_head), "{text}");
        assert!(
            text.contains("Total:          1    3   2.8      2       8\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nPercentage of the requests served within a certain time (ms)\n  50%      2\n  66%      3\n"
            )
        );
        assert!(
            text.ends_with("  99%      8\n 100%      8 (longest request)\n"),
            "{text}"
        );
    }

    #[test]
    fn failures_and_switches() {
        let (mut s, mut info) = sample();
        s.failed_length = 2;
        s.non_2xx = 1;
        info.keepalive = true;
        info.variable_length = true;
        let text = render(
            &s,
            &info,
            ReportOpts {
                no_percentiles: true,
                no_confidence: true,
            },
        );
        assert!(text.contains("Failed requests:        2\n   (Connect: 0, Receive: 0, Length: 2, Exceptions: 0)\nNon-2xx responses:      1\nKeep-Alive requests:    0\n"));
        assert!(text.contains("Document Length:        Variable\n"));
        assert!(
            text.contains("              min   avg   max\nConnect:        0     0    0\n"),
            "{text}"
        );
        assert!(!text.contains("Percentage"));
    }

    #[test]
    fn sanity_warning() {
        let mut s = Stats::default();
        // Mean 1.5 ms rounds to 2, the median 1.4 ms to 1, the deviation
        // is 0.1 ms: ab calls that unreliable.
        for us in [1400u64, 1600].repeat(5) {
            s.record(Timing {
                connect_us: 0,
                wait_us: 0,
                total_us: us,
            });
        }
        s.complete = 10;
        let text = render(
            &s,
            &RunInfo {
                time_taken: 1.0,
                ..RunInfo::default()
            },
            ReportOpts::default(),
        );
        assert!(text.contains("ERROR: The median and mean for the total time are more than twice the standard\n       deviation apart."), "{text}");
    }
}
