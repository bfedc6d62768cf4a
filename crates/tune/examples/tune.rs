//! Runs `peregrine tune` without the server binary:
//! `cargo run -p peregrine-tune --example tune -- [ARGS]`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(peregrine_tune::main(&args));
}
