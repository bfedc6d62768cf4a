//! The login to the backend the `auth_http` server named (nginx's
//! `ngx_mail_proxy_module` handlers before the splice): IMAP's LOGIN with
//! literals, POP3's USER/PASS, SMTP's HELO/EHLO (after XCLIENT when on)
//! and, for `smtp_auth none`, the client's MAIL and RCPT replayed.
//!
//! Blocking reads with the server's `timeout` (the session has its own
//! thread: see `session.rs`); each reply is a line of at most
//! `proxy_buffer` bytes, as nginx's one buffer holds it.

use std::io::{self, Read, Write};
use std::net::{IpAddr, TcpStream};

use peregrine_conf::mail::MailServer;

/// Why the login failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The backend's reply was not the one expected: the line, passed to
    /// the client under `proxy_pass_error_message on`.
    #[error("upstream sent invalid response: \"{}\"", String::from_utf8_lossy(.0).trim_end())]
    Refused(Vec<u8>),
    /// A reply longer than `proxy_buffer`.
    #[error("upstream sent too long response line")]
    TooLong,
}

/// A logged-in backend: what goes to the client first (the backend's
/// final reply, or nginx's own `235`), and the backend bytes read past it.
pub struct Login {
    pub to_client: Vec<u8>,
}

/// The backend's replies, line by line.
pub struct Backend {
    pub stream: TcpStream,
    buf: Vec<u8>,
    limit: usize,
}

impl Backend {
    pub fn new(stream: TcpStream, limit: usize) -> Backend {
        Backend {
            stream,
            buf: Vec::new(),
            limit,
        }
    }

    /// The bytes read past the last line (the start of what is spliced).
    pub fn leftover(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    fn send(&mut self, v: &[u8]) -> io::Result<()> {
        self.stream.write_all(v)
    }

    /// One reply line, CRLF kept.
    fn line(&mut self) -> Result<Vec<u8>, LoginError> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                return Ok(self.buf.drain(..=i).collect());
            }
            if self.buf.len() >= self.limit {
                return Err(LoginError::TooLong);
            }
            let mut chunk = [0u8; 1024];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "upstream prematurely closed connection",
                )
                .into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// A line that must start with `prefix`.
    fn expect(&mut self, prefix: &[u8]) -> Result<Vec<u8>, LoginError> {
        let l = self.line()?;
        if l.starts_with(prefix) {
            Ok(l)
        } else {
            Err(LoginError::Refused(l))
        }
    }

    /// An SMTP reply (RFC 5321 4.2.1: `NNN-` lines, then `NNN `), which
    /// must be 2xx.
    fn smtp_reply(&mut self) -> Result<Vec<u8>, LoginError> {
        let mut all = Vec::new();
        loop {
            let l = self.line()?;
            all.extend_from_slice(&l);
            if l.get(3) != Some(&b'-') {
                return if l.first() == Some(&b'2') {
                    Ok(all)
                } else {
                    Err(LoginError::Refused(l))
                };
            }
        }
    }

    /// IMAP (`ngx_mail_proxy_imap_handler`): `TAG LOGIN {N}` with the user
    /// and password as literals, so no quoting can be got wrong; the
    /// backend's untagged lines and tagged OK go to the client.
    pub fn imap(&mut self, tag: &[u8], user: &[u8], pass: &[u8]) -> Result<Login, LoginError> {
        self.expect(b"* OK")?;
        let mut cmd = tag.to_vec();
        cmd.extend_from_slice(format!(" LOGIN {{{}}}\r\n", user.len()).as_bytes());
        self.send(&cmd)?;
        self.expect(b"+")?;
        let mut u = user.to_vec();
        u.extend_from_slice(format!(" {{{}}}\r\n", pass.len()).as_bytes());
        self.send(&u)?;
        self.expect(b"+")?;
        let mut p = pass.to_vec();
        p.extend_from_slice(b"\r\n");
        self.send(&p)?;
        let mut tagged = tag.to_vec();
        tagged.push(b' ');
        let mut out = Vec::new();
        loop {
            let l = self.line()?;
            if l.starts_with(b"* ") {
                out.extend_from_slice(&l);
                continue;
            }
            let mut ok = tagged.clone();
            ok.extend_from_slice(b"OK");
            if l.starts_with(&ok) {
                out.extend_from_slice(&l);
                return Ok(Login { to_client: out });
            }
            return Err(LoginError::Refused(l));
        }
    }

    /// POP3 (`ngx_mail_proxy_pop3_handler`): USER, PASS; PASS's `+OK`
    /// goes to the client.
    pub fn pop3(&mut self, user: &[u8], pass: &[u8]) -> Result<Login, LoginError> {
        self.expect(b"+OK")?;
        self.send(&[b"USER ", user, b"\r\n"].concat())?;
        self.expect(b"+OK")?;
        self.send(&[b"PASS ", pass, b"\r\n"].concat())?;
        let l = self.expect(b"+OK")?;
        Ok(Login { to_client: l })
    }

    /// SMTP (`ngx_mail_proxy_smtp_handler`): the greeting, XCLIENT when
    /// on, the client's HELO or EHLO; then for `smtp_auth none` its MAIL
    /// and RCPT, RCPT's reply going to the client whatever it is (the
    /// client goes on talking to the backend); after AUTH nginx's 235.
    pub fn smtp(&mut self, conf: &MailServer, s: &SmtpLogin<'_>) -> Result<Login, LoginError> {
        self.smtp_reply()?;
        let helo = if s.helo.is_empty() {
            conf.server_name.as_bytes()
        } else {
            s.helo
        };
        let verb: &[u8] = if s.esmtp { b"EHLO " } else { b"HELO " };
        if conf.xclient {
            self.send(&[verb, helo, b"\r\n"].concat())?;
            self.smtp_reply()?;
            let mut x = format!("XCLIENT ADDR={}", s.client).into_bytes();
            if !s.user.is_empty() {
                x.extend_from_slice(b" LOGIN=");
                x.extend_from_slice(&xtext(s.user));
            }
            x.extend_from_slice(b" NAME=[UNAVAILABLE]\r\n");
            self.send(&x)?;
            // RFC-less Postfix extension: the reply is a new greeting.
            self.smtp_reply()?;
        }
        self.send(&[verb, helo, b"\r\n"].concat())?;
        self.smtp_reply()?;
        if s.from.is_empty() {
            return Ok(Login {
                to_client: super::smtp::AUTH_OK.to_vec(),
            });
        }
        self.send(&[s.from, b"\r\n"].concat())?;
        self.smtp_reply()?;
        self.send(&[s.to, b"\r\n"].concat())?;
        let mut reply = Vec::new();
        loop {
            let l = self.line()?;
            reply.extend_from_slice(&l);
            if l.get(3) != Some(&b'-') {
                return Ok(Login { to_client: reply });
            }
        }
    }
}

/// What the SMTP login needs of the client's session.
pub struct SmtpLogin<'a> {
    pub helo: &'a [u8],
    pub esmtp: bool,
    pub user: &'a [u8],
    pub from: &'a [u8],
    pub to: &'a [u8],
    pub client: IpAddr,
}

/// XCLIENT's xtext (RFC 3461 4): `+XX` for `+`, `=`, and bytes outside
/// `!`..`~`.
fn xtext(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len());
    for &b in v {
        if b == b'+' || b == b'=' || !(b'!'..=b'~').contains(&b) {
            out.extend_from_slice(format!("+{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}
