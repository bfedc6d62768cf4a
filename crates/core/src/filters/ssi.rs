//! The SSI filter's commands (`ngx_http_ssi_filter_module`) on a body the
//! parser ([`super::ssi_parse`]) cut into text and commands: `echo`,
//! `set`, `config`, `include` (a subrequest; `set` keeps its output in a
//! variable, `stub` names the block shown when it fails or is empty),
//! `block`/`endblock`, and `if`/`elif`/`else`/`endif` with nginx's
//! expressions (`$a`, `!$a`, `$a = text`, `$a != /regex/` with captures).

use std::sync::Arc;

use peregrine_conf::filters::FiltersConf;
use peregrine_conf::regex::Regex;

use super::ssi_parse::{self, Command, Event};
use super::subrequest;
use super::timefmt::{self, DEFAULT_TIMEFMT};
use crate::http::{Ctx, HttpCore, ServerRt};

/// nginx's default `errmsg` (`NGX_HTTP_SSI_ERROR_MSG`).
pub const DEFAULT_ERRMSG: &str = "[an error occurred while processing the directive]";
/// Nesting of `if` one body may have (nginx's `NGX_HTTP_SSI_COND_*`: it
/// allows no nesting at all; Peregrine allows this much).
pub const MAX_IF_DEPTH: usize = 64;

/// One `if` being run.
struct Cond {
    /// Its current branch is output.
    active: bool,
    /// A branch was taken already (the rest are skipped).
    taken: bool,
    /// The enclosing output was on.
    outer: bool,
}

/// The state of one body's commands.
struct Ssi<'f> {
    conf: &'f FiltersConf,
    vars: Vec<(String, String)>,
    captures: Vec<String>,
    timefmt: String,
    errmsg: String,
    blocks: Vec<(String, Arc<[Event]>)>,
}

/// The body after its commands ran.
pub(crate) fn run(
    core: &mut HttpCore,
    ctx: &mut Ctx<'_>,
    servers: &[ServerRt],
    conf: &FiltersConf,
    body: &[u8],
) -> Vec<u8> {
    let events = ssi_parse::parse(body, conf.ssi_value_length);
    let mut s = Ssi {
        conf,
        vars: Vec::new(),
        captures: Vec::new(),
        timefmt: DEFAULT_TIMEFMT.to_string(),
        errmsg: DEFAULT_ERRMSG.to_string(),
        blocks: Vec::new(),
    };
    let mut out = Vec::with_capacity(body.len());
    s.exec(core, ctx, servers, &events, &mut out);
    out
}

