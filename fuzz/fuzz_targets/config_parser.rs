//! Fuzzes the configuration pipeline (lexer → syntax tree → directive table →
//! merged Config) on arbitrary bytes. `parse_str` reads no file, so `include`
//! cannot reach the file system. Any panic, overflow or hang is a bug: every
//! input must end in `Ok(Config)` or a `ConfError`.
//!
//! An input starting with byte 1 or 2 is a body placed inside
//! `events {} http { server { ... } }` (1) or a `location / { ... }` in that
//! server (2): mutations of bare directives then reach the server and
//! location handlers without first having to build the blocks around them.
//! Any other input is a whole file (the seed configurations are).
#![no_main]

use std::path::PathBuf;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use peregrine_conf::lexer::Source;

fuzz_target!(|data: &[u8]| {
    let wrapped = match data.split_first() {
        Some((1, body)) => Some(("events {}\nhttp {\nserver {\n", body, "\n}\n}\n")),
        Some((2, body)) => Some((
            "events {}\nhttp {\nserver {\nlocation / {\n",
            body,
            "\n}\n}\n}\n",
        )),
        _ => None,
    };
    if let Some((head, body, tail)) = wrapped {
        let text = format!("{head}{}{tail}", String::from_utf8_lossy(body));
        if let Err(e) = peregrine_conf::parse_str(&text, "/fuzz/conf/nginx.conf") {
            let _ = e.to_string();
        }
        return;
    }
    // The tree builder sees the raw bytes, as it does for files.
    let parsed = peregrine_conf::syntax::parse(
        data,
        Arc::new(PathBuf::from("/fuzz/conf/nginx.conf")),
        Source::File,
    );
    let _ = parsed.first_error();
    // The -g path (no blocks allowed).
    let _ =
        peregrine_conf::syntax::parse(data, Arc::new(PathBuf::from("command line")), Source::Param);
    // The whole pipeline; invalid UTF-8 is replaced as files are.
    let text = String::from_utf8_lossy(data);
    if let Err(e) = peregrine_conf::parse_str(&text, "/fuzz/conf/nginx.conf") {
        // Rendering the message must not panic either.
        let _ = e.to_string();
    }
});
