//! nginx's `auth_http` exchange (`ngx_mail_auth_http_module`): the
//! client's credentials go to an HTTP server as request headers
//! (`Auth-Method`, `Auth-User`, `Auth-Pass`, `Auth-Protocol`, `Client-IP`,
//! ...), and its answer's headers say whether they are good and which
//! backend to log in to (`Auth-Status`, `Auth-Server`, `Auth-Port`), or
//! what to tell the client and how long to make it wait (`Auth-Wait`).
//!
//! Hand-written and sans-I/O: the request is a few fixed header lines and
//! the answer's head is all that is read (its body is ignored, as nginx
//! ignores it), so an HTTP client library would add nothing but weight.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use peregrine_conf::mail::MailServer;

/// The largest answer head read (nginx reads it into one 1024-byte
/// buffer; a head that does not fit is an invalid answer).
pub const MAX_HEAD: usize = 1024;

/// What was asked: one login attempt.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    pub method: &'a str,
    pub user: &'a [u8],
    pub pass: &'a [u8],
    /// The POP3 APOP or CRAM-MD5 challenge (`Auth-Salt`).
    pub salt: Option<&'a str>,
    pub attempt: u32,
    pub client: Option<IpAddr>,
    /// SMTP: the client's HELO, MAIL FROM and RCPT TO lines.
    pub helo: &'a [u8],
    pub from: &'a [u8],
    pub to: &'a [u8],
    /// TLS is in use on the client's side (`Auth-SSL: on`).
    pub ssl: bool,
}

/// The request's bytes (`ngx_mail_auth_http_create_request`).
pub fn request(conf: &MailServer, r: &Request<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let a = &conf.auth_http;
    out.extend_from_slice(format!("GET {} HTTP/1.0\r\nHost: {}\r\n", a.uri, a.host).as_bytes());
    let mut header = |name: &str, value: &[u8]| {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    };
    header("Auth-Method", r.method.as_bytes());
    header("Auth-User", &escape(r.user));
    header("Auth-Pass", &escape(r.pass));
    if let Some(salt) = r.salt {
        header("Auth-Salt", salt.as_bytes());
    }
    header("Auth-Protocol", conf.protocol.name().as_bytes());
    header("Auth-Login-Attempt", r.attempt.to_string().as_bytes());
    if let Some(ip) = r.client {
        header("Client-IP", ip.to_string().as_bytes());
    }
    if conf.protocol == peregrine_conf::mail::MailProtocol::Smtp {
        // No resolver: nginx's `smtp_unavailable`.
        header("Client-Host", b"[UNAVAILABLE]");
        header("Auth-SMTP-Helo", &escape(r.helo));
        header("Auth-SMTP-From", &escape(r.from));
        header("Auth-SMTP-To", &escape(r.to));
    }
    if r.ssl {
        header("Auth-SSL", b"on");
    }
    for (name, value) in &conf.auth_http_headers {
        header(name, value.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// nginx's `ngx_escape_uri(..., NGX_ESCAPE_MAIL_AUTH)`: space, `%` and
/// the bytes that cannot be in a header value are `%XX`.
fn escape(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len());
    for &b in v {
        if b <= b' ' || b == b'%' || b >= 0x7f {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}

/// What the server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `Auth-Status: OK`: log in to `server` as `user` with `pass`
    /// (the client's unless the answer gave others).
    Ok {
        server: SocketAddr,
        user: Option<Vec<u8>>,
        pass: Option<Vec<u8>>,
    },
    /// Anything else: the message for the client, nginx's `Auth-Wait`
    /// (`None`: the session ends after the message) and SMTP's
    /// `Auth-Error-Code`.
    Refused {
        message: String,
        wait: Option<Duration>,
        error_code: Option<String>,
    },
    /// An answer that cannot be used (logged as nginx logs it; the client
    /// gets the protocol's internal error).
    Invalid(String),
}

/// Where the head of the answer ends (after its empty line), if it is
/// all there.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
        .or_else(|| buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2))
}

/// Reads the answer's head (`ngx_mail_auth_http_process_headers`).
pub fn answer(head: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split('\n').map(|l| l.trim_end_matches('\r'));
    let status = lines.next().unwrap_or_default();
    if !status.starts_with("HTTP/") {
        return Answer::Invalid("auth http server sent invalid response".into());
    }
    let (mut st, mut server, mut port, mut user, mut pass) = (None, None, None, None, None);
    let (mut wait, mut code) = (None, None);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "auth-status" => st = Some(value.to_string()),
            "auth-server" => server = Some(value.to_string()),
            "auth-port" => port = Some(value.to_string()),
            "auth-user" if !value.is_empty() => user = Some(unescape(value)),
            "auth-pass" if !value.is_empty() => pass = Some(unescape(value)),
            "auth-wait" => wait = value.parse::<u64>().ok().map(Duration::from_secs),
            "auth-error-code" if !value.is_empty() => code = Some(value.to_string()),
            _ => {}
        }
    }
    let Some(st) = st else {
        return Answer::Invalid("auth http server sent no \"Auth-Status\" header".into());
    };
    if st != "OK" {
        return Answer::Refused {
            message: st,
            wait,
            error_code: code,
        };
    }
    let (Some(server), Some(port)) = (server, port) else {
        return Answer::Invalid("auth http server did not send server or port".into());
    };
    let Some(port) = port.parse::<u16>().ok().filter(|&p| p != 0) else {
        return Answer::Invalid(format!(
            "auth http server sent invalid server port:\"{port}\""
        ));
    };
    let Ok(ip) = server.parse::<IpAddr>() else {
        return Answer::Invalid(format!(
            "auth http server sent invalid server address:\"{server}\""
        ));
    };
    Answer::Ok {
        server: SocketAddr::new(ip, port),
        user,
        pass,
    }
}

/// `%XX` of the answer's `Auth-User` and `Auth-Pass` (nginx unescapes
/// them, `ngx_unescape_uri`).
fn unescape(v: &str) -> Vec<u8> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_a_header_cannot_carry() {
        assert_eq!(escape(b"a b%c\"\\\x01"), b"a%20b%25c\"\\%01".to_vec());
    }

    #[test]
    fn ok_names_the_backend() {
        let a = answer(
            b"HTTP/1.0 204 No Content\r\nAuth-Status: OK\r\nAuth-Server: 127.0.0.1\r\nAuth-Port: 8144\r\nAuth-Pass: \r\nAuth-User: u%40x\r\n\r\n",
        );
        assert_eq!(
            a,
            Answer::Ok {
                server: "127.0.0.1:8144".parse().unwrap(),
                user: Some(b"u@x".to_vec()),
                pass: None,
            }
        );
    }

    #[test]
    fn refusals_keep_message_and_wait() {
        let a = answer(b"HTTP/1.1 200 OK\r\nAuth-Status: Invalid login\r\nAuth-Wait: 1\r\n\r\n");
        assert_eq!(
            a,
            Answer::Refused {
                message: "Invalid login".into(),
                wait: Some(Duration::from_secs(1)),
                error_code: None,
            }
        );
        assert!(matches!(answer(b"junk\r\n\r\n"), Answer::Invalid(_)));
        assert!(matches!(
            answer(b"HTTP/1.0 200 OK\r\nAuth-Status: OK\r\n\r\n"),
            Answer::Invalid(_)
        ));
    }

    #[test]
    fn the_head_ends_at_its_empty_line() {
        assert_eq!(head_end(b"HTTP/1.0 200 OK\r\nA: b\r\n\r\nbody"), Some(25));
        assert_eq!(head_end(b"HTTP/1.0 200 OK\r\nA: b\r\n"), None);
    }
}
