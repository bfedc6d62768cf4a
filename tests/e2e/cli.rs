//! nginx's command line: -t, -T, -q, -v, -V, -h, -s, -g, and configuration
//! errors reported as one `[emerg]` line with exit status 1.

use crate::support::{BIN, Prefix};
use std::path::Path;
use std::process::Command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every configuration of the seed articles (../shared/conf, copied into the
/// fixtures) passes `-t` with mime.types beside it, and `-T` dumps it.
#[test]
fn seed_configurations_pass_test_and_dump() {
    let dir = Path::new(FIXTURES).join("shared-conf");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let prefix = Prefix::new("seedconf");
        prefix.conf(&std::fs::read_to_string(&path).unwrap());
        let conf_file = prefix.dir.join("conf/nginx.conf");
        let out = prefix.run(&["-t"]);
        let err = stderr(&out);
        assert!(out.status.success(), "{}: {err}", path.display());
        assert!(
            err.contains(&format!(
                "peregrine: the configuration file {} syntax is ok\n",
                conf_file.display()
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "peregrine: configuration file {} test is successful\n",
                conf_file.display()
            )),
            "{err}"
        );

        let out = prefix.run(&["-T"]);
        assert!(out.status.success());
        let dump = String::from_utf8_lossy(&out.stdout);
        assert!(
            dump.starts_with(&format!("# configuration file {}:\n", conf_file.display())),
            "{dump}"
        );
        assert!(dump.contains("# configuration file ") && dump.contains("mime.types:\n"));
        seen += 1;
    }
    assert_eq!(seen, 5, "all five seed configurations were checked");
}