impl Ssi<'_> {
    fn exec(
        &mut self,
        core: &mut HttpCore,
        ctx: &mut Ctx<'_>,
        servers: &[ServerRt],
        events: &[Event],
        out: &mut Vec<u8>,
    ) {
        let mut conds: Vec<Cond> = Vec::new();
        let mut i = 0;
        while i < events.len() {
            let on = conds.last().is_none_or(|c| c.active);
            match &events[i] {
                Event::Text(t) if on => out.extend_from_slice(t),
                Event::Text(_) => {}
                Event::Invalid(_) if on => self.error(out),
                Event::Invalid(_) => {}
                Event::Command(c) => match c.name.as_str() {
                    "if" | "elif" | "else" | "endif" => {
                        if !self.cond(ctx, c, &mut conds) {
                            self.error(out);
                        }
                    }
                    "block" => {
                        let end = block_end(events, i);
                        if on {
                            match c.param("name") {
                                Some(name) => self
                                    .blocks
                                    .push((name.to_string(), events[i + 1..end].into())),
                                None => self.error(out),
                            }
                        }
                        i = end;
                    }
                    _ if !on => {}
                    _ => {
                        if !self.command(core, ctx, servers, c, out) {
                            self.error(out);
                        }
                    }
                },
            }
            i += 1;
        }
    }

    fn error(&self, out: &mut Vec<u8>) {
        if !self.conf.ssi_silent_errors {
            out.extend_from_slice(self.errmsg.as_bytes());
        }
    }

    /// `if`, `elif`, `else`, `endif`; false: misplaced or invalid.
    fn cond(&mut self, ctx: &Ctx<'_>, c: &Command, conds: &mut Vec<Cond>) -> bool {
        match c.name.as_str() {
            "if" => {
                let outer = conds.last().is_none_or(|c| c.active);
                if conds.len() == MAX_IF_DEPTH {
                    return false;
                }
                let Some(expr) = c.param("expr") else {
                    return false;
                };
                let v = outer && self.test(ctx, expr);
                conds.push(Cond {
                    active: v,
                    taken: v,
                    outer,
                });
            }
            "elif" => {
                let Some(expr) = c.param("expr") else {
                    return false;
                };
                let Some(top) = conds.last() else {
                    return false;
                };
                let (outer, taken) = (top.outer, top.taken);
                let v = outer && !taken && self.test(ctx, expr);
                let top = conds.last_mut().expect("checked");
                top.active = v;
                top.taken |= v;
            }
            "else" => {
                let Some(top) = conds.last_mut() else {
                    return false;
                };
                top.active = top.outer && !top.taken;
                top.taken = true;
            }
            _ => return conds.pop().is_some(),
        }
        true
    }

    /// The other commands; false: an error to show.
    fn command(
        &mut self,
        core: &mut HttpCore,
        ctx: &mut Ctx<'_>,
        servers: &[ServerRt],
        c: &Command,
        out: &mut Vec<u8>,
    ) -> bool {
        match c.name.as_str() {
            "echo" => return self.echo(ctx, c, out),
            "set" => {
                let (Some(var), Some(value)) = (c.param("var"), c.param("value")) else {
                    return false;
                };
                let v = self.eval(ctx, value);
                self.set(var, v);
            }
            "config" => {
                if let Some(m) = c.param("errmsg") {
                    self.errmsg = m.to_string();
                }
                if let Some(t) = c.param("timefmt") {
                    self.timefmt = t.to_string();
                }
            }
            "include" => return self.include(core, ctx, servers, c, out),
            // A lone `endblock`: nginx ignores it.
            "endblock" => {}
            _ => return false,
        }
        true
    }

    fn echo(&self, ctx: &Ctx<'_>, c: &Command, out: &mut Vec<u8>) -> bool {
        let Some(var) = c.param("var") else {
            return false;
        };
        let value = match self.lookup(ctx, var) {
            Some(v) => v,
            None => match c.param("default") {
                Some(d) => self.eval(ctx, d),
                None => "(none)".to_string(),
            },
        };
        match c.param("encoding").unwrap_or("entity") {
            "none" => out.extend_from_slice(value.as_bytes()),
            "url" => escape_url(&value, out),
            "entity" => escape_html(&value, out),
            _ => return false,
        }
        true
    }

    fn include(
        &mut self,
        core: &mut HttpCore,
        ctx: &mut Ctx<'_>,
        servers: &[ServerRt],
        c: &Command,
        out: &mut Vec<u8>,
    ) -> bool {
        let target = match (c.param("virtual"), c.param("file")) {
            (Some(t), None) | (None, Some(t)) => self.eval(ctx, t),
            _ => return false,
        };
        if let Some(w) = c.param("wait")
            && w != "yes"
            && w != "no"
        {
            return false;
        }
        let stub = match c.param("stub") {
            Some(name) => match self.blocks.iter().find(|(n, _)| n == name) {
                Some((_, b)) => Some(Arc::clone(b)),
                None => return false,
            },
            None => None,
        };
        let sub = subrequest::run(core, ctx, servers, &target);
        let failed = sub.status >= 300 || sub.body.is_empty();
        let body = match stub {
            Some(block) if failed => {
                let mut b = Vec::new();
                self.exec(core, ctx, servers, &block, &mut b);
                b
            }
            _ => sub.body,
        };
        match c.param("set") {
            Some(var) => {
                self.set(var, String::from_utf8_lossy(&body).into_owned());
            }
            None => out.extend_from_slice(&body),
        }
        true
    }

    fn set(&mut self, var: &str, value: String) {
        match self
            .vars
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(var))
        {
            Some(slot) => slot.1 = value,
            None => self.vars.push((var.to_string(), value)),
        }
    }

    /// A variable's value; `None`: not found (`echo` shows its default).
    fn lookup(&self, ctx: &Ctx<'_>, name: &str) -> Option<String> {
        if let Some((_, v)) = self.vars.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Some(v.clone());
        }
        if name.bytes().all(|b| b.is_ascii_digit()) && !self.captures.is_empty() {
            let n: usize = name.parse().ok()?;
            return self.captures.get(n).cloned();
        }
        match name {
            "date_local" => return Some(timefmt::format(&self.timefmt, ctx.now, false)),
            "date_gmt" => return Some(timefmt::format(&self.timefmt, ctx.now, true)),
            _ => {}
        }
        if let Some(v) = ctx.sets.by_name(name) {
            return Some(v.to_string());
        }
        if let Some(a) = name.strip_prefix("arg_") {
            return crate::vars::arg(ctx.args.as_deref()?, a).map(str::to_string);
        }
        if let Some(h) = name.strip_prefix("http_") {
            let header: String = h.chars().map(|c| if c == '_' { '-' } else { c }).collect();
            return ctx.req.header(&header).map(str::to_string);
        }
        let mut v = String::new();
        ctx.vars().push(&mut v, name);
        (!v.is_empty()).then_some(v)
    }

    /// `text` with its variables (`$name`, `${name}`; `\$` is a dollar),
    /// as `ngx_http_ssi_evaluate_string`.
    fn eval(&self, ctx: &Ctx<'_>, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' && b.get(i + 1) == Some(&b'$') {
                out.push('$');
                i += 2;
                continue;
            }
            if b[i] != b'$' {
                let next = text[i + 1..]
                    .find(['$', '\\'])
                    .map_or(b.len(), |n| i + 1 + n);
                out.push_str(&text[i..next]);
                i = next;
                continue;
            }
            let (name, end) = if b.get(i + 1) == Some(&b'{') {
                match text[i + 2..].find('}') {
                    Some(n) => (&text[i + 2..i + 2 + n], i + 3 + n),
                    None => (&text[i + 2..], b.len()),
                }
            } else {
                let n = text[i + 1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(b.len() - i - 1);
                (&text[i + 1..i + 1 + n], i + 1 + n)
            };
            if name.is_empty() {
                out.push('$');
            } else if let Some(v) = self.lookup(ctx, name) {
                out.push_str(&v);
            }
            i = end;
        }
        out
    }

    /// An `if` expression (`ngx_http_ssi_if`).
    fn test(&mut self, ctx: &Ctx<'_>, expr: &str) -> bool {
        let expr = expr.trim();
        let (negate, expr) = match expr.strip_prefix('!') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, expr),
        };
        let (left, op, right) = match expr
            .find("!=")
            .map(|i| (i, 2))
            .or_else(|| expr.find('=').map(|i| (i, 1)))
        {
            Some((at, n)) => (expr[..at].trim(), Some(n == 1), Some(expr[at + n..].trim())),
            None => (expr, None, None),
        };
        let left = self.eval(ctx, left);
        let v = match (op, right) {
            (Some(eq), Some(right)) => {
                let matched = match right.strip_prefix('/').and_then(|r| r.strip_suffix('/')) {
                    Some(re) => self.regex(&left, re),
                    None => left == self.eval(ctx, right),
                };
                matched == eq
            }
            _ => !left.is_empty(),
        };
        v != negate
    }

    /// `left` against `/re/`: captures kept for `$1`..., named ones as
    /// variables.
    fn regex(&mut self, left: &str, re: &str) -> bool {
        let Ok(regex) = Regex::new(re) else {
            return false;
        };
        let Some(caps) = regex.captures(left) else {
            return false;
        };
        for (name, i) in regex.capture_names() {
            let v = caps.get(i).cloned().unwrap_or_default();
            self.set(&name, v);
        }
        self.captures = caps;
        true
    }
}

