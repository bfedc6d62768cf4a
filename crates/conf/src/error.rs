//! The one error type of the crate, worded as nginx words its `[emerg]` lines.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::model::Span;

/// The pseudo file name nginx prints for `-g` directives (`... in command line`).
pub const COMMAND_LINE: &str = "command line";

/// A configuration error: `MESSAGE in FILE:LINE`, as nginx prints it after
/// `[emerg]`. `hint` (Peregrine's, e.g. `did you mean "location"?`) is appended
/// after the position so that the part nginx prints stays byte-identical.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ConfError {
    pub message: String,
    pub span: Option<Span>,
    /// Peregrine's addition, printed after the position as `; HINT`.
    pub hint: Option<String>,
}

impl ConfError {
    /// An error at a position.
    pub fn at(span: &Span, message: impl Into<String>) -> Self {
        ConfError {
            message: message.into(),
            span: Some(span.clone()),
            hint: None,
        }
    }

    /// An error that has no position (`no "events" section in configuration`).
    pub fn bare(message: impl Into<String>) -> Self {
        ConfError {
            message: message.into(),
            span: None,
            hint: None,
        }
    }

    /// Adds Peregrine's hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl ConfError {
    /// `MESSAGE[ in FILE:LINE][; HINT]`.
    fn render(&self) -> String {
        let mut out = self.message.clone();
        if let Some(span) = &self.span {
            out.push_str(&format!(" in {span}"));
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!("; {hint}"));
        }
        out
    }
}

impl fmt::Display for Span {
    /// `FILE:LINE`, or just `command line` for `-g` directives (line 0), as nginx.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file.display())
        } else {
            write!(f, "{}:{}", self.file.display(), self.line)
        }
    }
}

impl Span {
    /// A position in a file.
    pub fn new(file: &Arc<PathBuf>, line: u32) -> Self {
        Span {
            file: Arc::clone(file),
            line,
        }
    }

    /// The position of `-g` directives.
    pub fn command_line() -> Self {
        Span {
            file: Arc::new(PathBuf::from(COMMAND_LINE)),
            line: 0,
        }
    }
}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, ConfError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        let span = Span::new(&Arc::new(PathBuf::from("/p/conf/x.conf")), 3);
        let e = ConfError::at(&span, "unknown directive \"Location\"");
        assert_eq!(
            e.to_string(),
            "unknown directive \"Location\" in /p/conf/x.conf:3"
        );
        let e = e.with_hint("did you mean \"location\"?");
        assert_eq!(
            e.to_string(),
            "unknown directive \"Location\" in /p/conf/x.conf:3; did you mean \"location\"?"
        );
        assert_eq!(
            ConfError::bare("no \"events\" section in configuration").to_string(),
            "no \"events\" section in configuration"
        );
        let e = ConfError::at(&Span::command_line(), "unknown directive \"foo\"");
        assert_eq!(e.to_string(), "unknown directive \"foo\" in command line");
    }
}
