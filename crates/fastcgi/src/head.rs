//! The CGI response head at the start of `STDOUT` (RFC 3875 §6): header
//! lines up to a blank line, read as nginx's `ngx_http_fastcgi_process_header`
//! reads them with `ngx_http_parse_header_line` (underscores allowed, the
//! upstream's rules), whatever record boundaries fall inside a line.
//!
//! The head's bytes are copied into the parser (a head is small and its
//! lines can be split across records, which nginx joins the same way), so
//! the caller's buffer is free once [`HeadParser::feed`] returns. The status
//! follows nginx: `Status:` (its first three bytes must be digits; the whole
//! value is the status line when longer than three), else 302 when there is
//! a `Location:`, else 200. A second `Status:` or `Location:` is ignored
//! with nginx's warning ([`Head::warnings`]).

use std::ops::Range;

/// Why a head was refused, in nginx's error-log words (level `error`,
/// except [`HeadError::TooBig`]; nginx answers 502).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// A byte nginx's header parser refuses: the line up to it and the byte.
    #[error(
        "upstream sent invalid header: \"{}\\x{byte:02x}...\"",
        String::from_utf8_lossy(line)
    )]
    InvalidHeader { line: Vec<u8>, byte: u8 },
    #[error("upstream sent invalid status \"{}\"", String::from_utf8_lossy(.0))]
    InvalidStatus(Vec<u8>),
    /// The head passed the caller's limit (nginx's `fastcgi_buffer_size`).
    #[error("upstream sent too big header")]
    TooBig,
    /// An empty `STDOUT` record before the head's end (the engine reports it
    /// on [`crate::Event::StdoutEnd`]).
    #[error("upstream prematurely closed FastCGI stdout")]
    PrematureStdout,
    /// A record other than `STDOUT`/`STDERR` before the head's end (the
    /// engine reports `END_REQUEST`, type 3, so).
    #[error("upstream sent unexpected FastCGI record: {0}")]
    UnexpectedRecord(u8),
}

/// What [`HeadParser::feed`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadStatus {
    /// All of the input belongs to the head; it is not over.
    Partial,
    /// The head ended after this many bytes of the input; the rest is body.
    Complete(usize),
}

/// One header line: ranges of [`Head`]'s bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Line {
    name: Range<usize>,
    value: Range<usize>,
    /// A duplicate `Status`/`Location`: not passed on (nginx sets its hash to 0).
    ignored: bool,
}

/// A parsed head (complete once [`HeadParser::feed`] said so).
#[derive(Clone, Debug, Default)]
pub struct Head {
    bytes: Vec<u8>,
    lines: Vec<Line>,
    status_header: Option<usize>,
    location: Option<usize>,
    status: u16,
}

impl Head {
    /// The status nginx answers with (it does not range-check a `Status:`).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The status line to send, when not the standard one for [`Head::status`]:
    /// the whole `Status:` value when longer than three bytes, "302 Moved
    /// Temporarily" for a `Location:` alone, "200 OK" when neither is there.
    pub fn status_line(&self) -> Option<&[u8]> {
        match (self.status_header, self.location) {
            (Some(i), _) => Some(self.value(i)).filter(|v| v.len() > 3),
            (None, Some(_)) => Some(b"302 Moved Temporarily"),
            (None, None) => Some(b"200 OK"),
        }
    }

    /// The `Location:` value, if any (the first one).
    pub fn location(&self) -> Option<&[u8]> {
        self.location.map(|i| self.value(i))
    }

    /// Header lines in order, without ignored duplicates; `Status` is among
    /// them (nginx hides it from the client with its upstream header rules).
    pub fn headers(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.lines
            .iter()
            .filter(|l| !l.ignored)
            .map(|l| (&self.bytes[l.name.clone()], &self.bytes[l.value.clone()]))
    }

    /// The first header of this name (ASCII case-insensitive).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// nginx's warnings (level `warn`) for each ignored duplicate.
    pub fn warnings(&self) -> impl Iterator<Item = String> + '_ {
        self.lines.iter().filter(|l| l.ignored).map(|dup| {
            let first = self.lines.iter().find(|l| self.same_name(l, dup)).expect("first");
            let s = |r: &Range<usize>| String::from_utf8_lossy(&self.bytes[r.clone()]).into_owned();
            format!(
                "upstream sent duplicate header line: \"{}: {}\", previous value: \"{}: {}\", ignored",
                s(&dup.name),
                s(&dup.value),
                s(&first.name),
                s(&first.value)
            )
        })
    }

    fn same_name(&self, a: &Line, b: &Line) -> bool {
        self.bytes[a.name.clone()].eq_ignore_ascii_case(&self.bytes[b.name.clone()])
    }

    fn value(&self, i: usize) -> &[u8] {
        &self.bytes[self.lines[i].value.clone()]
    }
}

/// States of `ngx_http_parse_header_line`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Start,
    Name,
    SpaceBeforeValue,
    Value,
    SpaceAfterValue,
    /// A duplicate `HTTP/1.x ...` line (IIS sends them), skipped.
    IgnoreLine,
    AlmostDone,
    HeaderAlmostDone,
}

/// Reads a head from `STDOUT` bytes fed piece by piece.
#[derive(Clone, Debug)]
pub struct HeadParser {
    head: Head,
    limit: usize,
    state: State,
    done: bool,
    name_start: usize,
    name_end: usize,
    value_start: usize,
    value_end: usize,
}

impl HeadParser {
    /// A parser refusing heads over `limit` bytes (the engine passes
    /// `fastcgi_buffer_size`; nginx counts the records' framing and stderr
    /// in that buffer too, so it refuses a little earlier).
    pub fn new(limit: usize) -> HeadParser {
        HeadParser {
            head: Head::default(),
            limit,
            state: State::Start,
            done: false,
            name_start: 0,
            name_end: 0,
            value_start: 0,
            value_end: 0,
        }
    }

