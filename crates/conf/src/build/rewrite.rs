//! The rewrite module's configuration (`ngx_http_rewrite_module.c`):
//! `rewrite`, `return`, `set`, `break`, `if` and the flags `rewrite_log`,
//! `uninitialized_variable_warn` (and core's `recursive_error_pages`, read
//! with the script's redirects).
//!
//! Each directive compiles at load into an [`Op`] of its level's script, in
//! configuration order; values are compiled once into [`Template`] parts
//! (nginx's `ngx_http_script_compile`). An `if` block in a location is an
//! anonymous location merged from its parent (`ngx_http_rewrite_if`): its
//! settings take effect when the condition is true; its script ops are
//! inlined in the parent's, the `if` op jumping past them when false.
//! The run-time side is `peregrine_core::rewrite`.

use std::sync::Arc;

use super::handlers::{arg, flag, msg, set as set_once};
use super::raw::RawLoc;
use super::{Builder, Env, Frame};
use crate::error::{ConfError, Result};
use crate::model::*;
use crate::syntax::{Block, Directive};
use crate::values::parse_number;

/// The rewrite settings written at one level.
#[derive(Debug, Clone, Default)]
pub struct RawRewrite {
    pub ops: Vec<RawOp>,
    pub log: Option<bool>,
    pub uninitialized_warn: Option<bool>,
    pub recursive_error_pages: Option<bool>,
}

/// An op as read: an `if` keeps its block's settings until the merge.
#[derive(Debug, Clone)]
pub enum RawOp {
    Op(Op),
    If {
        cond: Cond,
        /// The block's own settings; `server`: a server's `if` (no
        /// settings of its own, nginx's `NGX_HTTP_SIF_CONF`).
        body: Box<RawLoc>,
        server: bool,
    },
}

/// The merged rewrite settings of a level whose other settings are merged
/// already (`merged`): its script (each location `if` merged from
/// `merged`), its flags.
pub fn merge(raw: &RawRewrite, merged: &LocConf, parent: &LocConf) -> RewriteConf {
    let p = &parent.rewrite;
    let mut conf = RewriteConf {
        script: None,
        outer_script: p.script.is_some() || p.outer_script,
        log: raw.log.unwrap_or(p.log),
        uninitialized_warn: raw.uninitialized_warn.unwrap_or(p.uninitialized_warn),
        recursive_error_pages: raw.recursive_error_pages.unwrap_or(p.recursive_error_pages),
    };
    if raw.ops.is_empty() {
        return conf;
    }
    let mut base = merged.clone();
    base.rewrite = conf.clone();
    let mut ops = Vec::new();
    for op in &raw.ops {
        match op {
            RawOp::Op(op) => ops.push(op.clone()),
            RawOp::If { cond, body, server } => {
                let at = ops.len();
                let conf = (!server).then(|| Arc::new(if_conf(body, &base)));
                ops.push(Op::If {
                    cond: cond.clone(),
                    conf,
                    next: 0,
                });
                ops.extend(body.rewrite.ops.iter().filter_map(|o| match o {
                    RawOp::Op(op) => Some(op.clone()),
                    // `if` is not allowed inside `if` (checked by context).
                    RawOp::If { .. } => None,
                }));
                let end = ops.len();
                if let Some(Op::If { next, .. }) = ops.get_mut(at) {
                    *next = end;
                }
            }
        }
    }
    conf.script = Some(Arc::new(Script { ops }));
    conf
}

/// The settings of a location's `if` block: its own over its location's.
/// The location's content handler stays (nginx keeps `r->content_handler`
/// unless the block sets one); `try_files` does not (nginx's famous "if is
/// evil": the try_files phase reads the block's settings).
fn if_conf(body: &RawLoc, base: &LocConf) -> LocConf {
    let mut conf = body.merge(base);
    conf.rewrite.script = None;
    conf.rewrite.outer_script = true;
    conf.stub_status |= base.stub_status;
    conf.empty_gif |= base.empty_gif;
    conf.metrics |= base.metrics;
    conf.health_status |= base.health_status;
    if conf.proxy.pass.is_none() && base.proxy.pass.is_some() {
        let mut p = (*conf.proxy).clone();
        p.pass = base.proxy.pass.clone();
        conf.proxy = std::sync::Arc::new(p);
    }
    for (own, outer) in [
        (&mut conf.fastcgi, &base.fastcgi),
        (&mut conf.uwsgi, &base.uwsgi),
        (&mut conf.scgi, &base.scgi),
    ] {
        if own.up.pass.is_none() && outer.up.pass.is_some() {
            let mut c = (**own).clone();
            let mut up = (*c.up).clone();
            up.pass = outer.up.pass.clone();
            c.up = std::sync::Arc::new(up);
            *own = std::sync::Arc::new(c);
        }
    }
    conf
}

