//! Response bytes as nginx writes them: status lines
//! (`ngx_http_status_lines`), the built-in error pages
//! (`ngx_http_special_response.c`) and allocation-free header writers.
//!
//! nginx always answers with `HTTP/1.1` in the status line, whatever the
//! request version; statuses it has no reason phrase for are sent as
//! `HTTP/1.1 NNN ` (trailing space, empty reason).

use crate::Version;

/// nginx's internal status for "Request Header Or Cookie Too Large".
pub const STATUS_HEADER_TOO_LARGE: u16 = 494;

/// The status that goes on the wire: nginx's internal 494-497 are sent as 400.
pub fn wire_status(status: u16) -> u16 {
    if (494..=497).contains(&status) {
        400
    } else {
        status
    }
}

/// nginx's reason phrase for `status` (after [`wire_status`]), if it has one.
pub fn reason(status: u16) -> Option<&'static str> {
    known(wire_status(status)).map(|(reason, _)| reason)
}

macro_rules! lines {
    ($($code:literal => $text:literal,)*) => {
        /// (reason, status line) for the statuses in `ngx_http_status_lines`.
        fn known(status: u16) -> Option<(&'static str, &'static [u8])> {
            Some(match status {
                $($code => ($text, concat!("HTTP/1.1 ", $code, " ", $text, "\r\n").as_bytes()),)*
                _ => return None,
            })
        }
    };
}

lines! {
    100 => "Continue", 101 => "Switching Protocols",
    200 => "OK", 201 => "Created", 202 => "Accepted", 204 => "No Content",
    206 => "Partial Content",
    301 => "Moved Permanently", 302 => "Moved Temporarily", 303 => "See Other",
    304 => "Not Modified", 307 => "Temporary Redirect", 308 => "Permanent Redirect",
    400 => "Bad Request", 401 => "Unauthorized", 402 => "Payment Required",
    403 => "Forbidden", 404 => "Not Found", 405 => "Not Allowed", 406 => "Not Acceptable",
    408 => "Request Time-out", 409 => "Conflict", 410 => "Gone", 411 => "Length Required",
    412 => "Precondition Failed", 413 => "Request Entity Too Large",
    414 => "Request-URI Too Large", 415 => "Unsupported Media Type",
    416 => "Requested Range Not Satisfiable", 421 => "Misdirected Request",
    429 => "Too Many Requests",
    500 => "Internal Server Error", 501 => "Not Implemented", 502 => "Bad Gateway",
    503 => "Service Temporarily Unavailable", 504 => "Gateway Time-out",
    505 => "HTTP Version Not Supported", 507 => "Insufficient Storage",
}

