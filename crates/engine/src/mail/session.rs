//! One mail session from accept to close, on its own thread with blocking
//! sockets: the greeting, the commands before the login (the protocol's
//! state machine in `imap.rs`, `pop3.rs`, `smtp.rs` over the parsers of
//! `parse.rs`), STARTTLS, the `auth_http` request, the backend's login
//! (`backend.rs`), then the splice (`splice.rs`).
//!
//! A thread per session rather than the worker's event loop: a mail
//! session spends its life spliced and is rare next to HTTP requests, and
//! its login is a strict sequence of exchanges (client, auth server,
//! backend, with `Auth-Wait` sleeps between) that blocking reads with the
//! protocol's timeouts state directly.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use peregrine_conf::mail::{MailProtocol, MailServer};
use peregrine_conf::model::LogLevel;
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use super::auth_http::{self, Answer};
use super::backend::{Backend, LoginError, SmtpLogin};
use super::parse::{Imap as ImapParser, ImapEvent, LineEvent, Lines};
use super::sasl::{Creds, Method, Step};
use super::splice::{self, End, Side};
use super::{imap, pop3, smtp};
use crate::ErrorLog;

/// The client's connection before the splice.
enum Io {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ServerConnection, TcpStream>>),
}

impl Read for Io {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Io::Plain(s) => s.read(buf),
            Io::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Io {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Io::Plain(s) => s.write(buf),
            Io::Tls(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Io::Plain(s) => s.flush(),
            Io::Tls(t) => t.flush(),
        }
    }
}

/// The protocol's state machine and its parser.
enum Proto {
    Imap(imap::Imap, ImapParser),
    Pop3(pop3::Pop3, Lines),
    Smtp(smtp::Smtp, Lines),
}

/// What one session needs.
pub struct Session {
    pub conf: Arc<MailServer>,
    pub tls: Option<Arc<ServerConfig>>,
    pub peer: SocketAddr,
    pub id: u64,
    pub errlog: ErrorLog,
    /// The POP3/CRAM-MD5 challenge (`<PID.TIME@NAME>`, nginx's `ngx_mail_salt`).
    pub salt: String,
}

/// Reading the client stopped.
enum Stop {
    /// Closed, timed out or failed: the session ends without a word.
    Gone,
    /// "client sent too long command": ends.
    TooLong,
}

impl Session {
    fn log(&self, level: LogLevel, m: &str) {
        (self.errlog)(
            level,
            &format!("*{} {m}, client: {}", self.id, self.peer.ip()),
        );
    }

    /// Runs the session on `stream` (TLS from the first byte when
    /// `ssl`), until it closes.
    pub fn run(self, stream: TcpStream, ssl: bool) {
        let _ = stream.set_read_timeout(Some(self.conf.timeout));
        let _ = stream.set_write_timeout(Some(self.conf.timeout));
        let mut io = Io::Plain(stream);
        if ssl {
            match self.start_tls(io) {
                Some(t) => io = t,
                None => return,
            }
        }
        let limit = self.conf.client_buffer;
        let mut proto = match self.conf.protocol {
            MailProtocol::Imap => Proto::Imap(
                imap::Imap::new(&self.conf, self.salt.clone(), ssl),
                ImapParser::new(limit),
            ),
            MailProtocol::Pop3 => Proto::Pop3(
                pop3::Pop3::new(&self.conf, self.salt.clone(), ssl),
                Lines::new(limit),
            ),
            MailProtocol::Smtp => Proto::Smtp(
                smtp::Smtp::new(&self.conf, self.salt.clone(), ssl),
                Lines::new(limit),
            ),
        };
        let greeting = match &proto {
            Proto::Imap(..) => imap::GREETING.to_vec(),
            Proto::Pop3(p, _) => p.greeting(),
            Proto::Smtp(s, _) => {
                if !self.conf.greeting_delay.is_zero() {
                    std::thread::sleep(self.conf.greeting_delay);
                }
                s.greeting()
            }
        };
        if io.write_all(&greeting).is_err() {
            return;
        }
        self.commands(io, &mut proto);
    }

