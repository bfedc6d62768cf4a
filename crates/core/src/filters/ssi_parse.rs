//! The SSI command parser (`ngx_http_ssi_parse`), sans I/O: fed a body in
//! chunks of any size, it gives the text between commands and the
//! commands (`<!--#name param="value" ... -->`) as events. A chunk may end
//! anywhere, in a command or in its opening; the result is the same as
//! for the whole body at once (tested by feeding every split).

/// nginx's `NGX_HTTP_SSI_COMMAND_LEN`: a longer command name is invalid.
pub const MAX_COMMAND_LEN: usize = 32;
/// nginx's `NGX_HTTP_SSI_PARAM_LEN`: a longer parameter name is invalid.
pub const MAX_PARAM_NAME_LEN: usize = 32;
/// nginx's `NGX_HTTP_SSI_MAX_PARAMS`: more parameters are invalid.
pub const MAX_PARAMS: usize = 16;

/// What the parser found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Body bytes outside commands.
    Text(Vec<u8>),
    Command(Command),
    /// A command that does not parse (nginx logs why and outputs the
    /// error message in its place).
    Invalid(&'static str),
}

/// One SSI command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    pub name: String,
    pub params: Vec<(String, String)>,
}

impl Command {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// In text; `n` bytes of `<!--#` matched.
    Text(u8),
    /// After `<!--#`, before the command name.
    PreCommand,
    Command,
    /// Between parameters.
    PreParam,
    Param,
    PreEqual,
    PreValue,
    /// In a value quoted by the byte; `escaped` after a backslash.
    Value {
        quote: u8,
        escaped: bool,
    },
    /// `-` then `-` then `>` of the end: `n` matched.
    End(u8),
    /// After an error: skipping to the `-->`, `n` of it matched.
    Skip(u8, &'static str),
}

const OPEN: &[u8] = b"<!--#";
const CLOSE: &[u8] = b"-->";

/// The parser's state between chunks.
#[derive(Debug)]
pub struct Parser {
    state: State,
    text: Vec<u8>,
    cmd: Command,
    value_len: usize,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Parser {
    /// `value_len`: the longest parameter value (`ssi_value_length`).
    pub fn new(value_len: usize) -> Parser {
        Parser {
            state: State::Text(0),
            text: Vec::new(),
            cmd: Command::default(),
            value_len,
        }
    }

    /// Parses `chunk`, pushing what it completes onto `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        for &b in chunk {
            self.byte(b, out);
        }
        if matches!(self.state, State::Text(0)) {
            self.flush_text(out);
        }
    }

    /// The body ended: text held as a possible command start is text; an
    /// unfinished command is dropped (nginx outputs nothing of it).
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        if let State::Text(n) = self.state {
            self.text.extend_from_slice(&OPEN[..n as usize]);
        }
        self.state = State::Text(0);
        self.flush_text(out);
    }

    fn flush_text(&mut self, out: &mut Vec<Event>) {
        if !self.text.is_empty() {
            out.push(Event::Text(std::mem::take(&mut self.text)));
        }
    }

    fn fail(&mut self, why: &'static str) {
        self.cmd = Command::default();
        self.state = State::Skip(0, why);
    }

    fn byte(&mut self, b: u8, out: &mut Vec<Event>) {
        self.state = match self.state {
            State::Text(n) => return self.text_byte(n, b, out),
            State::PreCommand if b.is_ascii_whitespace() => State::PreCommand,
            State::PreCommand | State::Command if is_name_byte(b) => {
                if self.cmd.name.len() == MAX_COMMAND_LEN {
                    return self.fail("the \"%s\" SSI command is too long");
                }
                self.cmd.name.push(char::from(b.to_ascii_lowercase()));
                State::Command
            }
            State::Command if b.is_ascii_whitespace() => State::PreParam,
            State::Command | State::PreParam if b == b'-' => State::End(1),
            State::PreParam if b.is_ascii_whitespace() => State::PreParam,
            State::PreParam | State::Param if is_name_byte(b) => {
                if self.state == State::PreParam {
                    if self.cmd.params.len() == MAX_PARAMS {
                        return self.fail("too many SSI command parameters");
                    }
                    self.cmd.params.push((String::new(), String::new()));
                }
                let name = &mut self.cmd.params.last_mut().expect("pushed").0;
                if name.len() == MAX_PARAM_NAME_LEN {
                    return self.fail("too long SSI command parameter");
                }
                name.push(char::from(b.to_ascii_lowercase()));
                State::Param
            }
            State::Param | State::PreEqual if b.is_ascii_whitespace() => State::PreEqual,
            State::Param | State::PreEqual if b == b'=' => State::PreValue,
            State::PreValue if b.is_ascii_whitespace() => State::PreValue,
            State::PreValue if b == b'"' || b == b'\'' => State::Value {
                quote: b,
                escaped: false,
            },
            State::Value { quote, escaped } => return self.value_byte(quote, escaped, b),
            State::End(1) if b == b'-' => State::End(2),
            State::End(2) if b == b'>' => {
                out.push(Event::Command(std::mem::take(&mut self.cmd)));
                State::Text(0)
            }
            State::Skip(n, why) => self.skip_byte(n, why, b, out),
            State::PreCommand => return self.fail("invalid SSI command"),
            _ => return self.fail("invalid SSI command parameter"),
        };
    }

    fn text_byte(&mut self, n: u8, b: u8, out: &mut Vec<Event>) {
        if b == OPEN[n as usize] {
            if n as usize + 1 == OPEN.len() {
                self.flush_text(out);
                self.state = State::PreCommand;
            } else {
                self.state = State::Text(n + 1);
            }
            return;
        }
        // The opening did not go on: what matched of it is text (and `<`
        // may start a new one).
        self.text.extend_from_slice(&OPEN[..n as usize]);
        if b == OPEN[0] {
            self.state = State::Text(1);
        } else {
            self.text.push(b);
            self.state = State::Text(0);
        }
    }

    fn value_byte(&mut self, quote: u8, escaped: bool, b: u8) {
        let value = &mut self.cmd.params.last_mut().expect("in a param").1;
        // nginx keeps a backslash unless it escapes the quote.
        let next = if escaped {
            if b != quote {
                value.push('\\');
            }
            value.push(char::from(b));
            State::Value {
                quote,
                escaped: false,
            }
        } else if b == b'\\' {
            State::Value {
                quote,
                escaped: true,
            }
        } else if b == quote {
            State::PreParam
        } else {
            value.push(char::from(b));
            State::Value {
                quote,
                escaped: false,
            }
        };
        if value.len() > self.value_len {
            return self.fail("too long value of the SSI command parameter");
        }
        self.state = next;
    }

    fn skip_byte(&mut self, n: u8, why: &'static str, b: u8, out: &mut Vec<Event>) -> State {
        if b == CLOSE[n as usize] {
            if n as usize + 1 == CLOSE.len() {
                out.push(Event::Invalid(why));
                return State::Text(0);
            }
            return State::Skip(n + 1, why);
        }
        State::Skip(u8::from(b == b'-'), why)
    }
}

