//! Every configuration of the real-configuration corpus starts and serves,
//! and answers what nginx answers.
//!
//! The corpus (101 nginx.conf files from public projects and `run.py`, which
//! builds a throw-away prefix for each: certificates, htpasswd files,
//! includes, loopback listen addresses) lives outside this repository, in
//! `../shared/realconf` (or `$REALCONF_DIR`); it is read there and never
//! copied. Without it the test says so and does nothing.
//!
//! Each configuration runs in a network namespace of its own (`unshare -n`),
//! so that its real ports (80, 443, 8080...) collide with nothing else on
//! the machine, nor with the other tests of this binary. Both Peregrine and
//! Debian's nginx are started on the prefix `run.py` built for them; every
//! TCP port nginx listens on is asked `GET /` over plain HTTP and over TLS,
//! and Peregrine must listen on the same ports and answer with the same
//! status codes. The configurations' backends (php-fpm, upstream servers)
//! do not exist in the namespace: both servers answer 502 or 504 alike.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{BIN, is_nginx, must, sh};

/// Debian's nginx, the reference the answers are compared with.
const NGINX: &str = "/usr/sbin/nginx";
/// How long a configuration may take to open all its listening sockets.
const LISTEN_WAIT: Duration = Duration::from_secs(10);
/// The listening set must stay unchanged this long to count as complete
/// (a daemonizing server opens its sockets before it forks; a `daemon off`
/// one opens them in one go, so a short settle suffices).
const SETTLE: Duration = Duration::from_millis(300);

/// A difference from nginx that is deliberate, with its reason: the
/// configuration's id, the port, and what Peregrine answers instead.
/// Empty: every configuration answers as nginx does.
const DELIBERATE: &[(&str, u16, &str)] = &[];

fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("REALCONF_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realconf"));
    dir.join("run.py").is_file().then_some(dir)
}

/// `run.py BIN --keep`: the id and prefix of every configuration it passed.
fn prefixes(corpus: &Path, bin: &str, work: &Path) -> Vec<(String, PathBuf)> {
    let json = work.join("run.json");
    must(&format!(
        "python3 {}/run.py {bin} --keep --quiet --json {} --logdir {}",
        corpus.display(),
        json.display(),
        work.join("logs").display()
    ));
    let list = must(&format!(
        "python3 -c 'import json,sys\nfor r in json.load(open(sys.argv[1]))[\"results\"]: \
         print(r[\"id\"], r[\"status\"], r[\"prefix\"])' {}",
        json.display()
    ));
    list.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f[1], "PASS", "{bin} -t refuses configuration {}", f[0]);
            // mkdtemp's 0700 would keep the workers (`user`, or nobody)
            // out of the site; a site's directory is world-readable.
            let prefix = PathBuf::from(f[2]);
            std::fs::set_permissions(&prefix, std::fs::Permissions::from_mode(0o755)).unwrap();
            (f[0].to_string(), prefix)
        })
        .collect()
}

/// A server started on one prefix inside a network namespace of its own,
/// anchored by a `sleep` whose pid names the namespace.
struct Netns {
    anchor: Child,
    bin: String,
    prefix: PathBuf,
}

impl Netns {
    fn start(bin: &str, prefix: &Path) -> Netns {
        let p = prefix.display();
        let script = format!(
            "ip link set lo up && cd {p} && {bin} -p {p}/ -c {p}/conf/nginx.conf \
             >{p}/start.out 2>&1 & exec sleep 600"
        );
        let anchor = Command::new("unshare")
            .args(["-n", "sh", "-c", &script])
            .stdin(Stdio::null())
            .spawn()
            .expect("unshare runs");
        Netns {
            anchor,
            bin: bin.to_string(),
            prefix: prefix.to_path_buf(),
        }
    }

    fn enter(&self, cmd: &str) -> String {
        sh(&format!("nsenter -t {} -n {cmd}", self.anchor.id())).1
    }

