//! The client's side of the mail protocols before it is proxied: IMAP
//! commands (RFC 9051 section 4: a tag, a command, arguments that are
//! atoms, quoted strings or literals) and the CRLF-ended lines of POP3,
//! SMTP and SASL exchanges (RFC 1939, RFC 5321, RFC 4954).
//!
//! Hand-written and sans-I/O (bytes in, one event out at a time, the bytes
//! it used counted): a command's end is where the rest of the client's
//! bytes stop being ours. After a login the bytes that follow it (a
//! pipelined LOGOUT, RSET...) go to the backend untouched, so a parser must
//! stop exactly at the end of the command that logged in, which a general
//! IMAP or SMTP library does not offer. The state survives between calls,
//! so a command split anywhere across reads parses as one (nginx's
//! `ngx_mail_imap_parse_command`, `ngx_mail_pop3_parse_command`,
//! `ngx_mail_smtp_parse_command`, `ngx_mail_auth_parse`).

/// What a line parser found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineEvent {
    /// A complete line, without its CRLF (or bare LF).
    Line(Vec<u8>),
    /// The line grew past the limit (nginx: "client sent too long command").
    TooLong,
}

/// CRLF-ended lines, at most `limit` bytes each.
#[derive(Debug)]
pub struct Lines {
    cur: Vec<u8>,
    limit: usize,
}

impl Lines {
    pub fn new(limit: usize) -> Lines {
        Lines {
            cur: Vec::new(),
            limit,
        }
    }

    /// Reads `data` up to the end of the first line; returns the bytes used
    /// and the event, if one completed.
    pub fn parse(&mut self, data: &[u8]) -> (usize, Option<LineEvent>) {
        for (i, &b) in data.iter().enumerate() {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.cur);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return (i + 1, Some(LineEvent::Line(line)));
            }
            if self.cur.len() >= self.limit {
                self.cur.clear();
                return (i + 1, Some(LineEvent::TooLong));
            }
            self.cur.push(b);
        }
        (data.len(), None)
    }
}

/// What the IMAP parser found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImapEvent {
    /// `TAG COMMAND ARGS...`: the command upper-cased, quoted strings
    /// unescaped, literals as sent.
    Command {
        tag: Vec<u8>,
        name: Vec<u8>,
        args: Vec<Vec<u8>>,
    },
    /// A synchronizing literal `{N}` was announced: the client waits for a
    /// continuation (`+ OK`) before sending it.
    Continue,
    /// A malformed command (`TAG BAD`; the tag may be empty), up to the
    /// end of its line.
    Invalid { tag: Vec<u8> },
    /// The command grew past the limit.
    TooLong,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Tag,
    Name,
    Args,
    Atom,
    Quoted,
    QuotedEscape,
    LiteralLength,
    LiteralPlus,
    LiteralEnd,
    LiteralLf,
    Literal(usize),
    /// After a quoted string or literal: a space or the line's end.
    AfterArg,
    Cr,
    /// A malformed command: skipped to the end of its line.
    Invalid,
}

/// IMAP commands, each at most `limit` bytes (literals included).
#[derive(Debug)]
pub struct Imap {
    st: St,
    tag: Vec<u8>,
    name: Vec<u8>,
    args: Vec<Vec<u8>>,
    cur: Vec<u8>,
    literal: usize,
    sync: bool,
    size: usize,
    limit: usize,
}

/// Arguments a command may have (nginx's `NGX_MAIL_MAX_ARGS`-sized array
/// is 2 for LOGIN; AUTHENTICATE has 2; more is an invalid command).
pub const IMAP_MAX_ARGS: usize = 10;

impl Imap {
    pub fn new(limit: usize) -> Imap {
        Imap {
            st: St::Tag,
            tag: Vec::new(),
            name: Vec::new(),
            args: Vec::new(),
            cur: Vec::new(),
            literal: 0,
            sync: false,
            size: 0,
            limit,
        }
    }

    /// Reads `data` up to the first event; returns the bytes used and the
    /// event, if one was found.
    pub fn parse(&mut self, data: &[u8]) -> (usize, Option<ImapEvent>) {
        for (i, &b) in data.iter().enumerate() {
            self.size += 1;
            if self.size > self.limit {
                self.reset();
                return (i + 1, Some(ImapEvent::TooLong));
            }
            if let Some(ev) = self.byte(b) {
                return (i + 1, Some(ev));
            }
        }
        (data.len(), None)
    }

    fn reset(&mut self) {
        self.st = St::Tag;
        self.tag.clear();
        self.name.clear();
        self.args.clear();
        self.cur.clear();
        self.size = 0;
    }

    fn finish(&mut self) -> Option<ImapEvent> {
        let ev = ImapEvent::Command {
            tag: std::mem::take(&mut self.tag),
            name: std::mem::take(&mut self.name).to_ascii_uppercase(),
            args: std::mem::take(&mut self.args),
        };
        self.reset();
        Some(ev)
    }

