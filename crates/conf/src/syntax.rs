//! The syntax tree: directives with their arguments, optional `{ }` blocks and
//! positions, before any meaning is given to them.
//!
//! nginx interprets each directive as soon as it is read, so of two errors it
//! reports the one that comes first in the file. To keep that order with a
//! tree, a syntax error does not discard the tree: the directives read before
//! it are kept and the error is attached where reading stopped (to the
//! innermost open block, or to the file). The interpreter walks what was read
//! and raises the syntax error when it reaches that point.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::ConfError;
use crate::lexer::{Lexer, Source, Stmt};
use crate::model::Span;

/// Nesting deeper than this is refused: nginx has no limit, but recursion on
/// hostile input must not exhaust the stack, and real configurations nest
/// four or five levels (http → server → location → location).
pub const MAX_BLOCK_DEPTH: usize = 64;

/// One directive: `name args... ;` or `name args... { block }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    pub name: String,
    pub args: Vec<String>,
    /// The line of the `;` or `{` that ended the directive, as nginx reports.
    pub span: Span,
    pub block: Option<Block>,
}

/// The contents of `{ }`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Block {
    pub items: Vec<Directive>,
    /// The line of the closing `}` (0 when reading stopped before it):
    /// where nginx reports what it checks once a block is read.
    pub end: u32,
    /// The syntax error that stopped reading inside this block, if any.
    pub error: Option<ConfError>,
}

/// A whole file (or the `-g` parameter).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub items: Vec<Directive>,
    /// The syntax error that stopped reading at the top level, if any.
    pub error: Option<ConfError>,
}

impl Parsed {
    /// The first syntax error, wherever it is attached.
    pub fn first_error(&self) -> Option<&ConfError> {
        fn in_items(items: &[Directive]) -> Option<&ConfError> {
            items.iter().find_map(|d| {
                d.block
                    .as_ref()
                    .and_then(|b| b.error.as_ref().or_else(|| in_items(&b.items)))
            })
        }
        self.error.as_ref().or_else(|| in_items(&self.items))
    }
}

/// Why reading a block stopped early.
enum Stop {
    /// An error not yet attached to a block.
    Fresh(ConfError),
    /// Already attached to an inner block.
    Placed,
}

/// Parses a whole input into a tree.
pub fn parse(input: &[u8], file: Arc<PathBuf>, source: Source) -> Parsed {
    let mut lx = Lexer::new(input, file, source);
    let mut items = Vec::new();
    let error = match read_items(&mut lx, &mut items, 0, source) {
        Ok(_) => None,
        Err(Stop::Fresh(e)) => Some(e),
        Err(Stop::Placed) => None,
    };
    Parsed { items, error }
}

/// Reads directives into `items` until the block's `}` (depth > 0) or the end.
fn read_items(
    lx: &mut Lexer<'_>,
    items: &mut Vec<Directive>,
    depth: usize,
    source: Source,
) -> std::result::Result<u32, Stop> {
    loop {
        let stmt = lx.next_stmt().map_err(Stop::Fresh)?;
        let (args, line, is_block) = match stmt {
            Stmt::BlockEnd { line } if depth > 0 => return Ok(line),
            Stmt::BlockEnd { .. } => return Err(Stop::Fresh(unexpected(lx, "\"}\""))),
            Stmt::Eof { .. } if depth > 0 => {
                return Err(Stop::Fresh(unexpected(lx, "end of file, expecting \"}\"")));
            }
            Stmt::Eof { .. } => return Ok(0),
            Stmt::Simple { args, line } => (args, line, false),
            Stmt::BlockStart { args, line } => (args, line, true),
        };
        if is_block && source == Source::Param {
            return Err(Stop::Fresh(ConfError::at(
                &lx.span(),
                "block directives are not supported in -g option",
            )));
        }
        if is_block && depth + 1 > MAX_BLOCK_DEPTH {
            return Err(Stop::Fresh(ConfError::at(
                &lx.span(),
                format!("blocks are nested deeper than {MAX_BLOCK_DEPTH} levels"),
            )));
        }
        let mut args = args.into_iter();
        let name = args.next().unwrap_or_default();
        let span = Span { line, ..lx.span() };
        let mut directive = Directive {
            name,
            args: args.collect(),
            span,
            block: is_block.then(Block::default),
        };
        let result = match directive.block.as_mut() {
            Some(block) => match read_items(lx, &mut block.items, depth + 1, source) {
                Ok(end) => {
                    block.end = end;
                    Ok(())
                }
                Err(Stop::Fresh(e)) => {
                    block.error = Some(e);
                    Err(Stop::Placed)
                }
                Err(Stop::Placed) => Err(Stop::Placed),
            },
            None => Ok(()),
        };
        items.push(directive);
        result?;
    }
}

