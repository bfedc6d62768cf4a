//! `listen` parameters that change the protocol spoken and are not
//! implemented (`quic`) are refused: exit 1 and one line (`ssl`, `http2`
//! and `proxy_protocol` are implemented: see `tls`, `h2`,
//! `proxy_protocol`).

use crate::support::{Prefix, conf_with};

#[test]
fn protocol_parameters_of_listen_are_refused() {
    let param = "quic";
    let p = Prefix::new("listen-refused");
    let file = p.conf(&conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:8080 {param};\n    }}\n"
    )));
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1), "{param}");
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "peregrine: [emerg] the \"{param}\" parameter of the \"listen\" directive is not supported by Peregrine yet in {}:9",
        file.display()
    );
    assert_eq!(err.lines().next(), Some(want.as_str()), "{err}");
}

/// `listen [::]:PORT ipv6only=off`: one socket for both families, so an
/// IPv4 client reaches it (the server is started and checked on
/// 127.0.0.1); a bad flag is nginx's `invalid ipv6only flags`.
#[test]
fn ipv6only_off_takes_ipv4_too() {
    let s = crate::support::Server::start(
        Prefix::new("listen-ipv6only"),
        &conf_with(
            "    server {\n        listen [::]:PORT ipv6only=off;\n        \
             location / { return 200 \"both\\n\"; }\n    }\n",
        ),
    );
    assert_eq!(s.get("/").body_str(), "both\n");
    let p = Prefix::new("listen-ipv6only-bad");
    p.conf(&conf_with(
        "    server {\n        listen [::]:8080 ipv6only=maybe;\n    }\n",
    ));
    let out = p.run(&["-t"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid ipv6only flags \"maybe\""), "{err}");
}
