//! The rewrite module at run time (`ngx_http_rewrite_handler` and the
//! script codes of `ngx_http_script.c`): runs a level's compiled
//! [`Script`] — the server's in the server-rewrite phase, the location's in
//! the rewrite phase — over the request's state: `rewrite` changes the URI
//! and arguments or answers a redirect, `if` tests a condition and selects
//! its block's settings, `set` fills the request's table of set variables,
//! `return` answers, `break` stops.
//!
//! Owns: the interpreter ([`HttpCore::run_script`]), conditions
//! ([`cond`]), the evaluation of compiled values and nginx's escaping of
//! captures and unescaping of redirects ([`eval`]), the per-request table
//! of set values ([`SetVars`]) and the notice lines `rewrite_log` asks for.
//! The configuration side is `peregrine_conf::build::rewrite`.
//!
//! A request in a location without a script pays nothing: the phases test
//! `conf.rewrite.script` once, and [`SetVars`] is empty and unallocated.

mod cond;
pub(crate) mod eval;

use peregrine_conf::model::LogLevel;
use peregrine_conf::model::VarTable;
use std::borrow::Cow;

use peregrine_conf::model::{Op, RewriteFlag, RewriteOp, Script, SetTarget};

use crate::http::{Ctx, HttpCore, Step};
use crate::special::Special;

/// What a script decided.
pub(crate) enum Flow {
    /// Go on with the next phase (nginx's `NGX_DECLINED`), the URI
    /// unchanged or changed with `break`.
    Next,
    /// The URI changed (`last`, or a rewrite without flag): search the
    /// location again (nginx's `r->uri_changed`).
    Last,
    /// The answer, or an internal redirect.
    Step(Step),
}

/// The values `set` gave this request (and a map's cached ones, some
/// day), by the configuration's variable index
/// (`peregrine_conf::model::HttpConf::variables`), and that table.
#[derive(Debug)]
pub(crate) struct SetVars<'a> {
    pub table: &'a VarTable,
    pub values: Vec<Option<String>>,
}

impl Default for SetVars<'_> {
    fn default() -> Self {
        static NONE: VarTable = VarTable {
            names: Vec::new(),
            defs: Vec::new(),
            shadows_family: false,
        };
        SetVars {
            table: &NONE,
            values: Vec::new(),
        }
    }
}

impl SetVars<'_> {
    /// Whether `set` has given any variable a value in this request (the
    /// table also lists `map`/`geo` names, which `set` may never touch).
    pub(crate) fn any_stored(&self) -> bool {
        !self.values.is_empty()
    }

    /// The value `set` gave the variable `name` (any case), if any.
    pub(crate) fn by_name(&self, name: &str) -> Option<&str> {
        self.get(self.table.index(name)?)
    }

    /// The value `set` gave variable `i`, if any.
    pub(crate) fn get(&self, i: usize) -> Option<&str> {
        self.values.get(i)?.as_deref()
    }

    pub(crate) fn store(&mut self, index: usize, value: String) {
        if self.values.len() <= index {
            self.values
                .resize(self.table.names.len().max(index + 1), None);
        }
        self.values[index] = Some(value);
    }
}

/// A line for the error log (`rewrite_log`'s notices, the
/// uninitialized-variable warning), kept until the engine takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// nginx's level (`notice` for `rewrite_log`, `warn`).
    pub level: peregrine_conf::model::LogLevel,
    pub text: String,
}

/// Bound on the lines kept per worker between two
/// [`HttpCore::take_log_lines`]: a configuration logging every request
/// without a reader must not grow without limit.
pub const MAX_PENDING_LOG_LINES: usize = 1024;