/// Largest status `return` takes (`ngx_http_rewrite_return`).
pub const MAX_RETURN_CODE: u16 = 999;

fn is_absolute_redirect(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://") || s.starts_with("$scheme")
}

/// `return code [text]` / `return URL` (`ngx_http_rewrite_return`).
pub fn return_(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let first = arg(d, 0);
    let (code, text) = match parse_number(first).and_then(|c| u16::try_from(c).ok()) {
        Some(code) if code <= MAX_RETURN_CODE => (code, d.args.get(1)),
        _ if d.args.len() == 1 && is_absolute_redirect(first) => (302, d.args.first()),
        _ => return Err(msg(d, format!("invalid return code \"{first}\""))),
    };
    let text = text.map(|t| compile(t, d, env)).transpose()?;
    push(l, Op::Return { code, text });
    Ok(())
}

/// `rewrite regex replacement [last|break|redirect|permanent]`.
pub fn rewrite(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let replacement = arg(d, 1);
    if replacement.is_empty() {
        return Err(msg(d, "empty replacement"));
    }
    let regex = super::location::compile(arg(d, 0), false, &d.span)?;
    declare_captures(&regex, env);
    // The last "?" drops the original arguments.
    let (value, add_args) = match replacement.strip_suffix('?') {
        Some(v) => (v, false),
        None => (replacement, true),
    };
    let mut redirect = is_absolute_redirect(value).then_some(302);
    let mut flag = match redirect {
        Some(_) => RewriteFlag::Last,
        None => RewriteFlag::None,
    };
    match d.args.get(2).map(String::as_str) {
        None => {}
        Some("last") => flag = RewriteFlag::Last,
        Some("break") => flag = RewriteFlag::Break,
        Some("redirect") => (flag, redirect) = (RewriteFlag::Last, Some(302)),
        Some("permanent") => (flag, redirect) = (RewriteFlag::Last, Some(301)),
        Some(other) => return Err(msg(d, format!("invalid parameter \"{other}\""))),
    }
    // nginx's `compile_args`: a literal `?` starts the arguments of an
    // internal rewrite; a redirect keeps it in the Location.
    let (uri, args) = match redirect {
        None => split_literal_args(value, d, env)?,
        Some(_) => (compile(value, d, env)?, None),
    };
    push(
        l,
        Op::Rewrite(Box::new(RewriteOp {
            regex,
            uri,
            args,
            add_args,
            flag,
            redirect,
        })),
    );
    Ok(())
}

/// The replacement before and after its first `?` outside a variable.
fn split_literal_args(
    value: &str,
    d: &Directive,
    env: &Env<'_>,
) -> Result<(Template, Option<Template>)> {
    let t = compile(value, d, env)?;
    let at = t
        .parts
        .iter()
        .position(|p| matches!(p, Part::Lit(s) if s.contains('?')));
    let Some(at) = at else { return Ok((t, None)) };
    let mut uri = t.parts;
    let mut args = uri.split_off(at);
    if let Some(Part::Lit(s)) = args.first_mut()
        && let Some((before, after)) = s.split_once('?')
    {
        if !before.is_empty() {
            uri.push(Part::Lit(before.to_string()));
        }
        *s = after.to_string();
    }
    args.retain(|p| !matches!(p, Part::Lit(s) if s.is_empty()));
    Ok((Template { parts: uri }, Some(Template { parts: args })))
}

