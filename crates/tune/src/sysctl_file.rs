//! Parsing a sysctl.conf text the way sysctl(8) `-p` reads it, plus the
//! `echo VALUE > /proc/sys/…` lines the seed articles mix in.
//!
//! Hand-written: the format is one `key = value` per line with `#`/`;`
//! comment lines (sysctl.conf(5)), and what matters here is reproducing
//! sysctl's and the shell's exact reading of damaged lines, which no parser
//! crate models. Never fails: every line gets a classification.

/// How one line reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// Blank or a comment (`#` or `;` first): sysctl skips it.
    Skip,
    /// `key = value` (or the value an `echo … > /proc/sys/key` writes).
    Setting {
        /// The key as written (dots or slashes).
        key: String,
        /// The value as sysctl passes it: everything after `=`, trimmed.
        /// sysctl.conf has no inline comments, so `1 # x` is the value.
        value: String,
        /// An `echo` line rather than a sysctl.conf line.
        echo: bool,
    },
    /// A line that sets nothing, with the reason.
    Inert(String),
}

/// One classified line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based.
    pub number: usize,
    pub text: String,
    pub kind: LineKind,
}

/// Classifies every line of a text.
pub fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .map(|(i, l)| Line {
            number: i + 1,
            text: l.to_string(),
            kind: classify(l),
        })
        .collect()
}

/// Classifies one line.
pub fn classify(line: &str) -> LineKind {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
        return LineKind::Skip;
    }
    if let Some(rest) = t
        .strip_prefix("echo")
        .filter(|r| r.starts_with([' ', '\t']))
    {
        return classify_echo(rest);
    }
    let Some((key, value)) = t.split_once('=') else {
        return LineKind::Inert(
            "no `=`: sysctl -p reports invalid syntax and skips the line".into(),
        );
    };
    // A leading `-` tells sysctl to ignore a failure to set the key.
    let key = key.trim().trim_start_matches('-').trim();
    let value = value.trim();
    if key.is_empty() {
        return LineKind::Inert(
            "no key before `=` (a line broken in two?): sysctl -p skips it".into(),
        );
    }
    if value.is_empty() {
        return LineKind::Inert("no value after `=`: sysctl -p skips it".into());
    }
    LineKind::Setting {
        key: key.to_string(),
        value: value.to_string(),
        echo: false,
    }
}

/// `echo ARGS > /proc/sys/PATH`, read as the shell reads it (bash(1),
/// REDIRECTION): digits touching `>` are a file-descriptor number, not
/// echo's argument, so `echo 1> FILE` writes an empty line into FILE.
fn classify_echo(rest: &str) -> LineKind {
    let Some((args, target)) = rest.split_once('>') else {
        return LineKind::Inert("an echo without redirection writes to the terminal".into());
    };
    let mut words: Vec<&str> = args.split_whitespace().collect();
    let fd = match words.last() {
        Some(w)
            if !args.ends_with(char::is_whitespace) && w.chars().all(|c| c.is_ascii_digit()) =>
        {
            words.pop()
        }
        _ => None,
    };
    let mut target_words = target.split_whitespace();
    let path = target_words.next().unwrap_or("");
    let extra: Vec<&str> = target_words.collect();
    let Some(rel) = path.strip_prefix("/proc/sys/").filter(|r| !r.is_empty()) else {
        if path.starts_with("/proc/sys") {
            return LineKind::Inert(format!(
                "the shell redirects into `{path}`, a directory (the path is broken by a space): \
                 sets nothing"
            ));
        }
        return LineKind::Inert(format!("writes to `{path}`, not under /proc/sys"));
    };
    if !extra.is_empty() {
        return LineKind::Inert(format!(
            "the shell redirects into `{path}` (a directory: the path is broken by a space) \
             and sets nothing"
        ));
    }
    let key = rel.trim_end_matches('/').to_string();
    match fd {
        Some("1") if words.is_empty() => LineKind::Inert(format!(
            "`1>` redirects standard output, not echo's argument: echo writes an empty line \
             into {path}, the kernel rejects it and nothing is set (write `echo 1 > {path}`)"
        )),
        Some(fd) if words.is_empty() => LineKind::Inert(format!(
            "`{fd}>` opens {path} as file descriptor {fd}: echo's (empty) output goes to the \
             terminal and nothing is written (write `echo {fd} > {path}`)"
        )),
        _ if words.is_empty() => {
            LineKind::Inert("echo writes an empty line: nothing is set".into())
        }
        _ => LineKind::Setting {
            key,
            value: words.join(" "),
            echo: true,
        },
    }
}

