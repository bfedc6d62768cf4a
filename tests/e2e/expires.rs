//! `expires` in each form, as nginx writes `Expires` and `Cache-Control`:
//! on 2xx/3xx answers nginx lists (not on a 404), memory-cache hits
//! included (the second and third identical GET).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::{Prefix, Response, Server, conf_with};

const SERVERS: &str = r#"
    server {
        listen 127.0.0.1:PORT;
        root html;
        location /hour/ { expires 1h; }
        location /neg/ { expires -1; }
        location /zero/ { expires 0; }
        location /epoch/ { expires epoch; }
        location /max/ { expires max; }
        location /off/ { expires off; }
        location /mod/ { expires modified 1d; }
        location /modneg/ { expires modified -1d; }
        location /daily/ { expires @3h; }
        location /var/ { expires $arg_e; }
        location = /var/r { expires $arg_e; return 204; }
        location = /moved { expires 1h; return 301 /hour/a.txt; }
    }
"#;

fn site() -> Server {
    let p = Prefix::new("expires");
    for d in [
        "hour", "neg", "zero", "epoch", "max", "off", "mod", "modneg", "daily", "var",
    ] {
        p.write(&format!("html/{d}/a.txt"), "x");
    }
    Server::start(p, &conf_with(SERVERS))
}

/// An IMF-fixdate (`Thu, 01 Jan 1970 00:00:01 GMT`) as seconds since the
/// epoch (the days from the civil date as in Howard Hinnant's algorithm).
fn http_date(s: &str) -> i64 {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let f: Vec<&str> = s.split([' ', ':']).collect();
    assert_eq!((f.len(), f[7]), (8, "GMT"), "{s}");
    let num = |i: usize| f[i].parse::<i64>().unwrap();
    let (d, y) = (num(1), num(3));
    let m = MONTHS.iter().position(|m| *m == f[2]).unwrap() as i64 + 1;
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + num(4) * 3600 + num(5) * 60 + num(6)
}

#[test]
fn the_date_reader_reads_dates() {
    assert_eq!(http_date("Thu, 01 Jan 1970 00:00:01 GMT"), 1);
    assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777);
    assert_eq!(http_date("Thu, 31 Dec 2037 23:55:55 GMT"), 2_145_916_555);
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// (Expires as seconds, Cache-Control) of `r`.
fn expires(r: &Response) -> (i64, &str) {
    (
        http_date(r.header("Expires").expect("Expires")),
        r.header("Cache-Control").expect("Cache-Control"),
    )
}

fn max_age(cc: &str) -> i64 {
    cc.strip_prefix("max-age=").unwrap().parse().unwrap()
}

#[test]
fn from_the_time_of_the_request() {
    let s = site();
    for _ in 0..3 {
        let t = now();
        let r = s.get("/hour/a.txt");
        let (e, cc) = expires(&r);
        assert_eq!(cc, "max-age=3600");
        assert!((e - (t + 3600)).abs() <= 2, "{e} {t}");
    }
    let t = now();
    let r = s.get("/neg/a.txt");
    let (e, cc) = expires(&r);
    assert_eq!(cc, "no-cache");
    assert!((e - (t - 1)).abs() <= 2);
    let r = s.get("/zero/a.txt");
    let (e, cc) = expires(&r);
    assert_eq!(cc, "max-age=0");
    assert!((e - t).abs() <= 2);
}

#[test]
fn fixed_forms_and_off() {
    let s = site();
    for _ in 0..3 {
        let r = s.get("/epoch/a.txt");
        assert_eq!(r.header("Expires"), Some("Thu, 01 Jan 1970 00:00:01 GMT"));
        assert_eq!(r.header("Cache-Control"), Some("no-cache"));
        let r = s.get("/max/a.txt");
        assert_eq!(r.header("Expires"), Some("Thu, 31 Dec 2037 23:55:55 GMT"));
        assert_eq!(r.header("Cache-Control"), Some("max-age=315360000"));
        let r = s.get("/off/a.txt");
        assert_eq!(
            (r.header("Expires"), r.header("Cache-Control")),
            (None, None)
        );
    }
}

#[test]
fn from_the_modification_time() {
    let s = site();
    let r = s.get("/mod/a.txt");
    let lm = http_date(r.header("Last-Modified").unwrap());
    let (e, cc) = expires(&r);
    assert_eq!(e, lm + 86_400);
    assert!((max_age(cc) - (lm + 86_400 - now())).abs() <= 2);
    // The order nginx writes: the filter's lines after ETag, before
    // Accept-Ranges.
    let names: Vec<&str> = r.headers.iter().map(|(n, _)| n.as_str()).collect();
    let at = names.iter().position(|n| *n == "ETag").unwrap();
    assert_eq!(
        names[at..],
        ["ETag", "Expires", "Cache-Control", "Accept-Ranges"]
    );
    let r = s.get("/modneg/a.txt");
    let (e, cc) = expires(&r);
    assert_eq!((e, cc), (lm - 86_400, "no-cache"));
}

#[test]
fn daily_is_the_next_such_time() {
    let s = site();
    let t = now();
    let r = s.get("/daily/a.txt");
    let (e, cc) = expires(&r);
    // 03:00 (the test machines keep UTC; Peregrine reckons in UTC).
    assert_eq!(e.rem_euclid(86_400), 3 * 3600);
    assert!(e > t - 2 && e <= t + 86_400 + 2, "{e} {t}");
    assert!((max_age(cc) - (e - t)).abs() <= 2);
}

#[test]
fn values_with_variables() {
    let s = site();
    let r = s.get("/var/a.txt?e=2m");
    assert_eq!(r.header("Cache-Control"), Some("max-age=120"));
    let r = s.get("/var/a.txt?e=epoch");
    assert_eq!(r.header("Cache-Control"), Some("no-cache"));
    // `off` or a bad value: nothing.
    for v in ["off", "bad", ""] {
        let r = s.get(&format!("/var/a.txt?e={v}"));
        assert_eq!(r.header("Expires"), None, "{v}");
    }
    let r = s.get("/var/r?e=max");
    assert_eq!(
        (r.status, r.header("Cache-Control")),
        (204, Some("max-age=315360000"))
    );
}

#[test]
fn only_for_the_statuses_nginx_lists() {
    let s = site();
    let r = s.get("/hour/missing.txt");
    assert_eq!((r.status, r.header("Expires")), (404, None));
    let r = s.get("/moved");
    assert_eq!(
        (r.status, r.header("Cache-Control")),
        (301, Some("max-age=3600"))
    );
}

#[test]
fn bad_values_are_refused_as_nginx_does() {
    for (arg, msg) in [
        (
            "@25h",
            "\"expires\" directive daily time value must be less than 24 hours",
        ),
        (
            "modified @1h",
            "\"expires\" directive daily time cannot be used with \"modified\" parameter",
        ),
        ("1x", "\"expires\" directive invalid value"),
        ("since 1h", "\"expires\" directive invalid value"),
    ] {
        let p = Prefix::new("expires-bad");
        p.conf(&conf_with(&format!(
            "    server {{ listen 127.0.0.1:1; expires {arg}; }}"
        )));
        let out = p.run(&["-t"]);
        assert_eq!(out.status.code(), Some(1), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("[emerg] {msg} in ")), "{arg}: {err}");
    }
}