    /// The head so far (complete once `feed` returned `Complete`).
    pub fn head(&self) -> &Head {
        &self.head
    }

    pub fn is_complete(&self) -> bool {
        self.done
    }

    /// Reads head bytes from `stdout` (the content of `STDOUT` records, in
    /// order). After `Complete`, further calls use nothing.
    pub fn feed(&mut self, stdout: &[u8]) -> Result<HeadStatus, HeadError> {
        if self.done {
            return Ok(HeadStatus::Complete(0));
        }
        for (i, &b) in stdout.iter().enumerate() {
            if self.head.bytes.len() >= self.limit {
                return Err(HeadError::TooBig);
            }
            self.head.bytes.push(b);
            if self.step(b)? {
                self.done = true;
                self.finish()?;
                return Ok(HeadStatus::Complete(i + 1));
            }
        }
        Ok(HeadStatus::Partial)
    }

    fn invalid(&self) -> HeadError {
        let b = &self.head.bytes;
        HeadError::InvalidHeader {
            line: b[self.name_start..self.value_end].to_vec(),
            byte: b[self.value_end],
        }
    }

    /// One byte of `ngx_http_parse_header_line`; true at the blank line.
    fn step(&mut self, ch: u8) -> Result<bool, HeadError> {
        let p = self.head.bytes.len() - 1;
        let name_byte = ch.is_ascii_alphanumeric() || ch == b'-' || ch == b'_';
        self.state = match (self.state, ch) {
            (State::Start, _) => {
                self.name_start = p;
                self.value_end = p;
                match ch {
                    b'\r' => State::HeaderAlmostDone,
                    b'\n' => return Ok(true),
                    _ if name_byte => State::Name,
                    _ if ch <= 0x20 || ch == 0x7f || ch == b':' => return Err(self.invalid()),
                    _ => State::Name,
                }
            }
            (State::Name, _) if name_byte => State::Name,
            (State::Name, b':') => {
                self.name_end = p;
                State::SpaceBeforeValue
            }
            (State::Name, b'\r' | b'\n') => {
                (self.name_end, self.value_start, self.value_end) = (p, p, p);
                self.line_end(ch)?
            }
            (State::Name, b'/') if &self.head.bytes[self.name_start..p] == b"HTTP" => {
                State::IgnoreLine
            }
            (State::Name, _) if ch <= 0x20 || ch == 0x7f => {
                self.value_end = p;
                return Err(self.invalid());
            }
            (State::Name, _) => State::Name,
            (State::SpaceBeforeValue, b' ') => State::SpaceBeforeValue,
            (State::SpaceBeforeValue | State::Value, b'\r' | b'\n') => {
                if self.state == State::SpaceBeforeValue {
                    self.value_start = p;
                }
                self.value_end = p;
                self.line_end(ch)?
            }
            (State::SpaceBeforeValue | State::Value | State::SpaceAfterValue, 0) => {
                self.value_end = p;
                return Err(self.invalid());
            }
            (State::SpaceBeforeValue, _) => {
                self.value_start = p;
                State::Value
            }
            (State::Value, b' ') => {
                self.value_end = p;
                State::SpaceAfterValue
            }
            (State::Value, _) => State::Value,
            (State::SpaceAfterValue, b' ') => State::SpaceAfterValue,
            (State::SpaceAfterValue, b'\r' | b'\n') => self.line_end(ch)?,
            (State::SpaceAfterValue, _) => State::Value,
            (State::IgnoreLine, b'\n') => State::Start,
            (State::IgnoreLine, _) => State::IgnoreLine,
            (State::AlmostDone, b'\n') => self.line_end(ch)?,
            (State::AlmostDone, b'\r') => State::AlmostDone,
            (State::HeaderAlmostDone, b'\n') => return Ok(true),
            (State::AlmostDone | State::HeaderAlmostDone, _) => return Err(self.invalid()),
        };
        Ok(false)
    }

    /// CR waits for LF; LF ends the line, which is stored.
    fn line_end(&mut self, ch: u8) -> Result<State, HeadError> {
        if ch == b'\r' {
            return Ok(State::AlmostDone);
        }
        self.push_line();
        Ok(State::Start)
    }

    fn push_line(&mut self) {
        let h = &mut self.head;
        let name = &h.bytes[self.name_start..self.name_end];
        let slot = if name.eq_ignore_ascii_case(b"status") {
            Some(&mut h.status_header)
        } else if name.eq_ignore_ascii_case(b"location") {
            Some(&mut h.location)
        } else {
            None
        };
        let index = h.lines.len();
        let ignored = match slot {
            Some(Some(_)) => true,
            Some(first) => {
                *first = Some(index);
                false
            }
            None => false,
        };
        h.lines.push(Line {
            name: self.name_start..self.name_end,
            value: self.value_start..self.value_end,
            ignored,
        });
    }

    /// The status, as `ngx_http_fastcgi_process_header` sets it at the end.
    fn finish(&mut self) -> Result<(), HeadError> {
        let h = &mut self.head;
        h.status = match h.status_header {
            Some(i) => {
                let v = h.value(i);
                // ngx_atoi(value, 3) on a NUL-terminated copy.
                match v.get(..3) {
                    Some(d) if d.iter().all(u8::is_ascii_digit) => {
                        d.iter().fold(0, |n, &c| n * 10 + u16::from(c - b'0'))
                    }
                    _ => return Err(HeadError::InvalidStatus(v.to_vec())),
                }
            }
            None if h.location.is_some() => 302,
            None => 200,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests;