    /// The commands before the login.
    fn commands(&self, mut io: Io, proto: &mut Proto) {
        let mut buf: Vec<u8> = Vec::new();
        let mut errors = 0u32;
        let mut attempt = 0u32;
        loop {
            let step = match self.next_step(&mut io, &mut buf, proto) {
                Ok(s) => s,
                Err(Stop::Gone) => return,
                Err(Stop::TooLong) => {
                    self.log(LogLevel::Info, "client sent too long command");
                    return;
                }
            };
            let out = match step {
                Step::Reply(b) => b,
                Step::Error(b) => {
                    errors += 1;
                    if errors > self.conf.max_errors {
                        self.log(LogLevel::Info, "client sent too many invalid commands");
                        return;
                    }
                    b
                }
                Step::Close(b) => {
                    let _ = io.write_all(&b);
                    return;
                }
                Step::StartTls(b) => {
                    if io.write_all(&b).is_err() {
                        return;
                    }
                    // What the client sent after STARTTLS was sent in the
                    // clear: dropped, as nginx drops it (CVE-2011-0411).
                    buf.clear();
                    match self.start_tls(io) {
                        Some(t) => io = t,
                        None => return,
                    }
                    set_tls(proto);
                    continue;
                }
                Step::Auth(creds) => {
                    attempt += 1;
                    match self.authenticate(io, proto, &creds, attempt, &mut buf) {
                        Some(back) => {
                            io = back;
                            continue;
                        }
                        None => return,
                    }
                }
            };
            if io.write_all(&out).is_err() {
                return;
            }
        }
    }

