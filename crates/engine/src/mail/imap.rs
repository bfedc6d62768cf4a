//! IMAP before the login (nginx's `ngx_mail_imap_handler.c`): the
//! greeting, CAPABILITY, NOOP, LOGOUT, STARTTLS, LOGIN and AUTHENTICATE;
//! every other command is `BAD` until the client has logged in, since
//! nginx answers only these itself and proxies the rest once a backend is
//! chosen. Sans-I/O: commands in ([`super::parse::Imap`]), [`Step`]s out.

use peregrine_conf::mail::{MailServer, Starttls, auth};

use super::sasl::{self, Creds, Method, Sasl, Sasl2, Step};

/// nginx's `imap_greeting`.
pub const GREETING: &[u8] = b"* OK IMAP4 ready\r\n";
/// nginx's `imap_internal_server_error`.
pub const INTERNAL_ERROR: &[u8] = b"* BAD internal server error\r\n";

/// The client's session before its login.
#[derive(Debug)]
pub struct Imap {
    methods: u8,
    starttls: Starttls,
    capabilities: Vec<String>,
    /// The CRAM-MD5 challenge.
    salt: String,
    /// The tag of the command being answered (the backend's login reply
    /// carries it back to the client).
    pub tag: Vec<u8>,
    sasl: Option<Sasl>,
    /// TLS is on (after STARTTLS, or from the first byte).
    pub tls: bool,
}

impl Imap {
    pub fn new(conf: &MailServer, salt: String, tls: bool) -> Imap {
        Imap {
            methods: conf.auth_methods,
            starttls: conf.starttls,
            capabilities: conf.capabilities.clone(),
            salt,
            tag: Vec::new(),
            sasl: None,
            tls,
        }
    }

    /// Whether the next line is a SASL response rather than a command.
    pub fn in_sasl(&self) -> bool {
        self.sasl.is_some()
    }

    /// `* CAPABILITY ...` (`ngx_mail_imap_merge_conf`): the configured
    /// capabilities, the AUTH= methods, then STARTTLS (no methods while
    /// `starttls only` waits for TLS: STARTTLS LOGINDISABLED instead).
    pub fn capability(&self) -> String {
        let mut line = String::from("* CAPABILITY");
        for c in &self.capabilities {
            line.push(' ');
            line.push_str(c);
        }
        let tls_wanted = !self.tls && self.starttls != Starttls::Off;
        if !self.tls && self.starttls == Starttls::Only {
            line.push_str(" STARTTLS LOGINDISABLED");
        } else {
            let names = [
                (auth::PLAIN, " AUTH=PLAIN"),
                (auth::LOGIN, " AUTH=LOGIN"),
                (auth::CRAM_MD5, " AUTH=CRAM-MD5"),
                (auth::EXTERNAL, " AUTH=EXTERNAL"),
            ];
            for (bit, name) in names {
                if self.methods & bit != 0 {
                    line.push_str(name);
                }
            }
            if tls_wanted {
                line.push_str(" STARTTLS");
            }
        }
        line.push_str("\r\n");
        line
    }

    fn tagged(&self, text: &str) -> Vec<u8> {
        let mut out = if self.tag.is_empty() {
            b"*".to_vec()
        } else {
            self.tag.clone()
        };
        out.push(b' ');
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(b"\r\n");
        out
    }

    /// `TAG BAD invalid command` (the step counts toward `max_errors`).
    pub fn invalid(&mut self, tag: Vec<u8>) -> Step {
        self.tag = tag;
        self.sasl = None;
        Step::Error(self.tagged("BAD invalid command"))
    }

    /// The refusal of the `auth_http` server (`TAG NO MESSAGE`).
    pub fn refused(&self, message: &str) -> Vec<u8> {
        self.tagged(&format!("NO {message}"))
    }

    /// One command.
    pub fn command(&mut self, tag: Vec<u8>, name: &[u8], args: Vec<Vec<u8>>) -> Step {
        self.tag = tag;
        let login_allowed = self.tls || self.starttls != Starttls::Only;
        match name {
            b"CAPABILITY" if args.is_empty() => {
                let mut out = self.capability().into_bytes();
                out.extend(self.tagged("OK completed"));
                Step::Reply(out)
            }
            b"NOOP" if args.is_empty() => Step::Reply(self.tagged("OK completed")),
            b"LOGOUT" if args.is_empty() => {
                let mut out = b"* BYE\r\n".to_vec();
                out.extend(self.tagged("OK completed"));
                Step::Close(out)
            }
            b"STARTTLS" if args.is_empty() && !self.tls && self.starttls != Starttls::Off => {
                Step::StartTls(self.tagged("OK begin TLS negotiation"))
            }
            b"LOGIN" if args.len() == 2 && login_allowed => {
                let mut args = args.into_iter();
                let user = args.next().unwrap_or_default();
                let pass = args.next().unwrap_or_default();
                Step::Auth(Creds {
                    method: Method::Plain,
                    user,
                    pass,
                })
            }
            b"AUTHENTICATE" if (1..=2).contains(&args.len()) && login_allowed => {
                let r = sasl::start(
                    &args[0],
                    args.get(1).map(Vec::as_slice),
                    self.methods,
                    &self.salt,
                );
                self.sasl_result(r)
            }
            _ => self.invalid(self.tag.clone()),
        }
    }

    /// A line of a SASL exchange.
    pub fn sasl_line(&mut self, line: &[u8]) -> Step {
        let Some(s) = self.sasl.take() else {
            return self.invalid(self.tag.clone());
        };
        // RFC 9051 6.2.2: "*" cancels the exchange.
        if line == b"*" {
            return Step::Error(self.tagged("BAD AUTHENTICATE cancelled"));
        }
        let r = sasl::step(s, line);
        self.sasl_result(r)
    }

    fn sasl_result(&mut self, r: Sasl2) -> Step {
        match r {
            Sasl2::Challenge(s, c) => {
                self.sasl = Some(s);
                Step::Reply(format!("+ {c}\r\n").into_bytes())
            }
            Sasl2::Done(creds) => Step::Auth(creds),
            Sasl2::Invalid => self.invalid(self.tag.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf() -> MailServer {
        let text = "events {} mail { auth_http 127.0.0.1:1/a; server { listen 127.0.0.1:1143; protocol imap; imap_auth plain cram-md5; } }";
        let c = peregrine_conf::parse_str(text, "nginx.conf").expect("parses");
        (*c.mail.as_ref().unwrap().servers[0]).clone()
    }

    #[test]
    fn capability_names_the_methods() {
        let i = Imap::new(&conf(), "<1@x>".into(), false);
        assert_eq!(
            i.capability(),
            "* CAPABILITY IMAP4 IMAP4rev1 UIDPLUS AUTH=PLAIN AUTH=CRAM-MD5\r\n"
        );
    }

    #[test]
    fn login_and_errors() {
        let mut i = Imap::new(&conf(), "<1@x>".into(), false);
        assert_eq!(
            i.command(b"a1".to_vec(), b"LOGIN", vec![]),
            Step::Error(b"a1 BAD invalid command\r\n".to_vec())
        );
        assert!(matches!(
            i.command(b"a2".to_vec(), b"LOGIN", vec![b"u".to_vec(), b"p".to_vec()]),
            Step::Auth(c) if c.user == b"u" && c.pass == b"p"
        ));
        assert_eq!(i.refused("ERROR"), b"a2 NO ERROR\r\n".to_vec());
        assert!(matches!(
            i.command(b"a3".to_vec(), b"LOGOUT", vec![]),
            Step::Close(b) if b == b"* BYE\r\na3 OK completed\r\n"
        ));
    }
}