/// `set $variable value` (`ngx_http_rewrite_set`).
pub fn set(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let name = arg(d, 0);
    let Some(var) = name.strip_prefix('$') else {
        return Err(msg(d, format!("invalid variable name \"{name}\"")));
    };
    let lower = var.to_ascii_lowercase();
    let target = match lower.as_str() {
        "args" => SetTarget::Args,
        // nginx's core variables are not changeable (but its prefix
        // families are: `set $arg_x` makes a variable of its own), but
        // `$limit_rate` (NGX_HTTP_VAR_CHANGEABLE: it sets the request's
        // rate, `peregrine_core`'s limit_rate module reads it).
        n if n != "limit_rate" && crate::variables::KNOWN.contains(&n) => {
            return Err(msg(d, format!("the duplicate \"{var}\" variable")));
        }
        n => {
            env.declare(n);
            SetTarget::Var(env.set_index(n))
        }
    };
    let value = compile(arg(d, 1), d, env)?;
    push(l, Op::Set { target, value });
    Ok(())
}

/// `break`.
pub fn break_(l: &mut RawLoc, _: &Directive, _: &Env<'_>) -> Result<()> {
    push(l, Op::Break);
    Ok(())
}

pub fn rewrite_log(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_once(&mut l.rewrite.log, flag(d)?, d)
}

pub fn uninitialized_variable_warn(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_once(&mut l.rewrite.uninitialized_warn, flag(d)?, d)
}

pub fn recursive_error_pages(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_once(&mut l.rewrite.recursive_error_pages, flag(d)?, d)
}

fn push(l: &mut RawLoc, op: Op) {
    l.rewrite.ops.push(RawOp::Op(op));
}

/// Named groups of a script's regex are variables (`ngx_http_regex_compile`).
fn declare_captures(regex: &crate::regex::Regex, env: &Env<'_>) {
    for (name, _) in regex.capture_names() {
        env.declare(&name.to_ascii_lowercase());
    }
}

impl Builder {
    /// `if (condition) { ... }` in a server (`server`) or a location: the
    /// condition compiled, the block walked as `SIF`/`LIF` into settings of
    /// its own.
    pub(super) fn if_block(
        &mut self,
        d: &Directive,
        block: &Block,
        parent: &mut RawLoc,
        server: bool,
    ) -> Result<()> {
        let cond = {
            let env = self.env(false);
            condition(d, &env)?
        };
        self.flush_declared();
        let mut body = RawLoc::default();
        let ctx = if server {
            crate::table::ctx::SIF
        } else {
            crate::table::ctx::LIF
        };
        self.walk(
            &block.items,
            block.error.as_ref(),
            &mut Frame::If(&mut body, ctx),
        )?;
        parent.rewrite.ops.push(RawOp::If {
            cond,
            body: Box::new(body),
            server,
        });
        Ok(())
    }
}

/// The condition's words as nginx's `ngx_http_rewrite_if_condition` reads
/// them: the first starts with `(`, the last ends with `)`, either alone
/// or attached to a word.
#[derive(Debug, PartialEq, Eq)]
pub struct CondWords<'a> {
    pub words: Vec<&'a str>,
}

/// The condition's words without its parentheses, or nginx's
/// `invalid condition "WORD"`.
pub fn cond_words(d: &Directive) -> Result<CondWords<'_>> {
    let invalid = |w: &str| msg(d, format!("invalid condition \"{w}\""));
    let args = &d.args;
    let first = args.first().map_or("", String::as_str);
    if !first.starts_with('(') {
        return Err(invalid(first));
    }
    // nginx strips the `(` in place: a single word is checked without it.
    let last = match args.as_slice() {
        [only] => only.get(1..).unwrap_or(""),
        _ => args.last().map_or("", String::as_str),
    };
    if !last.ends_with(')') {
        return Err(invalid(last));
    }
    let mut words: Vec<&str> = args.iter().map(String::as_str).collect();
    if first.len() == 1 {
        words.remove(0);
    } else {
        words[0] = &first[1..];
    }
    let Some(&w) = words.last() else {
        return Err(invalid(last));
    };
    if w.len() == 1 {
        words.pop();
    } else if let Some(end) = words.last_mut() {
        *end = &w[..w.len() - 1];
    }
    if words.is_empty() {
        return Err(invalid(")"));
    }
    Ok(CondWords { words })
}

/// The words of `if` that are values with variables (the regex is not):
/// for the unknown-variable check.
pub fn cond_values(d: &Directive) -> Vec<&str> {
    let Ok(c) = cond_words(d) else {
        return Vec::new();
    };
    match c.words.as_slice() {
        [v] => vec![*v],
        [v, op, _] if op.contains('~') => vec![*v],
        [v, _, value] => vec![*v, *value],
        [_, value] => vec![*value],
        _ => Vec::new(),
    }
}