/// Parses a whole body.
pub fn parse(body: &[u8], value_len: usize) -> Vec<Event> {
    let mut p = Parser::new(value_len);
    let mut out = Vec::new();
    p.feed(body, &mut out);
    p.finish(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adjacent text events joined (a split may cut text anywhere).
    fn normal(events: Vec<Event>) -> Vec<Event> {
        let mut out: Vec<Event> = Vec::new();
        for e in events {
            match (out.last_mut(), e) {
                (Some(Event::Text(a)), Event::Text(b)) => a.extend_from_slice(&b),
                (_, e) => out.push(e),
            }
        }
        out
    }

    fn cmd(name: &str, params: &[(&str, &str)]) -> Event {
        Event::Command(Command {
            name: name.into(),
            params: params
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        })
    }

    const SAMPLE: &[u8] = b"a<!--#echo var=\"x\" default='d\\'q' -->b<!- -<!--#endif-->\
<!--<!--#include  virtual = \"/a?b\"--><!--#bad%--><!--#set var=\"v\\n\" value=\"1\" -->z<!--#";

    #[test]
    fn commands_and_text() {
        let e = normal(parse(SAMPLE, 256));
        assert_eq!(
            e,
            vec![
                Event::Text(b"a".to_vec()),
                cmd("echo", &[("var", "x"), ("default", "d'q")]),
                Event::Text(b"b<!- -".to_vec()),
                cmd("endif", &[]),
                Event::Text(b"<!--".to_vec()),
                cmd("include", &[("virtual", "/a?b")]),
                Event::Invalid("invalid SSI command parameter"),
                cmd("set", &[("var", "v\\n"), ("value", "1")]),
                Event::Text(b"z".to_vec()),
            ]
        );
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let whole = normal(parse(SAMPLE, 256));
        for at in 0..=SAMPLE.len() {
            for at2 in at..=SAMPLE.len() {
                let mut p = Parser::new(256);
                let mut out = Vec::new();
                p.feed(&SAMPLE[..at], &mut out);
                p.feed(&SAMPLE[at..at2], &mut out);
                p.feed(&SAMPLE[at2..], &mut out);
                p.finish(&mut out);
                assert_eq!(normal(out), whole, "split at {at}/{at2}");
            }
        }
    }

    #[test]
    fn limits() {
        let e = parse(b"<!--#echo var=\"0123456789\" -->", 4);
        assert_eq!(
            e,
            vec![Event::Invalid(
                "too long value of the SSI command parameter"
            )]
        );
        let long = format!("<!--#{} -->", "x".repeat(MAX_COMMAND_LEN + 1));
        assert!(matches!(parse(long.as_bytes(), 256)[0], Event::Invalid(_)));
    }
}
