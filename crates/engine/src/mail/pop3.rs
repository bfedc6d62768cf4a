//! POP3 before the login (nginx's `ngx_mail_pop3_handler.c`): the
//! greeting (with the APOP challenge when APOP or CRAM-MD5 is on), CAPA,
//! USER/PASS, APOP, AUTH, NOOP, QUIT and STLS. Sans-I/O: lines in,
//! [`Step`]s out.

use peregrine_conf::mail::{MailServer, Starttls, auth};

use super::sasl::{self, Creds, Method, Sasl, Sasl2, Step, words};

/// nginx's `pop3_internal_server_error`.
pub const INTERNAL_ERROR: &[u8] = b"-ERR internal server error\r\n";
const OK: &[u8] = b"+OK\r\n";
const INVALID: &[u8] = b"-ERR invalid command\r\n";

/// The client's session before its login.
#[derive(Debug)]
pub struct Pop3 {
    methods: u8,
    starttls: Starttls,
    capabilities: Vec<String>,
    salt: String,
    user: Option<Vec<u8>>,
    sasl: Option<Sasl>,
    pub tls: bool,
}

impl Pop3 {
    pub fn new(conf: &MailServer, salt: String, tls: bool) -> Pop3 {
        Pop3 {
            methods: conf.auth_methods,
            starttls: conf.starttls,
            capabilities: conf.capabilities.clone(),
            salt,
            user: None,
            sasl: None,
            tls,
        }
    }

    /// `+OK POP3 ready`, with the challenge when APOP or CRAM-MD5 needs it.
    pub fn greeting(&self) -> Vec<u8> {
        if self.methods & (auth::APOP | auth::CRAM_MD5) != 0 {
            format!("+OK POP3 ready {}\r\n", self.salt).into_bytes()
        } else {
            b"+OK POP3 ready\r\n".to_vec()
        }
    }

    /// The SASL mechanisms (`SASL` of CAPA, the list of a bare AUTH).
    fn mechanisms(&self) -> Vec<&'static str> {
        let mut m = Vec::new();
        if self.methods & auth::PLAIN != 0 {
            m.extend(["PLAIN", "LOGIN"]);
        }
        if self.methods & auth::CRAM_MD5 != 0 {
            m.push("CRAM-MD5");
        }
        if self.methods & auth::EXTERNAL != 0 {
            m.push("EXTERNAL");
        }
        m
    }

    /// CAPA's answer (`ngx_mail_pop3_merge_conf`).
    pub fn capa(&self) -> Vec<u8> {
        let mut out = String::from("+OK Capability list follows\r\n");
        let only = !self.tls && self.starttls == Starttls::Only;
        for c in &self.capabilities {
            if only && c.eq_ignore_ascii_case("USER") {
                continue;
            }
            out.push_str(c);
            out.push_str("\r\n");
        }
        let mechs = self.mechanisms();
        if !only && !mechs.is_empty() {
            out.push_str("SASL ");
            out.push_str(&mechs.join(" "));
            out.push_str("\r\n");
        }
        if !self.tls && self.starttls != Starttls::Off {
            out.push_str("STLS\r\n");
        }
        out.push_str(".\r\n");
        out.into_bytes()
    }

    /// The refusal of the `auth_http` server.
    pub fn refused(&self, message: &str) -> Vec<u8> {
        format!("-ERR {message}\r\n").into_bytes()
    }

    /// One command line.
    pub fn line(&mut self, line: &[u8]) -> Step {
        if let Some(s) = self.sasl.take() {
            if line == b"*" {
                return Step::Error(b"-ERR authentication cancelled\r\n".to_vec());
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
            b"CAPA" => Step::Reply(self.capa()),
            b"NOOP" => Step::Reply(OK.to_vec()),
            b"QUIT" => Step::Close(OK.to_vec()),
            b"STLS" if !self.tls && self.starttls != Starttls::Off => Step::StartTls(OK.to_vec()),
            b"USER" if args.len() == 1 && allowed && self.methods & auth::PLAIN != 0 => {
                self.user = Some(args[0].to_vec());
                Step::Reply(OK.to_vec())
            }
            b"PASS" if args.len() == 1 && self.user.is_some() => Step::Auth(Creds {
                method: Method::Plain,
                user: self.user.clone().unwrap_or_default(),
                pass: args[0].to_vec(),
            }),
            b"APOP" if args.len() == 2 && allowed && self.methods & auth::APOP != 0 => {
                Step::Auth(Creds {
                    method: Method::Apop,
                    user: args[0].to_vec(),
                    pass: args[1].to_vec(),
                })
            }
            b"AUTH" if args.is_empty() && allowed => {
                let mut out = String::from("+OK methods supported:\r\n");
                for m in self.mechanisms() {
                    out.push_str(m);
                    out.push_str("\r\n");
                }
                out.push_str(".\r\n");
                Step::Reply(out.into_bytes())
            }
            b"AUTH" if args.len() <= 2 && allowed => {
                let r = sasl::start(args[0], args.get(1).copied(), self.methods, &self.salt);
                self.sasl_result(r)
            }
            _ => Step::Error(INVALID.to_vec()),
        }
    }

    fn sasl_result(&mut self, r: Sasl2) -> Step {
        match r {
            Sasl2::Challenge(s, c) => {
                self.sasl = Some(s);
                Step::Reply(format!("+ {c}\r\n").into_bytes())
            }
            Sasl2::Done(creds) => Step::Auth(creds),
            Sasl2::Invalid => Step::Error(INVALID.to_vec()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf() -> MailServer {
        let text = "events {} mail { auth_http 127.0.0.1:1/a; server { listen 127.0.0.1:1110; protocol pop3; pop3_auth plain apop cram-md5 external; } }";
        let c = peregrine_conf::parse_str(text, "nginx.conf").expect("parses");
        (*c.mail.as_ref().unwrap().servers[0]).clone()
    }

    #[test]
    fn user_then_pass_authenticates() {
        let mut p = Pop3::new(&conf(), "<1.2@x>".into(), false);
        assert_eq!(p.greeting(), b"+OK POP3 ready <1.2@x>\r\n".to_vec());
        assert!(matches!(p.line(b"PASS x"), Step::Error(_)));
        assert_eq!(p.line(b"user u@x"), Step::Reply(OK.to_vec()));
        assert!(matches!(p.line(b"PASS s"), Step::Auth(c) if c.user == b"u@x" && c.pass == b"s"));
    }

    #[test]
    fn bare_auth_lists_the_mechanisms() {
        let mut p = Pop3::new(&conf(), "<1.2@x>".into(), false);
        assert_eq!(
            p.line(b"AUTH"),
            Step::Reply(
                b"+OK methods supported:\r\nPLAIN\r\nLOGIN\r\nCRAM-MD5\r\nEXTERNAL\r\n.\r\n"
                    .to_vec()
            )
        );
    }
}
