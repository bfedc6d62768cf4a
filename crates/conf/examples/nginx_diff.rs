//! Differential check against the real nginx: writes random configurations
//! built from the directive table (each directive in a context it allows,
//! rarely one it does not, with arguments drawn from value shapes the
//! handlers parse, plus location forms), runs
//! `nginx -t` on each and compares its verdict and `[emerg]` message with
//! [`peregrine_conf::load`]'s. The fuzz targets look for panics; this looks
//! for configurations the two judge differently.
//!
//! `cargo run -p peregrine-conf --example nginx_diff -- [COUNT] [SEED] [NGINX]`
//! (defaults: 300 configurations, seed 1, `/usr/sbin/nginx`). Prints each
//! disagreement and a summary; exits 1 if any. Writes only under a fresh
//! directory in the system temp dir.

use std::path::Path;
use std::process::Command;

use peregrine_conf::table::{TABLE, ctx};
use peregrine_conf::{ConfError, LoadOptions, load};

/// Directives left out: they open files outside the prefix (`access_log`,
/// `error_log`), look up users (`user`: Peregrine does not), or read other
/// files (`include`), which would make the verdicts depend on the machine.
const SKIPPED: &[&str] = &["access_log", "error_log", "user", "include"];

/// Argument shapes, with the edges of nginx's number parsers.
const ARGS: &[&str] = &[
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "2147483648",
    "65535",
    "65536",
    "1k",
    "8m",
    "1g",
    "1s",
    "500ms",
    "1h30m",
    "1y",
    "on",
    "off",
    "auto",
    "=404",
    "=",
    "200",
    "301",
    "404",
    "999",
    "80",
    "8080",
    "*:8080",
    "[::]:8080",
    "127.0.0.1:8080",
    "127.0.0.1:65536",
    "default_server",
    "backlog=0",
    "backlog=10",
    "max=10",
    "inactive=1s",
    "/",
    "/a",
    "@n",
    "$uri",
    "/a$",
    "${x",
    "/x$1",
    "~",
    "^~",
    "~^(a|b)$",
    "*.example.com",
    ".example.com",
    "0101",
    "text/html",
    "html",
    "x",
];

/// xorshift64: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).unwrap_or(0)
    }
}

fn directive(rng: &mut Rng) -> (String, u16) {
    loop {
        let spec = &TABLE[rng.below(TABLE.len())];
        if SKIPPED.contains(&spec.name) || spec.block {
            continue;
        }
        let n = rng.below(4);
        let args: Vec<&str> = (0..n).map(|_| ARGS[rng.below(ARGS.len())]).collect();
        let line = if args.is_empty() {
            format!("{};", spec.name)
        } else {
            format!("{} {};", spec.name, args.join(" "))
        };
        return (line, spec.contexts);
    }
}

/// Extra blocks for the server: location forms, including a duplicate of
/// the generated `location /loc` and forms nginx refuses.
const LOCATIONS: &[&str] = &[
    "location = /loc {}",
    "location /loc {}",
    "location ~ ^/a {}",
    "location ~* \\.(gif|jpg)$ {}",
    "location ^~ /s/ {}",
    "location @n {}",
    "location @n { location /x {} }",
    "location /p { location /p/q {} }",
    "location /p { location /other {} }",
    "location = /e { location /e/x {} }",
    "location ~ x { location ~ y {} }",
    "location ! /a {}",
];