/// Compiles an `if` condition (`ngx_http_rewrite_if_condition`).
pub fn condition(d: &Directive, env: &Env<'_>) -> Result<Cond> {
    let c = cond_words(d)?;
    let invalid = |w: &str| msg(d, format!("invalid condition \"{w}\""));
    let words = c.words.as_slice();
    let Some(&head) = words.first() else {
        return Err(invalid(""));
    };
    if head.len() > 1 && head.starts_with('$') {
        if words.len() != 1 && words.len() != 3 {
            return Err(invalid(head));
        }
        let var = variable(&head[1..], env);
        let [_, op, value] = words else {
            return Ok(Cond::Var(var));
        };
        return match *op {
            "=" | "!=" => Ok(Cond::Eq {
                var,
                value: compile(value, d, env)?,
                negate: *op == "!=",
            }),
            "~" | "~*" | "!~" | "!~*" => {
                let regex = super::location::compile(value, op.ends_with('*'), &d.span)?;
                declare_captures(&regex, env);
                Ok(Cond::Match {
                    var,
                    regex,
                    negate: op.starts_with('!'),
                })
            }
            _ => Err(msg(d, format!("unexpected \"{op}\" in condition"))),
        };
    }
    let (negate, test) = match head.as_bytes() {
        [b'-', t] => (false, *t),
        [b'!', b'-', t] => (true, *t),
        _ => return Err(invalid(head)),
    };
    let [_, path] = words else {
        return Err(invalid(head));
    };
    let path = compile(path, d, env)?;
    let op = match test {
        b'f' => FileTest::Plain,
        b'd' => FileTest::Dir,
        b'e' => FileTest::Exists,
        b'x' => FileTest::Exec,
        _ => return Err(invalid(head)),
    };
    Ok(Cond::File { op, negate, path })
}

/// The variable `$NAME` of a condition (`ngx_http_rewrite_variable`: the
/// whole word after `$` is the name).
fn variable(name: &str, env: &Env<'_>) -> Template {
    Template {
        parts: vec![part_of(name, env)],
    }
}

fn part_of(name: &str, env: &Env<'_>) -> Part {
    if let [d @ b'0'..=b'9'] = name.as_bytes() {
        return Part::Capture(usize::from(d - b'0'));
    }
    match crate::variables::VarId::resolve(name) {
        Some(id) => Part::Var(id),
        None => {
            let lower = name.to_ascii_lowercase();
            Part::Set(env.set_index(&lower), lower)
        }
    }
}

/// Compiles a value as `ngx_http_script_compile`: `$1`..`$9` captures,
/// `$name` and `${name}` variables, the rest literal. Errors are nginx's:
/// `invalid variable name`, `the closing bracket in "NAME" variable is
/// missing`. An internal rewrite's caller splits at a literal `?` itself.
pub fn compile(value: &str, d: &Directive, env: &Env<'_>) -> Result<Template> {
    let b = value.as_bytes();
    let mut parts: Vec<Part> = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            let next = value[i..].find('$').map_or(b.len(), |n| i + n);
            lit.push_str(&value[i..next]);
            i = next;
            continue;
        }
        i += 1;
        let invalid = || ConfError::at(&d.span, "invalid variable name");
        let Some(&c) = b.get(i) else {
            return Err(invalid());
        };
        if c.is_ascii_digit() && c != b'0' {
            flush(&mut parts, &mut lit);
            parts.push(Part::Capture(usize::from(c - b'0')));
            i += 1;
            continue;
        }
        let bracket = c == b'{';
        if bracket {
            i += 1;
        }
        let start = i;
        while b
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            i += 1;
        }
        let name = &value[start..i];
        if bracket {
            if b.get(i) != Some(&b'}') {
                return Err(ConfError::at(
                    &d.span,
                    format!("the closing bracket in \"{name}\" variable is missing"),
                ));
            }
            i += 1;
        }
        if name.is_empty() {
            return Err(invalid());
        }
        flush(&mut parts, &mut lit);
        parts.push(part_of(name, env));
    }
    flush(&mut parts, &mut lit);
    Ok(Template { parts })
}

fn flush(parts: &mut Vec<Part>, lit: &mut String) {
    if !lit.is_empty() {
        parts.push(Part::Lit(std::mem::take(lit)));
    }
}

#[cfg(test)]
mod tests;
