//! Scale-out (issue 23): three Peregrine instances behind a real HAProxy
//! (TCP mode, PROXY protocol v2, `option httpchk` on `health_status`),
//! clients asking through HAProxy all the time while one instance is
//! reloaded (HUP), one upgraded (USR2, WINCH, QUIT of the old master) and
//! one stopped gracefully (QUIT with `shutdown_delay`) and started again.
//! No request may fail, and every instance's access log must name the
//! client (127.0.0.1), not HAProxy (which connects from 127.0.0.5).
//! docs/operations.md ("Running many instances") shows the same set-up.
//! Peregrine only (binary upgrade in the foreground, `health_status`).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{BIN, IO_TIMEOUT, Prefix, Response, free_port, is_nginx, read_to_close};

const HAPROXY: &str = "/usr/sbin/haproxy";
/// The address HAProxy connects to the instances from (`source`): the
/// access logs must show the client's 127.0.0.1 instead.
const BALANCER_ADDR: &str = "127.0.0.5";
/// Requests the load must have made by the end.
const MIN_REQUESTS: usize = 3000;
/// Client threads asking through HAProxy.
const CLIENTS: usize = 3;
/// The whole test's bound.
const TEST_BOUND: Duration = Duration::from_secs(30);
/// How long any one step may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + STEP_TIMEOUT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_in(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn signal(pid: i32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

/// One Peregrine instance in its own prefix on a fixed port (so that it
/// can be stopped and started again where HAProxy expects it).
struct Instance {
    name: &'static str,
    prefix: Prefix,
    port: u16,
    /// The master this test started (the first one, or the one started
    /// again); `None` once it has exited.
    child: Option<Child>,
}

impl Instance {
    fn new(name: &'static str) -> Instance {
        let prefix = Prefix::new(&format!("scale-{name}"));
        prefix.write("html/t", "ok\n");
        prefix.write("html/probe", "probe\n");
        let mut i = Instance {
            name,
            prefix,
            port: free_port(),
            child: None,
        };
        i.write_conf(1);
        i.start();
        i
    }

    /// The configuration; `generation` shows in `X-Gen` (a reload's proof).
    fn write_conf(&self, generation: u32) {
        let (name, port) = (self.name, self.port);
        self.prefix.conf(&format!(
            "worker_processes 1;\nerror_log logs/error.log info;\npid logs/nginx.pid;\n\
             shutdown_delay 1s;\nevents {{ worker_connections 512; }}\n\
             http {{\n    log_format lb \"$remote_addr $realip_remote_addr \
             $proxy_protocol_addr $status $request_uri\";\n\
             access_log logs/access.log lb;\n    server {{\n\
             listen 127.0.0.1:{port} proxy_protocol;\n\
             set_real_ip_from 127.0.0.0/8;\n        real_ip_header proxy_protocol;\n\
             root html;\n        add_header X-Instance {name};\n\
             add_header X-Gen {generation};\n        add_header X-Pid $pid;\n\
             add_header X-Peer $realip_remote_addr;\n\
             location = /healthz {{ health_status; access_log off; }}\n\
             location = /probe {{ access_log off; }}\n    }}\n}}\n"
        ));
    }

    fn pidfile(&self) -> PathBuf {
        self.prefix.dir.join("logs/nginx.pid")
    }