    /// Parses the buffered bytes, reading more until a command is whole.
    fn next_step(&self, io: &mut Io, buf: &mut Vec<u8>, proto: &mut Proto) -> Result<Step, Stop> {
        loop {
            while !buf.is_empty() {
                let (used, step) = match proto {
                    Proto::Imap(st, _) if st.in_sasl() => {
                        let mut lines = Lines::new(self.conf.client_buffer);
                        let (used, ev) = lines.parse(buf);
                        match ev {
                            Some(LineEvent::Line(l)) => (used, Some(Ok(st.sasl_line(&l)))),
                            Some(LineEvent::TooLong) => (used, Some(Err(Stop::TooLong))),
                            // An unfinished line: wait for the rest.
                            None => (0, None),
                        }
                    }
                    Proto::Imap(st, p) => {
                        let (used, ev) = p.parse(buf);
                        let step = ev.map(|ev| match ev {
                            ImapEvent::Command { tag, name, args } => {
                                Ok(st.command(tag, &name, args))
                            }
                            ImapEvent::Continue => Ok(Step::Reply(b"+ OK\r\n".to_vec())),
                            ImapEvent::Invalid { tag } => Ok(st.invalid(tag)),
                            ImapEvent::TooLong => Err(Stop::TooLong),
                        });
                        (used, step)
                    }
                    Proto::Pop3(st, p) => line_step(p, buf, |l| st.line(l)),
                    Proto::Smtp(st, p) => line_step(p, buf, |l| st.line(l)),
                };
                if used == 0 {
                    break;
                }
                buf.drain(..used);
                if let Some(step) = step {
                    return step;
                }
            }
            let mut chunk = [0u8; 4096];
            match io.read(&mut chunk) {
                Ok(0) | Err(_) => return Err(Stop::Gone),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// STARTTLS or `listen ... ssl`: the handshake, blocking.
    fn start_tls(&self, io: Io) -> Option<Io> {
        let (Io::Plain(sock), Some(config)) = (io, self.tls.clone()) else {
            return None;
        };
        let conn = ServerConnection::new(config).ok()?;
        let mut t = StreamOwned::new(conn, sock);
        while t.conn.is_handshaking() {
            if let Err(e) = t.conn.complete_io(&mut t.sock) {
                self.log(LogLevel::Info, &format!("SSL handshake failed ({e})"));
                return None;
            }
        }
        Some(Io::Tls(Box::new(t)))
    }

    /// One login attempt: `auth_http`, then the backend. The connection
    /// back when the client may go on (a refusal with `Auth-Wait`); the
    /// session ends otherwise (spliced and done, or failed).
    fn authenticate(
        &self,
        mut io: Io,
        proto: &mut Proto,
        creds: &Creds,
        attempt: u32,
        buf: &mut Vec<u8>,
    ) -> Option<Io> {
        let answer = self.ask(proto, creds, attempt, matches!(io, Io::Tls(_)));
        let internal = internal_error(proto);
        match answer {
            Err(m) => {
                self.log(LogLevel::Error, &m);
                let _ = io.write_all(internal);
                None
            }
            Ok(Answer::Invalid(m)) => {
                self.log(LogLevel::Error, &m);
                let _ = io.write_all(internal);
                None
            }
            Ok(Answer::Refused {
                message,
                wait,
                error_code,
            }) => {
                self.log(
                    LogLevel::Info,
                    &format!("client login failed: \"{message}\""),
                );
                let out = match proto {
                    Proto::Imap(s, _) => s.refused(&message),
                    Proto::Pop3(s, _) => s.refused(&message),
                    Proto::Smtp(s, _) => s.refused(&message, error_code.as_deref()),
                };
                if let Some(w) = wait {
                    std::thread::sleep(w);
                }
                let _ = io.write_all(&out);
                wait.map(|_| io)
            }
            Ok(Answer::Ok { server, user, pass }) => {
                let user = user.unwrap_or_else(|| creds.user.clone());
                let pass = match pass {
                    Some(p) => p,
                    // The backend needs the password (SMTP's login
                    // does not: nginx's check skips it).
                    None if matches!(creds.method, Method::Apop | Method::CramMd5)
                        && !matches!(proto, Proto::Smtp(..)) =>
                    {
                        self.log(LogLevel::Error, "auth http server did not send password");
                        let _ = io.write_all(internal);
                        return None;
                    }
                    None => creds.pass.clone(),
                };
                let up = std::mem::take(buf);
                self.proxy(io, proto, server, &user, &pass, up);
                None
            }
        }
    }

    /// Asks the `auth_http` server.
    fn ask(&self, proto: &Proto, creds: &Creds, attempt: u32, ssl: bool) -> Result<Answer, String> {
        let salt =
            matches!(creds.method, Method::Apop | Method::CramMd5).then_some(self.salt.as_str());
        let mut r = auth_http::Request {
            method: creds.method.name(),
            user: &creds.user,
            pass: &creds.pass,
            salt,
            attempt,
            client: Some(self.peer.ip()),
            ssl,
            ..Default::default()
        };
        if let Proto::Smtp(s, _) = proto {
            r.helo = &s.helo;
            r.from = &s.from;
            r.to = &s.to;
        }
        let req = auth_http::request(&self.conf, &r);
        let timeout = self.conf.auth_http_timeout;
        let a = &self.conf.auth_http;
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("auth http server {} {what} ({e})", a.addrs[0])
        };
        let mut s = a
            .addrs
            .iter()
            .find_map(|addr| TcpStream::connect_timeout(addr, timeout).ok())
            .ok_or_else(|| fail("connect() failed", &"unreachable"))?;
        let _ = s.set_read_timeout(Some(timeout));
        let _ = s.set_write_timeout(Some(timeout));
        s.write_all(&req).map_err(|e| fail("send() failed", &e))?;
        let mut head = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            if let Some(end) = auth_http::head_end(&head) {
                return Ok(auth_http::answer(&head[..end]));
            }
            if head.len() >= auth_http::MAX_HEAD {
                return Ok(Answer::Invalid(
                    "auth http server sent too long response".into(),
                ));
            }
            match s.read(&mut chunk) {
                Ok(0) => return Ok(auth_http::answer(&head)),
                Ok(n) => head.extend_from_slice(&chunk[..n]),
                Err(e) => return Err(fail("read failed", &e)),
            }
        }
    }

    /// Logs in to `server` and splices the session.
    fn proxy(
        &self,
        mut io: Io,
        proto: &Proto,
        server: SocketAddr,
        user: &[u8],
        pass: &[u8],
        up: Vec<u8>,
    ) {
        let conf = &self.conf;
        let stream = match TcpStream::connect_timeout(&server, conf.timeout) {
            Ok(s) => s,
            Err(e) => {
                self.log(
                    LogLevel::Error,
                    &format!("connect() to {server} failed ({e}) while connecting to upstream"),
                );
                let _ = io.write_all(internal_error(proto));
                return;
            }
        };
        let _ = stream.set_read_timeout(Some(conf.timeout));
        let _ = stream.set_write_timeout(Some(conf.timeout));
        let mut b = Backend::new(stream, conf.proxy_buffer);
        let login = match proto {
            Proto::Imap(s, _) => b.imap(&s.tag, user, pass),
            Proto::Pop3(..) => b.pop3(user, pass),
            Proto::Smtp(s, _) => b.smtp(
                conf,
                &SmtpLogin {
                    helo: &s.helo,
                    esmtp: s.esmtp,
                    user,
                    from: &s.from,
                    to: &s.to,
                    client: self.peer.ip(),
                },
            ),
        };
        let login = match login {
            Ok(l) => l,
            Err(e) => {
                self.log(
                    LogLevel::Error,
                    &format!("{e} while reading response from upstream"),
                );
                let out = match e {
                    LoginError::Refused(line) if conf.pass_error_message => line,
                    _ => internal_error(proto).to_vec(),
                };
                let _ = io.write_all(&out);
                return;
            }
        };
        let mut down = login.to_client;
        down.extend(b.leftover());
        let client = match to_side(io) {
            Ok(c) => c,
            Err(_) => return,
        };
        let backend = match nonblocking(b.stream) {
            Ok(s) => Side::Plain(s),
            Err(_) => return,
        };
        match splice::splice(
            client,
            backend,
            up,
            down,
            conf.proxy_buffer,
            conf.proxy_timeout,
        ) {
            End::Closed => {}
            End::TimedOut => self.log(LogLevel::Info, "upstream timed out while proxying"),
            End::Error(e) => self.log(LogLevel::Info, &format!("proxying failed ({e})")),
        }
    }
}

/// Feeds a line parser; the step of the line it completes.
fn line_step(
    p: &mut Lines,
    buf: &[u8],
    mut f: impl FnMut(&[u8]) -> Step,
) -> (usize, Option<Result<Step, Stop>>) {
    let (used, ev) = p.parse(buf);
    let step = ev.map(|ev| match ev {
        LineEvent::Line(l) => Ok(f(&l)),
        LineEvent::TooLong => Err(Stop::TooLong),
    });
    (used, step)
}

fn set_tls(proto: &mut Proto) {
    match proto {
        Proto::Imap(s, _) => s.tls = true,
        Proto::Pop3(s, _) => s.tls = true,
        Proto::Smtp(s, _) => s.tls = true,
    }
}

fn internal_error(proto: &Proto) -> &'static [u8] {
    match proto {
        Proto::Imap(..) => imap::INTERNAL_ERROR,
        Proto::Pop3(..) => pop3::INTERNAL_ERROR,
        Proto::Smtp(..) => smtp::INTERNAL_ERROR,
    }
}

fn nonblocking(s: TcpStream) -> io::Result<mio::net::TcpStream> {
    s.set_nonblocking(true)?;
    Ok(mio::net::TcpStream::from_std(s))
}

fn to_side(io: Io) -> io::Result<Side> {
    Ok(match io {
        Io::Plain(s) => Side::Plain(nonblocking(s)?),
        Io::Tls(t) => {
            let StreamOwned { conn, sock } = *t;
            Side::Tls(Box::new(conn), nonblocking(sock)?)
        }
    })
}
