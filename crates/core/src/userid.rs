//! The userid filter (ngx_http_userid_filter_module): a cookie identifying
//! the client, set on responses of locations with `userid on|v1`, and
//! `$uid_got`, `$uid_set`, `$uid_reset`.
//!
//! The identifier is 16 bytes, four 32-bit words laid out as nginx lays
//! them in memory: for `on` (version 2) each word in network order — the
//! server's IPv4 address (or `userid_service`), the time, a per-worker
//! start value, a sequence number; for `v1` the same words in host order
//! (the service or 0 first). The cookie carries them in base64 (22
//! characters and `==`, the first `=` replaced by `userid_mark`); the
//! variables print each word as nginx's `%08XD` does: the word as the host
//! reads it from memory.

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::net::IpAddr;

use peregrine_conf::model::{USERID_MAX_EXPIRES, UseridConf, UseridMode};

use crate::http::Ctx;
use crate::response::Response;
use crate::secure_link::{decode_base64, encode_base64};
use crate::vars::VarCtx;

/// The base64 characters of a cookie nginx decodes (16 bytes; the rest
/// may be a mark and garbage).
const UID_TEXT_LEN: usize = 22;

/// nginx's fixed text for `userid_expires max`.
const MAX_EXPIRES_TEXT: &str = "; expires=Thu, 31-Dec-37 23:55:55 GMT";

/// The first version-2 sequence number (`sequencer_v2`): every byte
/// printable in the cookie's base64.
const SEQUENCER_V2_START: u32 = 0x0303_0302;

/// One step of either sequencer: the low byte stays free.
const SEQUENCER_STEP: u32 = 0x100;

thread_local! {
    /// `start_value`: each worker's own (`ngx_http_userid_init_worker`).
    static START_VALUE: u32 = start_value();
    static SEQUENCER_V1: Cell<u32> = const { Cell::new(1) };
    static SEQUENCER_V2: Cell<u32> = const { Cell::new(SEQUENCER_V2_START) };
}

/// Worker threads started so far: told apart in the start value.
static WORKERS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// `((usec / 20) << 16) | pid`: the most significant part of the
/// microseconds that fits 16 bits, and the process id. Workers are
/// threads of one process here, so each adds its own number to the pid.
fn start_value() -> u32 {
    let usec = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_micros());
    let n = WORKERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ((usec / 20) << 16) | (std::process::id().wrapping_add(n) & 0xffff)
}

/// A request's userid state (nginx's module context).
#[derive(Debug, Default)]
pub(crate) struct UidCell(RefCell<Option<Uid>>);

#[derive(Debug, Clone, Default)]
struct Uid {
    /// The identifier the client sent, decoded.
    got: Option<[u8; 16]>,
    /// The cookie's value as sent.
    cookie: String,
    /// The identifier to set, once decided.
    set: Option<[u8; 16]>,
    decided: bool,
    /// `$uid_reset` was `log`: the identifier replaced, for the notice.
    reset_log: Option<[u8; 16]>,
}

/// Appends `$uid_got`, `$uid_set` or `$uid_reset` (always empty: nothing
/// sets it without the rewrite module's `set`).
pub(crate) fn push(v: &VarCtx<'_>, name: &str, out: &mut String) {
    let conf = &v.conf.userid;
    let uid = match name {
        "uid_got" if conf.mode != UseridMode::Off => got(v, conf).got,
        "uid_set" if conf.mode >= UseridMode::V1 => decide(v, conf).set,
        _ => None,
    };
    if let Some(uid) = uid {
        let _ = write!(out, "{}=", conf.name);
        push_words(&uid, out);
    }
}

