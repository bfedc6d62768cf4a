//! The deployment recipes under deploy/ stay valid: the container image's
//! nginx.conf and the Kubernetes ConfigMap's pass `-t` (their absolute
//! paths moved into a prefix), and the manifests pass a schema check with
//! `kubernetes-validate --strict` (PyPI; offline) when it is installed
//! (`.ci/run` installs it).
//! Peregrine only (`health_status`, `shutdown_delay`, `config_watch`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{Prefix, is_nginx};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// The manifests `kubectl apply -k deploy/k8s/` applies.
const MANIFESTS: [&str; 5] = [
    "configmap.yaml",
    "deployment.yaml",
    "service.yaml",
    "pdb.yaml",
    "hpa.yaml",
];

/// `text` with the image's absolute paths moved under `p`.
fn relocate(p: &Prefix, text: &str) -> String {
    let dir = p.dir.display();
    text.replace("/run/peregrine", &format!("{dir}/run"))
        .replace("/var/cache/peregrine", &format!("{dir}/cache"))
        .replace("/usr/share/peregrine/html", &format!("{dir}/html"))
        .replace("/etc/peregrine/", &format!("{dir}/conf/"))
}

fn assert_tests_ok(p: &Prefix, conf: &str) {
    for sub in ["run", "cache"] {
        std::fs::create_dir_all(p.dir.join(sub)).unwrap();
    }
    p.conf(&relocate(p, conf));
    let out = p.run(&["-t"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("test is successful"), "{err}");
}

/// The ConfigMap's `nginx.conf: |` block, without its indentation.
fn configmap_conf(yaml: &str) -> String {
    let mut lines = yaml.lines().skip_while(|l| l.trim() != "nginx.conf: |");
    lines.next().expect("an nginx.conf key");
    lines
        .take_while(|l| l.is_empty() || l.starts_with("    "))
        .map(|l| format!("{}\n", l.get(4..).unwrap_or("")))
        .collect()
}

#[test]
fn the_image_and_configmap_configurations_pass_dash_t() {
    if is_nginx() {
        return;
    }
    let image = std::fs::read_to_string(Path::new(REPO).join("deploy/nginx.conf")).unwrap();
    assert_tests_ok(&Prefix::new("deploy-image"), &image);
    let yaml = std::fs::read_to_string(Path::new(REPO).join("deploy/k8s/configmap.yaml")).unwrap();
    let conf = configmap_conf(&yaml);
    assert!(conf.contains("health_status;"), "{conf}");
    assert_tests_ok(&Prefix::new("deploy-configmap"), &conf);
}

#[test]
fn the_kubernetes_manifests_pass_the_schema_check() {
    // `.ci/run` installs it in a venv and names it in KUBERNETES_VALIDATE.
    let bin = std::env::var("KUBERNETES_VALIDATE").unwrap_or("kubernetes-validate".into());
    let Ok(out) = Command::new(bin)
        .arg("--strict")
        .args(MANIFESTS)
        .current_dir(Path::new(REPO).join("deploy/k8s"))
        .stdin(Stdio::null())
        .output()
    else {
        eprintln!("skipped: no kubernetes-validate (pip install kubernetes-validate)");
        return;
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.matches(" passed for resource ").count(),
        MANIFESTS.len(),
        "{text}"
    );
}