/// For an `Inert` echo line, the key and value the author meant, for the
/// "as intended" verdict: `echo 1> /proc/sys/net /ipv4/x` → (`net/ipv4/x`, `1`).
pub fn intended_echo(line: &str) -> Option<(String, String)> {
    let rest = line.trim().strip_prefix("echo")?;
    let (args, target) = rest.split_once('>')?;
    let value = args.split_whitespace().collect::<Vec<_>>().join(" ");
    let path: String = target.split_whitespace().collect();
    let key = path
        .strip_prefix("/proc/sys/")?
        .trim_end_matches('/')
        .to_string();
    (!value.is_empty() && !key.is_empty()).then_some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(k: &str, v: &str) -> LineKind {
        LineKind::Setting {
            key: k.into(),
            value: v.into(),
            echo: false,
        }
    }

    #[test]
    fn conf_lines() {
        assert_eq!(
            classify("net.core.somaxconn = 4096"),
            setting("net.core.somaxconn", "4096")
        );
        assert_eq!(
            classify("net.core.somaxconn=4096"),
            setting("net.core.somaxconn", "4096")
        );
        assert_eq!(classify("  -net.a.b = 1 "), setting("net.a.b", "1"));
        assert_eq!(classify("# c"), LineKind::Skip);
        assert_eq!(classify("; c"), LineKind::Skip);
        assert_eq!(classify("   "), LineKind::Skip);
        assert_eq!(classify("x = 1 # c"), setting("x", "1 # c"));
        assert!(matches!(classify("= 4096 65536"), LineKind::Inert(_)));
        assert!(matches!(classify("sysctl -p"), LineKind::Inert(_)));
        assert!(matches!(classify("a.b ="), LineKind::Inert(_)));
    }

    #[test]
    fn echo_lines() {
        assert_eq!(
            classify("echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse"),
            LineKind::Setting {
                key: "net/ipv4/tcp_tw_reuse".into(),
                value: "1".into(),
                echo: true
            }
        );
        let fd = classify("echo 1> /proc/sys/net/ipv4/tcp_tw_reuse");
        assert!(
            matches!(&fd, LineKind::Inert(r) if r.contains("redirects standard output")),
            "{fd:?}"
        );
        let fd0 = classify("echo 0> /proc/sys/net/ipv4/tcp_syncookies");
        assert!(
            matches!(&fd0, LineKind::Inert(r) if r.contains("file descriptor 0")),
            "{fd0:?}"
        );
        let broken = classify("echo 10000> /proc/sys/ net/core/somaxconn");
        assert!(
            matches!(&broken, LineKind::Inert(r) if r.contains("directory")),
            "{broken:?}"
        );
        let broken = classify("echo 1 > /proc/sys/net /ipv4/tcp_tw_recycle");
        assert!(
            matches!(&broken, LineKind::Inert(r) if r.contains("directory")),
            "{broken:?}"
        );
        assert_eq!(
            intended_echo("echo 1> /proc/sys/net /ipv4/tcp_tw_recycle"),
            Some(("net/ipv4/tcp_tw_recycle".into(), "1".into()))
        );
        assert_eq!(intended_echo("echo > /proc/sys/x"), None);
    }

    #[test]
    fn never_panics_on_any_prefix() {
        let t = "net.a = 1\necho 1> /proc/sys/ net/x\n-= \n;\necho 2 >/proc/sys/a/b\n=\u{e9}\n";
        for i in (0..=t.len()).filter(|i| t.is_char_boundary(*i)) {
            let lines = parse(&t[..i]);
            assert!(lines.len() <= t.lines().count());
            for l in &lines {
                let _ = intended_echo(&l.text);
            }
        }
    }
}
