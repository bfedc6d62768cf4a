//! Sets `cfg(e2e_nginx)` when the tests are built with `E2E_SERVER=nginx`
//! (the end-to-end suite run against Debian's nginx): tests of
//! Peregrine-only features and of deliberate differences are then marked
//! ignored, so the run reports them as skipped instead of passed.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(e2e_nginx)");
    println!("cargo::rerun-if-env-changed=E2E_SERVER");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("E2E_SERVER").is_ok_and(|v| v == "nginx") {
        println!("cargo::rustc-cfg=e2e_nginx");
    }
}