/// A configuration of up to ten directives, each in a context it allows
/// (sometimes one it does not), plus sometimes an extra location.
fn config(rng: &mut Rng) -> String {
    let mut bodies: [String; 5] = Default::default();
    let levels = [
        ctx::MAIN,
        ctx::EVENTS,
        ctx::HTTP,
        ctx::SERVER,
        ctx::LOCATION,
    ];
    for _ in 0..=rng.below(10) {
        let (line, contexts) = directive(rng);
        let allowed: Vec<usize> = (0..levels.len())
            .filter(|&i| contexts & levels[i] != 0)
            .collect();
        let level = if allowed.is_empty() || rng.below(20) == 0 {
            rng.below(levels.len())
        } else {
            allowed[rng.below(allowed.len())]
        };
        bodies[level].push_str(&line);
        bodies[level].push('\n');
    }
    if rng.below(3) == 0 {
        bodies[3].push_str(LOCATIONS[rng.below(LOCATIONS.len())]);
        bodies[3].push('\n');
    }
    let [main, events, http, server, location] = &bodies;
    format!(
        "{main}events {{\n{events}}}\nhttp {{\n{http}server {{\nlisten 127.0.0.1:8080;\n\
         {server}location /loc {{\n{location}}}\n}}\n}}\n"
    )
}

/// nginx's verdict: `None` for "test is successful", else its first
/// `[emerg]` message.
fn nginx_verdict(nginx: &str, prefix: &Path, conf: &Path) -> Option<String> {
    let out = Command::new(nginx)
        .arg("-t")
        .arg("-q")
        .arg("-p")
        .arg(prefix)
        .arg("-c")
        .arg(conf)
        .arg("-g")
        .arg("error_log stderr;")
        .output()
        .ok()?;
    if out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let line = text.lines().find(|l| l.contains("[emerg]"))?;
    // `2026/01/01 00:00:00 [emerg] PID#PID: MESSAGE` or `nginx: [emerg] MESSAGE`.
    let rest = line.split_once("[emerg] ")?.1;
    let rest = match rest.split_once(": ") {
        Some((pid, msg)) if pid.contains('#') => msg,
        _ => rest,
    };
    Some(rest.to_string())
}

/// Peregrine's verdict, worded as nginx's (without Peregrine's hint).
fn peregrine_verdict(prefix: &Path, conf: &Path) -> Option<String> {
    let opts = LoadOptions {
        prefix: prefix.to_path_buf(),
        conf_file: conf.to_path_buf(),
        globals: None,
    };
    load(&opts).err().map(|e: ConfError| match e.span {
        Some(span) => format!("{} in {span}", e.message),
        None => e.message,
    })
}

/// Peregrine's deliberate wording differences: none left (a bad
/// `keepalive_timeout` now says nginx's `directive invalid value`).
fn deliberate(_ours: &str) -> bool {
    false
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let count: usize = argv.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let seed: u64 = argv.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let nginx = argv.next().unwrap_or_else(|| "/usr/sbin/nginx".into());
    let prefix = std::env::temp_dir().join(format!("peregrine-nginx-diff-{}", std::process::id()));
    let conf = prefix.join("conf/nginx.conf");
    if let Err(e) = std::fs::create_dir_all(prefix.join("conf"))
        .and_then(|()| std::fs::create_dir_all(prefix.join("logs")))
    {
        eprintln!("cannot create {}: {e}", prefix.display());
        std::process::exit(2);
    }
    let mut rng = Rng(seed.max(1));
    let (mut same, mut differ, mut unknown, mut known) = (0usize, 0usize, 0usize, 0usize);
    for i in 0..count {
        let text = config(&mut rng);
        if let Err(e) = std::fs::write(&conf, &text) {
            eprintln!("cannot write {}: {e}", conf.display());
            std::process::exit(2);
        }
        let theirs = nginx_verdict(&nginx, &prefix, &conf);
        let ours = peregrine_verdict(&prefix, &conf);
        if theirs == ours {
            same += 1;
        } else if ours.as_deref().is_some_and(deliberate) {
            known += 1;
        } else if theirs
            .as_deref()
            .is_some_and(|m| m.starts_with("unknown directive"))
        {
            // Peregrine's own directives (brotli, zstd, metrics...) or
            // modules this nginx was built without.
            unknown += 1;
        } else {
            differ += 1;
            println!("--- #{i}\n{text}nginx:     {theirs:?}\nperegrine: {ours:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&prefix);
    println!(
        "{same} agree, {differ} differ, {unknown} unknown to nginx, {known} deliberate differences"
    );
    if differ > 0 {
        std::process::exit(1);
    }
}
