//! SSI (`ssi on`): echo, set, if/elif/else, include of a static file, of a
//! `return` location and of another SSI page (nested subrequests), stubs,
//! and the head of a processed page (no Last-Modified, no ranges).
//! Checked against nginx (`E2E_SERVER=nginx`).

use crate::support::{Prefix, Server, conf_with};

fn site() -> Server {
    let p = Prefix::new("ssi");
    p.write(
        "html/echo.html",
        r#"X<!--#echo var="arg_a" default="none" -->X<!--#echo var="arg_b" encoding="url" -->X"#,
    );
    p.write(
        "html/set.html",
        r#"<!--#set var="v" value="[$arg_a]" --><!--#echo var="v" --><!--#echo var="missing" -->"#,
    );
    p.write(
        "html/if.html",
        r#"<!--#if expr="$arg_a = /(x+)(y)/" -->R<!--#echo var="1" --><!--#elif expr="$arg_a" -->E<!--#else -->N<!--#endif -->"#,
    );
    p.write("html/part.txt", "PART");
    p.write("html/sub/part2.txt", "PART2");
    p.write(
        "html/sub/inner.html",
        r#"(<!--#include virtual="part2.txt" -->)"#,
    );
    p.write(
        "html/inc.html",
        r#"A<!--#include virtual="/part.txt" -->B<!--#include virtual="/ret?q=1" -->C<!--#include virtual="/sub/inner.html" -->D"#,
    );
    p.write(
        "html/stub.html",
        r#"<!--#block name="s" -->STUB<!--#endblock -->[<!--#include virtual="/none" stub="s" -->]<!--#include virtual="/ret?q=2" set="x" -->{<!--#echo var="x" -->}"#,
    );
    p.write(
        "html/bad.html",
        "a<!--#nosuch -->b<!--#config errmsg=\"E\" --><!--#nosuch -->c",
    );
    let conf = conf_with(
        r#"
    server {
        listen 127.0.0.1:PORT;
        root html;
        ssi on;
        location /ret { return 200 "ret:$args"; }
    }"#,
    );
    Server::start(p, &conf)
}

#[test]
fn echo_set_and_if() {
    let s = site();
    assert_eq!(s.get("/echo.html?a=1&b=%3C").body, b"X1X%253CX");
    assert_eq!(s.get("/echo.html?b=%3Cx%3E").body, b"XnoneX%253Cx%253EX");
    assert_eq!(s.get("/set.html?a=q").body, b"[q](none)");
    assert_eq!(s.get("/if.html?a=xxy").body, b"Rxx");
    assert_eq!(s.get("/if.html?a=z").body, b"E");
    assert_eq!(s.get("/if.html").body, b"N");
}

#[test]
fn includes_are_subrequests() {
    let s = site();
    let r = s.get("/inc.html");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"APARTBret:q=1C(PART2)D");
    assert_eq!(r.header("Last-Modified"), None);
    assert_eq!(r.header("Accept-Ranges"), None);
    assert_eq!(s.get("/stub.html").body, b"[STUB]{ret:q=2}");
}

#[test]
fn errors_show_the_message() {
    let s = site();
    assert_eq!(
        s.get("/bad.html").body,
        b"a[an error occurred while processing the directive]bEc"
    );
}