/// The index of the `endblock` closing the `block` at `at` (or the end).
fn block_end(events: &[Event], at: usize) -> usize {
    events[at + 1..]
        .iter()
        .position(|e| matches!(e, Event::Command(c) if c.name == "endblock"))
        .map_or(events.len(), |n| at + 1 + n)
}

/// `encoding="entity"` (`ngx_escape_html`).
fn escape_html(v: &str, out: &mut Vec<u8>) {
    for b in v.bytes() {
        match b {
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            _ => out.push(b),
        }
    }
}

/// `encoding="url"` (`ngx_escape_uri` with `NGX_ESCAPE_HTML`).
fn escape_url(v: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in v.bytes() {
        if b <= b' ' || b >= 0x7f || b"\"#%'<>?`".contains(&b) {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        } else {
            out.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let mut o = Vec::new();
        escape_html("<a&\"b'>", &mut o);
        assert_eq!(o, b"&lt;a&amp;&quot;b'&gt;");
        o.clear();
        escape_url("<test> ?", &mut o);
        assert_eq!(o, b"%3Ctest%3E%20%3F");
    }

    #[test]
    fn blocks_end_at_endblock() {
        let e = ssi_parse::parse(b"<!--#block name=\"a\" -->x<!--#endblock -->y", 256);
        assert_eq!(block_end(&e, 0), 2);
    }
}
