//! `secure_link`/`secure_link_md5` (`$secure_link`, `$secure_link_expires`)
//! and `secure_link_secret`, read through `return` (the suite's own test
//! needs `if`, which Peregrine does not have yet).

use md5::{Digest, Md5};

use crate::support::{Prefix, Server, conf_with};

const SERVERS: &str = r#"
server {
    listen 127.0.0.1:PORT;
    location /s/ {
        secure_link $arg_md5,$arg_expires;
        secure_link_md5 "$secure_link_expires$uri$remote_addr secret";
        return 200 "[$secure_link][$secure_link_expires]";
    }
    location /p/ {
        secure_link $arg_md5;
        secure_link_md5 "$uri secret";
        return 200 "[$secure_link]";
    }
    location /old/ {
        secure_link_secret word;
        return 200 "[$secure_link]";
    }
}
"#;

/// base64url without padding, as the links carry the hash.
fn b64url(b: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for c in b.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &x)| n | (u32::from(x) << (16 - 8 * i)));
        for i in 0..=c.len() {
            out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn body(s: &Server, uri: &str) -> String {
    let r = s.get(uri);
    assert_eq!(r.status, 200, "{uri}");
    r.body_str().to_string()
}

#[test]
fn md5_links_with_and_without_expiry() {
    let s = Server::start(Prefix::new("secure-link"), &conf_with(SERVERS));
    let future = "4102444800";
    let h = b64url(&Md5::digest(format!("{future}/s/f127.0.0.1 secret")));
    assert_eq!(
        body(&s, &format!("/s/f?md5={h}&expires={future}")),
        format!("[1][{future}]")
    );
    let past = "1000000000";
    let h = b64url(&Md5::digest(format!("{past}/s/f127.0.0.1 secret")));
    assert_eq!(
        body(&s, &format!("/s/f?md5={h}&expires={past}")),
        format!("[0][{past}]")
    );
    // A wrong hash is not found; the expiry is still known.
    assert_eq!(
        body(&s, &format!("/s/g?md5={h}&expires={past}")),
        format!("[][{past}]")
    );
    assert_eq!(body(&s, &format!("/s/f?md5={h}&expires=x")), "[][]");
    let p = b64url(&Md5::digest("/p/x secret"));
    assert_eq!(body(&s, &format!("/p/x?md5={p}")), "[1]");
    assert_eq!(body(&s, &format!("/p/x?md5={p}AAAA")), "[]", "too long");
    assert_eq!(body(&s, "/p/x"), "[]");
}

#[test]
fn secret_links_name_the_rest_of_the_uri() {
    let s = Server::start(Prefix::new("secure-link-old"), &conf_with(SERVERS));
    let hex: String = Md5::digest("dir/file.txtword")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        body(&s, &format!("/old/{hex}/dir/file.txt")),
        "[dir/file.txt]"
    );
    assert_eq!(body(&s, &format!("/old/{hex}/dir/other.txt")), "[]");
    assert_eq!(body(&s, "/old/short/dir/file.txt"), "[]");
}
