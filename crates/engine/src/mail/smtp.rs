//! SMTP before the backend is chosen (nginx's `ngx_mail_smtp_handler.c`):
//! the greeting, HELO/EHLO, AUTH, STARTTLS, RSET, NOOP, QUIT, and with
//! `smtp_auth none` MAIL and RCPT, whose RCPT asks `auth_http` for a
//! backend (its `Auth-SMTP-From`/`-To` name the envelope). Sans-I/O:
//! lines in, [`Step`]s out.

use peregrine_conf::mail::{MailServer, Starttls, auth};

use super::sasl::{self, Creds, Method, Sasl, Sasl2, Step, words};

/// nginx's `smtp_internal_server_error`.
pub const INTERNAL_ERROR: &[u8] = b"451 4.3.2 Internal server error\r\n";
/// The answer to a successful AUTH, once the backend has taken the login.
pub const AUTH_OK: &[u8] = b"235 2.0.0 OK\r\n";
const OK: &[u8] = b"250 2.0.0 OK\r\n";
const INVALID: &[u8] = b"500 5.5.1 Invalid command\r\n";
const INVALID_ARGUMENT: &[u8] = b"501 5.5.4 Invalid argument\r\n";

/// The client's session before its login.
#[derive(Debug)]
pub struct Smtp {
    methods: u8,
    starttls: Starttls,
    capabilities: Vec<String>,
    server_name: String,
    salt: String,
    sasl: Option<Sasl>,
    pub tls: bool,
    /// HELO/EHLO's argument, and whether it was EHLO.
    pub helo: Vec<u8>,
    pub esmtp: bool,
    /// With `smtp_auth none`: the MAIL and RCPT lines, replayed to the
    /// backend.
    pub from: Vec<u8>,
    pub to: Vec<u8>,
}

impl Smtp {
    pub fn new(conf: &MailServer, salt: String, tls: bool) -> Smtp {
        Smtp {
            methods: conf.auth_methods,
            starttls: conf.starttls,
            capabilities: conf.capabilities.clone(),
            server_name: conf.server_name.clone(),
            salt,
            sasl: None,
            tls,
            helo: Vec::new(),
            esmtp: false,
            from: Vec::new(),
            to: Vec::new(),
        }
    }

    /// `220 NAME ESMTP ready`.
    pub fn greeting(&self) -> Vec<u8> {
        format!("220 {} ESMTP ready\r\n", self.server_name).into_bytes()
    }

    /// EHLO's answer (`ngx_mail_smtp_merge_conf`): the name, the
    /// capabilities, the AUTH methods, STARTTLS; the last line's `-` a space.
    pub fn ehlo(&self) -> Vec<u8> {
        let mut lines = vec![self.server_name.clone()];
        lines.extend(self.capabilities.iter().cloned());
        let names = [
            (auth::PLAIN, "PLAIN"),
            (auth::LOGIN, "LOGIN"),
            (auth::CRAM_MD5, "CRAM-MD5"),
            (auth::EXTERNAL, "EXTERNAL"),
        ];
        let methods: Vec<&str> = names
            .iter()
            .filter(|(b, _)| self.methods & b != 0)
            .map(|(_, n)| *n)
            .collect();
        if !methods.is_empty() && (self.tls || self.starttls != Starttls::Only) {
            lines.push(format!("AUTH {}", methods.join(" ")));
        }
        if !self.tls && self.starttls != Starttls::Off {
            lines.push("STARTTLS".into());
        }
        let mut out = String::new();
        for (i, l) in lines.iter().enumerate() {
            let sep = if i + 1 == lines.len() { ' ' } else { '-' };
            out.push_str(&format!("250{sep}{l}\r\n"));
        }
        out.into_bytes()
    }

    /// The refusal of the `auth_http` server (its `Auth-Error-Code`, else
    /// nginx's `535 5.7.0`).
    pub fn refused(&self, message: &str, code: Option<&str>) -> Vec<u8> {
        format!("{} {message}\r\n", code.unwrap_or("535 5.7.0")).into_bytes()
    }

