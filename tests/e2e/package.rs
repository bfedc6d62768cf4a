//! The Debian package (`dist/deb/build.sh`) on this machine, used as an
//! admin uses it: built from the binary under test, installed with
//! `dpkg -i`, started, reloaded and stopped by the lines of its own
//! systemd unit (`ExecStartPre`, `ExecStart`, `ExecReload`, `KillSignal`,
//! run here without systemd, which this machine does not boot), the log
//! reopened after a plain rename, then removed (conffiles and an admin's
//! edit kept, as dpkg keeps them) and purged (all gone).
//!
//! It changes the system (/etc/peregrine, /usr/sbin/peregrine, port 80 of
//! the default site, or another when 80 is taken), so it needs root: skipped otherwise, and under
//! `CI=true` (root, `.ci/run`) a missing tool fails it. Never run against
//! nginx.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::support::{
    BIN, Prefix, free_port, get_at, is_nginx, must, send_signal, sh, system_test_ready, wait_until,
};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const UNIT: &str = "/lib/systemd/system/peregrine.service";
const PID_FILE: &str = "/run/peregrine.pid";
const ACCESS_LOG: &str = "/var/log/peregrine/access.log";
const SITE: &str = "/etc/peregrine/sites-available/default";
/// How long the server may take to answer, reload or stop.
const WAIT: Duration = Duration::from_secs(10);

fn usable() -> bool {
    system_test_ready(Path::new("/usr/bin/dpkg-deb").exists(), "dpkg-deb")
}

/// The value of `Key=` in the installed unit.
fn unit_line(unit: &str, key: &str) -> String {
    unit.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {UNIT}"))
        .to_string()
}

fn wait(what: &str, f: impl FnMut() -> bool) {
    wait_until(what, WAIT, f)
}

fn access_log() -> String {
    std::fs::read_to_string(ACCESS_LOG).unwrap_or_default()
}

/// The server as systemd runs it: the unit's ExecStart, stopped by its
/// KillSignal on drop if the test did not stop it.
struct Service {
    child: Child,
    kill_signal: i32,
}

impl Service {
    fn start(unit: &str) -> Service {
        must(&unit_line(unit, "ExecStartPre"));
        let exec = unit_line(unit, "ExecStart");
        let mut words = exec.split_whitespace();
        let child = Command::new(words.next().unwrap())
            .args(words)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let kill_signal = match unit_line(unit, "KillSignal").as_str() {
            "SIGQUIT" => 3,
            other => panic!("unexpected KillSignal {other}"),
        };
        Service { child, kill_signal }
    }

    fn stop(&mut self) -> std::process::ExitStatus {
        send_signal(self.child.id() as i32, self.kill_signal);
        self.child.wait().unwrap()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Purges the package (left by an earlier, interrupted run too).
fn purge() {
    let _ = sh("dpkg -P peregrine");
}

#[test]
fn the_debian_package_installs_starts_reloads_and_removes() {
    if is_nginx() || !usable() {
        return;
    }
    purge();
    let out = Prefix::new("deb");
    let deb = must(&format!(
        "bash {REPO}/dist/deb/build.sh --fast --binary {BIN} --out {}",
        out.dir.display()
    ));
    let deb = deb.trim().lines().last().unwrap().to_string();
    must(&format!("dpkg -i {deb}"));
    struct Cleanup;
    impl Drop for Cleanup {
        fn drop(&mut self) {
            purge();
        }
    }
    let _cleanup = Cleanup;

    // Debian's nginx layout under /etc/peregrine, the default site enabled.
    let link = std::fs::read_link("/etc/peregrine/sites-enabled/default").unwrap();
    assert_eq!(link, Path::new(SITE));
    for f in [
        "nginx.conf",
        "mime.types",
        "fastcgi_params",
        "snippets/fastcgi-php.conf",
    ] {
        assert!(Path::new("/etc/peregrine").join(f).exists(), "{f}");
    }
    assert!(must("dpkg -L peregrine").contains("/usr/sbin/peregrine"));
    let unit = std::fs::read_to_string(UNIT).unwrap();
    // The default site listens on port 80; where something else has it,
    // the admin's first edit moves the site to another port.
    let port = if std::net::TcpListener::bind("0.0.0.0:80").is_ok() {
        80
    } else {
        let p = free_port();
        let site = std::fs::read_to_string(SITE).unwrap();
        std::fs::write(
            SITE,
            site.replace(":80 ", &format!(":{p} "))
                .replace("listen 80 ", &format!("listen {p} ")),
        )
        .unwrap();
        p
    };

    let mut service = Service::start(&unit);
    wait("the default site", || get_at(port, "/").is_some());
    let r = get_at(port, "/").unwrap();
    assert_eq!(r.status, 200);
    assert!(
        r.body_str().contains("Welcome to Peregrine"),
        "{}",
        r.body_str()
    );
    // `user www-data;`: the workers run as www-data, the master stays root.
    let pid: u32 = std::fs::read_to_string(PID_FILE)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, service.child.id());
    let (master, workers) = crate::support::master_and_worker_uids(pid);
    assert_eq!(master, 0, "the master stays root, as nginx's");
    assert!(
        !workers.is_empty() && workers.iter().all(|&u| u == 33),
        "{workers:?}"
    );
    wait("the access log line", || {
        access_log().contains("\"GET / HTTP/1.1\" 200")
    });

    // An admin edits the site and reloads as the unit does.
    let site = std::fs::read_to_string(SITE).unwrap();
    std::fs::write(
        SITE,
        site.replace(
            "server_name _;",
            "server_name _;\n\tadd_header X-Edited yes;",
        ),
    )
    .unwrap();
    must(&unit_line(&unit, "ExecReload").replace("$MAINPID", &pid.to_string()));
    wait("the reloaded site", || {
        get_at(port, "/").is_some_and(|r| r.header("X-Edited") == Some("yes"))
    });

    // A plain rename and USR1 (as logrotate without `create` would do).
    std::fs::rename(ACCESS_LOG, format!("{ACCESS_LOG}.1")).unwrap();
    send_signal(pid as i32, 10);
    wait("a line in the reopened log", || {
        get_at(port, "/reopened").is_some() && access_log().contains("GET /reopened")
    });
    let errors = std::fs::read_to_string("/var/log/peregrine/error.log").unwrap();
    assert!(!errors.contains("[emerg]"), "{errors}");

    assert!(service.stop().success());
    assert!(
        get_at(port, "/").is_none(),
        "still answering after the graceful stop"
    );

    // Remove keeps the conffiles (the admin's edit too); purge takes all.
    must("dpkg -r peregrine");
    assert!(!Path::new("/usr/sbin/peregrine").exists());
    assert!(std::fs::read_to_string(SITE).unwrap().contains("X-Edited"));
    must("dpkg -P peregrine");
    for gone in ["/etc/peregrine", "/var/log/peregrine", UNIT] {
        assert!(!Path::new(gone).exists(), "{gone} left after purge");
    }
}
