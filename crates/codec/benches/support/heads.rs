//! The request heads the codec's benchmark (`benches/parse.rs`) and its
//! instruction-count harness (`examples/count_parse.rs`) parse, kept in
//! one place so that their figures are about the same bytes.

/// What `wrk` sends by default (the request issue 4 measures).
pub const WRK: &[u8] = b"GET /small.html HTTP/1.1\r\nHost: 127.0.0.1:18082\r\n\r\n";

/// A browser's GET of a stylesheet: eight headers, about 400 bytes.
pub const BROWSER: &[u8] = b"GET /static/css/site.min.css?v=20261130 HTTP/1.1\r\n\
Host: www.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n\
Accept: text/css,*/*;q=0.1\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate, br, zstd\r\n\
Connection: keep-alive\r\n\
Referer: https://www.example.com/\r\n\
Cookie: session=8f14e45fceea167a5a36dedd4bea2543; theme=dark\r\n\r\n";
