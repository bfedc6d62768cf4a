//! `if` conditions at run time (`ngx_http_script_equal_code`,
//! `ngx_http_script_regex_start_code` as a test, `ngx_http_script_file_code`).

use std::os::unix::fs::PermissionsExt;

use peregrine_conf::model::{Cond, FileTest, SymlinkMode};

use super::eval::{eval, set_captures};
use crate::http::{Ctx, HttpCore};

impl HttpCore {
    /// Whether `cond` holds for this request.
    pub(crate) fn test(&mut self, ctx: &mut Ctx<'_>, cond: &Cond) -> bool {
        match cond {
            // nginx: false for "" and "0" (`ngx_http_script_if_code`).
            Cond::Var(t) => {
                let v = eval(self, ctx, t, false);
                !(v.is_empty() || v == "0")
            }
            Cond::Eq { var, value, negate } => {
                let a = eval(self, ctx, var, false);
                let b = eval(self, ctx, value, false);
                (a == b) != *negate
            }
            Cond::Match { var, regex, negate } => {
                let subject = eval(self, ctx, var, false);
                let caps = regex.captures(&subject);
                if ctx.conf.rewrite.log {
                    let verb = if caps.is_some() {
                        "matches"
                    } else {
                        "does not match"
                    };
                    let line = || format!("\"{}\" {verb} \"{subject}\"", regex.as_str());
                    self.log_line(peregrine_conf::model::LogLevel::Notice, line);
                }
                match caps {
                    Some(c) => {
                        set_captures(ctx, regex, c);
                        !*negate
                    }
                    None => {
                        ctx.captures.clear();
                        *negate
                    }
                }
            }
            Cond::File { op, negate, path } => {
                let path = eval(self, ctx, path, false);
                file_test(ctx, &path, *op) != *negate
            }
        }
    }
}

/// The file test on `path`; an error (missing, refused by
/// `disable_symlinks`) makes every positive test false.
fn file_test(ctx: &Ctx<'_>, path: &str, op: FileTest) -> bool {
    let ds = &ctx.conf.request.disable_symlinks;
    if ds.mode != SymlinkMode::Off {
        let skip = ds.from.as_deref().map_or(0, |f| {
            crate::symlinks::from_len(path, &ctx.vars().expand(f))
        });
        if crate::symlinks::check(path, ds.mode, skip).is_err() {
            return false;
        }
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    match op {
        FileTest::Plain => meta.is_file(),
        FileTest::Dir => meta.is_dir(),
        FileTest::Exists => true,
        // `ngx_is_exec`: the owner's execute bit.
        FileTest::Exec => meta.permissions().mode() & 0o100 != 0,
    }
}