impl HttpCore {
    /// Runs `script` from its start (`ngx_http_rewrite_handler`).
    pub(crate) fn run_script(&mut self, ctx: &mut Ctx<'_>, script: &Script) -> Flow {
        let mut changed = false;
        let mut ip = 0;
        while let Some(op) = script.ops.get(ip) {
            ip += 1;
            match op {
                Op::Rewrite(r) => match self.rewrite(ctx, r) {
                    Some(Flow::Last) if r.flag == RewriteFlag::None => changed = true,
                    Some(Flow::Next) => {
                        // `rewrite ... break` changed the URI in place.
                        ctx.valid_location = false;
                        return Flow::Next;
                    }
                    Some(flow) => return flow,
                    None => {}
                },
                Op::Return { code, text } => {
                    let text = text.as_ref().map(|t| eval::eval(self, ctx, t, false));
                    return Flow::Step(self.do_return(ctx, *code, text));
                }
                Op::Set { target, value } => {
                    let v = eval::eval(self, ctx, value, false);
                    match target {
                        SetTarget::Var(i) => ctx.sets.store(*i, v),
                        SetTarget::Args => ctx.args = Some(Cow::Owned(v)),
                    }
                }
                Op::Break => {
                    if changed {
                        ctx.valid_location = false;
                    }
                    return Flow::Next;
                }
                Op::If { cond, conf, next } => {
                    if self.test(ctx, cond) {
                        if let Some(c) = conf {
                            ctx.conf = c.clone();
                        }
                    } else {
                        ip = *next;
                    }
                }
            }
        }
        if changed { Flow::Last } else { Flow::Next }
    }

    /// One `rewrite` (`ngx_http_script_regex_start_code` and `_end_code`):
    /// `None` when the regex does not match (the script goes on).
    fn rewrite(&mut self, ctx: &mut Ctx<'_>, r: &RewriteOp) -> Option<Flow> {
        let matched = r.regex.captures(&ctx.uri);
        let log = ctx.conf.rewrite.log;
        if log {
            let verb = if matched.is_some() {
                "matches"
            } else {
                "does not match"
            };
            let uri = &ctx.uri;
            self.log_line(LogLevel::Notice, || {
                format!("\"{}\" {verb} \"{uri}\"", r.regex.as_str())
            });
        }
        let Some(caps) = matched else {
            // nginx: `r->ncaptures = 0`.
            ctx.captures.clear();
            return None;
        };
        eval::set_captures(ctx, &r.regex, caps);
        if let Some(status) = r.redirect {
            let location = eval::redirect_target(self, ctx, r);
            if log {
                self.log_line(LogLevel::Notice, || {
                    format!("rewritten redirect: \"{location}\"")
                });
            }
            return Some(Flow::Step(Step::Special(Special {
                status,
                location: Some(location),
                ..Special::default()
            })));
        }
        let (uri, args) = eval::rewritten(self, ctx, r);
        if log {
            let a = args.as_deref().unwrap_or("");
            self.log_line(LogLevel::Notice, || {
                format!("rewritten data: \"{uri}\", args: \"{a}\"")
            });
        }
        if uri.is_empty() {
            self.note_failure(crate::response::ErrorNote::EmptyRewrite);
            return Some(Flow::Step(Step::Special(Special::status(500))));
        }
        ctx.uri = Cow::Owned(uri);
        ctx.args = args.map(Cow::Owned);
        Some(match r.flag {
            RewriteFlag::Break => Flow::Next,
            RewriteFlag::Last | RewriteFlag::None => Flow::Last,
        })
    }

    /// Keeps an error-log line for the engine (bounded: past the bound the
    /// line is not even formatted).
    pub(crate) fn log_line(&mut self, level: LogLevel, text: impl FnOnce() -> String) {
        if self.log_lines.len() < MAX_PENDING_LOG_LINES {
            self.log_lines.push(LogLine {
                level,
                text: text(),
            });
        }
    }

    /// The error-log lines the last requests' scripts produced
    /// (`rewrite_log` notices, `uninitialized_variable_warn` warnings),
    /// oldest first, for the engine to write with the request's context.
    pub fn take_log_lines(&mut self) -> Vec<LogLine> {
        std::mem::take(&mut self.log_lines)
    }

    /// Whether [`Self::take_log_lines`] has any (one test per request).
    #[inline]
    pub fn has_log_lines(&self) -> bool {
        !self.log_lines.is_empty()
    }
}