    /// The TCP addresses listening in the namespace, once they stop changing.
    fn listening(&self) -> Vec<String> {
        let deadline = Instant::now() + LISTEN_WAIT;
        let mut last = Vec::new();
        let mut since = Instant::now();
        loop {
            let now = self.enter("ss -ltnH");
            let mut cur: Vec<String> = now
                .lines()
                .filter_map(|l| l.split_whitespace().nth(3).map(str::to_string))
                .collect();
            cur.sort();
            cur.dedup();
            if cur != last {
                last = cur;
                since = Instant::now();
            } else if !last.is_empty() && since.elapsed() >= SETTLE {
                return last;
            }
            if Instant::now() > deadline {
                return last;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `GET /` over plain HTTP and over TLS: curl's two status codes
    /// ("000" when no HTTP answer came).
    fn probe(&self, addr: &str) -> String {
        let url_host = addr
            .replace('*', "127.0.0.1")
            .replace("0.0.0.0", "127.0.0.1");
        let url_host = url_host.replace("[::]", "[::1]");
        let curl = "curl -s -k -m 5 -o /dev/null -w '%{http_code}' -H 'Host: localhost'";
        let http = self.enter(&format!("{curl} http://{url_host}/"));
        let https = self.enter(&format!("{curl} https://{url_host}/"));
        format!("http {} https {}", http.trim(), https.trim())
    }

    /// Every process in the namespace (the server's, and the anchor).
    fn pids(&self) -> Vec<i32> {
        let me = std::fs::read_link(format!("/proc/{}/ns/net", self.anchor.id())).ok();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                me.is_some() && std::fs::read_link(format!("/proc/{pid}/ns/net")).ok() == me
            })
            .collect()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let p = self.prefix.display();
        sh(&format!(
            "{} -p {p}/ -c {p}/conf/nginx.conf -s stop",
            self.bin
        ));
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.pids().len() > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for pid in self.pids() {
            sh(&format!("kill -9 {pid}"));
        }
        let _ = self.anchor.wait();
    }
}

/// Port -> answers, for one configuration under one server.
fn answers(bin: &str, prefix: &Path) -> BTreeMap<String, String> {
    let ns = Netns::start(bin, prefix);
    let mut out = BTreeMap::new();
    for addr in ns.listening() {
        out.insert(addr.clone(), ns.probe(&addr));
    }
    if out.is_empty() {
        // A configuration of UDP or UNIX-socket listeners only: nothing to
        // ask over TCP, but both servers must agree on that.
        out.insert("(no TCP listener)".into(), String::new());
    }
    out
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0)
}

#[test]
fn every_real_configuration_serves_as_nginx_does() {
    let Some(corpus) = corpus() else {
        eprintln!("skipped: no ../shared/realconf corpus (set REALCONF_DIR)");
        return;
    };
    let tools = Path::new(NGINX).exists() && sh("command -v unshare nsenter curl ss").0;
    if is_nginx() || !crate::support::system_test_ready(tools, "nginx, unshare, curl, ss") {
        return;
    }
    let work = std::env::temp_dir().join(format!("peregrine-realconf-{}", std::process::id()));
    let ours = prefixes(&corpus, BIN, &work.join("peregrine"));
    let theirs: BTreeMap<String, PathBuf> = prefixes(&corpus, NGINX, &work.join("nginx"))
        .into_iter()
        .collect();
    let mut differences = Vec::new();
    let mut served = 0;
    for (id, prefix) in &ours {
        let want = answers(NGINX, &theirs[id]);
        let got = answers(BIN, prefix);
        for (addr, answer) in &want {
            let mine = got
                .get(addr)
                .map(String::as_str)
                .unwrap_or("(not listening)");
            let deliberate = DELIBERATE
                .iter()
                .any(|(i, port, a)| i == id && *port == port_of(addr) && *a == mine);
            if mine != answer && !deliberate {
                differences.push(format!("{id} {addr}: nginx {answer:?}, peregrine {mine:?}"));
            }
        }
        for addr in got.keys().filter(|a| !want.contains_key(*a)) {
            differences.push(format!("{id} {addr}: only peregrine listens"));
        }
        served += want.keys().any(|a| a != "(no TCP listener)") as usize;
    }
    for prefix in ours.iter().map(|(_, p)| p).chain(theirs.values()) {
        let _ = std::fs::remove_dir_all(prefix);
    }
    let _ = std::fs::remove_dir_all(&work);
    assert!(
        differences.is_empty(),
        "{} differences from nginx over {} configurations ({served} serve):\n{}",
        differences.len(),
        ours.len(),
        differences.join("\n")
    );
    eprintln!("{served} of {} configurations serve over TCP", ours.len());
}
