//! Property tests that reach every directive handler: each row of the table
//! is written in a context it is allowed in, with arguments drawn from value
//! shapes that handlers parse (sizes, times, addresses, codes, regexes,
//! flags) mixed with random printable text. Byte-level fuzzing (fuzz/)
//! rarely gets past the context checks to the handlers; this does, without
//! instrumentation, in every `cargo test`.

use proptest::prelude::*;

use super::*;
use crate::table::{Args, ctx};

/// Argument shapes that make handlers take their deeper branches, including
/// edge values: the largest numbers nginx's `ngx_atoi` accepts and one past.
const ARGS: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "4294967296",
    "2147483648",
    "65535",
    "65536",
    "1k",
    "1K",
    "8m",
    "1g",
    "9223372036854775807k",
    "1s",
    "500ms",
    "1h30m",
    "1y1M1w1d1h1m1s1ms",
    "99999999999d",
    "on",
    "off",
    "auto",
    "any",
    "=",
    "=404",
    "=0",
    "=999",
    "200",
    "301",
    "404",
    "499",
    "999",
    "80",
    "*:80",
    "[::]:80",
    "[::1]",
    "[",
    "[]:",
    "127.0.0.1:0",
    "127.0.0.1:65536",
    "localhost:9",
    "unix:/tmp/s",
    "unix:",
    "default_server",
    "backlog=",
    "backlog=0",
    "backlog=2147483648",
    "max=",
    "max=0",
    "inactive=1s",
    "size=1m",
    "buffer=1k",
    "flush=1s",
    "gzip",
    "gzip=0",
    "gzip=10",
    "if=$x",
    "escape=json",
    "escape=",
    "combined",
    "main",
    "stderr",
    "syslog:server=x",
    "memory:1m",
    "debug",
    "crit",
    "/",
    "/a",
    "/a/",
    "/a/../b",
    "@n",
    "@",
    "$uri",
    "$uri/",
    "${",
    "~",
    "~*",
    "^~",
    "~^(?<n>.+)$",
    "(",
    "a{1000}{1000}",
    "*.example.com",
    ".example.com",
    "*",
    "0101",
    "10",
    "text/html",
    "MSIE [1-6]\\.",
    "http://h/x",
    "https://",
    "é",
    "\u{0}",
];

fn arg() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(ARGS).prop_map(str::to_string),
        1 => "[ -~]{0,12}",
        1 => any::<u64>().prop_map(|n| n.to_string()),
    ]
}

/// A quoted argument list, so that every generated value reaches the
/// handler as one argument whatever characters it has.
fn quoted(args: &[String]) -> String {
    args.iter()
        .map(|a| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` placed in the innermost context allowed by `contexts`.
fn in_context(contexts: u16, text: &str) -> String {
    if contexts & ctx::LOCATION != 0 {
        server(&format!("location /a {{\n{text}\n}}"))
    } else if contexts & ctx::SERVER != 0 {
        server(text)
    } else if contexts & ctx::HTTP != 0 {
        http(text)
    } else if contexts & ctx::EVENTS != 0 {
        format!("events {{\n{text}\n}}\n")
    } else {
        format!("{text}\nevents {{}}\n")
    }
}

fn arity_hint(args: Args) -> usize {
    match args {
        Args::Range(_, max) => max,
        Args::AtLeast(min) => min + 2,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any directive, any arguments, written once or twice (the duplicate
    /// checks), with or without a block: an error or a configuration.
    #[test]
    fn every_directive_with_any_arguments(
        row in 0..crate::table::all().count(),
        args in proptest::collection::vec(arg(), 0..6),
        twice in any::<bool>(),
        // Rarely a block on a directive that takes none (the error path).
        block in proptest::bool::weighted(0.05),
    ) {
        let Some(spec) = crate::table::all().nth(row) else { unreachable!() };
        // Mostly the arity the table accepts, so that handlers run.
        let n = args.len().min(arity_hint(spec.args));
        let line = format!(
            "{} {}{}",
            spec.name,
            quoted(&args[..n]),
            if block || spec.block { " {}" } else { ";" }
        );
        let body = if twice { format!("{line}\n{line}") } else { line };
        let text = in_context(spec.contexts, &body);
        let _ = parse_str(&text, NAME).map_err(|e| e.to_string());
    }
}
