//! The `$variable` syntax nginx checks when it compiles values at
//! configuration time: `ngx_http_script_compile` for the directives whose
//! values may hold variables (`root`, `alias`, `index`, `try_files`,
//! `error_page`, `return`, `access_log`), and the log format compiler
//! (`ngx_http_log_compile_format`) for `log_format`. Peregrine keeps the
//! values verbatim (expanding them is not this crate's job) but refuses what
//! `nginx -t` refuses. Unknown variable names, which nginx reports only once
//! every module has registered its variables, are not checked.

use crate::error::{ConfError, Result};
use crate::syntax::Directive;
use crate::values::parse_number;

/// A malformed variable reference.
#[derive(Debug, PartialEq, Eq)]
enum Bad {
    /// `$` not followed by a name: the byte offset of the `$`.
    NoName(usize),
    /// `${name` with no `}`: the name read.
    Unclosed(String),
}

/// Scans `s` as nginx's compilers do: after `$`, an optional `{`, then
/// `[A-Za-z0-9_]*`, closed by `}` if it was opened. The script compiler
/// also takes `$1`..`$9` (regex captures), which this accepts as names.
fn scan(s: &str) -> std::result::Result<(), Bad> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let dollar = i;
        i += 1;
        let bracket = bytes.get(i) == Some(&b'{');
        if bracket {
            i += 1;
        }
        let start = i;
        while bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            i += 1;
        }
        let name_len = i - start;
        if bracket {
            if bytes.get(i) != Some(&b'}') {
                return Err(Bad::Unclosed(s.get(start..i).unwrap_or_default().into()));
            }
            i += 1;
        }
        if name_len == 0 {
            return Err(Bad::NoName(dollar));
        }
    }
    Ok(())
}

fn unclosed(d: &Directive, name: &str) -> ConfError {
    ConfError::at(
        &d.span,
        format!("the closing bracket in \"{name}\" variable is missing"),
    )
}

/// The arguments of `d` that nginx compiles as scripts.
fn script_args(d: &Directive) -> &[String] {
    let args = d.args.as_slice();
    match d.name.as_str() {
        "root" | "alias" | "index" | "try_files" => args,
        "access_log" => args.get(..1).unwrap_or_default(),
        // ssl: compiled as complex values when they name variables.
        "ssl_certificate" | "ssl_certificate_key" => args,
        // `error_page` checks its URI itself (see `check_value`).
        // `return code [text]` or `return URL`.
        "return" => match args.first().map(|a| parse_number(a)) {
            Some(Some(_)) => args.get(1..).unwrap_or_default(),
            _ => args.get(..1).unwrap_or_default(),
        },
        _ => &[],
    }
}

/// The variable names `s` refers to, in order (malformed references, which
/// [`check_value`] refuses, are skipped).
pub fn names(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        let (inner, bracket) = match after.strip_prefix('{') {
            Some(a) => (a, true),
            None => (after, false),
        };
        // nginx's script compiler reads `$1`..`$9` as one digit (`$1x` is
        // the capture, then `x`).
        let len = match inner.as_bytes().first() {
            Some(b'1'..=b'9') if !bracket => 1,
            _ => inner
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count(),
        };
        if len > 0 {
            out.push(&inner[..len]);
        }
        rest = &inner[len + usize::from(bracket && inner[len..].starts_with('}'))..];
    }
    out
}

/// The values of `d` whose variables nginx resolves at load: the script
/// arguments, `error_page`'s URI, `log_format`'s strings and
/// `access_log`'s `if=` condition, `disable_symlinks`'s `from=`.
pub fn variable_values(d: &Directive) -> Vec<&str> {
    let args = d.args.as_slice();
    let mut out: Vec<&str> = script_args(d).iter().map(String::as_str).collect();
    match d.name.as_str() {
        "error_page" => out.extend(args.last().map(String::as_str)),
        "log_format" => {
            let from = match args.get(1) {
                Some(a) if a.starts_with("escape=") => 2,
                _ => 1,
            };
            out.extend(args.iter().skip(from).map(String::as_str));
        }
        "access_log" => out.extend(args.iter().filter_map(|a| a.strip_prefix("if="))),
        "disable_symlinks" => out.extend(args.iter().filter_map(|a| a.strip_prefix("from="))),
        // rewrite: the replacement, `set`'s value, the condition's values.
        "rewrite" | "set" => out.extend(args.get(1).map(String::as_str)),
        "if" => out.extend(super::rewrite::cond_values(d)),
        _ => {}
    }
    out
}

/// Checks the values of a directive that nginx compiles as scripts; run
/// after the directive's own checks, which nginx makes first.
pub fn check_script(d: &Directive) -> Result<()> {
    script_args(d).iter().try_for_each(|a| check_value(d, a))
}