    /// One command line.
    pub fn line(&mut self, line: &[u8]) -> Step {
        if let Some(s) = self.sasl.take() {
            if line == b"*" {
                return Step::Error(b"501 5.0.0 Authentication cancelled\r\n".to_vec());
            }
            return self.sasl_result(sasl::step(s, line));
        }
        let w = words(line);
        let Some(name) = w.first() else {
            return Step::Error(INVALID.to_vec());
        };
        let args = &w[1..];
        let allowed = self.tls || self.starttls != Starttls::Only;
        match name.to_ascii_uppercase().as_slice() {
            cmd @ (b"HELO" | b"EHLO") => {
                if args.len() != 1 {
                    return Step::Error(b"501 5.0.0 HELO requires domain address\r\n".to_vec());
                }
                self.helo = args[0].to_vec();
                self.esmtp = cmd == b"EHLO";
                self.from.clear();
                self.to.clear();
                if self.esmtp {
                    Step::Reply(self.ehlo())
                } else {
                    Step::Reply(format!("250 {}\r\n", self.server_name).into_bytes())
                }
            }
            b"AUTH" if !allowed => {
                Step::Error(b"530 5.7.0 Must issue a STARTTLS command first\r\n".to_vec())
            }
            b"AUTH" if (1..=2).contains(&args.len()) => {
                let r = sasl::start(args[0], args.get(1).copied(), self.methods, &self.salt);
                self.sasl_result(r)
            }
            b"AUTH" => Step::Error(INVALID_ARGUMENT.to_vec()),
            b"MAIL" if self.methods & auth::NONE == 0 || !allowed => {
                Step::Error(b"530 5.7.0 Authentication required\r\n".to_vec())
            }
            b"MAIL" if args.is_empty() => Step::Error(INVALID_ARGUMENT.to_vec()),
            b"MAIL" => {
                self.from = line.to_vec();
                Step::Reply(b"250 2.1.0 OK\r\n".to_vec())
            }
            b"RCPT" if self.from.is_empty() => {
                Step::Error(b"503 5.5.1 Bad sequence of commands\r\n".to_vec())
            }
            b"RCPT" if args.is_empty() => Step::Error(INVALID_ARGUMENT.to_vec()),
            b"RCPT" => {
                self.to = line.to_vec();
                Step::Auth(Creds {
                    method: Method::None,
                    user: Vec::new(),
                    pass: Vec::new(),
                })
            }
            b"RSET" => {
                self.from.clear();
                self.to.clear();
                Step::Reply(OK.to_vec())
            }
            b"NOOP" => Step::Reply(OK.to_vec()),
            b"QUIT" => Step::Close(b"221 2.0.0 Bye\r\n".to_vec()),
            b"STARTTLS" if !self.tls && self.starttls != Starttls::Off => {
                Step::StartTls(b"220 2.0.0 Start TLS\r\n".to_vec())
            }
            _ => Step::Error(INVALID.to_vec()),
        }
    }

    fn sasl_result(&mut self, r: Sasl2) -> Step {
        match r {
            Sasl2::Challenge(s, c) => {
                self.sasl = Some(s);
                Step::Reply(format!("334 {c}\r\n").into_bytes())
            }
            Sasl2::Done(creds) => Step::Auth(creds),
            Sasl2::Invalid => Step::Error(b"501 5.5.2 Invalid argument\r\n".to_vec()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(auth: &str) -> MailServer {
        let text = format!(
            "events {{}} mail {{ auth_http 127.0.0.1:1/a; server_name mx; server {{ listen 127.0.0.1:1025; protocol smtp; smtp_auth {auth}; smtp_capabilities SIZE PIPELINING; }} }}"
        );
        let c = peregrine_conf::parse_str(&text, "nginx.conf").expect("parses");
        (*c.mail.as_ref().unwrap().servers[0]).clone()
    }

    #[test]
    fn ehlo_lists_capabilities_and_methods() {
        let mut s = Smtp::new(&conf("login plain"), String::new(), false);
        assert_eq!(s.greeting(), b"220 mx ESMTP ready\r\n".to_vec());
        assert_eq!(
            s.line(b"EHLO example.com"),
            Step::Reply(
                b"250-mx\r\n250-SIZE\r\n250-PIPELINING\r\n250 AUTH PLAIN LOGIN\r\n".to_vec()
            )
        );
        assert!(matches!(s.line(b"MAIL FROM:<a@b>"), Step::Error(b) if b.starts_with(b"530")));
    }

    #[test]
    fn auth_none_asks_at_rcpt() {
        let mut s = Smtp::new(&conf("none"), String::new(), false);
        assert!(matches!(s.line(b"RCPT TO:<a@b>"), Step::Error(b) if b.starts_with(b"503")));
        assert!(matches!(s.line(b"MAIL FROM:<a@b>"), Step::Reply(_)));
        assert!(matches!(s.line(b"RCPT TO:<c@d>"), Step::Auth(c) if c.method == Method::None));
        assert_eq!(s.to, b"RCPT TO:<c@d>".to_vec());
    }
}
