//! Runs `peregrine bench` without the server binary:
//! `cargo run -p peregrine-bench --example bench -- -n 100 http://127.0.0.1:8080/`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match peregrine_bench::run(&args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("peregrine bench: {e}");
            std::process::exit(1);
        }
    }
}
