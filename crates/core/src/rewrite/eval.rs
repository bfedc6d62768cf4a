//! Compiled values at run time: literal parts, variables, captures
//! (`ngx_http_script_copy_*_code`), and nginx's treatment of a rewrite's
//! result: captures escaped in arguments and redirects when the request's
//! URI was escaped, a redirect unescaped (`NGX_UNESCAPE_REDIRECT`).

use peregrine_conf::model::{Part, RewriteOp, Template};
use peregrine_conf::regex::Regex;

use crate::http::{Ctx, HttpCore};

/// The first allocation of an evaluated value: a rewritten URI or a
/// redirect's Location fits, mostly.
const EVAL_CAPACITY: usize = 128;

/// The text of `t` for this request. `quote`: captures are escaped as
/// arguments (`NGX_ESCAPE_ARGS`) when the request's URI had `%` or `+`
/// (nginx's `quoted_uri`, `plus_in_uri`).
pub(crate) fn eval(core: &mut HttpCore, ctx: &Ctx<'_>, t: &Template, quote: bool) -> String {
    // Room for the usual result (a URI) at once: growing from empty took
    // two reallocations a rewrite.
    let mut out = String::with_capacity(EVAL_CAPACITY);
    let escape = quote && {
        let path = ctx.req.target.split('?').next().unwrap_or("");
        path.contains(['%', '+'])
    };
    for p in &t.parts {
        match p {
            Part::Lit(s) => out.push_str(s),
            Part::Var(id) => ctx.vars().push_id(&mut out, id),
            Part::Capture(n) => {
                let c = ctx.captures.get(*n).map_or("", String::as_str);
                if escape {
                    escape_args(&mut out, c);
                } else {
                    out.push_str(c);
                }
            }
            Part::Set(i, name) => {
                if !ctx.vars().push_index(&mut out, *i) && ctx.conf.rewrite.uninitialized_warn {
                    // `ngx_http_rewrite_var`.
                    core.log_line(peregrine_conf::model::LogLevel::Warn, || {
                        format!("using uninitialized \"{name}\" variable")
                    });
                }
            }
        }
    }
    out
}

/// Makes `caps` the request's captures (`$0`..`$9`) and its named groups
/// variables (`ngx_http_regex_exec`).
pub(crate) fn set_captures(ctx: &mut Ctx<'_>, regex: &Regex, caps: Vec<String>) {
    for (name, i) in regex.capture_names() {
        let v = caps.get(i).cloned().unwrap_or_default();
        let name = name.to_ascii_lowercase();
        match ctx.named.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = v,
            None => ctx.named.push((name, v)),
        }
    }
    ctx.captures = caps;
}

/// A redirecting rewrite's Location: the replacement unescaped as
/// nginx's `ngx_http_script_regex_end_code`, then the request's arguments
/// unless the replacement ends with `?`.
pub(crate) fn redirect_target(core: &mut HttpCore, ctx: &Ctx<'_>, r: &RewriteOp) -> String {
    let raw = eval(core, ctx, &r.uri, true);
    let mut out = unescape_redirect(&raw);
    if r.add_args
        && let Some(a) = ctx.args.as_deref().filter(|a| !a.is_empty())
    {
        let literal_q = r
            .uri
            .parts
            .iter()
            .any(|p| matches!(p, Part::Lit(s) if s.contains('?')));
        out.push(if literal_q { '&' } else { '?' });
        out.push_str(a);
    }
    out
}

/// An internal rewrite's new URI and arguments.
pub(crate) fn rewritten(
    core: &mut HttpCore,
    ctx: &Ctx<'_>,
    r: &RewriteOp,
) -> (String, Option<String>) {
    let uri = eval(core, ctx, &r.uri, false);
    let old = ctx.args.as_deref().filter(|a| !a.is_empty());
    let args = match &r.args {
        Some(t) => {
            let mut a = eval(core, ctx, t, true);
            if r.add_args
                && let Some(old) = old
            {
                a.push('&');
                a.push_str(old);
            }
            Some(a)
        }
        None if r.add_args => ctx.args.as_deref().map(str::to_string),
        None => None,
    };
    (uri, args)
}

/// `ngx_escape_uri(NGX_ESCAPE_ARGS)`: controls, space, `"#%&+;<>?\^`{|}`,
/// DEL and non-ASCII bytes percent-encoded.
pub(crate) fn escape_args(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in s.as_bytes() {
        let escape = c <= 0x20
            || c >= 0x7f
            || matches!(
                c,
                b'"' | b'#'
                    | b'%'
                    | b'&'
                    | b'+'
                    | b';'
                    | b'<'
                    | b'>'
                    | b'?'
                    | b'\\'
                    | b'^'
                    | b'`'
                    | b'{'
                    | b'|'
                    | b'}'
            );
        if escape {
            out.push('%');
            out.push(char::from(HEX[usize::from(c >> 4)]));
            out.push(char::from(HEX[usize::from(c & 15)]));
        } else {
            out.push(char::from(c));
        }
    }
}

/// `ngx_unescape_uri(NGX_UNESCAPE_REDIRECT)` as the redirect code uses it:
/// up to the first `?` (literal or `%3F`), `%XX` of a printable byte
/// above `%` is decoded, others stay escaped; the rest is copied as is.
pub(crate) fn unescape_redirect(s: &str) -> String {
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'?' {
            break;
        }
        let hex = |j: usize| b.get(j).and_then(|h| char::from(*h).to_digit(16));
        if c == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            let ch = (h * 16 + l) as u8;
            if ch == b'?' {
                out.push(ch);
                i += 3;
                break;
            }
            if ch > b'%' && ch < 0x7f {
                out.push(ch);
            } else {
                out.extend_from_slice(&b[i..i + 3]);
            }
            i += 3;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out.extend_from_slice(&b[i..]);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_unescape_printable_bytes_up_to_the_query() {
        assert_eq!(
            unescape_redirect("http%3A%2F%2Fexample.com%2F%3Ffrom%3Dblah"),
            "http://example.com/?from%3Dblah"
        );
        assert_eq!(
            unescape_redirect("http://example.com%0D%0Asplit"),
            "http://example.com%0D%0Asplit"
        );
        assert_eq!(unescape_redirect("/a%20b?x=%41"), "/a%20b?x=%41");
        assert_eq!(unescape_redirect("/%41%4"), "/A%4");
    }

    #[test]
    fn args_escaping() {
        let mut s = String::new();
        escape_args(&mut s, "a b&c=d/é?");
        assert_eq!(s, "a%20b%26c=d/%C3%A9%3F");
    }
}