    fn start(&mut self) {
        let child = Command::new(BIN)
            .arg("-p")
            .arg(&self.prefix.dir)
            .args(["-c", "conf/nginx.conf"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_until(&format!("{} listening", self.name), || {
            self.probe().is_some()
        });
    }

    /// A direct request (with its own PROXY v1 header, not through
    /// HAProxy, not logged): the answering (generation, pid).
    fn probe(&self) -> Option<(u32, i32)> {
        let mut c = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        c.set_read_timeout(Some(IO_TIMEOUT)).ok()?;
        c.write_all(
            b"PROXY TCP4 127.0.0.1 127.0.0.1 40000 80\r\nGET /probe HTTP/1.0\r\nHost: x\r\n\r\n",
        )
        .ok()?;
        let r = Response::parse(&read_to_close(&mut c))?;
        (r.status == 200).then_some(())?;
        Some((
            r.header("X-Gen")?.parse().ok()?,
            r.header("X-Pid")?.parse().ok()?,
        ))
    }

    fn master(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    /// Sends `sig` (if any) to the master this test started and waits
    /// for its exit.
    fn stop_child(&mut self, sig: Option<&str>) {
        let mut child = self.child.take().unwrap();
        if let Some(sig) = sig {
            signal(child.id() as i32, sig);
        }
        let status = child.wait().unwrap();
        assert!(status.success(), "{}: {status}", self.name);
    }

    /// The request lines of the access log.
    fn access_log(&self) -> Vec<String> {
        let text = std::fs::read(self.prefix.dir.join("logs/access.log")).unwrap_or_default();
        String::from_utf8_lossy(&text)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // After an upgrade the master is not our child: the pid file names it.
        if let Some(pid) = pid_in(&self.pidfile()) {
            signal(pid, "TERM");
        }
        if let Some(mut child) = self.child.take() {
            signal(child.id() as i32, "TERM");
            let _ = child.wait();
        }
        let pidfile = self.pidfile();
        let deadline = Instant::now() + Duration::from_secs(3);
        while pidfile.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// HAProxy in TCP mode over the instances, its admin socket for the
/// servers' states; stopped on drop.
struct Haproxy {
    child: Child,
    port: u16,
    socket: PathBuf,
    _dir: Prefix,
}

impl Haproxy {
    fn start(instances: &[Instance]) -> Haproxy {
        let dir = Prefix::new("scale-haproxy");
        let port = free_port();
        let socket = dir.dir.join("admin.sock");
        let servers: String = instances
            .iter()
            .map(|i| format!("    server {} 127.0.0.1:{}\n", i.name, i.port))
            .collect();
        let cfg = dir.write(
            "haproxy.cfg",
            format!(
                "global\n    maxconn 256\n    stats socket {} mode 600 level admin\n\
                 defaults\n    mode tcp\n    timeout connect 2s\n    timeout client 10s\n\
                 timeout server 10s\n    retries 3\n    option redispatch\n\
                 frontend fe\n    bind 127.0.0.1:{port}\n    default_backend peregrine\n\
                 backend peregrine\n    balance roundrobin\n\
                 option httpchk GET /healthz\n    http-check expect status 200\n\
                 default-server send-proxy-v2 check inter 100ms fall 1 rise 1 \
                 source {BALANCER_ADDR}\n{servers}",
                socket.display()
            ),
        );
        let child = Command::new(HAPROXY)
            .args(["-db", "-f"])
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let h = Haproxy {
            child,
            port,
            socket,
            _dir: dir,
        };
        wait_until("haproxy listening", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        h
    }

    /// The servers' states (`UP`, `DOWN`, ...) from `show stat`.
    fn states(&self) -> HashMap<String, String> {
        let mut out = HashMap::new();
        let Ok(mut s) = UnixStream::connect(&self.socket) else {
            return out;
        };
        let _ = s.write_all(b"show stat\n");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let mut lines = text.lines();
        let Some(head) = lines.next() else {
            return out;
        };
        let cols: Vec<&str> = head.trim_start_matches("# ").split(',').collect();
        let Some(status) = cols.iter().position(|c| *c == "status") else {
            return out;
        };
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            if f.len() > status && f[0] == "peregrine" && f[1] != "BACKEND" {
                out.insert(f[1].to_string(), f[status].to_string());
            }
        }
        out
    }

    fn wait_state(&self, server: &str, want: &str) {
        wait_until(&format!("haproxy to see {server} {want}"), || {
            self.states().get(server).is_some_and(|s| s == want)
        });
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Clients asking through HAProxy on new connections until stopped,
/// counting answers per instance and failures (with the first few kept).
struct Load {
    stop: Arc<AtomicBool>,
    ok: Arc<AtomicUsize>,
    per_instance: Arc<Mutex<HashMap<String, usize>>>,
    failures: Arc<Mutex<Vec<String>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

fn one_request(port: u16) -> Result<String, String> {
    let mut c = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    c.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    c.write_all(b"GET /t HTTP/1.0\r\nHost: x\r\n\r\n")
        .map_err(|e| format!("write: {e}"))?;
    let bytes = read_to_close(&mut c);
    let r = Response::parse(&bytes)
        .ok_or_else(|| format!("no response: {:?}", String::from_utf8_lossy(&bytes)))?;
    match (r.status, r.body_str(), r.header("X-Instance")) {
        // The connection came from HAProxy's `source`; the PROXY header
        // made the client's address `$remote_addr`.
        (200, "ok\n", Some(name)) if r.header("X-Peer") == Some(BALANCER_ADDR) => {
            Ok(name.to_string())
        }
        _ => Err(format!(
            "bad response: {:?}",
            String::from_utf8_lossy(&bytes)
        )),
    }
}

impl Load {
    fn start(port: u16) -> Load {
        let load = Load {
            stop: Arc::default(),
            ok: Arc::default(),
            per_instance: Arc::default(),
            failures: Arc::default(),
            threads: Vec::new(),
        };
        let threads = (0..CLIENTS)
            .map(|_| {
                let (stop, ok) = (load.stop.clone(), load.ok.clone());
                let (per, failures) = (load.per_instance.clone(), load.failures.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        match one_request(port) {
                            Ok(name) => {
                                *per.lock().unwrap().entry(name).or_default() += 1;
                                ok.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => failures.lock().unwrap().push(e),
                        }
                    }
                })
            })
            .collect();
        Load { threads, ..load }
    }

    fn served_by(&self, name: &str) -> usize {
        self.per_instance
            .lock()
            .unwrap()
            .get(name)
            .copied()
            .unwrap_or(0)
    }

    fn ok(&self) -> usize {
        self.ok.load(Ordering::Relaxed)
    }

    /// Stops the clients: (answered, failures, answers per instance).
    fn finish(self) -> (usize, Vec<String>, HashMap<String, usize>) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        let per = self.per_instance.lock().unwrap().clone();
        let failures = self.failures.lock().unwrap().clone();
        (self.ok.load(Ordering::Relaxed), failures, per)
    }
}

/// HUP with a changed configuration: the new generation answers.
fn reload(i: &Instance) {
    i.write_conf(2);
    signal(i.master(), "HUP");
    wait_until("the reloaded configuration", || {
        i.probe().is_some_and(|(g, _)| g == 2)
    });
}

/// USR2, then WINCH and QUIT of the old master once the new one answers.
fn upgrade(i: &mut Instance) {
    let old = i.master();
    let oldbin = i.prefix.dir.join("logs/nginx.pid.oldbin");
    signal(old, "USR2");
    wait_until("the new master's pid file", || {
        oldbin.exists() && pid_in(&i.pidfile()).is_some_and(|p| p != old)
    });
    let new = pid_in(&i.pidfile()).unwrap();
    wait_until("an answer from the new master", || {
        i.probe().is_some_and(|(_, p)| p == new)
    });
    signal(old, "WINCH");
    i.stop_child(Some("QUIT"));
    assert!(!oldbin.exists(), "the old master removes its .oldbin");
    assert_eq!(i.probe().map(|(_, p)| p), Some(new));
}

/// QUIT (HAProxy sees the 503 during `shutdown_delay`), then a new start;
/// HAProxy takes it back and it serves again.
fn stop_and_start(i: &mut Instance, h: &Haproxy, load: &Load) {
    signal(i.master(), "QUIT");
    h.wait_state(i.name, "DOWN");
    assert!(
        i.child.as_mut().unwrap().try_wait().unwrap().is_none(),
        "{} exited before haproxy saw it draining",
        i.name
    );
    // A second QUIT would cut the delay short: wait for the exit.
    i.stop_child(None);
    i.start();
    h.wait_state(i.name, "UP");
    let before = load.served_by(i.name);
    wait_until("answers from the restarted instance", || {
        load.served_by(i.name) >= before + 20
    });
}

#[test]
fn three_instances_behind_haproxy_reload_upgrade_restart_without_a_failed_request() {
    if is_nginx() {
        return;
    }
    if !Path::new(HAPROXY).exists() {
        eprintln!("skipped: no {HAPROXY}");
        return;
    }
    let began = Instant::now();
    let mut inst = [
        Instance::new("p1"),
        Instance::new("p2"),
        Instance::new("p3"),
    ];
    let h = Haproxy::start(&inst);
    for i in &inst {
        h.wait_state(i.name, "UP");
    }
    let load = Load::start(h.port);
    wait_until("the load under way", || load.ok() >= 300);
    reload(&inst[0]);
    upgrade(&mut inst[1]);
    stop_and_start(&mut inst[2], &h, &load);
    wait_until("enough requests", || load.ok() >= MIN_REQUESTS);
    let (ok, failures, per) = load.finish();
    let took = began.elapsed();
    eprintln!(
        "scale_out: {ok} requests, {} failed, {took:?}, {per:?}",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failed of {}: {:?}",
        failures.len(),
        ok + failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(ok >= MIN_REQUESTS, "only {ok} requests");
    assert!(took < TEST_BOUND, "took {took:?}");
    // Every answer logged, by the instance that gave it, with the client's
    // address (PROXY protocol, realip) and HAProxy's as the connection's.
    let want = format!("127.0.0.1 {BALANCER_ADDR} 127.0.0.1 200 /t");
    for i in &inst {
        let served = per.get(i.name).copied().unwrap_or(0);
        assert!(served > 0, "{} served nothing", i.name);
        wait_until(&format!("{}'s access log", i.name), || {
            i.access_log().len() >= served
        });
        let log = i.access_log();
        assert_eq!(log.len(), served, "{}", i.name);
        assert!(
            log.iter().all(|l| *l == want),
            "{}: {:?}",
            i.name,
            log.iter().find(|l| **l != want)
        );
    }
}
