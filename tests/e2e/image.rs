//! The container image recipe (`deploy/Dockerfile`) built and run here with
//! podman: on a Debian bookworm base made by debootstrap from the archive
//! this machine's apt uses (no registry image can be pulled here), with the
//! binary under test. The container serves the default page as uid 101,
//! its health endpoint answers, and `podman stop` (the image's STOPSIGNAL,
//! QUIT) drains: 503 from the health endpoint during `shutdown_delay`,
//! then exit status 0.
//!
//! Needs root, podman, runc and debootstrap: skipped otherwise, and under
//! `CI=true` (`.ci/run` installs them) their absence fails it. Never run
//! against nginx.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{
    BIN, Prefix, free_port, get_at, is_nginx, must, system_test_ready, wait_until,
};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// The base image the test makes once and keeps (podman's store).
const BASE: &str = "localhost/peregrine-test-base:bookworm";
const IMAGE: &str = "localhost/peregrine-test:latest";
const CONTAINER: &str = "peregrine-image-test";
/// podman's options on this machine: runc, since crun refuses a hybrid
/// cgroup hierarchy; limits within the sandbox's own (podman's defaults
/// raise RLIMIT_NOFILE and RLIMIT_NPROC, which is not permitted here).
const PODMAN: &[&str] = &["--runtime", "runc"];
const LIMITS: &[&str] = &[
    "--ulimit",
    "nofile=1024:1024",
    "--ulimit",
    "nproc=1024:1024",
];
const WAIT: Duration = Duration::from_secs(20);

fn usable() -> bool {
    let tools = ["/usr/bin/podman", "/usr/sbin/debootstrap", "/usr/sbin/runc"]
        .iter()
        .all(|t| Path::new(t).exists());
    system_test_ready(tools, "podman, runc and debootstrap")
}

fn podman(args: &[&str]) -> (bool, String) {
    let out = Command::new("podman")
        .args(PODMAN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The first `deb` source of this machine's apt: debootstrap fetches
/// from the archive apt already uses.
fn mirror() -> String {
    let sources = std::fs::read_to_string("/etc/apt/sources.list.d/debian.sources")
        .or_else(|_| std::fs::read_to_string("/etc/apt/sources.list"))
        .expect("an apt source list");
    sources
        .lines()
        .find_map(|l| {
            l.strip_prefix("URIs:")
                .or_else(|| l.strip_prefix("deb "))
                .and_then(|rest| rest.split_whitespace().find(|w| w.starts_with("http")))
        })
        .expect("an http source in apt's list")
        .to_string()
}

/// A minimal bookworm as an image, made once per machine.
fn base_image(work: &Path) {
    if podman(&["image", "exists", BASE]).0 {
        return;
    }
    let root = work.join("base");
    must(&format!(
        "debootstrap --variant=minbase bookworm {} {} >/dev/null",
        root.display(),
        mirror()
    ));
    must(&format!(
        "tar -C {} -c . | podman import - {BASE} >/dev/null",
        root.display()
    ));
}

/// The build context: the files the Dockerfile copies, and the binary.
fn context(work: &Path) -> std::path::PathBuf {
    let ctx = work.join("ctx");
    std::fs::create_dir_all(ctx.join("deploy")).unwrap();
    for d in ["conf", "html"] {
        must(&format!("cp -r {REPO}/{d} {}/", ctx.display()));
    }
    for f in ["Dockerfile", "nginx.conf"] {
        std::fs::copy(
            Path::new(REPO).join("deploy").join(f),
            ctx.join("deploy").join(f),
        )
        .unwrap();
    }
    must(&format!(
        "objcopy --strip-debug {BIN} {}/peregrine",
        ctx.display()
    ));
    ctx
}

fn wait(what: &str, f: impl FnMut() -> bool) {
    wait_until(what, WAIT, f)
}

struct Cleanup;

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = podman(&["rm", "-f", CONTAINER]);
        let _ = podman(&["rmi", "-f", IMAGE]);
    }
}

#[test]
fn the_container_image_builds_serves_as_non_root_and_drains_on_stop() {
    if is_nginx() || !usable() {
        return;
    }
    let work = Prefix::new("image");
    base_image(&work.dir);
    let ctx = context(&work.dir);
    let _cleanup = Cleanup;
    let _ = podman(&["rm", "-f", CONTAINER]);
    let ctx_s = ctx.display().to_string();
    let (ok, log) = podman(
        &[
            &["build", "--network", "host"],
            LIMITS,
            &[
                "--build-arg",
                &format!("BASE={BASE}"),
                "--build-arg",
                "BINARY=peregrine",
            ],
            &["-f", "deploy/Dockerfile", "-t", IMAGE, &ctx_s],
        ]
        .concat(),
    );
    assert!(ok, "podman build failed: {log}");

    let port = free_port();
    let publish = format!("127.0.0.1:{port}:8080");
    let run = [
        &["run", "-d", "--name", CONTAINER, "-p", &publish],
        LIMITS,
        &[IMAGE],
    ]
    .concat();
    let (ok, log) = podman(&run);
    assert!(ok, "podman run failed: {log}");
    wait("the container's server", || get_at(port, "/").is_some());
    let r = get_at(port, "/").unwrap();
    assert_eq!(r.status, 200);
    assert!(
        r.body_str().contains("Welcome to Peregrine"),
        "{}",
        r.body_str()
    );
    assert_eq!(get_at(port, "/healthz").map(|r| r.status), Some(200));
    let (ok, id) = podman(&["exec", CONTAINER, "id", "-u"]);
    assert!(ok && id.trim() == "101", "the server runs as {id}");

    // `podman stop` sends the image's STOPSIGNAL (QUIT): the health
    // endpoint says 503 while `shutdown_delay` lets balancers notice.
    let stopper = std::thread::spawn(|| podman(&["stop", "-t", "30", CONTAINER]));
    wait("the health endpoint draining", || {
        get_at(port, "/healthz").is_some_and(|r| r.status == 503)
    });
    let (ok, log) = stopper.join().unwrap();
    assert!(ok, "podman stop failed: {log}");
    let (_, code) = podman(&["inspect", CONTAINER, "--format", "{{.State.ExitCode}}"]);
    assert_eq!(code.trim(), "0", "exit status after QUIT");
    let (_, logs) = podman(&["logs", CONTAINER]);
    assert!(logs.contains("gracefully shutting down"), "{logs}");
}
