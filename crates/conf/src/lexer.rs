//! The nginx.conf lexer: bytes → statements (`args ;`, `args {`, `}`, end).
//!
//! Hand-written, as a transcription of nginx's `ngx_conf_read_token()`
//! (src/core/ngx_conf_file.c), because drop-in compatibility means accepting
//! and refusing exactly what nginx does, with nginx's messages and line numbers:
//! no grammar crate reproduces its quirks — `}` does not end a word (`a}` is
//! one word), `#` only starts a comment at a word boundary, `${` does not open a
//! block, a quoted word must be followed by a space or a terminator, escapes are
//! unescaped only for `\" \' \\ \t \r \n`, and an error's line is the line the
//! lexer had reached (so a directive's line is the line of its `;` or `{`).
//!
//! Files are bytes (nginx does not care about encodings); words are turned into
//! `String` lossily, which only matters for non-UTF-8 bytes in arguments.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{ConfError, Result};
use crate::model::Span;

/// nginx reads files through a buffer of this size and refuses a word (or a
/// comment) that does not fit in it: `too long parameter`. Kept, as a limit
/// that also bounds a word's size, so that what nginx refuses is refused.
/// The `-g` parameter has no such limit in nginx.
pub const NGX_CONF_BUFFER: usize = 4096;

/// How many bytes of a too long word nginx shows.
const TOO_LONG_SHOWN: usize = 10;

/// One statement, as `ngx_conf_read_token()` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    /// `args... ;`
    Simple { args: Vec<String>, line: u32 },
    /// `args... {`
    BlockStart { args: Vec<String>, line: u32 },
    /// `}`
    BlockEnd { line: u32 },
    /// End of input.
    Eof { line: u32 },
}

/// Whether the input is a file or the `-g` parameter (whose end is worded
/// differently by nginx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    File,
    Param,
}

/// The lexer over one input.
pub struct Lexer<'a> {
    input: &'a [u8],
    pos: usize,
    line: u32,
    file: Arc<PathBuf>,
    source: Source,
}

