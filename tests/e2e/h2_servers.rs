//! HTTP/2 belongs to a server, not to its address (nginx ≥ 1.25's `http2
//! on`): ALPN offers `h2` for the server SNI chose, a stream whose Host
//! chooses a server with `http2 off` is answered 421, and HTTP/2 details
//! nginx's tests read (`$request_length` of a stream, the error page in
//! one DATA frame). Debian's nginx 1.22 has no `http2` directive: these
//! run against Peregrine only.

use crate::h2::curl;
use crate::support::{Prefix, Server, conf_with, is_nginx, wait_for_lines};

fn start(tag: &str) -> Server {
    let p = Prefix::new(tag);
    crate::tls::cert(&p, "localhost");
    p.write("html/index.html", "hello");
    let tls = "ssl_certificate localhost.crt; ssl_certificate_key localhost.key;";
    let conf = conf_with(&format!(
        "    server {{\n        listen 127.0.0.1:PORT ssl;\n        server_name on.test;\n        {tls}\n        http2 on;\n        location / {{ }}\n        location = /rl {{ return 200 $request_length; }}\n    }}\n\
         \x20   server {{\n        listen 127.0.0.1:PORT ssl;\n        server_name off.test;\n        {tls}\n        http2 off;\n        location / {{ }}\n    }}\n"
    ));
    Server::start(p, &conf)
}

#[test]
fn alpn_h2_follows_the_server_sni_chose() {
    if is_nginx() {
        return;
    }
    let s = start("h2-servers-alpn");
    let port = s.addr.port();
    let on = format!("on.test:{port}:127.0.0.1");
    let off = format!("off.test:{port}:127.0.0.1");
    let (w, body) = curl(
        &["--http2", "--resolve", &on],
        &format!("https://on.test:{port}/"),
    );
    assert_eq!(w, "200 2 5");
    assert_eq!(body, b"hello");
    // The other server of the same address says `http2 off`: no `h2`.
    let (w, _) = curl(
        &["--http2", "--resolve", &off],
        &format!("https://off.test:{port}/"),
    );
    assert_eq!(w, "200 1.1 5");
    // Reached by the first server's h2, a Host naming the second: 421.
    let (w, _) = curl(
        &["--http2", "--resolve", &on, "-H", "Host: off.test"],
        &format!("https://on.test:{port}/"),
    );
    assert!(w.starts_with("421 2 "), "{w}");
    let lines = wait_for_lines(&s.prefix.dir.join("logs/error.log"), 1, |l| {
        l.contains("for which the negotiated protocol is disabled")
    });
    assert_eq!(lines.len(), 1, "{lines:?}");
}

#[test]
fn request_length_and_error_page_of_a_stream() {
    if is_nginx() {
        return;
    }
    let s = start("h2-servers-rl");
    let port = s.addr.port();
    let on = format!("on.test:{port}:127.0.0.1");
    // The header block's bytes, HPACK-compressed: well under the HTTP/1
    // text of the same head.
    let (w, body) = curl(
        &["--http2", "--resolve", &on],
        &format!("https://on.test:{port}/rl"),
    );
    assert!(w.starts_with("200 2 "), "{w}");
    let n: u64 = String::from_utf8_lossy(&body).parse().expect("a number");
    assert!(n > 0 && n < 60, "{n}");
    // The 404 page whole, its server_tokens footer included.
    let (w, page) = curl(
        &["--http2", "--resolve", &on],
        &format!("https://on.test:{port}/nope"),
    );
    assert!(w.starts_with("404 2 "), "{w}");
    let page = String::from_utf8_lossy(&page);
    assert!(
        page.contains("<title>404 Not Found</title>") && page.ends_with("</html>\r\n"),
        "{page}"
    );
}
