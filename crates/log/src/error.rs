//! Typed errors, worded as nginx words them (the binary prefixes
//! `peregrine: [emerg] `).

use std::fmt;
use std::io;
use std::path::PathBuf;

use peregrine_conf::model::Span;

/// A `log_format` (or `if=`) string that does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// `$foo` with no such variable. nginx reports it without a position.
    #[error("unknown \"{0}\" variable")]
    UnknownVariable(String),
    /// `$` at the end, `${}`, `$-x`: nginx quotes the text from the `$` on.
    #[error("invalid parameter \"{0}\"")]
    InvalidParameter(String),
    /// `${name` without `}`.
    #[error("the closing bracket in \"{0}\" variable is missing")]
    MissingBracket(String),
}

/// Everything that can fail while building loggers.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{}", with_span(.error, .span))]
    Format { error: FormatError, span: Span },
    /// `access_log ... FORMAT` naming no `log_format`.
    #[error("unknown log format \"{name}\"{}", in_span(.span))]
    UnknownFormat { name: String, span: Span },
    /// Two `access_log` directives for one file with different
    /// `buffer=`/`flush=`/`gzip=` (nginx keeps one buffer per file).
    #[error("access_log \"{}\" already defined with conflicting parameters{}", .path.display(), in_span(.span))]
    ConflictingParameters { path: PathBuf, span: Span },
    /// `flush=` on an `access_log` without `buffer=` or `gzip`.
    #[error("no buffer is defined for access_log \"{}\"{}", .path.display(), in_span(.span))]
    NoBuffer { path: PathBuf, span: Span },
    /// `access_log $x.log` left relative by the configuration: it would
    /// depend on the working directory.
    #[error("access_log path with variables must be absolute: \"{}\"{}", .path.display(), in_span(.span))]
    VariablePath { path: PathBuf, span: Span },
    /// `buffer=`, `flush=` or `gzip` on a path with variables (nginx's words).
    #[error("buffered logs cannot have variables in name{}", in_span(.span))]
    BufferedScript { span: Span },
    /// `open(2)` of a log file failed.
    #[error("open() \"{}\" failed ({})", .path.display(), OsErr(.source))]
    Open { path: PathBuf, source: io::Error },
}

fn in_span(span: &Span) -> String {
    if span.line == 0 {
        String::new()
    } else {
        format!(" in {}:{}", span.file.display(), span.line)
    }
}

fn with_span(e: &FormatError, span: &Span) -> String {
    match e {
        // nginx resolves variables after parsing, so this one has no position.
        FormatError::UnknownVariable(_) => e.to_string(),
        _ => format!("{e}{}", in_span(span)),
    }
}

/// Displays an I/O error as nginx does inside parentheses: `2: No such file
/// or directory` (errno, then `strerror`). Std's own form is
/// `No such file or directory (os error 2)`, so the suffix is cut.
#[derive(Debug, Clone, Copy)]
pub struct OsErr<'a>(pub &'a io::Error);

impl fmt::Display for OsErr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.raw_os_error() {
            Some(code) => {
                let text = io::Error::from_raw_os_error(code).to_string();
                let suffix = format!(" (os error {code})");
                let text = text.strip_suffix(suffix.as_str()).unwrap_or(&text);
                write!(f, "{code}: {text}")
            }
            None => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn os_error_like_nginx() {
        let e = io::Error::from_raw_os_error(2);
        assert_eq!(OsErr(&e).to_string(), "2: No such file or directory");
        let e = io::Error::from_raw_os_error(28);
        assert_eq!(OsErr(&e).to_string(), "28: No space left on device");
    }

    #[test]
    fn messages_like_nginx() {
        let span = Span {
            file: Arc::new(PathBuf::from("/tmp/lg/t.conf")),
            line: 8,
        };
        let e = LogError::Format {
            error: FormatError::InvalidParameter("$".into()),
            span: span.clone(),
        };
        assert_eq!(e.to_string(), "invalid parameter \"$\" in /tmp/lg/t.conf:8");
        let e = LogError::Format {
            error: FormatError::UnknownVariable("foo".into()),
            span: span.clone(),
        };
        assert_eq!(e.to_string(), "unknown \"foo\" variable");
        let e = LogError::Open {
            path: "/x/y".into(),
            source: io::Error::from_raw_os_error(13),
        };
        assert_eq!(
            e.to_string(),
            "open() \"/x/y\" failed (13: Permission denied)"
        );
    }
}
