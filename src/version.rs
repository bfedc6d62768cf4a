//! `-V`: the version of nginx whose behaviour Peregrine follows, and an
//! nginx-style `configure arguments:` line that says which of nginx's
//! modules Peregrine has. nginx's test suite (lib/Test/Nginx.pm `has()`,
//! `has_version()`) reads exactly these two lines to decide what to run, so
//! they must be true: a module named as present is one whose directives work.

/// The nginx release whose behaviour Peregrine follows (the one nginx's
/// test suite tests; see docs/nginx-tests.md).
pub const NGINX_VERSION: &str = "1.29.8";

/// nginx's http modules that `./configure` builds by default, which
/// Peregrine does not have yet: each is `--without-http_X_module` in `-V`.
const DEFAULT_MODULES_MISSING: &[&str] = &[
    "ssi",
    "access",
    "auth_basic",
    "mirror",
    "geo",
    "map",
    "split_clients",
    "proxy",
    "fastcgi",
    "uwsgi",
    "scgi",
    "grpc",
    "memcached",
    "limit_conn",
    "limit_req",
    "browser",
    "upstream_hash",
    "upstream_ip_hash",
    "upstream_least_conn",
    "upstream_random",
    "upstream_keepalive",
    "upstream_zone",
];

/// nginx's optional http modules (`--with-http_X_module`) Peregrine has.
const OPTIONAL_MODULES_PRESENT: &[&str] =
    &["gzip_static", "stub_status", "random_index", "secure_link"];

/// The `configure arguments:` line.
pub fn configure_arguments() -> String {
    let mut line = String::from("configure arguments: --prefix=.");
    for m in OPTIONAL_MODULES_PRESENT {
        line.push_str(&format!(" --with-http_{m}_module"));
    }
    for m in DEFAULT_MODULES_MISSING {
        line.push_str(&format!(" --without-http_{m}_module"));
    }
    line.push_str(" --without-mail_pop3_module --without-mail_imap_module");
    line.push_str(" --without-mail_smtp_module --without-stream_access_module");
    line
}

/// What `-V` prints, line by line.
pub fn full() -> String {
    format!(
        "nginx version: nginx/{NGINX_VERSION} (peregrine/{})\n\
         built with Rust (edition 2024)\n{}\n",
        env!("CARGO_PKG_VERSION"),
        configure_arguments()
    )
}
