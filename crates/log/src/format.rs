//! `log_format` compilation (once, at start) and rendering (per request).
//!
//! The parser is hand-written because it must reproduce nginx's
//! `ngx_http_log_compile_format` exactly, error messages included; it is a
//! ten-state scan, not a grammar a crate would help with.

use peregrine_conf::model::LogEscape;

use crate::error::FormatError;
use crate::record::RequestLog;
use crate::time::TimeCache;
use crate::var::Var;

/// nginx's predefined format (`ngx_http_log_module.c`).
pub const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \
     \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(Box<[u8]>),
    Var(Var),
}

/// A compiled `log_format`: literal text and variables, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormat {
    segments: Vec<Segment>,
    escape: LogEscape,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl LogFormat {
    /// Compiles one format string (nginx compiles each argument of
    /// `log_format` separately; a variable never spans two arguments).
    pub fn compile(format: &str, escape: LogEscape) -> Result<LogFormat, FormatError> {
        Self::compile_parts(&[format], escape)
    }

    /// Compiles the arguments of a `log_format` directive, as written.
    pub fn compile_parts(parts: &[&str], escape: LogEscape) -> Result<LogFormat, FormatError> {
        Self::compile_declared(parts, escape, &[])
    }

    /// [`LogFormat::compile_parts`] where the configuration also defines
    /// the variables `declared` (lowercase: `map`, `geo`, `set`...),
    /// which are rendered by the request's [`crate::record::ModuleVars`].
    pub fn compile_declared(
        parts: &[&str],
        escape: LogEscape,
        declared: &[String],
    ) -> Result<LogFormat, FormatError> {
        let mut segments = Vec::new();
        let mut literal = Vec::new();
        for part in parts {
            compile_one(part, declared, &mut literal, &mut segments)?;
        }
        if !literal.is_empty() {
            segments.push(Segment::Literal(literal.into()));
        }
        Ok(LogFormat { segments, escape })
    }

    /// nginx's `combined`.
    pub fn combined() -> LogFormat {
        // The constant is known-good; an error here would be a bug caught by
        // the tests, so fall back to an empty format rather than panic.
        Self::compile(COMBINED, LogEscape::Default).unwrap_or(LogFormat {
            segments: Vec::new(),
            escape: LogEscape::Default,
        })
    }

    /// Whether rendering needs `$request_id` (so the caller makes one).
    pub fn uses_request_id(&self) -> bool {
        self.segments.contains(&Segment::Var(Var::RequestId))
    }

    pub fn escape(&self) -> LogEscape {
        self.escape
    }

    /// Appends the line for `rec` (no newline) to `out`. Allocates only if
    /// `out` must grow: reuse one buffer per worker.
    pub fn render(&self, rec: &RequestLog<'_>, time: &mut TimeCache, out: &mut Vec<u8>) {
        for seg in &self.segments {
            match seg {
                Segment::Literal(text) => out.extend_from_slice(text),
                Segment::Var(v) => v.render(rec, time, self.escape, out),
            }
        }
    }
}

/// Scans one argument, pushing completed segments; literal text is kept in
/// `literal` so it merges across arguments.
fn compile_one(
    s: &str,
    declared: &[String],
    literal: &mut Vec<u8>,
    segments: &mut Vec<Segment>,
) -> Result<(), FormatError> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'$')
                .map_or(b.len(), |p| i + p);
            literal.extend_from_slice(&b[i..end]);
            i = end;
            continue;
        }
        // `from_dollar` is what nginx quotes in "invalid parameter".
        let from_dollar = &s[i..];
        let invalid = || FormatError::InvalidParameter(from_dollar.to_owned());
        i += 1;
        let bracket = b.get(i) == Some(&b'{');
        if bracket {
            i += 1;
        }
        if i >= b.len() {
            return Err(invalid());
        }
        let start = i;
        while i < b.len() && is_name_byte(b[i]) {
            i += 1;
        }
        let name = &s[start..i];
        if bracket {
            if b.get(i) != Some(&b'}') {
                return Err(FormatError::MissingBracket(name.to_owned()));
            }
            i += 1;
        }
        if name.is_empty() {
            return Err(invalid());
        }
        // A name the log cannot render itself, of the configuration's
        // list or one the configuration defines, is the request's to give
        // (core's variables); without a value it is logged as not found.
        let lower = name.to_ascii_lowercase();
        let var = Var::parse(name)
            .or_else(|| {
                let known = peregrine_conf::variables::is_known(name) || declared.contains(&lower);
                known.then(|| Var::Module(lower.into()))
            })
            .ok_or_else(|| FormatError::UnknownVariable(name.to_owned()))?;
        if !literal.is_empty() {
            segments.push(Segment::Literal(std::mem::take(literal).into()));
        }
        segments.push(Segment::Var(var));
    }
    Ok(())
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
