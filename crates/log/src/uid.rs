//! `$uid_got` and `$uid_set` in access logs (ngx_http_userid_filter_module):
//! `NAME=` and the identifier's four words as `%08X`, read back from the
//! request's cookie and the response's `Set-Cookie` (the identifier core's
//! userid filter set), by the location's `userid_name`.

use peregrine_conf::model::{LogEscape, UseridMode};

use crate::escape::{missing, push_escaped};
use crate::record::{RequestLog, each_value, find_cookie};

/// The base64 characters of an identifier nginx reads (16 bytes).
const UID_TEXT_LEN: usize = 22;

/// `set`: `$uid_set` (the response's cookie), else `$uid_got`.
pub(crate) fn push(out: &mut Vec<u8>, mode: LogEscape, rec: &RequestLog<'_>, set: bool) {
    let Some(conf) = rec.userid else {
        out.extend_from_slice(missing(mode));
        return;
    };
    let name = conf.name.as_bytes();
    let mut uid = None;
    if set && conf.mode >= UseridMode::V1 {
        each_value(rec.response_headers, b"set_cookie", &mut |v| {
            uid = v
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix(b"="))
                .and_then(decode);
            uid.is_none()
        });
    } else if !set && conf.mode != UseridMode::Off {
        each_value(rec.request_headers, b"cookie", &mut |h| {
            uid = find_cookie(h, name).and_then(decode);
            uid.is_none()
        });
    }
    match uid {
        Some(words) => {
            let mut text = String::with_capacity(name.len() + 33);
            text.push_str(&conf.name);
            text.push('=');
            for w in words.chunks(4) {
                let word = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]);
                text.push_str(&format!("{word:08X}"));
            }
            push_escaped(out, mode, text.as_bytes());
        }
        None => out.extend_from_slice(missing(mode)),
    }
}

/// The 16 bytes of the first 22 base64 characters (`ngx_decode_base64`;
/// the last character's spare bits ignored).
fn decode(text: &[u8]) -> Option<[u8; 16]> {
    let text = text.get(..UID_TEXT_LEN)?;
    let mut out = [0u8; 16];
    let (mut acc, mut bits, mut n) = (0u32, 0, 0);
    for &c in text {
        acc = (acc << 6) | crate::auth::sextet(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            if n < out.len() {
                out[n] = (acc >> bits) as u8;
                n += 1;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use peregrine_conf::model::UseridConf;

    use super::*;
    use crate::record::{HeaderPairs, NoHeaders};

    #[test]
    fn got_and_set_as_nginx_prints_them() {
        let conf = Arc::new(UseridConf {
            mode: UseridMode::On,
            name: "uid".into(),
            ..UseridConf::default()
        });
        // fwAAAQ... is 7f 00 00 01 ...: the first word printed as the
        // host reads it from memory.
        let req = HeaderPairs(&[(
            b"Cookie".as_slice(),
            b"a=b; uid=fwAAAQAAAAAAAAAAAAAAAA==".as_slice(),
        )]);
        let resp = HeaderPairs(&[(
            b"Set-Cookie".as_slice(),
            b"uid=fwAAAQAAAAEAAAACAAAAAw==; path=/".as_slice(),
        )]);
        let t = std::time::UNIX_EPOCH;
        let addr = "127.0.0.1:1".parse().unwrap();
        let rec = RequestLog {
            request_headers: &req,
            response_headers: &resp,
            userid: Some(&conf),
            ..RequestLog::new(addr, addr, t, t)
        };
        let render = |set| {
            let mut out = Vec::new();
            push(&mut out, LogEscape::Default, &rec, set);
            String::from_utf8(out).unwrap()
        };
        let first = u32::from_ne_bytes([0x7f, 0, 0, 1]);
        assert_eq!(
            render(false),
            format!("uid={first:08X}000000000000000000000000")
        );
        let w = |b: u8| u32::from_ne_bytes([0, 0, 0, b]);
        assert_eq!(
            render(true),
            format!("uid={first:08X}{:08X}{:08X}{:08X}", w(1), w(2), w(3))
        );
        let none = RequestLog {
            request_headers: &NoHeaders,
            ..rec
        };
        let mut out = Vec::new();
        push(&mut out, LogEscape::Default, &none, false);
        assert_eq!(out, b"-");
    }
}