/// Checks one value of `d` as nginx's script compiler does, for handlers
/// that compile a value between their own checks (`error_page` compiles
/// its URI before reading the status codes).
pub fn check_value(d: &Directive, value: &str) -> Result<()> {
    match scan(value) {
        Ok(()) => Ok(()),
        Err(Bad::NoName(_)) => Err(ConfError::at(&d.span, "invalid variable name")),
        Err(Bad::Unclosed(name)) => Err(unclosed(d, &name)),
    }
}

/// Checks the format strings of `log_format`; nginx names the rest of the
/// string from the bad `$` on.
pub fn check_log_format(d: &Directive, format: &[String]) -> Result<()> {
    for a in format {
        match scan(a) {
            Ok(()) => {}
            Err(Bad::NoName(at)) => {
                let rest = a.get(at..).unwrap_or_default();
                return Err(ConfError::at(
                    &d.span,
                    format!("invalid parameter \"{rest}\""),
                ));
            }
            Err(Bad::Unclosed(name)) => return Err(unclosed(d, &name)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::model::Span;

    fn d(name: &str, args: &[&str]) -> Directive {
        Directive {
            name: name.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            span: Span::new(&Arc::new(PathBuf::from("f")), 1),
            block: None,
        }
    }

    #[test]
    fn names_in_order() {
        assert_eq!(names("a$uri/${host}x$1$"), vec!["uri", "host", "1"]);
        assert_eq!(names("/n/$1x$23"), vec!["1", "2"]);
        assert_eq!(names("${a"), vec!["a"]);
        let lf = d("log_format", &["m", "escape=json", "$a", "${b}"]);
        assert_eq!(variable_values(&lf), vec!["$a", "${b}"]);
        let al = d("access_log", &["/l$x", "m", "if=$c"]);
        assert_eq!(variable_values(&al), vec!["/l$x", "$c"]);
        let ds = d("disable_symlinks", &["on", "from=$document_root"]);
        assert_eq!(variable_values(&ds), vec!["$document_root"]);
        let ep = d("error_page", &["404", "=200", "/$e"]);
        assert_eq!(variable_values(&ep), vec!["/$e"]);
    }

    #[test]
    fn scanning() {
        for ok in [
            "",
            "a",
            "$a",
            "${a}b",
            "$uri/",
            "a$b_1$C",
            "$1",
            "${http_x}",
        ] {
            assert_eq!(scan(ok), Ok(()), "{ok}");
        }
        assert_eq!(scan("a$"), Err(Bad::NoName(1)));
        assert_eq!(scan("$-x"), Err(Bad::NoName(0)));
        assert_eq!(scan("$$"), Err(Bad::NoName(0)));
        assert_eq!(scan("${}"), Err(Bad::NoName(0)));
        assert_eq!(scan("x${ab"), Err(Bad::Unclosed("ab".into())));
        assert_eq!(scan("${a-"), Err(Bad::Unclosed("a".into())));
        assert_eq!(scan("é$"), Err(Bad::NoName(2)));
    }

    /// Messages as nginx -t 1.22.1 prints them (found by the differential
    /// check, examples/nginx_diff.rs).
    #[test]
    fn messages_as_nginx() {
        let e = |d: Directive| check_script(&d).unwrap_err().to_string();
        assert_eq!(e(d("root", &["/a$"])), "invalid variable name in f:1");
        assert_eq!(
            e(d("alias", &["/a${b"])),
            "the closing bracket in \"b\" variable is missing in f:1"
        );
        assert_eq!(
            e(d("try_files", &["$", "=404"])),
            "invalid variable name in f:1"
        );
        assert_eq!(
            e(d("return", &["200", "a$"])),
            "invalid variable name in f:1"
        );
        assert_eq!(e(d("return", &["/x${}"])), "invalid variable name in f:1");
        assert!(check_script(&d("return", &["200"])).is_ok());
        assert!(check_script(&d("gzip_types", &["$"])).is_ok());
        let lf = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            check_log_format(&d("log_format", &[]), &args).map_err(|e| e.to_string())
        };
        assert_eq!(
            lf(&["a$ b"]),
            Err("invalid parameter \"$ b\" in f:1".into())
        );
        assert_eq!(
            lf(&["a", "$", "b"]),
            Err("invalid parameter \"$\" in f:1".into())
        );
        assert_eq!(
            lf(&["x${a"]),
            Err("the closing bracket in \"a\" variable is missing in f:1".into())
        );
        assert_eq!(lf(&["$remote_addr - ${status}"]), Ok(()));
    }
}