fn is_space(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

/// nginx's unescaping of a word: `\" \' \\` lose the backslash, `\t \r \n`
/// become control characters, any other backslash stays.
fn unescape(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'\\' {
            match raw.get(i + 1) {
                Some(b'"' | b'\'' | b'\\') => i += 1,
                Some(b't') => {
                    out.push(b'\t');
                    i += 2;
                    continue;
                }
                Some(b'r') => {
                    out.push(b'\r');
                    i += 2;
                    continue;
                }
                Some(b'n') => {
                    out.push(b'\n');
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        if let Some(&b) = raw.get(i) {
            out.push(b);
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl<'a> Lexer<'a> {
    pub fn new(input: &'a [u8], file: Arc<PathBuf>, source: Source) -> Self {
        Lexer {
            input,
            pos: 0,
            line: if source == Source::Param { 0 } else { 1 },
            file,
            source,
        }
    }

    /// The position the lexer has reached, for errors.
    pub fn span(&self) -> Span {
        Span::new(&self.file, self.line)
    }

    fn err(&self, message: String) -> ConfError {
        ConfError::at(&self.span(), message)
    }

    fn char_name(ch: u8) -> String {
        String::from_utf8_lossy(&[ch]).into_owned()
    }

    /// nginx's `too long parameter` errors, at the line the word started.
    fn too_long(&self, start: usize, line: u32, d_quoted: bool, s_quoted: bool) -> ConfError {
        let span = Span::new(&self.file, line);
        let quote = if d_quoted {
            Some('"')
        } else if s_quoted {
            Some('\'')
        } else {
            None
        };
        match quote {
            Some(q) => ConfError::at(
                &span,
                format!("too long parameter, probably missing terminating \"{q}\" character"),
            ),
            None => {
                let end = (start + TOO_LONG_SHOWN).min(self.input.len());
                let shown = String::from_utf8_lossy(self.input.get(start..end).unwrap_or_default());
                ConfError::at(&span, format!("too long parameter \"{shown}...\" started"))
            }
        }
    }

    /// Reads the next statement. This is one loop over characters with
    /// nginx's state flags, kept as one function so that it can be compared
    /// with `ngx_conf_read_token()` line by line.
    pub fn next_stmt(&mut self) -> Result<Stmt> {
        let mut args: Vec<String> = Vec::new();
        let mut last_space = true;
        let mut need_space = false;
        let mut sharp_comment = false;
        let mut quoted = false;
        let mut d_quoted = false;
        let mut s_quoted = false;
        let mut variable = false;
        let mut start = self.pos;
        let mut start_line = self.line;

        loop {
            if self.source == Source::File
                && self.pos < self.input.len()
                && self.pos - start >= NGX_CONF_BUFFER
            {
                return Err(self.too_long(start, start_line, d_quoted, s_quoted));
            }
            let Some(&ch) = self.input.get(self.pos) else {
                if !args.is_empty() || !last_space {
                    return Err(self.err(match self.source {
                        Source::Param => "unexpected end of parameter, expecting \";\"".into(),
                        Source::File => "unexpected end of file, expecting \";\" or \"}\"".into(),
                    }));
                }
                return Ok(Stmt::Eof { line: self.line });
            };
            self.pos += 1;

            if ch == b'\n' {
                self.line = self.line.saturating_add(1);
                sharp_comment = false;
            }
            if sharp_comment {
                continue;
            }
            if quoted {
                quoted = false;
                continue;
            }
            if need_space {
                if is_space(ch) {
                    last_space = true;
                    need_space = false;
                    continue;
                }
                match ch {
                    b';' => {
                        return Ok(Stmt::Simple {
                            args,
                            line: self.line,
                        });
                    }
                    b'{' => {
                        return Ok(Stmt::BlockStart {
                            args,
                            line: self.line,
                        });
                    }
                    // nginx lets `)` follow a quoted word for `if ("a")`.
                    b')' => {
                        last_space = true;
                        need_space = false;
                    }
                    _ => return Err(self.err(format!("unexpected \"{}\"", Self::char_name(ch)))),
                }
            }

            if last_space {
                start = self.pos - 1;
                start_line = self.line;
                if is_space(ch) {
                    continue;
                }
                match ch {
                    b';' | b'{' => {
                        if args.is_empty() {
                            return Err(self.err(format!("unexpected \"{}\"", Self::char_name(ch))));
                        }
                        return Ok(if ch == b'{' {
                            Stmt::BlockStart {
                                args,
                                line: self.line,
                            }
                        } else {
                            Stmt::Simple {
                                args,
                                line: self.line,
                            }
                        });
                    }
                    b'}' => {
                        if !args.is_empty() {
                            return Err(self.err("unexpected \"}\"".into()));
                        }
                        return Ok(Stmt::BlockEnd { line: self.line });
                    }
                    b'#' => sharp_comment = true,
                    b'\\' => {
                        quoted = true;
                        last_space = false;
                    }
                    b'"' => {
                        start += 1;
                        d_quoted = true;
                        last_space = false;
                    }
                    b'\'' => {
                        start += 1;
                        s_quoted = true;
                        last_space = false;
                    }
                    b'$' => {
                        variable = true;
                        last_space = false;
                    }
                    _ => last_space = false,
                }
                continue;
            }

            if ch == b'{' && variable {
                continue;
            }
            variable = false;
            if ch == b'\\' {
                quoted = true;
                continue;
            }
            if ch == b'$' {
                variable = true;
                continue;
            }
            let found = if d_quoted {
                if ch == b'"' {
                    d_quoted = false;
                    need_space = true;
                    true
                } else {
                    false
                }
            } else if s_quoted {
                if ch == b'\'' {
                    s_quoted = false;
                    need_space = true;
                    true
                } else {
                    false
                }
            } else if is_space(ch) || ch == b';' || ch == b'{' {
                last_space = true;
                true
            } else {
                false
            };
            if found {
                let raw = self.input.get(start..self.pos - 1).unwrap_or_default();
                args.push(unescape(raw));
                match ch {
                    b';' => {
                        return Ok(Stmt::Simple {
                            args,
                            line: self.line,
                        });
                    }
                    b'{' => {
                        return Ok(Stmt::BlockStart {
                            args,
                            line: self.line,
                        });
                    }
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lex_all(text: &str) -> Result<Vec<Stmt>> {
        let mut lx = Lexer::new(text.as_bytes(), Arc::new(PathBuf::from("t")), Source::File);
        let mut out = Vec::new();
        loop {
            let s = lx.next_stmt()?;
            if let Stmt::Eof { .. } = s {
                out.push(s);
                return Ok(out);
            }
            out.push(s);
        }
    }

    fn simple(args: &[&str], line: u32) -> Stmt {
        Stmt::Simple {
            args: args.iter().map(|s| s.to_string()).collect(),
            line,
        }
    }

    fn err_of(text: &str) -> String {
        lex_all(text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn words_and_terminators() {
        let got = lex_all("a b;\nc {\n}\n").unwrap();
        assert_eq!(
            got,
            vec![
                simple(&["a", "b"], 1),
                Stmt::BlockStart {
                    args: vec!["c".into()],
                    line: 2
                },
                Stmt::BlockEnd { line: 3 },
                Stmt::Eof { line: 4 },
            ]
        );
    }

    #[test]
    fn line_is_the_terminators_line() {
        let got = lex_all("keepalive_timeout\nabc\n;\n").unwrap();
        assert_eq!(got[0], simple(&["keepalive_timeout", "abc"], 3));
    }

    #[test]
    fn quotes_and_escapes() {
        let got = lex_all(r#"a "b c" 'd e' "x\"y" 'p\'q' "t\tn\n" "\z" \\;"#).unwrap();
        assert_eq!(
            got[0],
            simple(
                &["a", "b c", "d e", "x\"y", "p'q", "t\tn\n", "\\z", "\\"],
                1
            )
        );
        // Quotes inside a word are kept; an empty quoted word is a word.
        assert_eq!(
            lex_all("a b\"c\" \"\";").unwrap()[0],
            simple(&["a", "b\"c\"", ""], 1)
        );
        // A quoted string may span lines.
        assert_eq!(
            lex_all("a \"x\ny\";").unwrap()[0],
            simple(&["a", "x\ny"], 2)
        );
    }

    #[test]
    fn nginx_quirks() {
        // `}` does not end a word, `#` inside a word is not a comment.
        assert_eq!(lex_all("a b#c;").unwrap()[0], simple(&["a", "b#c"], 1));
        assert_eq!(err_of("a b}\n}\n"), "unexpected \"}\" in t:2");
        // `${` does not open a block, variables stay verbatim.
        assert_eq!(
            lex_all("a ${x}y $z;").unwrap()[0],
            simple(&["a", "${x}y", "$z"], 1)
        );
        // `{` ends a word.
        assert!(
            matches!(&lex_all("a b{}").unwrap()[0], Stmt::BlockStart { args, .. } if args.len() == 2)
        );
        // comments
        assert_eq!(lex_all("# x;\na; # y {\n").unwrap()[0], simple(&["a"], 2));
    }

    #[test]
    fn errors_as_nginx() {
        assert_eq!(err_of("a \"b\"c;"), "unexpected \"c\" in t:1");
        assert_eq!(err_of("a 'b'\"c\";"), "unexpected \"\"\" in t:1");
        assert_eq!(err_of("\n;"), "unexpected \";\" in t:2");
        assert_eq!(err_of("{"), "unexpected \"{\" in t:1");
        assert_eq!(
            err_of("a b"),
            "unexpected end of file, expecting \";\" or \"}\" in t:1"
        );
        assert_eq!(
            err_of("a \"b;\n"),
            "unexpected end of file, expecting \";\" or \"}\" in t:2"
        );
        assert_eq!(
            err_of("a # c"),
            "unexpected end of file, expecting \";\" or \"}\" in t:1"
        );
        let mut lx = Lexer::new(
            b"a b",
            Arc::new(PathBuf::from("command line")),
            Source::Param,
        );
        assert_eq!(
            lx.next_stmt().unwrap_err().to_string(),
            "unexpected end of parameter, expecting \";\" in command line"
        );
    }

    #[test]
    fn too_long_words_as_nginx() {
        let long = "a".repeat(NGX_CONF_BUFFER);
        assert_eq!(
            err_of(&format!("events {{}}\n#{long}\n")),
            "too long parameter \"#aaaaaaaaa...\" started in t:2"
        );
        assert_eq!(
            err_of(&format!("x\ny \"{long}\";\n")),
            "too long parameter, probably missing terminating \"\"\" character in t:2"
        );
        assert_eq!(
            err_of(&format!("x\ny '\n{long}';\n")),
            "too long parameter, probably missing terminating \"'\" character in t:2"
        );
        assert_eq!(
            err_of(&format!("y {long};\n")),
            "too long parameter \"aaaaaaaaaa...\" started in t:1"
        );
        // One byte shorter fits, as in nginx; so does a long run of spaces.
        let fits = "a".repeat(NGX_CONF_BUFFER - 1);
        assert!(lex_all(&format!("y {fits};\n")).is_ok());
        assert!(lex_all(&format!("y{}z;\n", " ".repeat(3 * NGX_CONF_BUFFER))).is_ok());
        // The -g parameter has no limit.
        let g = format!("y {long};");
        let mut lx = Lexer::new(g.as_bytes(), Arc::new(PathBuf::from("c")), Source::Param);
        assert!(lx.next_stmt().is_ok());
    }

    #[test]
    fn quoted_closer_may_precede_paren_semicolon_or_brace() {
        assert_eq!(lex_all("a \"b\";").unwrap()[0], simple(&["a", "b"], 1));
        assert!(lex_all("a \"b\"{}").is_ok());
        assert!(lex_all("a (\"b\") x;").is_ok());
    }

    /// Renders statements back to text that lexes to the same statements.
    fn render(stmts: &[Stmt]) -> String {
        let mut out = String::new();
        for s in stmts {
            let words = |args: &Vec<String>| {
                args.iter()
                    .map(|a| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\"")))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            match s {
                Stmt::Simple { args, .. } => out.push_str(&format!("{};\n", words(args))),
                Stmt::BlockStart { args, .. } => out.push_str(&format!("{} {{\n", words(args))),
                Stmt::BlockEnd { .. } => out.push_str("}\n"),
                Stmt::Eof { .. } => {}
            }
        }
        out
    }

    fn strip_lines(stmts: Vec<Stmt>) -> Vec<Stmt> {
        stmts
            .into_iter()
            .map(|s| match s {
                Stmt::Simple { args, .. } => Stmt::Simple { args, line: 0 },
                Stmt::BlockStart { args, .. } => Stmt::BlockStart { args, line: 0 },
                Stmt::BlockEnd { .. } => Stmt::BlockEnd { line: 0 },
                Stmt::Eof { .. } => Stmt::Eof { line: 0 },
            })
            .collect()
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut lx = Lexer::new(&bytes, Arc::new(PathBuf::from("t")), Source::File);
            for _ in 0..300 {
                match lx.next_stmt() {
                    Ok(Stmt::Eof { .. }) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }

        #[test]
        fn never_panics_on_config_like_text(text in "[a-z{};#\"'\\\\$ \n]{0,200}") {
            let _ = lex_all(&text);
        }

        #[test]
        fn round_trips(text in "[a-z{};#\"'\\\\$ \n]{0,200}") {
            if let Ok(stmts) = lex_all(&text) {
                let again = lex_all(&render(&stmts)).expect("rendered text lexes");
                prop_assert_eq!(strip_lines(again), strip_lines(stmts));
            }
        }
    }
}