fn unexpected(lx: &Lexer<'_>, what: &str) -> ConfError {
    ConfError::at(&lx.span(), format!("unexpected {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(text: &str) -> Parsed {
        parse(text.as_bytes(), Arc::new(PathBuf::from("f")), Source::File)
    }

    #[test]
    fn tree_shape() {
        let t = p("a 1;\nb {\n c 2;\n d { }\n}\n");
        assert!(t.error.is_none());
        assert_eq!(t.items.len(), 2);
        assert_eq!(t.items[0].name, "a");
        assert_eq!(t.items[0].args, vec!["1"]);
        assert_eq!(t.items[0].span.line, 1);
        let b = t.items[1].block.as_ref().unwrap();
        assert_eq!(t.items[1].span.line, 2);
        assert_eq!(b.items.len(), 2);
        assert_eq!(b.items[1].span.line, 4);
        assert!(b.items[1].block.as_ref().unwrap().items.is_empty());
        assert!(t.items[0].block.is_none());
    }

    #[test]
    fn errors_are_attached_where_reading_stopped() {
        let t = p("a;\nb {\n c;\n d {\n");
        assert!(t.error.is_none());
        let d = &t.items[1].block.as_ref().unwrap().items[1];
        assert_eq!(
            d.block
                .as_ref()
                .unwrap()
                .error
                .as_ref()
                .unwrap()
                .to_string(),
            "unexpected end of file, expecting \"}\" in f:5"
        );
        assert_eq!(t.first_error().unwrap().span.as_ref().unwrap().line, 5);
        let t = p("a;\n}\n");
        assert_eq!(t.error.unwrap().to_string(), "unexpected \"}\" in f:2");
        assert_eq!(t.items.len(), 1);
    }

    #[test]
    fn param_refuses_blocks() {
        let t = parse(
            b"events {}",
            Arc::new(PathBuf::from("command line")),
            Source::Param,
        );
        assert_eq!(
            t.error.unwrap().message,
            "block directives are not supported in -g option"
        );
    }

    #[test]
    fn depth_is_bounded() {
        let text = "a {".repeat(MAX_BLOCK_DEPTH + 5);
        assert!(
            p(&text)
                .first_error()
                .unwrap()
                .message
                .contains("nested deeper")
        );
        let ok = format!(
            "{}{}",
            "a {".repeat(MAX_BLOCK_DEPTH),
            "}".repeat(MAX_BLOCK_DEPTH)
        );
        assert!(p(&ok).first_error().is_none());
    }

    /// Renders a tree as text with every word quoted.
    fn render(items: &[Directive], out: &mut String) {
        let q = |w: &str| format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""));
        for d in items {
            out.push_str(&q(&d.name));
            for a in &d.args {
                out.push(' ');
                out.push_str(&q(a));
            }
            match &d.block {
                Some(b) => {
                    out.push_str(" {\n");
                    render(&b.items, out);
                    out.push_str("}\n");
                }
                None => out.push_str(";\n"),
            }
        }
    }

    /// The tree without positions.
    fn shape(items: &[Directive]) -> Vec<(String, Vec<String>, Option<Vec<String>>)> {
        items
            .iter()
            .map(|d| {
                let inner = d.block.as_ref().map(|b| {
                    shape(&b.items)
                        .into_iter()
                        .map(|x| format!("{x:?}"))
                        .collect()
                });
                (d.name.clone(), d.args.clone(), inner)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn never_panics(text in "[a-c{};\"# \n]{0,300}") {
            let _ = p(&text).first_error();
        }

        #[test]
        fn round_trips(text in "[a-c{};\"'\\\\$# \n]{0,300}") {
            let t = p(&text);
            if t.first_error().is_none() {
                let mut again = String::new();
                render(&t.items, &mut again);
                let t2 = p(&again);
                prop_assert!(t2.first_error().is_none(), "{}", again);
                prop_assert_eq!(shape(&t2.items), shape(&t.items));
            }
        }
    }
}
