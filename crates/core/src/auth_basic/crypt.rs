//! `ngx_crypt`: an htpasswd entry checked against a password. nginx hashes
//! four schemes itself (`$apr1$`, `{PLAIN}`, `{SHA}`, `{SSHA}`) and hands
//! every other one to the system's crypt(3), as this does
//! (`peregrine_sys::crypt`: DES, `$1$`, `$5$`, `$6$`, `$2y$`...).

use md5::{Digest, Md5};
use sha1::Sha1;

use crate::secure_link::{decode_base64, encode_base64};

/// The alphabet of crypt's base64 (`ngx_crypt_to64`).
const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// MD5-crypt rounds (`ngx_crypt_apr1`, as Poul-Henning Kamp's).
const MD5_CRYPT_ROUNDS: usize = 1000;

/// Whether `password` matches `entry`; `None` when the system's crypt(3)
/// refuses the entry (nginx answers 500 then).
pub(crate) fn matches(password: &[u8], entry: &[u8]) -> Option<bool> {
    if let Some(rest) = entry.strip_prefix(b"$apr1$") {
        return Some(md5_crypt(password, rest, b"$apr1$") == entry);
    }
    if let Some(rest) = entry.strip_prefix(b"{PLAIN}") {
        return Some(rest == password);
    }
    if let Some(rest) = entry.strip_prefix(b"{SSHA}") {
        return Some(ssha(password, rest));
    }
    if let Some(rest) = entry.strip_prefix(b"{SHA}") {
        let mut expect = String::new();
        encode_base64(&Sha1::digest(password), &mut expect);
        return Some(expect.as_bytes() == rest);
    }
    peregrine_sys::crypt::crypt(password, entry).map(|h| h == entry)
}

/// `{SSHA}base64(sha1(password + salt) + salt)`; an entry that does not
/// decode to at least a digest matches nothing (`ngx_crypt_ssha`).
fn ssha(password: &[u8], encoded: &[u8]) -> bool {
    let Some(decoded) = decode_base64(encoded, false).filter(|d| d.len() >= 20) else {
        return false;
    };
    let (digest, salt) = decoded.split_at(20);
    let mut h = Sha1::new();
    h.update(password);
    h.update(salt);
    h.finalize().as_slice() == digest
}

/// MD5-crypt with `magic` (`$1$` or Apache's `$apr1$`): the salt is what
/// follows the magic up to a `$`, at most eight bytes. One function on
/// purpose: the algorithm's steps in their published order, easier to hold
/// against the reference than split.
pub(crate) fn md5_crypt(password: &[u8], rest: &[u8], magic: &[u8]) -> Vec<u8> {
    let salt_end = rest
        .iter()
        .take(8)
        .position(|&c| c == b'$')
        .unwrap_or(rest.len().min(8));
    let salt = &rest[..salt_end];
    let mut alt = Md5::new();
    alt.update(password);
    alt.update(salt);
    alt.update(password);
    let alt = alt.finalize();
    let mut ctx = Md5::new();
    ctx.update(password);
    ctx.update(magic);
    ctx.update(salt);
    let mut left = password.len();
    while left > 0 {
        ctx.update(&alt[..left.min(16)]);
        left = left.saturating_sub(16);
    }
    let mut i = password.len();
    while i != 0 {
        if i & 1 == 1 {
            ctx.update([0u8]);
        } else {
            ctx.update(&password[..1]);
        }
        i >>= 1;
    }
    let mut fin = ctx.finalize();
    for round in 0..MD5_CRYPT_ROUNDS {
        let mut c = Md5::new();
        if round & 1 == 1 {
            c.update(password);
        } else {
            c.update(fin);
        }
        if round % 3 != 0 {
            c.update(salt);
        }
        if round % 7 != 0 {
            c.update(password);
        }
        if round & 1 == 1 {
            c.update(fin);
        } else {
            c.update(password);
        }
        fin = c.finalize();
    }
    let mut out = Vec::with_capacity(magic.len() + salt.len() + 23);
    out.extend_from_slice(magic);
    out.extend_from_slice(salt);
    out.push(b'$');
    let f = |i: usize| u32::from(fin[i]);
    for (a, b, c) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
        to64(&mut out, (f(a) << 16) | (f(b) << 8) | f(c), 4);
    }
    to64(&mut out, f(11), 2);
    out
}

fn to64(out: &mut Vec<u8>, mut v: u32, n: usize) {
    for _ in 0..n {
        out.push(ITOA64[(v & 0x3f) as usize]);
        v >>= 6;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The openssl command (`openssl passwd -apr1`, `-1`) as the reference
    /// for MD5-crypt, when it is installed.
    fn openssl_passwd(flag: &str, salt: &str, password: &str) -> Option<Vec<u8>> {
        let out = std::process::Command::new("openssl")
            .args(["passwd", flag, "-salt", salt, password])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| out.stdout.trim_ascii_end().to_vec())
    }

    #[test]
    fn md5_crypt_agrees_with_openssl() {
        for (salt, pw) in [
            ("salt", "password"),
            ("x", ""),
            ("abcdefgh", "a longer password, 17+"),
        ] {
            let Some(apr1) = openssl_passwd("-apr1", salt, pw) else {
                eprintln!("skipped: no openssl");
                return;
            };
            let rest = &apr1[b"$apr1$".len()..];
            assert_eq!(
                md5_crypt(pw.as_bytes(), rest, b"$apr1$"),
                apr1,
                "{salt} {pw}"
            );
            assert_eq!(matches(pw.as_bytes(), &apr1), Some(true));
            assert_eq!(matches(b"wrong", &apr1), Some(false));
            let md5 = openssl_passwd("-1", salt, pw).unwrap();
            assert_eq!(md5_crypt(pw.as_bytes(), &md5[3..], b"$1$"), md5);
        }
    }

    #[test]
    fn the_schemes_nginx_hashes_itself() {
        assert_eq!(matches(b"password", b"{PLAIN}password"), Some(true));
        assert_eq!(matches(b"passwor", b"{PLAIN}password"), Some(false));
        // SHA-1 of "password", base64.
        let sha = b"{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=";
        assert_eq!(matches(b"password", sha), Some(true));
        assert_eq!(matches(b"x", sha), Some(false));
        // {SSHA}: the digest of password+salt, then the salt.
        let mut raw = Sha1::new();
        raw.update(b"passwordNaCl");
        let mut blob = raw.finalize().to_vec();
        blob.extend_from_slice(b"NaCl");
        let mut enc = String::from("{SSHA}");
        encode_base64(&blob, &mut enc);
        assert_eq!(matches(b"password", enc.as_bytes()), Some(true));
        assert_eq!(matches(b"other", enc.as_bytes()), Some(false));
        assert_eq!(matches(b"1", b"{SSHA}Zm9vCg=="), Some(false), "too short");
        assert_eq!(matches(b"1", b"{SSHA}_____"), Some(false), "not base64");
    }

    #[test]
    fn other_schemes_go_to_the_systems_crypt() {
        let des = peregrine_sys::crypt::crypt(b"password", b"salt").unwrap();
        assert_eq!(matches(b"password", &des), Some(true));
        assert_eq!(matches(b"passwore", &des), Some(false));
        let sha512 = peregrine_sys::crypt::crypt(b"password", b"$6$abc$").unwrap();
        assert_eq!(matches(b"password", &sha512), Some(true));
    }
}
