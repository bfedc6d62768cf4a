//! `include`: glob patterns and relative paths, resolved like nginx
//! (`ngx_conf_include`): relative to the directory of the main configuration
//! file, patterns expanded in sorted order, a pattern matching nothing is not
//! an error while a missing plain file is.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Builder;
use crate::error::{ConfError, Result};
use crate::lexer::Source;
use crate::model::SourceFile;
use crate::syntax::{self, Directive, Parsed};

/// Includes nested deeper than this are refused: an include of itself would
/// otherwise recurse until memory runs out (nginx runs out of descriptors).
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// `open() "PATH" failed (ERRNO: TEXT)`, nginx's wording of a failed open.
pub fn open_failed(path: &std::path::Path, e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    format!(
        "open() \"{}\" failed ({}: {})",
        path.display(),
        e.raw_os_error().unwrap_or(0),
        text
    )
}

/// Reads a configuration file as nginx does: up to the size `fstat` reports
/// (`ngx_conf_read_token` stops at `ngx_file_size`), so a device such as
/// `/dev/zero` reads as an empty file (as `nginx -t` accepts it) instead of
/// growing until memory runs out.
pub fn read_conf_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::new();
    file.take(size).read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl Builder {
    /// The files an `include` names, in nginx's order.
    pub(super) fn include_paths(&mut self, d: &Directive) -> Result<Vec<PathBuf>> {
        if !self.read_includes {
            return Ok(Vec::new());
        }
        if self.include_depth >= MAX_INCLUDE_DEPTH {
            return Err(ConfError::at(
                &d.span,
                format!(
                    "includes are nested deeper than {MAX_INCLUDE_DEPTH} levels (an include of itself?)"
                ),
            ));
        }
        let arg = d.args.first().map(String::as_str).unwrap_or_default();
        let path = if arg.starts_with('/') {
            PathBuf::from(arg)
        } else {
            self.conf_dir.join(arg)
        };
        let pattern = path.to_string_lossy().into_owned();
        if !pattern.contains(['*', '?', '[']) {
            return Ok(vec![path]);
        }
        // POSIX glob(3), which nginx uses, does not match a leading dot with `*`.
        let options = glob::MatchOptions {
            require_literal_leading_dot: true,
            ..Default::default()
        };
        let paths = glob::glob_with(&pattern, options)
            .map_err(|e| ConfError::at(&d.span, format!("glob() \"{pattern}\" failed ({e})")))?;
        let mut out = Vec::new();
        for entry in paths {
            let p = entry.map_err(|e| {
                ConfError::at(&d.span, format!("glob() \"{pattern}\" failed ({e})"))
            })?;
            out.push(p);
        }
        out.sort();
        Ok(out)
    }

    /// The directives of a `stream { }` or `mail { }` block, or of one of
    /// their servers, `include`s read in place (nginx's `ngx_conf_parse`
    /// on the included file in the same context); `one` gives each its
    /// meaning. The block's own syntax error, if any, ends the walk.
    pub(super) fn walk_items<R>(
        &mut self,
        items: &[Directive],
        error: Option<&crate::error::ConfError>,
        raw: &mut R,
        server: Option<usize>,
        one: fn(&mut Self, &Directive, &mut R, Option<usize>) -> Result<()>,
    ) -> Result<()> {
        for d in items {
            if d.name != "include" {
                one(self, d, raw, server)?;
                continue;
            }
            super::check_shape(d, true, false, d.args.len() == 1)?;
            for path in self.include_paths(d)? {
                let parsed = self.load_file(&path, d)?;
                self.include_depth += 1;
                let r = self.walk_items(&parsed.items, parsed.error.as_ref(), raw, server, one);
                self.include_depth -= 1;
                r?;
            }
        }
        match error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Reads and parses one included file, recording it for `-T`.
    pub(super) fn load_file(&mut self, path: &Path, d: &Directive) -> Result<Parsed> {
        let bytes =
            read_conf_file(path).map_err(|e| ConfError::at(&d.span, open_failed(path, &e)))?;
        Ok(self.parse_file(path, &bytes))
    }

    /// Parses file bytes and records the file.
    pub fn parse_file(&mut self, path: &Path, bytes: &[u8]) -> Parsed {
        self.files.push(SourceFile {
            path: path.to_path_buf(),
            text: String::from_utf8_lossy(bytes).into_owned(),
        });
        syntax::parse(bytes, Arc::new(path.to_path_buf()), Source::File)
    }
}