/// `HTTP/1.1 NNN \r\n` for every three-digit status, built at compile time
/// so unknown statuses need no allocation either.
static GENERIC_LINES: [[u8; 15]; 1000] = {
    let mut t = [*b"HTTP/1.1 000 \r\n"; 1000];
    let mut i = 0;
    while i < 1000 {
        t[i][9] = b'0' + (i / 100) as u8;
        t[i][10] = b'0' + (i / 10 % 10) as u8;
        t[i][11] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// The status line with CRLF, as nginx sends it (always `HTTP/1.1`; the
/// version argument is accepted for clarity and ignored, as nginx does).
/// 494-497 are sent as 400. Statuses above 999 are sent as 500.
pub fn status_line(version: Version, status: u16) -> &'static [u8] {
    let _ = version;
    let status = wire_status(status);
    known(status)
        .map(|(_, line)| line)
        .or_else(|| GENERIC_LINES.get(usize::from(status)).map(|l| &l[..]))
        .unwrap_or(b"HTTP/1.1 500 Internal Server Error\r\n")
}

/// The nginx release whose behaviour Peregrine follows, as `-V`, the
/// `Server` header and the built-in pages' footer name it (nginx's test
/// suite reads them; docs/nginx-tests.md).
#[macro_export]
macro_rules! nginx_version {
    () => {
        "1.29.8"
    };
}

/// [`nginx_version!`] as a constant.
pub const NGINX_VERSION: &str = nginx_version!();

/// `server_tokens build`'s build name: Peregrine and its version, where
/// nginx puts its `--build=` name (`nginx/1.29.8 (peregrine/0.1.0)`).
pub const BUILD_NAME: &str = concat!("peregrine/", env!("CARGO_PKG_VERSION"));

/// The footer nginx puts under every built-in page with `server_tokens off`.
pub const ERROR_PAGE_TAIL: &[u8] = b"<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/// The footer with `server_tokens on` (nginx's default): the product and
/// its version, as nginx's `ngx_http_error_full_tail`.
pub const ERROR_PAGE_TAIL_VERSION: &[u8] = concat!(
    "<hr><center>nginx/",
    nginx_version!(),
    "</center>\r\n</body>\r\n</html>\r\n"
)
.as_bytes();

/// The footer with `server_tokens build` (`ngx_http_error_build_tail`).
pub const ERROR_PAGE_TAIL_BUILD: &[u8] = concat!(
    "<hr><center>nginx/",
    nginx_version!(),
    " (peregrine/",
    env!("CARGO_PKG_VERSION"),
    ")</center>\r\n</body>\r\n</html>\r\n"
)
.as_bytes();

/// The `Server` value with `server_tokens on`: nginx's, for the release
/// Peregrine follows. Peregrine answers as that nginx does, to clients,
/// monitors and nginx's own test suite; `server_tokens build` and `-V` name
/// Peregrine (a deliberate choice: docs/nginx-tests.md).
pub const SERVER_VERSION: &str = concat!("nginx/", nginx_version!());
/// The `Server` value with `server_tokens build`.
pub const SERVER_BUILD: &str = concat!(
    "nginx/",
    nginx_version!(),
    " (peregrine/",
    env!("CARGO_PKG_VERSION"),
    ")"
);
/// The `Server` value with `server_tokens off`.
pub const SERVER_NAME: &str = "nginx";

macro_rules! page {
    ($title:literal) => {
        concat!(
            "<html>\r\n<head><title>",
            $title,
            "</title></head>\r\n<body>\r\n<center><h1>",
            $title,
            "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        )
        .as_bytes()
    };
    ($title:literal, $h1:literal, $extra:literal) => {
        concat!(
            "<html>\r\n<head><title>",
            $title,
            "</title></head>\r\n<body>\r\n<center><h1>",
            $h1,
            "</h1></center>\r\n<center>",
            $extra,
            "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        )
        .as_bytes()
    };
}

/// nginx's built-in HTML page for `status` (served as `text/html` when no
/// `error_page` applies); empty for statuses nginx has no page for (it then
/// sends no body). 494 is nginx's "Request Header Or Cookie Too Large".
pub fn error_page_body(status: u16) -> &'static [u8] {
    match status {
        301 => page!("301 Moved Permanently"),
        302 => page!("302 Found"),
        303 => page!("303 See Other"),
        307 => page!("307 Temporary Redirect"),
        308 => page!("308 Permanent Redirect"),
        400 => page!("400 Bad Request"),
        401 => page!("401 Authorization Required"),
        402 => page!("402 Payment Required"),
        403 => page!("403 Forbidden"),
        404 => page!("404 Not Found"),
        405 => page!("405 Not Allowed"),
        406 => page!("406 Not Acceptable"),
        408 => page!("408 Request Time-out"),
        409 => page!("409 Conflict"),
        410 => page!("410 Gone"),
        411 => page!("411 Length Required"),
        412 => page!("412 Precondition Failed"),
        413 => page!("413 Request Entity Too Large"),
        414 => page!("414 Request-URI Too Large"),
        415 => page!("415 Unsupported Media Type"),
        416 => page!("416 Requested Range Not Satisfiable"),
        421 => page!("421 Misdirected Request"),
        429 => page!("429 Too Many Requests"),
        494 => page!(
            "400 Request Header Or Cookie Too Large",
            "400 Bad Request",
            "Request Header Or Cookie Too Large"
        ),
        495 => page!(
            "400 The SSL certificate error",
            "400 Bad Request",
            "The SSL certificate error"
        ),
        496 => page!(
            "400 No required SSL certificate was sent",
            "400 Bad Request",
            "No required SSL certificate was sent"
        ),
        497 => page!(
            "400 The plain HTTP request was sent to HTTPS port",
            "400 Bad Request",
            "The plain HTTP request was sent to HTTPS port"
        ),
        500 => page!("500 Internal Server Error"),
        501 => page!("501 Not Implemented"),
        502 => page!("502 Bad Gateway"),
        503 => page!("503 Service Temporarily Unavailable"),
        504 => page!("504 Gateway Time-out"),
        505 => page!("505 HTTP Version Not Supported"),
        507 => page!("507 Insufficient Storage"),
        _ => b"",
    }
}

/// Appends the decimal form of `n` (no allocation beyond `out` growing).
pub fn push_u64(out: &mut Vec<u8>, n: u64) {
    push_radix(out, n, 10);
}

/// Appends the lowercase hexadecimal form of `n` (nginx's `%xT`/`%xO`; a
/// negative `i64` passed as `n as u64` reads as Rust's `{:x}` prints it).
pub fn push_hex_u64(out: &mut Vec<u8>, n: u64) {
    push_radix(out, n, 16);
}

/// `n` in base `radix` (10 or 16), without `core::fmt` (these run for
/// header lines and log fields on every response). The radix is a
/// constant at both call sites, so the division compiles to a multiply or
/// a shift.
#[inline(always)]
fn push_radix(out: &mut Vec<u8>, n: u64, radix: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        if let Some(d) = buf.get_mut(i) {
            *d = DIGITS[(n % radix) as usize];
        }
        n /= radix;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(buf.get(i..).unwrap_or(&[]));
}

/// Appends `name: value\r\n`.
pub fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Appends `name: n\r\n` (e.g. `Content-Length`).
pub fn push_header_u64(out: &mut Vec<u8>, name: &[u8], n: u64) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    push_u64(out, n);
    out.extend_from_slice(b"\r\n");
}

/// Appends `name: <IMF-fixdate>\r\n` (e.g. `Last-Modified`).
pub fn push_header_date(out: &mut Vec<u8>, name: &[u8], unix_secs: i64) {
    let mut d = [0u8; 29];
    crate::date::fmt_http_date(unix_secs, &mut d);
    push_header(out, name, &d);
}

/// nginx's interim response to `Expect: 100-continue` (`ngx_http_send_continue`).
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        assert_eq!(status_line(Version::Http11, 200), b"HTTP/1.1 200 OK\r\n");
        assert_eq!(status_line(Version::Http10, 200), b"HTTP/1.1 200 OK\r\n");
        assert_eq!(
            status_line(Version::Http11, 302),
            b"HTTP/1.1 302 Moved Temporarily\r\n"
        );
        assert_eq!(
            status_line(Version::Http11, 494),
            b"HTTP/1.1 400 Bad Request\r\n"
        );
        assert_eq!(
            status_line(Version::Http11, 505),
            b"HTTP/1.1 505 HTTP Version Not Supported\r\n"
        );
        assert_eq!(status_line(Version::Http11, 203), b"HTTP/1.1 203 \r\n");
        assert_eq!(status_line(Version::Http11, 7), b"HTTP/1.1 007 \r\n");
        assert_eq!(
            status_line(Version::Http11, 1000),
            b"HTTP/1.1 500 Internal Server Error\r\n"
        );
        for s in 100..1000 {
            let line = status_line(Version::Http11, s);
            let want = format!("HTTP/1.1 {} ", wire_status(s));
            assert!(line.starts_with(want.as_bytes()) && line.ends_with(b"\r\n"));
            let r = reason(s).unwrap_or("");
            assert_eq!(line.len(), want.len() + r.len() + 2, "{s}");
        }
    }

    #[test]
    fn error_pages_match_nginx() {
        // Captured from nginx 1.22.1 with `server_tokens off`.
        assert_eq!(
            error_page_body(404),
            &b"<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"[..]
        );
        assert_eq!(
            error_page_body(494),
            &b"<html>\r\n<head><title>400 Request Header Or Cookie Too Large</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>Request Header Or Cookie Too Large</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"[..]
        );
        // nginx's 404 page is 153 bytes with "nginx/1.22.1" (12 bytes) in
        // the footer, "nginx" (5) with `server_tokens off`.
        assert_eq!(error_page_body(404).len(), 153 - 12 + 5);
        assert_eq!(error_page_body(494).len(), 233 - 12 + 5);
        assert_eq!(error_page_body(414).len(), 177 - 12 + 5);
        assert!(error_page_body(200).is_empty());
        assert!(error_page_body(404).ends_with(ERROR_PAGE_TAIL));
    }

    #[test]
    fn header_writers() {
        let mut out = Vec::new();
        push_u64(&mut out, 0);
        out.push(b' ');
        push_u64(&mut out, u64::MAX);
        assert_eq!(out, b"0 18446744073709551615");
        for n in [
            0,
            1,
            0xf,
            0x10,
            0x6b0d5a02,
            u64::MAX,
            -1i64 as u64,
            i64::MIN as u64,
        ] {
            out.clear();
            push_hex_u64(&mut out, n);
            assert_eq!(out, format!("{n:x}").as_bytes());
        }
        out.clear();
        push_header_u64(&mut out, b"Content-Length", 153);
        push_header(&mut out, b"Connection", b"close");
        push_header_date(&mut out, b"Last-Modified", 784_111_777);
        assert_eq!(
            out,
            b"Content-Length: 153\r\nConnection: close\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
        );
    }
}
