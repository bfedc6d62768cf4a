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
