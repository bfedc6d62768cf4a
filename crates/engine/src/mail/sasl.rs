//! What the three protocols share before the login: the credentials a
//! client gives, what a protocol's state machine asks its driver to do
//! ([`Step`]), and the SASL exchanges of `AUTHENTICATE` / `AUTH` (RFC 4616
//! PLAIN, the LOGIN draft, RFC 2195 CRAM-MD5, RFC 4422 EXTERNAL), whose
//! challenges each protocol frames its own way (`+ ` or `334 `).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// How the client authenticated (`Auth-Method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Plain,
    Login,
    Apop,
    CramMd5,
    External,
    /// SMTP without authentication (`smtp_auth none`).
    None,
}

impl Method {
    /// nginx's `ngx_mail_auth_http_method` names.
    pub fn name(self) -> &'static str {
        match self {
            Method::Plain => "plain",
            Method::Login => "login",
            Method::Apop => "apop",
            Method::CramMd5 => "cram-md5",
            Method::External => "external",
            Method::None => "none",
        }
    }
}

/// The credentials of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creds {
    pub method: Method,
    pub user: Vec<u8>,
    pub pass: Vec<u8>,
}

/// What a protocol's state machine asks its driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes and read on.
    Reply(Vec<u8>),
    /// A protocol error: send these bytes and count it (`max_errors`).
    Error(Vec<u8>),
    /// Send these bytes, then close.
    Close(Vec<u8>),
    /// Check these credentials with the `auth_http` server.
    Auth(Creds),
    /// Send these bytes, then start TLS.
    StartTls(Vec<u8>),
}

/// base64 of `Username:` and `Password:` (the LOGIN mechanism's prompts).
pub const USERNAME: &str = "VXNlcm5hbWU6";
pub const PASSWORD: &str = "UGFzc3dvcmQ6";

/// A SASL exchange waiting for the client's next line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sasl {
    Plain,
    LoginUser,
    LoginPass(Vec<u8>),
    CramMd5,
    External,
}

/// What a SASL step gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sasl2 {
    /// Send this challenge (base64) and wait in this state.
    Challenge(Sasl, String),
    Done(Creds),
    /// A malformed response or unknown mechanism.
    Invalid,
}

fn decode(line: &[u8]) -> Option<Vec<u8>> {
    STANDARD.decode(line.trim_ascii()).ok()
}

/// base64 of the challenge a CRAM-MD5 exchange starts with.
pub fn encode(v: &[u8]) -> String {
    STANDARD.encode(v)
}

/// `AUTHENTICATE MECH [INITIAL]` (`ngx_mail_auth_parse`): `methods` the
/// server's `*_auth` bits (PLAIN and LOGIN are always allowed, as in
/// nginx), `salt` the CRAM-MD5 challenge.
pub fn start(mech: &[u8], initial: Option<&[u8]>, methods: u8, salt: &str) -> Sasl2 {
    use peregrine_conf::mail::auth;
    match (mech.to_ascii_uppercase().as_slice(), initial) {
        (b"PLAIN", None) => Sasl2::Challenge(Sasl::Plain, String::new()),
        (b"PLAIN", Some(i)) => step(Sasl::Plain, i),
        (b"LOGIN", None) => Sasl2::Challenge(Sasl::LoginUser, USERNAME.into()),
        (b"LOGIN", Some(i)) => step(Sasl::LoginUser, i),
        (b"CRAM-MD5", None) if methods & auth::CRAM_MD5 != 0 => {
            Sasl2::Challenge(Sasl::CramMd5, encode(salt.as_bytes()))
        }
        (b"EXTERNAL", None) if methods & auth::EXTERNAL != 0 => {
            Sasl2::Challenge(Sasl::External, USERNAME.into())
        }
        (b"EXTERNAL", Some(i)) if methods & auth::EXTERNAL != 0 => step(Sasl::External, i),
        _ => Sasl2::Invalid,
    }
}

/// The client's response `line` in state `s`.
pub fn step(s: Sasl, line: &[u8]) -> Sasl2 {
    let Some(v) = decode(line) else {
        return Sasl2::Invalid;
    };
    let done = |method, user: &[u8], pass: &[u8]| {
        Sasl2::Done(Creds {
            method,
            user: user.to_vec(),
            pass: pass.to_vec(),
        })
    };
    match s {
        // authzid NUL authcid NUL passwd: the authcid logs in.
        Sasl::Plain => {
            let mut parts = v.splitn(3, |&b| b == 0);
            match (parts.next(), parts.next(), parts.next()) {
                (Some(_), Some(user), Some(pass)) if !user.is_empty() => {
                    done(Method::Plain, user, pass)
                }
                _ => Sasl2::Invalid,
            }
        }
        Sasl::LoginUser if !v.is_empty() => Sasl2::Challenge(Sasl::LoginPass(v), PASSWORD.into()),
        Sasl::LoginPass(user) => done(Method::Login, &user, &v),
        // "user hexdigest".
        Sasl::CramMd5 => match v.iter().rposition(|&b| b == b' ') {
            Some(i) if i > 0 && v.len() - i - 1 == 32 => {
                done(Method::CramMd5, &v[..i], &v[i + 1..])
            }
            _ => Sasl2::Invalid,
        },
        Sasl::External if !v.is_empty() => done(Method::External, &v, b""),
        _ => Sasl2::Invalid,
    }
}

/// The words of a command line (`ngx_mail_*_parse_command` split them at
/// spaces).
pub fn words(line: &[u8]) -> Vec<&[u8]> {
    line.split(|&b| b == b' ')
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_conf::mail::auth;

    #[test]
    fn plain_takes_the_authcid() {
        let i = encode(b"\0test@example.com\0secret");
        assert_eq!(
            start(b"plain", Some(i.as_bytes()), auth::PLAIN, ""),
            Sasl2::Done(Creds {
                method: Method::Plain,
                user: b"test@example.com".to_vec(),
                pass: b"secret".to_vec()
            })
        );
        assert_eq!(step(Sasl::Plain, b"!!"), Sasl2::Invalid);
    }

    #[test]
    fn login_asks_for_both() {
        let Sasl2::Challenge(s, c) = start(b"LOGIN", None, auth::PLAIN, "") else {
            panic!()
        };
        assert_eq!(c, USERNAME);
        let Sasl2::Challenge(s, c) = step(s, encode(b"u").as_bytes()) else {
            panic!()
        };
        assert_eq!(c, PASSWORD);
        assert!(matches!(step(s, encode(b"p").as_bytes()), Sasl2::Done(c) if c.pass == b"p"));
    }

    #[test]
    fn cram_md5_and_external_need_their_method() {
        assert_eq!(
            start(b"CRAM-MD5", None, auth::PLAIN, "<1@x>"),
            Sasl2::Invalid
        );
        let Sasl2::Challenge(s, c) = start(b"CRAM-MD5", None, auth::CRAM_MD5, "<1@x>") else {
            panic!()
        };
        assert_eq!(c, encode(b"<1@x>"));
        let r = encode(format!("u@x {}", "0".repeat(32)).as_bytes());
        assert!(matches!(step(s, r.as_bytes()), Sasl2::Done(c) if c.user == b"u@x"));
        assert_eq!(start(b"EXTERNAL", None, auth::PLAIN, ""), Sasl2::Invalid);
    }
}
