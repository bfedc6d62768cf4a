//! docs/directives.md and the README's directive table are generated from
//! the directive table and nginx's directive list (between the
//! `<!-- generated: directives -->` and `<!-- end generated -->` lines); this
//! test fails when they are out of date. To regenerate:
//!
//! `PEREGRINE_WRITE_DOCS=1 cargo test -p peregrine-conf tests::docs`

use std::path::Path;

use super::descriptions::DESCRIPTIONS;
use crate::known::{self, OWN, Status};
use crate::table::{ctx, lookup};

const BEGIN: &str = "<!-- generated: directives -->\n";
const END: &str = "<!-- end generated -->\n";

fn contexts(bits: u16) -> String {
    if bits == ctx::ANY {
        return "any".into();
    }
    let names = [
        (ctx::MAIN, "main"),
        (ctx::EVENTS, "events"),
        (ctx::HTTP, "http"),
        (ctx::SERVER, "server"),
        (ctx::LOCATION, "location"),
        (ctx::UPS, "upstream"),
        (ctx::SIF, "if in server"),
        (ctx::LIF, "if in location"),
        (ctx::LMT, "limit_except"),
    ];
    let v: Vec<_> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    v.join(", ")
}

fn module(name: &str) -> String {
    if OWN.contains(&name) {
        return match name {
            n if n.starts_with("brotli") => "ngx_brotli".into(),
            n if n.starts_with("zstd") => "zstd-nginx-module".into(),
            _ => "Peregrine".into(),
        };
    }
    let mut v: Vec<&str> = Vec::new();
    for e in known::entries(name) {
        if !v.contains(&e.module) {
            v.push(e.module);
        }
    }
    v.join(", ")
}

fn describe(name: &str) -> &'static str {
    DESCRIPTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, d)| d)
}

/// Every directive once: the table's in its order, then nginx's others.
fn all_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = crate::table::all().map(|s| s.name).collect();
    v.extend(
        known::nginx_names()
            .into_iter()
            .filter(|n| lookup(n).is_none()),
    );
    v
}

fn names_with(status: Status) -> Vec<&'static str> {
    all_names()
        .into_iter()
        .filter(|n| known::status(n) == Some(status))
        .collect()
}

fn directives_md() -> String {
    let mut out = String::new();
    let implemented = names_with(Status::Implemented);
    let hints = names_with(Status::Hint);
    let refused = names_with(Status::Refused);
    out.push_str(&format!(
        "{} directives implemented, {} accepted as tuning hints, {} of nginx's refused by name.\n",
        implemented.len(),
        hints.len(),
        refused.len()
    ));
    let table = |out: &mut String, title: Option<&str>, last: &str, names: &[&str]| {
        if let Some(t) = title {
            out.push_str(&format!("\n## {t}\n"));
        }
        out.push_str(&format!(
            "\n| directive | contexts | module | {last} |\n|---|---|---|---|\n"
        ));
        for n in names {
            let bits = lookup(n).map_or_else(
                || known::entries(n).fold(0, |a, e| a | e.contexts),
                |s| s.contexts,
            );
            out.push_str(&format!(
                "| `{n}` | {} | {} | {} |\n",
                contexts(bits),
                module(n),
                describe(n)
            ));
        }
    };
    table(&mut out, Some("Implemented"), "in Peregrine", &implemented);
    table(
        &mut out,
        Some("Tuning hints: accepted, value checked, a notice, no effect"),
        "why no effect",
        &hints,
    );
    out.push_str(
        "\n## Not yet: refused by name\n\nA configuration that uses one of these does not start \
         (`\"deny\" directive is not supported by Peregrine yet in FILE:LINE`), once nginx's own \
         checks of the directive (context, block, number of arguments) pass: silently skipping \
         `deny` or `auth_basic` would expose what they protect.\n",
    );
    table(&mut out, None, "", &refused);
    out
}

fn readme_md() -> String {
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let implemented = names_with(Status::Implemented);
    let hints = names_with(Status::Hint);
    let refused = names_with(Status::Refused);
    format!(
        "| status | directives |\n|---|---|\n| implemented ({}) | {} |\n\
         | accepted as a tuning hint, with a notice ({}) | {} |\n\
         | not yet: refused by name, the server does not start ({}) | every other directive of nginx: see [docs/directives.md](docs/directives.md) |\n",
        implemented.len(),
        list(&implemented),
        hints.len(),
        list(&hints),
        refused.len(),
    )
}

/// `text` with what is between the markers replaced by `body`.
fn spliced(text: &str, body: &str) -> String {
    let (Some(a), Some(b)) = (text.find(BEGIN), text.find(END)) else {
        panic!("markers {BEGIN:?} and {END:?} missing");
    };
    format!("{}{BEGIN}{body}{}", &text[..a], &text[b..])
}

#[test]
fn docs_are_generated_from_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let write = std::env::var_os("PEREGRINE_WRITE_DOCS").is_some();
    for (file, body) in [
        ("docs/directives.md", directives_md()),
        ("README.md", readme_md()),
    ] {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let want = spliced(&text, &body);
        if write {
            std::fs::write(&path, &want).unwrap();
        } else {
            assert!(
                text == want,
                "{file} is out of date: PEREGRINE_WRITE_DOCS=1 cargo test -p peregrine-conf tests::docs"
            );
        }
    }
}

#[test]
fn every_table_row_has_a_description() {
    // Checked for the rows that were there when the list was written;
    // a new row without one is listed with its status only.
    for (n, _) in DESCRIPTIONS {
        assert!(
            lookup(n).is_some(),
            "description of a directive without a row: {n}"
        );
    }
}