/// `ngx_http_userid_get_uid`: the cookie named `userid_name`, decoded.
fn got(v: &VarCtx<'_>, conf: &UseridConf) -> Uid {
    if let Some(u) = v.uid.0.borrow().as_ref() {
        return u.clone();
    }
    let mut uid = Uid::default();
    if let Some(value) = v.req.header("Cookie").and_then(|c| cookie(c, &conf.name)) {
        uid.cookie = value.to_string();
        // Too short or not base64: nginx logs it and sets a new one.
        if value.len() >= UID_TEXT_LEN
            && let Some(bytes) = decode_base64(&value.as_bytes()[..UID_TEXT_LEN], false)
            && let Ok(b) = <[u8; 16]>::try_from(bytes.as_slice())
        {
            uid.got = Some(b);
        }
    }
    *v.uid.0.borrow_mut() = Some(uid.clone());
    uid
}

/// `ngx_http_userid_create_uid`: keep the client's identifier (setting it
/// again only to add a missing mark), or make a new one.
fn decide(v: &VarCtx<'_>, conf: &UseridConf) -> Uid {
    let mut uid = got(v, conf);
    if uid.decided {
        return uid;
    }
    uid.decided = true;
    // `$uid_reset` (nginx 1.23.4+; a map or `set` gives it a value):
    // empty or `0` keeps the client's identifier, anything else replaces
    // it, and `log` also says so at notice.
    let reset = v.expand("$uid_reset");
    if let Some(g) = uid.got
        && !(reset.is_empty() || reset == "0")
    {
        uid.reset_log = (reset == "log").then_some(g);
        uid.got = None;
        uid.set = Some(new_uid(v, conf));
    } else if let Some(g) = uid.got {
        let c = uid.cookie.as_bytes();
        let marked = c.len() > 23 && c[22] == conf.mark && c[23] == b'=';
        if conf.mark != 0 && !marked {
            uid.set = Some(g);
        }
    } else {
        uid.set = Some(new_uid(v, conf));
    }
    *v.uid.0.borrow_mut() = Some(uid.clone());
    uid
}

fn new_uid(v: &VarCtx<'_>, conf: &UseridConf) -> [u8; 16] {
    let now = v
        .now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32);
    let start = START_VALUE.with(|s| *s);
    let words: [[u8; 4]; 4] = if conf.mode == UseridMode::V1 {
        let seq = SEQUENCER_V1.with(|s| s.replace(s.get().wrapping_add(SEQUENCER_STEP)));
        [
            conf.service.unwrap_or(0).to_ne_bytes(),
            now.to_ne_bytes(),
            start.to_ne_bytes(),
            seq.to_ne_bytes(),
        ]
    } else {
        let seq = SEQUENCER_V2.with(|s| {
            let seq = s.get();
            let next = seq.wrapping_add(SEQUENCER_STEP);
            s.set(if next < SEQUENCER_V2_START {
                SEQUENCER_V2_START
            } else {
                next
            });
            seq
        });
        let first = match conf.service {
            Some(svc) => svc.to_be_bytes(),
            // A UNIX-domain socket has no address: nginx leaves 0.
            None if peregrine_conf::model::is_unix(v.local) => [0; 4],
            None => match v.local.ip() {
                IpAddr::V4(a) => a.octets(),
                IpAddr::V6(a) => {
                    let o = a.octets();
                    [o[12], o[13], o[14], o[15]]
                }
            },
        };
        [
            first,
            now.to_be_bytes(),
            start.to_be_bytes(),
            seq.to_be_bytes(),
        ]
    };
    let mut out = [0u8; 16];
    for (i, w) in words.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(w);
    }
    out
}

/// The value of cookie `name` in a `Cookie` header (names compared as
/// nginx's cookie parser does, ignoring case).
fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|kv| {
        let (k, v) = kv.trim_start_matches([' ', '\t']).split_once('=')?;
        k.eq_ignore_ascii_case(name)
            .then(|| v.trim_end_matches([' ', '\t']))
    })
}

