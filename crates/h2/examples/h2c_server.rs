//! Test-only h2c server (prior knowledge, plain TCP on 127.0.0.1) over the
//! interop test's loop, to run conformance tools such as h2spec against
//! the protocol crate before the engine is wired:
//! `cargo run -p peregrine-h2 --example h2c_server -- 8443` then
//! `h2spec -h 127.0.0.1 -p 8443`. Not the server: no engine, no core.

#[path = "../tests/support/server_loop.rs"]
mod server_loop;

use std::net::TcpListener;
use std::thread;

fn main() {
    let port = std::env::args().nth(1).unwrap_or_else(|| "8443".into());
    let l = TcpListener::bind(format!("127.0.0.1:{port}")).expect("bind");
    for sock in l.incoming().flatten() {
        thread::spawn(move || {
            if let Err(e) = server_loop::serve(sock, None) {
                eprintln!("connection error: {e}");
            }
        });
    }
}