    fn invalid(&mut self, b: u8) -> Option<ImapEvent> {
        self.st = St::Invalid;
        if b == b'\n' {
            return self.skipped();
        }
        None
    }

    fn skipped(&mut self) -> Option<ImapEvent> {
        let tag = std::mem::take(&mut self.tag);
        self.reset();
        Some(ImapEvent::Invalid { tag })
    }

    fn push_arg(&mut self) -> Option<ImapEvent> {
        self.args.push(std::mem::take(&mut self.cur));
        if self.args.len() > IMAP_MAX_ARGS {
            self.st = St::Invalid;
        }
        None
    }

    /// The end of a line: the command, or the skipped one's error.
    fn line_end(&mut self, b: u8) -> Option<ImapEvent> {
        if b == b'\r' {
            self.st = St::Cr;
            None
        } else {
            self.finish()
        }
    }

    fn byte(&mut self, b: u8) -> Option<ImapEvent> {
        match self.st {
            St::Tag => match b {
                b' ' if !self.tag.is_empty() => {
                    self.st = St::Name;
                    None
                }
                b' ' | b'\r' | b'\n' | b'"' | b'{' => self.invalid(b),
                _ => {
                    self.tag.push(b);
                    None
                }
            },
            St::Name => match b {
                b'A'..=b'Z' | b'a'..=b'z' => {
                    self.name.push(b);
                    None
                }
                b' ' if !self.name.is_empty() => {
                    self.st = St::Args;
                    None
                }
                b'\r' | b'\n' if !self.name.is_empty() => self.line_end(b),
                _ => self.invalid(b),
            },
            St::Args => match b {
                b' ' => None,
                b'"' => {
                    self.st = St::Quoted;
                    None
                }
                b'{' => {
                    self.literal = 0;
                    self.sync = true;
                    self.st = St::LiteralLength;
                    None
                }
                b'\r' | b'\n' => self.line_end(b),
                _ => {
                    self.cur.push(b);
                    self.st = St::Atom;
                    None
                }
            },
            St::Atom => match b {
                b' ' => {
                    self.st = St::Args;
                    self.push_arg()
                }
                b'\r' | b'\n' => {
                    self.push_arg();
                    if self.st == St::Invalid {
                        return self.invalid(b);
                    }
                    self.line_end(b)
                }
                b'"' | b'{' | b'}' => self.invalid(b),
                _ => {
                    self.cur.push(b);
                    None
                }
            },
            St::Quoted => match b {
                b'"' => {
                    self.st = St::AfterArg;
                    self.push_arg()
                }
                b'\\' => {
                    self.st = St::QuotedEscape;
                    None
                }
                b'\r' | b'\n' => self.invalid(b),
                _ => {
                    self.cur.push(b);
                    None
                }
            },
            // RFC 9051 quoted-specials: only `"` and `\` are escaped.
            St::QuotedEscape => match b {
                b'"' | b'\\' => {
                    self.cur.push(b);
                    self.st = St::Quoted;
                    None
                }
                _ => self.invalid(b),
            },
            St::LiteralLength => match b {
                b'0'..=b'9' => {
                    self.literal = self
                        .literal
                        .saturating_mul(10)
                        .saturating_add(usize::from(b - b'0'));
                    None
                }
                b'+' => {
                    self.sync = false;
                    self.st = St::LiteralPlus;
                    None
                }
                b'}' => {
                    self.st = St::LiteralEnd;
                    None
                }
                _ => self.invalid(b),
            },
            St::LiteralPlus => match b {
                b'}' => {
                    self.st = St::LiteralEnd;
                    None
                }
                _ => self.invalid(b),
            },
            St::LiteralEnd => match b {
                b'\r' => {
                    self.st = St::LiteralLf;
                    None
                }
                b'\n' => self.literal_start(),
                _ => self.invalid(b),
            },
            St::LiteralLf => match b {
                b'\n' => self.literal_start(),
                _ => self.invalid(b),
            },
            St::Literal(n) => {
                self.cur.push(b);
                if n == 1 {
                    self.st = St::AfterArg;
                    self.push_arg()
                } else {
                    self.st = St::Literal(n - 1);
                    None
                }
            }
            St::AfterArg => match b {
                b' ' => {
                    self.st = St::Args;
                    None
                }
                b'\r' | b'\n' => self.line_end(b),
                _ => self.invalid(b),
            },
            St::Cr => match b {
                b'\n' => self.finish(),
                _ => self.invalid(b),
            },
            St::Invalid => match b {
                b'\n' => self.skipped(),
                _ => None,
            },
        }
    }

    /// The CRLF after `{N}`: the literal's bytes follow (after a
    /// continuation when it is synchronizing).
    fn literal_start(&mut self) -> Option<ImapEvent> {
        if self.literal > self.limit {
            self.reset();
            return Some(ImapEvent::TooLong);
        }
        if self.literal == 0 {
            self.st = St::AfterArg;
            self.push_arg();
        } else {
            self.st = St::Literal(self.literal);
        }
        self.sync.then_some(ImapEvent::Continue)
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
