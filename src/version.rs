//! `-V`: the version of nginx whose behaviour Peregrine follows, and an
//! nginx-style `configure arguments:` line that says which of nginx's
//! modules Peregrine has. nginx's test suite (lib/Test/Nginx.pm `has()`,
//! `has_version()`) reads exactly these two lines to decide what to run, so
//! they must be true: a module named as present is one whose directives work.
//!
//! The line is derived from the directive table ([`peregrine_conf::known`]):
//! a module counts as present when each of its directives has a table row
//! (implemented or a tuning hint), or, for the few modules with a rule of
//! their own, its key directives do (rewrite: `return` is implemented while
//! `rewrite`, `if` and `set` are refused by name, so the suite's tests that
//! need only `return` run and those that need the rest fail loudly). A row
//! added to the table updates `-V` by itself.

use peregrine_conf::known;

/// The nginx release whose behaviour Peregrine follows (the one nginx's
/// test suite tests; see docs/nginx-tests.md).
pub const NGINX_VERSION: &str = peregrine_codec::response::NGINX_VERSION;

/// The `configure arguments:` line: `--with-X_module` for each optional
/// module Peregrine has, `--without-X_module` for each default one it lacks,
/// `--without-http-cache` while the proxy cache is refused. Mail is built
/// (`--with-mail`, with `--with-mail_ssl_module` for STARTTLS and `listen
/// ... ssl`), its three protocols too. Stream is (`--with-stream`), with
/// the default stream submodules it lacks named as absent.
pub fn configure_arguments() -> String {
    let (with, without) = known::configure_switches();
    // nginx's `--build=NAME` names the build in `-v`, `server_tokens build`
    // and the pages' footer: Peregrine is that name.
    let mut line = format!(
        "configure arguments: --prefix=. --build={}",
        peregrine_codec::response::BUILD_NAME
    );
    for m in with {
        line.push_str(&format!(" --with-{m}_module"));
    }
    for m in without {
        line.push_str(&format!(" --without-{m}_module"));
    }
    if known::status("proxy_cache_path") != Some(known::Status::Implemented) {
        line.push_str(" --without-http-cache");
    }
    // mail: the module and its TLS (the protocols are built by default).
    line.push_str(" --with-mail --with-mail_ssl_module");
    // stream: the module and its default submodules Peregrine lacks.
    line.push_str(" --with-stream");
    for (m, present) in peregrine_conf::build::stream_table::DEFAULT_MODULES {
        if !present {
            line.push_str(&format!(" --without-{m}_module"));
        }
    }
    line
}

/// The TLS lines of `-V` (when the ssl module is there): nginx names its
/// library and `TLS SNI support enabled`; tools (nginx's test suite among
/// them) read TLS features off the OpenSSL version, so the line says
/// which OpenSSL's features rustls's stand for (TLS 1.3, SNI, ALPN:
/// those of OpenSSL 3.0, Debian 12's).
pub const TLS_LINES: &str = "built with rustls 0.23 (aws-lc-rs), the TLS features of nginx built with OpenSSL 3.0.0\n\
     TLS SNI support enabled\n";

/// What `-V` prints, line by line.
pub fn full() -> String {
    let tls = if known::module_present("http_ssl") {
        TLS_LINES
    } else {
        ""
    };
    format!(
        "nginx version: nginx/{NGINX_VERSION} (peregrine/{})\n\
         built with Rust (edition 2024)\n{tls}{}\n",
        env!("CARGO_PKG_VERSION"),
        configure_arguments()
    )
}