/// `ngx_http_userid_set_uid`: adds `Set-Cookie` (and `P3P`) to `r`.
pub(crate) fn filter(ctx: &Ctx<'_>, r: &mut Response) -> Option<String> {
    let v = ctx.vars();
    let conf = &ctx.conf.userid;
    let uid = decide(&v, conf);
    let note = uid.reset_log.map(|g| {
        let mut s = format!("userid cookie \"{}=", conf.name);
        push_words(&g, &mut s);
        s.push_str("\" was reset");
        s
    });
    set_cookie(&v, conf, &uid, r);
    note
}

/// The identifier's four words as nginx prints them (`%08XD` each, in
/// the machine's byte order).
fn push_words(uid: &[u8; 16], out: &mut String) {
    for w in uid.chunks(4) {
        let word = u32::from_ne_bytes([w[0], w[1], w[2], w[3]]);
        let _ = write!(out, "{word:08X}");
    }
}

/// Adds `Set-Cookie` (and `P3P`) when an identifier is to be set.
fn set_cookie(v: &VarCtx<'_>, conf: &UseridConf, uid: &Uid, r: &mut Response) {
    let Some(set) = uid.set else { return };
    let mut c = String::with_capacity(128);
    c.push_str(&conf.name);
    c.push('=');
    if uid.got.is_none() {
        encode_base64(&set, &mut c);
        if conf.mark != 0 {
            // The first of the two `=` of the padding.
            let at = c.len() - 2;
            c.replace_range(at..at + 1, &char::from(conf.mark).to_string());
        }
    } else {
        c.push_str(&uid.cookie[..UID_TEXT_LEN]);
        c.push(char::from(conf.mark));
        c.push('=');
    }
    if conf.expires == USERID_MAX_EXPIRES {
        c.push_str(MAX_EXPIRES_TEXT);
    } else if conf.expires > 0 {
        let now = v
            .now
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        c.push_str("; expires=");
        cookie_time(now.saturating_add(conf.expires as i64), &mut c);
    }
    c.push_str(&conf.domain);
    c.push_str(&conf.path);
    if conf.flags.secure {
        c.push_str("; secure");
    }
    if conf.flags.httponly {
        c.push_str("; httponly");
    }
    if let Some(s) = conf.flags.samesite {
        c.push_str("; samesite=");
        c.push_str(s);
    }
    let head = r.head.to_mut();
    head.push("Set-Cookie", c);
    if !conf.p3p.is_empty() {
        head.push("P3P", conf.p3p.clone());
    }
}

/// `ngx_http_cookie_time`: `Thu, 31-Dec-37 23:55:55 GMT` (two-digit years
/// up to 2037, four after).
fn cookie_time(unix: i64, out: &mut String) {
    const WEEK: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = peregrine_codec::date::civil_from_days(days);
    let wday = WEEK[days.rem_euclid(7) as usize];
    let month = MONTHS[(m - 1) as usize];
    let year = if y > 2037 { y } else { y % 100 };
    let (h, min, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let _ = write!(
        out,
        "{wday}, {d:02}-{month}-{year:02} {h:02}:{min:02}:{s:02} GMT"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_times_as_nginx() {
        let mut s = String::new();
        cookie_time(USERID_MAX_EXPIRES as i64, &mut s);
        assert_eq!(format!("; expires={s}"), MAX_EXPIRES_TEXT);
        s.clear();
        cookie_time(4_102_444_800, &mut s);
        assert_eq!(s, "Fri, 01-Jan-2100 00:00:00 GMT");
        s.clear();
        cookie_time(1_000_000_000, &mut s);
        assert_eq!(s, "Sun, 09-Sep-01 01:46:40 GMT");
    }

    #[test]
    fn cookies_are_found_by_name() {
        assert_eq!(cookie("a=1; uid=xyz; b=2", "uid"), Some("xyz"));
        assert_eq!(cookie("UID=q", "uid"), Some("q"));
        assert_eq!(cookie("xuid=1", "uid"), None);
    }
}