#[test]
fn quiet_test_prints_nothing_on_success() {
    let prefix = Prefix::new("quiet");
    prefix.conf("events {}\nhttp { server { listen 127.0.0.1:1; } }\n");
    let out = prefix.run(&["-t", "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// The default configuration of the repository is valid.
#[test]
fn default_configuration_is_valid() {
    let out = Command::new(BIN)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-t")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("conf/peregrine.conf test is successful"));
}

/// The seed-002 nginx.conf copied from the article as it stands is refused at
/// the line nginx names (nginx 1.22 reports the line of the `{` that ends
/// the `Location /` directive).
#[test]
fn typeset_seed_002_is_refused_with_its_line() {
    let prefix = Prefix::new("seed002");
    prefix.conf(&std::fs::read_to_string(Path::new(FIXTURES).join("seed-002-nginx.conf")).unwrap());
    let out = prefix.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let first = stderr(&out).lines().next().unwrap_or_default().to_string();
    let expected = format!(
        "peregrine: [emerg] unknown directive \"Location\" in {}:49; did you mean \"location\"?",
        prefix.dir.join("conf/nginx.conf").display()
    );
    assert_eq!(first, expected);
}

/// Each error is one `peregrine: [emerg] ... in FILE:LINE` line and exit 1,
/// in nginx's words (a bad `keepalive_timeout` is nginx's `"keepalive_timeout"
/// directive invalid value`, `ngx_http_core_keepalive`).
#[test]
fn configuration_errors_are_one_emerg_line() {
    let cases: &[(&str, &str)] = &[
        (
            "Worker_processes 2;\nevents {}\n",
            "unknown directive \"Worker_processes\" in FILE:1; did you mean \"worker_processes\"?",
        ),
        (
            "events {}\nlisten 80;\n",
            "\"listen\" directive is not allowed here in FILE:2",
        ),
        (
            "events {}\nhttp {\nkeepalive_timeout 1 2 3;\n}\n",
            "invalid number of arguments in \"keepalive_timeout\" directive in FILE:3",
        ),
        (
            "events {\n",
            "unexpected end of file, expecting \"}\" in FILE:2",
        ),
        ("events {}\n}\n", "unexpected \"}\" in FILE:2"),
        (
            "events {\nworker_connections 1;\nworker_connections 2;\n}\n",
            "\"worker_connections\" directive is duplicate in FILE:3",
        ),
        (
            "events {}\nhttp {\nkeepalive_timeout abc;\n}\n",
            "\"keepalive_timeout\" directive invalid value in FILE:3",
        ),
    ];
    for (text, want) in cases {
        let prefix = Prefix::new("err");
        let file = prefix.conf(text);
        let out = prefix.run(&["-t"]);
        assert_eq!(out.status.code(), Some(1), "{text}");
        let want = format!(
            "peregrine: [emerg] {}",
            want.replace("FILE", &file.display().to_string())
        );
        let first = stderr(&out).lines().next().unwrap_or_default().to_string();
        assert_eq!(first, want, "for {text:?}");
    }
}

#[test]
fn missing_include_names_the_file() {
    let prefix = Prefix::new("incl");
    let file = prefix.conf("events {}\nhttp {\ninclude missing.conf;\n}\n");
    let out = prefix.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let missing = prefix.dir.join("conf/missing.conf");
    assert_eq!(
        stderr(&out).lines().next().unwrap(),
        format!(
            "peregrine: [emerg] open() \"{}\" failed (2: No such file or directory) in {}:3",
            missing.display(),
            file.display()
        )
    );
}

#[test]
fn globals_from_the_command_line() {
    let prefix = Prefix::new("globals");
    prefix.conf("events {}\n");
    let out = prefix.run(&["-t", "-g", "worker_processes 3;"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = prefix.run(&["-t", "-g", "bogus_directive 3;"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unknown directive \"bogus_directive\""));
}

#[test]
fn version_and_help() {
    let out = Command::new(BIN).arg("-v").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        stderr(&out),
        format!(
            "peregrine version: peregrine/{}\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    // nginx's test suite reads `-V`: the nginx version on the first line,
    // the modules from `configure arguments:` (absent = built by default).
    let out = Command::new(BIN).arg("-V").output().unwrap();
    let text = stderr(&out);
    assert!(text.starts_with("nginx version: nginx/1."), "{text}");
    let args = text
        .lines()
        .find(|l| l.starts_with("configure arguments: "))
        .unwrap();
    assert!(args.contains(" --with-http_stub_status_module"), "{args}");
    assert!(!args.contains("--without-http_gzip_module"), "{args}");
    assert!(!args.contains("--without-http_proxy_module"), "{args}");
    // Derived from the directive table: rewrite, access, map, geo and the
    // limits count, and the proxy cache since it exists; the suite matches some
    // features as bare words (`http_v2`, `http_v3`), so those may appear
    // nowhere.
    assert!(args.contains(" --with-http_gzip_static_module"), "{args}");
    assert!(!args.contains("http_access"), "{args}");
    assert!(!args.contains("http_geo"), "{args}");
    assert!(args.contains(" --with-http_realip_module"), "{args}");
    assert!(
        !args.contains("http_limit_req") && !args.contains("http_limit_conn"),
        "{args}"
    );
    assert!(!args.contains("--without-http-cache"), "{args}");
    assert!(!args.contains("http_rewrite"), "{args}");
    // The body filters (issue 18): sub and addition are claimed, ssi (a
    // default module) is not named as missing.
    assert!(args.contains(" --with-http_sub_module"), "{args}");
    assert!(args.contains(" --with-http_addition_module"), "{args}");
    assert!(!args.contains("http_ssi"), "{args}");
    // HTTP/2 is claimed (issue 21: the suite's h2*.t files run).
    assert!(args.contains(" --with-http_v2_module"), "{args}");
    assert!(!text.contains("http_v3"), "{text}");
    // mail: claimed with its TLS, its protocols not named as missing.
    assert!(
        args.contains(" --with-mail --with-mail_ssl_module"),
        "{args}"
    );
    assert!(!args.contains("--without-mail"), "{args}");
    // stream: claimed, with the default stream modules it lacks named.
    assert!(args.contains(" --with-stream "), "{args}");
    assert!(args.contains(" --without-stream_map_module"), "{args}");
    assert!(!args.contains("stream_access"), "{args}");
    // ssl: every directive of the ssl module has a row (issue 20): the
    // module is claimed, with the TLS lines nginx prints and the suite
    // reads (`sni`, `openssl:N`).
    assert!(args.contains(" --with-http_ssl_module"), "{args}");
    assert!(text.contains("\nTLS SNI support enabled\n"), "{text}");
    assert!(text.contains("built with OpenSSL 3.0.0\n"), "{text}");
    let out = Command::new(BIN).arg("-h").output().unwrap();
    assert!(out.status.success());
    assert!(stderr(&out).starts_with("Usage: peregrine [-?hvVtTq]"));
    let out = Command::new(BIN).arg("-x").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "peregrine: invalid option: \"x\"\n");
}

/// `-s` without a running master: nginx's message about the pid file.
#[test]
fn signal_without_pid_file() {
    let prefix = Prefix::new("sig");
    prefix.conf("pid logs/p.pid;\nevents {}\n");
    let out = prefix.run(&["-s", "reload"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "peregrine: [error] open() \"{}\" failed (2: No such file or directory)\n",
            prefix.dir.join("logs/p.pid").display()
        )
    );
}

/// `-e FILE`: errors go to that file as well as to the configured error_log;
/// here a port already in use stops the start, with the reason in both.
#[test]
fn early_error_log_option() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let prefix = Prefix::new("early");
    prefix.conf(&format!(
        "error_log logs/error.log;\nevents {{}}\nhttp {{ server {{ listen 127.0.0.1:{port}; }} }}\n"
    ));
    let out = prefix.run(&["-e", "logs/early.log"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let early = std::fs::read_to_string(prefix.dir.join("logs/early.log")).unwrap_or_default();
    let main = std::fs::read_to_string(prefix.dir.join("logs/error.log")).unwrap_or_default();
    assert!(early.contains("[emerg]"), "early log: {early:?}");
    assert!(
        early.contains("Address already in use"),
        "early log: {early:?}"
    );
    assert!(
        main.contains("Address already in use"),
        "error log: {main:?}"
    );
    assert!(
        stderr(&out).starts_with("peregrine: [emerg] "),
        "{}",
        stderr(&out)
    );
    drop(busy);
}

/// `-T` dumps a file included twice once, as nginx's `ngx_conf_add_dump`.
#[test]
fn dump_lists_a_file_included_twice_once() {
    let p = Prefix::new("dump-uniq");
    p.write("conf/inc.conf", "# inc\n");
    p.conf(
        "include inc.conf;\ninclude inc.conf;\nevents {}\n\
         http { server { listen 127.0.0.1:1; } }\n",
    );
    let out = p.run(&["-T"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = String::from_utf8_lossy(&out.stdout);
    let header = format!(
        "# configuration file {}:\n",
        p.dir.join("conf/inc.conf").display()
    );
    assert_eq!(dump.matches(&header).count(), 1, "{dump}");
}
